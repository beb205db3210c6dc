"""Phase 1: query expansion and reference resolution by an LLM.

The user's new message and the last few exchanges go to the expansion
model, which answers one JSON object (validated with pydantic)::

    {"expanded_queries": ["Juno dental appointment date", …],      # ≤ 5
     "detected_references": [{"type": "anaphora", "surface": "her",
                              "resolved": "Juno (the greyhound)"},
                             {"type": "temporal", "surface": "last week",
                              "resolved": "2026-05-11/2026-05-17"}]}

Prompts are short, in Japanese for Japanese conversations and in English
otherwise. The expanded queries never include the message itself; temporal
references carry an ISO date range that :mod:`.temporal` turns into a
search window. Nothing here touches the database.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..config import LLMConfig
from ..errors import LLMResponseError
from ..llm.client import ChatClient
from ..models import Message
from ..quote import SPEAKERS
from ..text import Language, is_blank, one_line_within, prompt_quote, strip_controls

__all__ = [
    "EXPANSION_SCHEMA",
    "DetectedReference",
    "Expander",
    "Expansion",
    "clean_queries",
    "describe_validation_error",
    "expansion_prompt",
    "format_recent",
    "parse_expansion",
    "today_line",
    "wrong_shape",
]

ReferenceType = Literal["anaphora", "temporal", "ellipsis", "topic"]

MAX_EXPANDED_QUERIES = 5
_MESSAGE_CHARS = 300
_QUERY_CHARS = 200


class DetectedReference(BaseModel):
    """A reference the model resolved: its type, the words used and what they mean."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    type: ReferenceType
    surface: str
    resolved: str

    @field_validator("type", mode="before")
    @classmethod
    def _any_case(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class Expansion(BaseModel):
    """The validated answer of Phase 1."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    expanded_queries: list[str]  # required: a reply without it ({}, "queries") is not one
    detected_references: list[DetectedReference] = Field(default_factory=list)

    @property
    def temporal(self) -> list[DetectedReference]:
        """The temporal references only."""
        return [r for r in self.detected_references if r.type == "temporal"]


EXPANSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "expanded_queries": {
            "type": "array",
            "items": {"type": "string"},
            "maxItems": MAX_EXPANDED_QUERIES,
        },
        "detected_references": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {
                        "type": "string",
                        "enum": ["anaphora", "temporal", "ellipsis", "topic"],
                    },
                    "surface": {"type": "string"},
                    "resolved": {"type": "string"},
                },
                "required": ["type", "surface", "resolved"],
            },
        },
    },
    "required": ["expanded_queries", "detected_references"],
}
"""The JSON schema sent as ``response_format`` (servers that reject it get a plainer format)."""


_SYSTEM = {
    "en": (
        "You prepare searches in the memory of a companion chatbot (its past conversations "
        "with the user). From the new message and the recent conversation, write up to {n} "
        "short standalone search queries that find the past conversations the message refers "
        "to: replace pronouns and omitted words with what they mean, name the topic, add key "
        "synonyms. Never repeat the message itself. List the references you resolved; for a "
        "time reference, resolved is the ISO date range START/END (inclusive) computed from "
        "today's date. Answer with JSON only:\n"
        '{{"expanded_queries": ["..."], "detected_references": [{{"type": '
        '"anaphora|temporal|ellipsis|topic", "surface": "...", "resolved": "..."}}]}}'
    ),
    "ja": (
        "あなたはコンパニオンAIの記憶（ユーザーとの過去の会話）を検索する準備をします。"
        "新しい発言と直前の会話から、発言が指している過去の会話を見つける短い検索クエリを"
        "最大{n}個書いてください。指示語や省略は具体的な言葉に置き換え、話題の名前や言い換えも"
        "加えます。発言そのものは繰り返さないこと。解決した参照も挙げ、時間の表現"
        "（先週・昨日など）の resolved は今日の日付から計算した ISO 日付範囲 開始/終了"
        "（両端を含む）にします。JSON だけで答えてください:\n"
        '{{"expanded_queries": ["..."], "detected_references": [{{"type": '
        '"anaphora|temporal|ellipsis|topic", "surface": "...", "resolved": "..."}}]}}'
    ),
}
_LABELS = {
    "en": {
        "today": "Today",
        "recent": "Recent conversation",
        "new": "New message",
        "user": SPEAKERS["en"][0],
        "partner": SPEAKERS["en"][1],
    },
    "ja": {
        "today": "今日",
        "recent": "直前の会話",
        "new": "新しい発言",
        "user": SPEAKERS["ja"][0],
        "partner": SPEAKERS["ja"][1],
    },
}
_WEEKDAYS = {"en": ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), "ja": "月火水木金土日"}


def _squash(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def today_line(now: datetime, lang: Language) -> str:
    """``Today: 2026-05-20 (Wed)`` in the conversation's language."""
    label = _LABELS[lang]["today"]
    wd = _WEEKDAYS[lang][now.weekday()]
    return f"{label}: {now:%Y-%m-%d} ({wd})"


def format_recent(
    recent: Sequence[Message], turns: int, lang: Language, chars: int = _MESSAGE_CHARS
) -> str:
    """The last ``turns`` exchanges (2×turns messages), one ``Speaker: text`` line each."""
    if turns <= 0:
        return ""
    labels = _LABELS[lang]
    lines = []
    for m in list(recent)[-2 * turns :]:
        if is_blank(m.text):
            continue
        who = labels["partner"] if m.role == "partner" else labels["user"]
        lines.append(f"{who}: {_squash(prompt_quote(m.text[: 4 * chars]), chars)}")
    return "\n".join(lines)


def expansion_prompt(
    text: str,
    recent: Sequence[Message],
    now: datetime,
    lang: Language,
    *,
    turns: int = 3,
    max_queries: int = MAX_EXPANDED_QUERIES,
) -> tuple[str, str]:
    """The ``(system, user)`` prompt of Phase 1."""
    labels = _LABELS[lang]
    system = _SYSTEM[lang].format(n=max(1, max_queries))
    parts = [today_line(now, lang)]
    history = format_recent(recent, turns, lang)
    if history:
        parts.append(f"{labels['recent']}:\n{history}")
    parts.append(f"{labels['new']}: {one_line_within(prompt_quote(text), 2 * _MESSAGE_CHARS)}")
    return system, "\n".join(parts)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def clean_queries(queries: Sequence[str], exclude: Sequence[str], limit: int) -> list[str]:
    """Strip, de-duplicate and cap queries, dropping any equal to one in ``exclude``. One
    without a word the full text could search ("The Who", "IT", 🎸) is kept: its vector
    search finds what no other query does (:meth:`.FastPath.run` notes no skipped full-text
    search for it)."""
    if limit <= 0:
        return []
    seen = {_norm(e) for e in exclude}
    out: list[str] = []
    for q in queries:
        flat = _squash(strip_controls(q), _QUERY_CHARS)  # a model's NULs, escapes, U+202E
        key = _norm(flat)
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(flat)
        if len(out) >= limit:
            break
    return out


MAX_REFERENCES = 10
"""The most detected references read from one reply (a message names a few; thousands
would cost the turn its deadline to read)."""


def parse_expansion(data: Any, text: str, max_queries: int = MAX_EXPANDED_QUERIES) -> Expansion:
    """Validate a Phase 1 reply; the message itself and duplicates are dropped, ≤ ``max_queries``
    kept, and the first :data:`MAX_REFERENCES` references read.

    Raises LLMResponseError ("invalid reply: …") when the reply has the wrong shape or types.
    """
    if isinstance(data, dict):  # cut long lists before they are validated one by one
        data = {
            k: v[: 10 * MAX_EXPANDED_QUERIES if k == "expanded_queries" else MAX_REFERENCES]
            if k in ("expanded_queries", "detected_references") and isinstance(v, list)
            else v
            for k, v in data.items()
        }
        if "detected_references" in data:  # a bad one (or null) drops only itself
            refs = data["detected_references"]
            data["detected_references"] = _readable_references(
                refs if isinstance(refs, list) else []
            )
    try:
        parsed = Expansion.model_validate(data)
    except ValidationError as exc:
        raise wrong_shape(exc) from exc
    shown = prompt_quote(text)  # (as the prompt showed it: a model may echo either)
    queries = clean_queries(
        parsed.expanded_queries, [text, shown], min(max_queries, MAX_EXPANDED_QUERIES)
    )
    return parsed.model_copy(update={"expanded_queries": queries})


def _readable_references(items: list[Any]) -> list[DetectedReference]:
    """The references of a Phase 1 reply that have the right shape (an unknown type, or
    one resolved to nothing, is left out; the queries beside it still count)."""
    out: list[DetectedReference] = []
    for raw in items:
        try:
            out.append(DetectedReference.model_validate(raw))
        except ValidationError:
            continue
    return out


def wrong_shape(exc: ValidationError) -> LLMResponseError:
    """The error for an LLM reply that parsed as JSON but has the wrong shape or types."""
    return LLMResponseError(f"invalid reply: {describe_validation_error(exc)}")


def describe_validation_error(exc: ValidationError) -> str:
    """The first problem of a validation error, e.g. ``expanded_queries: Input should be a valid list``."""
    errors = exc.errors()
    if not errors:
        return str(exc).splitlines()[0]
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "reply"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first.get('msg', 'invalid')}{more}"


