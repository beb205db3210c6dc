"""Phase 3: the LLM chooses the relevant candidates and how to inject them.

The fast path's candidates (≤ ``rerank_max_candidates``, each trimmed to
``rerank_chars_per_candidate`` characters, with its id and date) go to the
rerank model with the user's message; it answers::

    {"relevant_episodes": [{"id": 12, "relevance": "high", "reason": "…"}],  # ≤ 5
     "injection_strategy": "quote_key_parts"}        # | "summarize" | "full"

Ids that are not among the candidates are dropped and counted; the rest is
ordered high before medium (keeping the model's order within each); an
empty list is a valid "nothing relevant" answer. A chosen memory that the fast
path found changed later (:mod:`.changes`) has its later change put right before
it (or left where the model put it, when that is earlier), brought back when the model
left it out (:func:`with_later_changes`).
Nothing here touches the database.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from ..clock import in_zone
from ..config import LLMConfig
from ..errors import LLMResponseError
from ..llm.client import ChatClient
from ..models import Episode, Message
from ..quote import SPEAKERS
from ..text import Language, one_line_within, prompt_quote, reason_line, written_number
from .candidate_text import candidate_text, within_chars
from .expand import (
    DetectedReference,
    describe_validation_error,
    format_recent,
    today_line,
    wrong_shape,
)
from .fastpath import Candidate

__all__ = [
    "RERANK_SCHEMA",
    "RelevantEpisode",
    "RerankOutcome",
    "RerankReply",
    "Reranker",
    "candidate_block",
    "candidate_text",
    "parse_rerank",
    "rerank_prompt",
    "with_later_changes",
]

Strategy = Literal["quote_key_parts", "summarize", "full"]

MAX_RELEVANT = 5


_STRATEGIES: tuple[Strategy, ...] = ("quote_key_parts", "summarize", "full")


class RelevantEpisode(BaseModel):
    """One episode the model judged relevant, with why."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: int
    relevance: Literal["high", "medium", "low"]
    reason: str = ""

    @field_validator("id", mode="before")
    @classmethod
    def _an_id(cls, value: object) -> object:
        if isinstance(value, bool):  # true would be episode 1
            raise ValueError("an episode id is a number, not true/false")
        if isinstance(value, str):  # written as the prompt shows it: "12", "[id 12]"
            number = written_number(value, id_label=True)
            return value if number is None else number
        return value

    @field_validator("relevance", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("reason", mode="before")
    @classmethod
    def _none_is_no_reason(cls, value: object) -> object:
        return "" if value is None else value


class RerankReply(BaseModel):
    """The raw validated answer of Phase 3 (its items are read one by one by
    :func:`parse_rerank`: a malformed one drops only itself)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    relevant_episodes: list[Any]
    injection_strategy: Strategy = "quote_key_parts"

    @field_validator("injection_strategy", mode="before")
    @classmethod
    def _a_known_strategy(cls, value: object) -> object:
        """An unknown strategy (or none) is the default one, not a reason to drop the picks."""
        text = value.strip().lower() if isinstance(value, str) else value
        return text if text in _STRATEGIES else "quote_key_parts"


@dataclass(frozen=True)
class RerankOutcome:
    """Phase 3's usable answer: the chosen episodes (high first), the strategy, what was dropped."""

    chosen: list[RelevantEpisode]
    injection_strategy: Strategy
    unknown_ids: list[int] = field(default_factory=list)
    listed: int = 0
    """Items read from the reply's list (its first few times as many as there were
    candidates; :attr:`unread` more were not read)."""
    malformed: int = 0
    """Items of the wrong shape (no id, a relevance that is none of the three…), dropped."""
    unread: int = 0


RERANK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "relevant_episodes": {
            "type": "array",
            "maxItems": MAX_RELEVANT,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "relevance": {"type": "string", "enum": ["high", "medium"]},
                    "reason": {"type": "string"},
                },
                "required": ["id", "relevance", "reason"],
            },
        },
        "injection_strategy": {
            "type": "string",
            "enum": ["quote_key_parts", "summarize", "full"],
        },
    },
    "required": ["relevant_episodes", "injection_strategy"],
}
"""The JSON schema sent as ``response_format``."""

