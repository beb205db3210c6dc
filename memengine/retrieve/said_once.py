"""One copy of each thing said first: an exchange said again word for word speaks once.

A companion chat says some things every day ("Morning!" — "Morning! Have a good one."), and
their copies crowd what is said once out of a pack. Of the copies among a turn's candidates, the best
ranked keeps its place and the others go after the rest (:func:`older_copies_last`; not for a
question of when or how often, whose answer is every copy), and of the time a message asks
about, each saying is shown once before any twice (:func:`later_copies_last`).

"What did I do last week?" is answered by what occurred then, whatever its words
(:func:`.retriever.asked_time_first`), and a week of a companion chat holds a daily
"Morning!" five times beside the one visit to the dentist: ranked by their closeness to the
question's few words, the greetings' copies filled the results and the week's one event was
left out. Here the first copy of each saying keeps its place and the later copies go after
every other memory of the time (still before the memories of other times): each thing said
then is shown once before any is shown twice. A saying is an exchange's two turns (another
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

__all__ = ["SAID_CHARS", "later_copies_last", "older_copies_last", "said_key", "text_key"]

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


def older_copies_last(candidates: Sequence[Candidate], reach: int) -> list[Candidate]:
    """Of the best ``reach`` candidates that say one saying (:func:`said_key`), the best
    ranked keeps its place and the others go after every candidate that is no copy, in
    their own order, marked ``copy`` (no answer: :func:`~memengine.models.may_answer`):
    eight days' "Work was busy" — "Hang in there." filled a pack for "What do I do for
    work?". (A question of when or how often reads every copy: the caller leaves them.
    Past ``reach`` a copy changes no pack, and keying every candidate would cost a turn
    of hundreds a millisecond.)"""
    seen: set[str] = set()
    copy: list[bool] = []
    for i, c in enumerate(candidates):  # (best first)
        key = said_key(c.episode) if i < reach else ""
        copy.append(bool(key) and key in seen)
        seen.add(key)
    if not any(copy):
        return list(candidates)
    floor = min(c.score for c, o in zip(candidates, copy, strict=True) if not o)
    top = max(c.score for c in candidates)
    out: list[Candidate] = []
    for c, o in zip(candidates, copy, strict=True):
        if o:  # (below the least of the rest, in their own order)
            score = floor * 0.99 * c.score / top if top > 0 else 0.0
            c = replace(c, score=min(score, floor), components={**c.components, "copy": 1.0})
        out.append(c)
    out.sort(key=lambda c: -c.score)
    return out