class Expander:
    """Runs Phase 1 against a :class:`ChatClient`, with an optional LRU cache of answers."""

    def __init__(self, client: ChatClient, config: LLMConfig, *, max_queries: int) -> None:
        self.client = client
        self.config = config
        self.max_queries = max_queries
        self._cache: OrderedDict[tuple[Any, ...], Expansion] = OrderedDict()
        self._lock = threading.Lock()

    def _key(
        self, text: str, recent: Sequence[Message], now: datetime, lang: Language
    ) -> tuple[Any, ...]:
        turns = self.config.expansion_recent_turns
        tail = tuple((m.role, m.text) for m in list(recent)[-2 * turns :]) if turns else ()
        return (self.config.expansion_model, lang, now.date().isoformat(), text, tail)

    def clear(self) -> None:
        """Forget every cached answer (an agent forgotten: they hold its messages)."""
        with self._lock:
            self._cache.clear()

    def cached(
        self, text: str, recent: Sequence[Message], now: datetime, lang: Language
    ) -> Expansion | None:
        """The cached answer for identical input (same day), if caching is on."""
        if not self.config.cache_expansions:
            return None
        key = self._key(text, recent, now, lang)
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                self._cache.move_to_end(key)
            return hit

    def expand(
        self,
        text: str,
        recent: Sequence[Message],
        now: datetime,
        lang: Language,
        *,
        deadline_s: float,
    ) -> Expansion:
        """Ask the expansion model and validate its answer.

        Raises LLMError (LLMTimeout, LLMResponseError).
        """
        cfg = self.config
        system, user = expansion_prompt(
            text,
            recent,
            now,
            lang,
            turns=cfg.expansion_recent_turns,
            max_queries=self.max_queries,
        )
        reply = self.client.complete_json(
            model=cfg.expansion_model,
            system=system,
            user=user,
            schema=EXPANSION_SCHEMA,
            max_tokens=cfg.max_output_tokens,
            deadline_s=deadline_s,
            schema_name="memengine_expansion",
        )
        expansion = parse_expansion(reply.data, text, self.max_queries)
        if cfg.cache_expansions:
            key = self._key(text, recent, now, lang)
            with self._lock:
                self._cache[key] = expansion
                self._cache.move_to_end(key)
                while len(self._cache) > cfg.expansion_cache_size:
                    self._cache.popitem(last=False)
        return expansion