_SYSTEM = {
    "en": (
        "You choose which past conversations from a companion chatbot's memory help it reply "
        "to the user's new message. Each candidate is [id N] date, then its text. Pick at most "
        '{k}, most relevant first: relevance "high" (answers it or is what it refers to) or '
        '"medium" (useful background); reason: a few words. injection_strategy: '
        '"quote_key_parts" (default), "summarize" (gist is enough) or "full" (exact wording '
        "matters). If nothing is relevant, return an empty list. Answer with JSON only:\n"
        '{{"relevant_episodes": [{{"id": 0, "relevance": "high", "reason": "..."}}], '
        '"injection_strategy": "quote_key_parts"}}'
    ),
    "ja": (
        "コンパニオンAIの記憶（過去の会話）から、ユーザーの新しい発言への返答に役立つものを選び"
        "ます。候補は [id N] 日付 と本文です。最大{k}件、関連の強い順に選び、relevance は "
        '"high"（答えそのもの・指している話）か "medium"（背景として役立つ）、reason は短い'
        '日本語の理由。injection_strategy は "quote_key_parts"（既定）、"summarize"（要点で'
        '十分）、"full"（言い回しが重要）。関連するものがなければ空のリスト。JSON だけで'
        "答えてください:\n"
        '{{"relevant_episodes": [{{"id": 0, "relevance": "high", "reason": "..."}}], '
        '"injection_strategy": "quote_key_parts"}}'
    ),
}
_LABELS = {
    "en": {
        "recent": "Recent conversation",
        "new": "New message",
        "notes": "Resolved",
        "cands": "Candidates",
        "user": SPEAKERS["en"][0],
        "partner": SPEAKERS["en"][1],
    },
    "ja": {
        "recent": "直前の会話",
        "new": "新しい発言",
        "notes": "解決済みの参照",
        "cands": "候補",
        "user": SPEAKERS["ja"][0],
        "partner": SPEAKERS["ja"][1],
    },
}


def _cut(text: str, limit: int) -> str:
    """``text`` on one line, within ``limit`` characters, as :func:`prompt_quote` writes
    it: an ``[id`` in it (in any width, with invisible characters between, "[id5]" too) is
    written ``(id``, so that a stored text cannot pose as another candidate's head."""
    return within_chars(prompt_quote(text), limit)


def _message_line(text: str, limit: int) -> str:
    """The new message as :func:`_cut` shows a text, but a long one as its beginning and its
    end (:func:`~memengine.text.one_line_within`: a question typed after a paste)."""
    return one_line_within(prompt_quote(text), limit)


def candidate_block(
    episode: Episode, chars: int, lang: Language, zone: tzinfo | None = None
) -> str:
    """One candidate for the prompt: ``[id N] YYYY-MM-DD`` (a day of ``zone``, the turn's,
    as the prompt's today is) and its text within ``chars`` characters
    (:func:`candidate_text`)."""
    head = f"[id {episode.id}] {in_zone(episode.occurred_at, zone):%Y-%m-%d}"
    return f"{head}\n{candidate_text(episode, chars, lang)}"


def rerank_prompt(
    text: str,
    recent: Sequence[Message],
    candidates: Sequence[Candidate],
    now: datetime,
    lang: Language,
    *,
    chars_per_candidate: int = 300,
    max_results: int = MAX_RELEVANT,
    references: Sequence[DetectedReference] = (),
    turns: int = 2,
) -> tuple[str, str]:
    """The ``(system, user)`` prompt of Phase 3."""
    labels = _LABELS[lang]
    system = _SYSTEM[lang].format(k=max_results)
    parts = [today_line(now, lang)]
    history = format_recent(recent, turns, lang, chars=200)
    if history:
        parts.append(f"{labels['recent']}:\n{history}")
    parts.append(f"{labels['new']}: {_message_line(text, 600)}")
    if references:
        notes = "; ".join(f"{_cut(r.surface, 80)} → {_cut(r.resolved, 80)}" for r in references[:6])
        parts.append(f"{labels['notes']}: {notes}")
    blocks = [candidate_block(c.episode, chars_per_candidate, lang, now.tzinfo) for c in candidates]
    parts.append(f"{labels['cands']}:\n" + "\n".join(blocks))
    return system, "\n".join(parts)


