"""One copy of each thing said first, when a message asks about nothing but a time.

"What did I do last week?" is answered by what occurred then, whatever its words
(:func:`.retriever.asked_time_first`), and a week of a companion chat holds a daily
"Morning!" five times beside the one visit to the dentist: ranked by their closeness to the
question's few words, the greetings' copies filled the results and the week's one event was
left out. Here the first copy of each saying keeps its place and the later copies go after
every other memory of the time (still before the memories of other times): each thing said
then is shown once before any is shown twice. A saying is an exchange's user turn (another
kind's text) as repeats are compared (:func:`.recent.repeat_key`); one longer than small
talk (:data:`SAID_CHARS`) is its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..models import Episode, EpisodeKind
from .fastpath import Candidate
from .recent import repeat_key

__all__ = ["SAID_CHARS", "later_copies_last", "said_key", "text_key"]

SAID_CHARS = 200
"""The longest saying whose copies are grouped (small talk's length: a paste or a story told
twice is each time its own memory)."""


def said_key(episode: Episode) -> str:
    """What ``episode`` said, as copies of it are compared ("" for one of its own: longer
    than :data:`SAID_CHARS`, or nothing but symbols)."""
    said = episode.user_text if episode.kind is EpisodeKind.exchange else None
    return text_key(said if said is not None else episode.text)


def text_key(text: str) -> str:
    """:func:`said_key` of a stored text read without its episode (a store row's)."""
    return "" if len(text) > SAID_CHARS else repeat_key(text)


def later_copies_last(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Reorder the candidates of the time asked about (``asked_time`` 1, not
    ``recall_only``; :func:`.retriever.asked_time_first` lifts them above the rest) among
    themselves: the first copy of each saying in its place, best first, then the later
    copies (marked ``copy``). They take their own scores in the new order, so none moves
    past another candidate."""
    told = [
        i
        for i, c in enumerate(candidates)
        if c.components.get("asked_time", 0.0) >= 1.0 and not c.components.get("recall_only")
    ]
    seen: set[str] = set()
    copy: set[int] = set()
    for i in told:
        key = said_key(candidates[i].episode)
        if key and key in seen:
            copy.add(i)
        seen.add(key)
    if not copy:
        return list(candidates)
    order = sorted(told, key=lambda i: (i in copy, -candidates[i].score))
    scores = sorted((candidates[i].score for i in told), reverse=True)
    out = list(candidates)
    for at, i, score in zip(told, order, scores, strict=True):  # (ties keep the new order)
        c = candidates[i]
        comps = {**c.components, "copy": 1.0} if i in copy else c.components
        out[at] = replace(c, score=score, components=comps)
    out.sort(key=lambda c: -c.score)
    return out
