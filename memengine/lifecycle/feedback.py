"""Feedback: which memories of a turn were actually used, and how much they mattered.

A retrieval only counts its results as candidates; ``feedback(turn_id, …)``
says which were *used*, either explicitly by id (any candidate) or from the final
answer, which is judged against the candidates the turn offered to the reply (the
relevant ones of a turn that injects: what its pack shows):

- ``match`` (:mod:`.answer_match`): a memory is used when one of its tags occurs in the answer,
  when enough of its key terms do (``answer_keyword_fraction``; an English word in
  another form too: "peanut" of "peanuts"), when at least two of the answer's words
  with an uncommon term (:func:`uncommon`; トヨタ is one word) come from it and make that
  share of the answer, unless another memory offered holds them and more of the answer's,
  when the answer lists several memories and carries its
  own content (a name, a title or a number of it, or two words the user said in it,
  that no other memory offered holds, save in its reply: an earlier answer's; in
  Japanese a name is one an honorific marks, 翔太くん or はるとくん, not a word for
  someone, 店員さん or 息子さん, and a plain word,
  京都 or 天気, is one of two, as in English), when the answer lists days by their date
  and one is the day it was said ("Mar 3, 8 and 13"), or when the answer's embedding
  is close to the memory's (cosine ≥ ``answer_match_threshold``) and no memory found by
  its content holds the answer's terms this one does and is clearly closer (辛いの無理,
  not 辛いのは大丈夫, for 「辛いの無理って言ってたよね」);
- ``llm``: an LLM is shown the numbered memories and the answer and asked
  which influenced it (falls back to ``match`` if the call fails).

Each used memory: ``access_count += 1``, ``last_access = now``,
``strength += use_strength_gain + impact × impact_factor``,
``impact_score += impact`` and, when the task has a perspective, its
strength under that perspective ``+= perspective_strength_gain`` (a
learning, if given, is kept under that perspective). The gains add to a strength that
decays as before (from the memory's last sleep); one that a sleep archived after the
turn comes back as deep recall brings it, its strength set anew and decaying from now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any, Literal

from ..arguments import spelled_as_declared, undeclared_perspective
from ..clock import in_zone
from ..config import LifecycleConfig
from ..embed.base import Embedder
from ..errors import EmbeddingError, FeedbackExists, InvalidInput, LLMError, NotFound
from ..lazy_re import lazy_compile
from ..models import Episode
from ..retrieve.candidate_text import candidate_text
from ..store import lifecycle as store_lc
from ..store.database import Store
from ..store.episodes import existing_ids
from ..text import counted, prompt_quote, query_terms, quoted_name, within, written_number
from .answer_match import match_answer, uncommon
from .strength import impact_of

__all__ = [
    "READ_ANSWER_CHARS",
    "FeedbackResult",
    "Judge",
    "give_feedback",
    "llm_used",
    "read_answer",
]

Judge = Literal["auto", "match", "llm"]

LLM_SYSTEM = (
    "You audit an assistant. Given its final answer and numbered memories that were shown "
    "to it, list the numbers of the memories whose content influenced the answer. "
    'Reply with one JSON object: {"used": [numbers]} (an empty list if none).'
)
LLM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"used": {"type": "array", "items": {"type": "integer"}}},
    "required": ["used"],
}
_LLM_CHARS = 300
_ANSWER_CHARS = 4000
"""How much of the answer the LLM judge reads (the embedding reads its first 2,000)."""
READ_ANSWER_CHARS = 20_000
"""The most of an answer the judges read (:func:`read_answer`): a reply is seldom a tenth of
it, and one that pasted a megabyte took the match seconds."""


def read_answer(answer: str) -> str:
    """What the judges read of ``answer``: all of it up to :data:`READ_ANSWER_CHARS`; past
    that, its beginning and its end, about half each (:func:`.text.within`, as a turn reads
    a long message), so the memory a long reply names in its last lines ("…so, as you said,
    Kinako loves the window seat") is still credited, and the feedback is recorded in
    milliseconds."""
    if len(answer) <= READ_ANSWER_CHARS:
        return answer
    return within(answer.strip(), READ_ANSWER_CHARS)


@dataclass(frozen=True)
class FeedbackResult:
    """What a feedback did: the used memories (and why), the impact and the outcome."""

    turn_id: int
    agent: str
    used: tuple[int, ...]
    method: str
    reasons: dict[int, str]
    impact: float
    outcome: str | None
    perspective: str | None
    degraded: tuple[str, ...] = ()


def _found_by(methods: Sequence[str]) -> str:
    """How a feedback looked for used memories, for a message that says it found none."""
    named = "explicit" in methods
    judged = "llm" in methods or "match" in methods
    if named and judged:
        return "none was named, and none was found in the answer"
    return "none was found in the answer" if judged else "none was named"


def _no_learning(turn_id: int, why: str, *, nameable: bool = True) -> InvalidInput:
    """The refusal of a learning a turn has no used memory to keep with (``why``; not
    ``nameable``: the turn returned none to name)."""
    advice = (
        "name them (used=[…], --used ID), or give the feedback without the learning"
        if nameable
        else "give the feedback without the learning"
    )
    return InvalidInput(
        f"a learning is kept with the memories a turn used, and turn {turn_id} used none "
        f"({why}): {advice}"
    )


_NUMBER_TAG = lazy_compile(r"\[(\s*\d+\s*)\]")


def _one_line(text: str) -> str:
    """``text`` for the judge's prompt, as the prompts of the LLM steps quote it
    (:func:`.text.prompt_quote`: on one line, a chat template's token as ``‹|im_start|›``),
    and a ``[2]`` in it (in any width) written ``(2)``, so that neither the answer nor a
    memory can pose as a numbered memory, start a list or a turn of its own."""
    return _NUMBER_TAG.sub(r"(\1)", prompt_quote(text))


def _memory_line(episode: Episode) -> str:
    """A memory for the judge's prompt as the rerank's prompt shows a candidate
    (:func:`.retrieve.candidate_text.candidate_text`: "User: roses are red / Partner: ok", not
    "roses are red ok"; a label in its text marked, "roses ‹Partner›: I promise"), with a
    ``[2]`` in it written ``(2)`` (:func:`_one_line`)."""
    return _one_line(candidate_text(episode, _LLM_CHARS, "en"))


def _number(item: Any) -> Any:
    """An item of the judge's ``used`` list as a memory's number where it reads as one
    (``"[2]"``, ``"2"``, ``"［２］"`` and ``2.0`` are 2; ``"-1"`` is -1, a number not shown);
    anything else as it came, for the check after."""
    if isinstance(item, float) and item.is_integer():
        return int(item)
    if not isinstance(item, str):
        return item
    number = written_number(item)  # (not "[2", "²")
    return item if number is None else number


def llm_used(
    client: Any,
    *,
    model: str,
    answer: str,
    episodes: Sequence[Episode],
    deadline_s: float,
    max_tokens: int = 200,
) -> tuple[dict[int, str], list[int]]:
    """Ask the LLM (a :class:`~memengine.llm.client.ChatClient`) which numbered memories it
    used: the used episodes' reasons by id, and the numbers it named that were not shown."""
    from ..errors import LLMResponseError

    lines = []
    for n, ep in enumerate(episodes, start=1):
        lines.append(f"[{n}] {_memory_line(ep)}")
    said = _one_line(answer[: _ANSWER_CHARS * 2])[:_ANSWER_CHARS]
    user = "Answer:\n" + said + "\n\nMemories:\n" + "\n".join(lines)
    reply = client.complete_json(
        model=model,
        system=LLM_SYSTEM,
        user=user,
        schema=LLM_SCHEMA,
        max_tokens=max_tokens,
        deadline_s=deadline_s,
        schema_name="used_memories",
    )
    numbers = reply.data.get("used")
    if isinstance(numbers, list):  # "2" and "[2]" as the prompt's [2] are read: a number
        numbers = [_number(n) for n in numbers]
    if not isinstance(numbers, list) or not all(
        isinstance(n, int) and not isinstance(n, bool) for n in numbers
    ):
        what = (
            "without 'used'"
            if "used" not in reply.data
            else "whose 'used' is a list of other things"
            if isinstance(numbers, list)
            else f"whose 'used' is a {type(numbers).__name__}"
        )
        raise LLMResponseError(  # (its shape, not its text: a server may echo the key)
            f"expected {{'used': [numbers]}}, got an object of {counted(len(reply.data), 'key')} "
            f"{what}"
        )
    shown = range(1, len(episodes) + 1)
    used = {episodes[n - 1].id: "the LLM judged it used" for n in numbers if n in shown}
    return used, sorted({n for n in numbers if n not in shown})


def give_feedback(
    store: Store,
    embedder: Embedder,
    cfg: LifecycleConfig,
    turn_id: int,
    *,
    now: datetime,
    used: Sequence[int] | None = None,
    answer: str | None = None,
    helpful: bool = False,
    task_success: bool | None = None,
    prevented_error: bool = False,
    perspective: str | None = None,
    learning: str | None = None,
    client: Any = None,
    model: str = "",
    agent: str | None = None,
    scope_hint: str = "",
    judge_falls_back: bool = True,
    unjudged: str = "",
    zone: tzinfo | None = None,
    deadline_s: float | None = None,
) -> FeedbackResult:
    """Record which memories of ``turn_id`` were used and reinforce them (one transaction).

    ``client`` (a ChatClient) makes the answer be judged by the LLM; without
    it the answer is matched, as it is when the LLM fails, unless not
    ``judge_falls_back``: the :class:`.LLMError` is then raised and nothing
    recorded. ``unjudged`` says why a configured LLM could not be asked (its note goes
    to ``degraded``). Explicit ``used`` ids and those found in the
    answer are combined. ``zone`` is the time zone the memory dates its packs in (its
    ``time_zone``; None: the turn's own offset): the days an answer names are read there,
    so a change of summer time moves none. ``agent`` (when given) must be the turn's
    (``scope_hint`` is added to the NotFound of another's: how the caller reaches it). A
    used memory that a sleep archived after the turn becomes active again, as deep recall
    makes it. ``deadline_s`` is what is left for the LLM's call (default: all of
    ``feedback_deadline_s``; less when getting the client took some).
    """
    with store.connections.read() as cur:
        turn = store_lc.get_turn(cur, turn_id)
        agent_row = store_lc.get_agent(cur, turn.agent) if turn else None
    if turn is None or (agent is not None and turn.agent != agent):
        owner = "" if agent is None else f" of agent {quoted_name(agent)}{scope_hint}"
        raise NotFound(f"no turn with id {turn_id}{owner}")
    if turn.used is not None:
        raise FeedbackExists(f"turn {turn_id} already has feedback (a turn is reinforced once)")
    persp = perspective or turn.perspective
    declared = agent_row.perspectives if agent_row else ()
    if persp is not None and (spelled := spelled_as_declared(persp, declared)) is not None:
        persp = spelled
    elif persp is not None:
        raise undeclared_perspective(turn.agent, persp, declared)
    if learning and persp is None:
        raise InvalidInput("a learning is kept per perspective: give the task's perspective")
    candidate_ids = [i for i, _ in turn.candidates]
    if learning and learning.strip():  # what can be refused before an LLM is asked
        if not candidate_ids:
            raise _no_learning(turn_id, "it returned none", nameable=False)
        if not used and not (answer and answer.strip()):
            raise _no_learning(turn_id, "none was named")
    reasons: dict[int, str] = {}
    methods: list[str] = []
    degraded: list[str] = []
    if used is not None:
        stray = sorted(set(used) - set(candidate_ids))
        if stray:
            named = ", ".join(map(str, stray[:10])) + (", …" if len(stray) > 10 else "")
            raise InvalidInput(
                f"turn {turn_id} did not return {len(stray):,} of the memories given ([{named}])"
            )
        reasons.update({i: "given explicitly" for i in used})
        methods.append("explicit")
    if answer is not None and answer.strip() and candidate_ids:
        found = store.get(candidate_ids)  # (an id of the turn's that now holds another
        # agent's episode is not this turn's memory: that agent's words are not judged)
        # (and only those offered to the reply: one it was not shown cannot be in its answer,
        # and a stock reply, "I see!", is like the stored exchanges that hold it)
        shown = [i for i in candidate_ids if turn.offered is None or i in turn.offered]
        episodes = [found[i] for i in shown if i in found and found[i].agent == turn.agent]
        missing = [i for i in shown if i not in found]
        if missing:  # (deleted or pruned since the turn: the answer cannot be matched to them)
            named = ", ".join(map(str, missing[:10])) + (", …" if len(missing) > 10 else "")
            what = "memory [{}] was" if len(missing) == 1 else "memories [{}] were"
            degraded.append(
                f"{what.format(named)} deleted after the turn; the answer was judged without "
                f"{'it' if len(missing) == 1 else 'them'}"
            )
        judged: dict[int, str] | None = None
        if client is None and unjudged and episodes:  # an LLM configured, not reachable
            degraded.append(f"LLM judge failed, matched instead: {unjudged}")
        if client is not None and episodes:  # (none left of the turn's: nothing to ask)
            try:
                judged, unshown = llm_used(
                    client,
                    model=model,
                    answer=answer,
                    episodes=episodes,
                    deadline_s=cfg.feedback_deadline_s if deadline_s is None else deadline_s,
                )
                methods.append("llm")
                if unshown:  # an invented memory is not a used one; say that it was named
                    named = ", ".join(map(str, unshown[:10])) + (", …" if len(unshown) > 10 else "")
                    degraded.append(
                        f"the LLM judge named memories it was not shown ([{named}]; it was "
                        f"shown {'[1]' if len(episodes) == 1 else f'[1]–[{len(episodes)}]'}); "
                        "ignored"
                    )
            except LLMError as exc:
                if not judge_falls_back:  # the LLM was asked for: the turn waits for it
                    raise
                why = " ".join(str(exc).split())
                why = why if len(why) <= 300 else why[:299] + "…"
                degraded.append(f"LLM judge failed, matched instead: {why}")
        if judged is None:
            try:
                vector = embedder.embed([answer[:2000]])[0]
            except EmbeddingError as exc:  # tags and key terms still match
                degraded.append(f"answer similarity not read, the embedder failed: {exc}")
                sims: dict[int, float] = {}
            else:
                sims = store.similarities(vector, [e.id for e in episodes])  # checks the embedder
            terms = query_terms(answer)
            rows, counts = store.document_counts(terms)
            asked_at = in_zone(turn.created_at, zone)  # (the turn keeps an offset, not a zone)
            judged = match_answer(
                answer, episodes, sims, cfg, uncommon(terms, rows, counts), asked_at
            )
            methods.append("match")
        for i, why in judged.items():
            reasons.setdefault(i, why)
    impact = impact_of(
        cfg, helpful=helpful, task_success=task_success, prevented_error=prevented_error
    )
    outcome = None if task_success is None else ("success" if task_success else "failure")
    used_ids = sorted(reasons)
    method = "+".join(methods) or "none"
    with store.connections.write() as cur:
        again = store_lc.get_turn(cur, turn_id)
        if again is None:  # forgotten with its agent (or trimmed) while this was judged
            raise NotFound(f"no turn with id {turn_id}: it was deleted while its feedback ran")
        if again.used is not None:
            raise FeedbackExists(f"turn {turn_id} already has feedback (a turn is reinforced once)")
        gone = sorted(set(used_ids) - existing_ids(cur, used_ids, turn.agent))
        if gone:  # deleted since the turn: nothing left to reinforce
            degraded.append(f"memories {gone} were deleted after the turn; not reinforced")
            used_ids = [i for i in used_ids if i not in gone]
            reasons = {i: why for i, why in reasons.items() if i not in gone}
        if learning and learning.strip() and not used_ids:  # (raised here: nothing is written)
            why = _found_by(methods)
            if not used and turn.offered is not None and not turn.offered:
                why = "it offered the reply no memory to judge the answer against"
            raise _no_learning(turn_id, "those it used were deleted since" if gone else why)
        if used_ids:
            recalled = store_lc.recall_archived(
                cur,
                used_ids,
                strength=cfg.recall_strength,
                level_drop=cfg.recall_level_drop,
                now=store.now(),  # (revived: it decays from now; a gain below does not reset it)
            )
            for i in recalled:  # archived (by a sleep after the turn): it was used, so it is back
                reasons[i] += "; it was archived: active again"
            store_lc.reinforce(
                cur,
                used_ids,
                now=now,
                strength_gain=cfg.use_strength_gain + impact * cfg.impact_factor,
                impact=impact,
            )
            if persp is not None:
                store_lc.reinforce_perspective(
                    cur, used_ids, persp, cfg.perspective_strength_gain, learning
                )
        store_lc.close_turn(  # (a memory used but deleted since stays used in the record:
            # the scorer learns from the turn's candidates as they were, and it was used)
            cur,
            turn_id,
            used=sorted([*used_ids, *gone]),
            outcome=outcome,
            impact=impact,
            method=method,
            now=now,
        )
    return FeedbackResult(
        turn_id=turn_id,
        agent=turn.agent,
        used=tuple(used_ids),
        method=method,
        reasons=reasons,
        impact=impact,
        outcome=outcome,
        perspective=persp,
        degraded=tuple(degraded),
    )
