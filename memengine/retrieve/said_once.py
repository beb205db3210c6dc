"""Each exchange of the time asked about once before any twice.

"What did I do last week?" is answered by what occurred then, whatever its words
(:func:`.retriever.asked_time_first`), and a week of a companion chat holds a daily
"Morning!" five times beside the one visit to the dentist: ranked by their closeness to the
question's few words, the greetings' copies filled the results and the week's one event was
left out. Here the first copy of each saying keeps its place and the later copies go after
every other memory of the time (still before the memories of other times, and packed when
there is room: the same words at another time are another event): each thing said then is
shown once before any is shown twice. A saying is an exchange's two turns (another
kind's text), each as repeats are compared (:func:`.recent.repeat_key`): the user's "ok" or
うん is said again with a new fact in every reply. A turn longer than small talk
(:data:`SAID_CHARS`) makes an exchange its own.
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
    """What ``episode`` said, as copies of it are compared: an exchange's two turns, another
    kind's text ("" for one of its own: a turn longer than :data:`SAID_CHARS`, or nothing
    but symbols)."""
    if episode.kind is EpisodeKind.exchange:
        return text_key(episode.user_text or "", episode.reply_text or "")
    return text_key(episode.text, "")


def text_key(said: str, reply: str) -> str:
    """:func:`said_key` of the turns of a stored row read without its episode. Both turns
    are compared: "ok" — "Noted: your boss is Mr. Sato" and "ok" — "So your gym is Gold's"
    say two things, and "Work was busy" — "Take care!" and — "Haha, fun." two exchanges."""
    if len(said) > SAID_CHARS or len(reply) > SAID_CHARS:
        return ""
    key = f"{repeat_key(said)}\x1f{repeat_key(reply)}"
    return "" if key == "\x1f" else key


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
