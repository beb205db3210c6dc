"""A correction in the next turn: "My yoga class is on Monday at 6pm", and a minute later
"Actually it's Tuesday, not Monday" (いや、火曜だった). The correction names no subject of
its own, so a later "When is my yoga class?" finds the Monday turn and not the one that
corrects it; this module finds the turn that follows a result to be packed and, when the
same speaker corrects it there, brings the correction in before it, marked as the change
it is (``changes``: the pack says "newer than the memory of …")."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..lazy_re import lazy_compile
from ..models import Episode, EpisodeKind
from ..text import fold
from .fastpath import Candidate
from .signals import asks_something

CORRECTION_CHARS = 160
"""The longest turn read as a correction: a correction right after a fact is short, and a
long message that opens with "Actually," is about something else as often as not."""

_EN_OPENING = lazy_compile(
    r"^\W*(?:(?:oh|oops|whoops|ah|hmm|um|sorry|my bad|no|wait)\W+)*"
    r"(?:actually\b(?!\W+(?:i\s+(?:have|had|want|need|was\s+wondering)|can|could|would|"
    r"do|did|what|how|why|when|where|who))"
    r"|i\s+meant\b|no\s+wait\b|wait\W+no\b|scratch\s+that\b|correction\b|make\s+that\b"
    r"|i\s+was\s+wrong\b|i\s+got\s+(?:it|that)\s+wrong\b|let\s+me\s+correct\b"
    r"|(?:oops|whoops|my\s+bad)\W+(?:it'?s|it\s+is|that'?s|that\s+is|not)\b)",
    re.IGNORECASE,
)
"""How an English correction opens: "Actually, …" (not "Actually, can you…", a new
request), "Sorry, I meant …", "No wait, …", "Scratch that, …", "Oops, it's …" (not "Sorry, it's
been a long day")."""

_EN_NOT = lazy_compile(
    r"\b(?:it'?s|it\s+is|that'?s|that\s+is)\s+(?:on\s+|at\s+|in\s+)?[\w'-]+(?:\s+[\w'-]+)?"
    r"\W+not\s+(?:on\s+|at\s+|in\s+)?[\w'-]+\W*$",
    re.IGNORECASE,
)
"""An English correction said as "it's Tuesday, not Monday" at the end of a turn."""

_JA_OPENING = lazy_compile(
    r"^\W*(?:いや(?:いや)?[、,，\s]|いや違|ごめん|ごめんなさい|すみません|あ[、,，]|訂正)"
)
"""How a Japanese correction may open: いや、 (not いや〜, a sigh), ごめん, 訂正."""

_JA_CORRECTED = lazy_compile(
    r"(?:じゃなくて|じゃなく|ではなくて|ではなく|じゃなかった|の間違い|間違えた|まちがえた"
    r"|違った|ちがった|に訂正|訂正し)"
)
"""What says a Japanese turn corrects: 月曜じゃなくて火曜, 火曜の間違い, 間違えた."""

_JA_WAS = lazy_compile(r"(?:だった|でした)\W*$")
"""A Japanese correction's ending after its opening: いや、火曜だった."""


def own_turn(episode: Episode) -> str:
    """What the speaker of ``episode`` said: an exchange's user turn, else its text."""
    if episode.kind is EpisodeKind.exchange:
        return episode.user_text or ""
    return episode.text


def corrects(episode: Episode) -> bool:
    """Whether ``episode`` is a short turn that corrects what its speaker said just before
    ("Actually it's Tuesday, not Monday", "Sorry, I meant Tuesday", いや、火曜だった,
    月曜じゃなくて火曜): not a question, at most :data:`CORRECTION_CHARS` long."""
    said = fold(own_turn(episode)).strip()
    if not said or len(said) > CORRECTION_CHARS or asks_something(said):
        return False
    if _EN_OPENING.search(said) or _EN_NOT.search(said):
        return True
    if _JA_CORRECTED.search(said):
        return True
    return bool(_JA_OPENING.search(said) and _JA_WAS.search(said))


def _speaker(episode: Episode) -> object:
    """Who said ``episode`` (its ``speaker`` metadata: a chat log's "Caroline"), or None."""
    return episode.metadata.get("speaker")


def bring_corrections(
    candidates: Sequence[Candidate],
    packed: Sequence[Candidate],
    following: Mapping[int, Episode],
) -> list[Candidate]:
    """``candidates`` with the turn that follows each ``packed`` result
    (``following[result id]``) put just before it when the same speaker corrects it there
    (:func:`corrects`): scored as the result, marked ``correction``, ``next_turn`` and as the
    later change of it (``later_change``, ``changes``). A correction already ranked higher
    keeps its place and is marked the same; one that was no candidate joins them."""
    out = list(candidates)
    for result in packed:
        nxt = following.get(result.episode.id)
        if nxt is None or _speaker(nxt) != _speaker(result.episode) or not corrects(nxt):
            continue
        marks = {
            "correction": 1.0,
            "next_turn": 1.0,
            "later_change": 1.0,
            "changes": float(result.episode.id),
        }
        at = next((i for i, c in enumerate(out) if c.episode.id == nxt.id), None)
        here = next(i for i, c in enumerate(out) if c.episode.id == result.episode.id)
        if at is not None and at < here:
            out[at] = replace(out[at], components={**out[at].components, **marks})
            continue
        old = out.pop(at) if at is not None else None  # (after the result: ``here`` holds)
        comps = {**(old.components if old is not None else {}), **marks}
        out.insert(here, replace(result, episode=nxt, score=result.score, components=comps))
    return out