def parse_rerank(
    data: Any, candidate_ids: Sequence[int], max_results: int = MAX_RELEVANT
) -> RerankOutcome:
    """Validate a Phase 3 reply; drop unknown and repeated ids (the first item of an id is
    its answer, a "low" one too), malformed items and "low" ones; high first.

    Raises LLMResponseError ("invalid reply: …") when the reply has the wrong shape, or
    when every item it lists is malformed.
    """
    try:
        reply = RerankReply.model_validate(data)
    except ValidationError as exc:
        raise wrong_shape(exc) from exc
    items: list[RelevantEpisode] = []
    problem: tuple[int, ValidationError] | None = None
    # a reply lists each candidate once at most: the items past a few times that many
    # (thousands would cost the turn its deadline to read) are not read
    readable = reply.relevant_episodes[: 3 * len(candidate_ids) + 2 * MAX_RELEVANT]
    for i, raw in enumerate(readable):
        try:
            items.append(RelevantEpisode.model_validate(raw))
        except ValidationError as exc:
            problem = problem or (i, exc)
    if problem is not None and not items:
        at, first = problem
        raise LLMResponseError(
            f"invalid reply: relevant_episodes.{at}.{describe_validation_error(first)}"
        ) from first
    allowed = set(candidate_ids)
    unknown: list[int] = []
    seen: set[int] = set()
    kept: list[RelevantEpisode] = []
    for item in items:
        if item.id not in allowed:
            unknown.append(item.id)
            continue
        if item.id in seen:
            continue
        seen.add(item.id)  # (a low item too: the first item of an id is its answer)
        if item.relevance == "low":
            continue
        kept.append(item.model_copy(update={"reason": reason_line(item.reason)}))
    kept.sort(key=lambda r: 0 if r.relevance == "high" else 1)  # stable: model order within
    return RerankOutcome(
        chosen=kept[: min(max_results, MAX_RELEVANT)],
        injection_strategy=reply.injection_strategy,
        unknown_ids=unknown,
        listed=len(readable),
        malformed=len(readable) - len(items),
        unread=len(reply.relevant_episodes) - len(readable),
    )


def with_later_changes(
    chosen: Sequence[RelevantEpisode], candidates: Sequence[Candidate]
) -> list[RelevantEpisode]:
    """``chosen`` in the model's order, but with each later change the fast path linked
    to a chosen memory (:mod:`.changes`: a candidate of the same agent marked ``changes``,
    that memory's id) right before it, the newest first, and so down a chain: "my vet is
    now Dr. Sato" before "my vet is Dr. Tanaka", as the fast path packs them. A change the
    model ranked higher still stays where it put it, before the memory but perhaps not next
    to it (``[new, other, old]`` is kept). A change the
    model left out of ``chosen`` is brought back from ``candidates`` (no reason of the
    model's: the pack writes the fast path's); a change's relevance is never lower than
    the memory's it changes. Alone, the older memory would tell the old fact as the fact;
    with no such link the order is the model's."""
    by_id = {c.episode.id: c for c in candidates}
    changed_by: dict[int, list[Candidate]] = {}  # a memory's id → its later changes
    for c in candidates:
        older = by_id.get(int(c.components.get("changes", 0)))
        if older is not None and older.episode.agent == c.episode.agent:
            changed_by.setdefault(older.episode.id, []).append(c)
    if not changed_by:
        return list(chosen)
    picked = {item.id: item for item in chosen}
    placed: set[int] = set()
    out: list[RelevantEpisode] = []
    for item in chosen:
        if item.id in placed:  # (placed before a memory it changes)
            continue
        chain, todo = [by_id[item.id]] if item.id in by_id else [], [item.id]
        placed.add(item.id)
        while todo:  # the changes of the chosen memory, then theirs
            for change in changed_by.get(todo.pop(), []):
                if change.episode.id not in placed:
                    placed.add(change.episode.id)
                    chain.append(change)
                    todo.append(change.episode.id)
        if len(chain) < 2:
            out.append(item)
            continue
        chain.sort(key=lambda m: m.episode.occurred_at, reverse=True)
        for member in chain:
            own = picked.get(member.episode.id)
            if own is None:  # (left out by the model: brought back)
                own = RelevantEpisode(id=member.episode.id, relevance=item.relevance)
            elif own.relevance != item.relevance and item.relevance == "high":
                own = own.model_copy(update={"relevance": "high"})
            out.append(own)
    return out


class Reranker:
    """Runs Phase 3 against a :class:`ChatClient`."""

    def __init__(self, client: ChatClient, config: LLMConfig) -> None:
        self.client = client
        self.config = config

    def rerank(
        self,
        text: str,
        recent: Sequence[Message],
        candidates: Sequence[Candidate],
        now: datetime,
        lang: Language,
        *,
        deadline_s: float,
        references: Sequence[DetectedReference] = (),
    ) -> RerankOutcome:
        """Ask the rerank model about ``candidates`` and validate its answer.

        Raises LLMError (LLMTimeout, LLMResponseError).
        """
        cfg = self.config
        shown = list(candidates)[: cfg.rerank_max_candidates]
        system, user = rerank_prompt(
            text,
            recent,
            shown,
            now,
            lang,
            chars_per_candidate=cfg.rerank_chars_per_candidate,
            max_results=cfg.rerank_max_results,
            references=references,
            turns=min(2, cfg.expansion_recent_turns),
        )
        reply = self.client.complete_json(
            model=cfg.rerank_model,
            system=system,
            user=user,
            schema=RERANK_SCHEMA,
            max_tokens=cfg.max_output_tokens,
            deadline_s=deadline_s,
            schema_name="memengine_rerank",
        )
        return parse_rerank(reply.data, [c.episode.id for c in shown], cfg.rerank_max_results)
