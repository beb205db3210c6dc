"""Second-stage evidence over the fused candidates: their session, and the speaker a query names.

Two signals that one turn's own score cannot see, both added to the fused
score as fractions of the best candidate's score, then the list is
re-sorted (see :func:`rescore`):

- **Session** (``session_weight``): the candidates are grouped into sessions
  (runs of turns at most ``neighbour_gap_minutes`` apart); a session where
  several candidates match the query well is where the answer is likely
  to be, so each candidate gets its session's support: the sum of the
  ``session_top_n`` best BM25 scores among the candidates in its session,
  relative to the largest support. Every candidate of a session gets the
  same bonus, so the bonus lifts sessions and never reorders the turns of
  one session.
- **Speaker** (``speaker_weight``): a ``message`` episode records who said
  it (``metadata["speaker"]``); a question that names a person is mostly
  answered by what that person said, so a candidate whose speaker the
  query names gets the bonus. Episodes without a speaker are unaffected.

After the lists are re-weighted, :func:`window_bonus` lifts the candidates
that occurred in the time window the message names (``window_weight``),
an exchange whose user turn only asked to be reminded by less (:func:`asks_to_recall`:
"What did I do last week?" tells nothing that happened then), and :func:`answer_type_bonus` those whose text could answer the kind of
question asked, a time or a quantity (``answer_type_weight``). Last,
:func:`lift_next_turns` lifts the turn that follows one of the best
candidates when that candidate ended on a question (:func:`asks_back`) and
the next turn holds the asked kind: the answer to "When is Maja's
wedding?" is often the reply to the companion's "Do you know the date
yet?", after the turn that names the wedding.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from ..lazy_re import lazy_compile
from ..models import Episode, EpisodeKind
from ..text import fold
from .answer_type import AnswerType, carries_any
from .signals import asks_something, only_asks_to_recall

if TYPE_CHECKING:
    from .fastpath import Candidate

__all__ = [
    "answer_type_bonus",
    "asks_back",
    "asks_to_recall",
    "in_window",
    "lift_next_turns",
    "names_speaker",
    "rescore",
    "session_ids",
    "session_scores",
    "window_bonus",
]

ANSWER_TYPE_CHARS = 2000
"""How much of a candidate's text is read for an answer of the asked kind."""

_CJK = lazy_compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")


def session_ids(times: Sequence[datetime], gap_s: float) -> list[int]:
    """Session number of each time: sorted by time, a gap over ``gap_s`` seconds starts a new one."""
    order = sorted(range(len(times)), key=lambda i: times[i])
    out = [0] * len(times)
    current = 0
    for n, i in enumerate(order):
        if n and (times[i] - times[order[n - 1]]).total_seconds() > gap_s:
            current += 1
        out[i] = current
    return out


def session_scores(
    times: Sequence[datetime], scores: Sequence[float], gap_s: float, top_n: int
) -> list[float]:
    """Each item's support from its session in [0, 1]: the sum of the ``top_n`` best scores in it.

    Every item of a session gets the same support (the sums are divided by
    the largest one), so adding it keeps the order inside a session; a
    support from the *other* items alone gave a session's weaker turns a
    larger bonus than its best one (docs/benchmarks.md, session 8).
    """
    sessions = session_ids(times, gap_s)
    members: dict[int, list[float]] = {}
    for sid, score in zip(sessions, scores, strict=True):
        members.setdefault(sid, []).append(max(score, 0.0))
    totals = {sid: sum(sorted(group, reverse=True)[:top_n]) for sid, group in members.items()}
    support = [totals[sid] for sid in sessions]
    best = max(support, default=0.0)
    return [v / best for v in support] if best > 0 else [0.0] * len(support)


def names_speaker(query: str, speaker: str) -> bool:
    """True when ``query`` names ``speaker``: the full name or its first word, as whole words
    (CJK: anywhere), both compared as the full-text search compares words (:func:`.text.fold`:
    Zoë is Zoe, O’Brien is O'Brien)."""
    q = fold(query)
    name = " ".join(fold(speaker).split())
    if not name:
        return False
    if _CJK.search(name):
        return name in q
    forms = {name, name.split()[0]}
    return any(
        len(form) > 1 and re.search(r"(?<!\w)" + re.escape(form) + r"(?!\w)", q) for form in forms
    )


def rescore(
    candidates: Sequence[Candidate],
    query: str,
    *,
    gap_s: float,
    session_weight: float,
    session_top_n: int,
    speaker_weight: float,
) -> list[Candidate]:
    """Add the session and speaker bonuses (fractions of the best score) and re-sort, best first."""
    out = list(candidates)
    if not out or (session_weight <= 0 and speaker_weight <= 0):
        return out
    top = max(c.score for c in out)
    if session_weight > 0:
        sessions = session_scores(
            [c.episode.occurred_at for c in out],
            [c.components.get("bm25", 0.0) for c in out],
            gap_s,
            session_top_n,
        )
        for c, s in zip(out, sessions, strict=True):
            c.components["session"] = s
            c.components["session_bonus"] = session_weight * top * s
            c.score += session_weight * top * s
    if speaker_weight > 0:
        for c in out:
            speaker = c.episode.metadata.get("speaker")
            if isinstance(speaker, str) and names_speaker(query, speaker):
                c.components["speaker"] = 1.0
                c.score += speaker_weight * top
    out.sort(key=lambda c: -c.score)
    return out


def in_window(moment: datetime, window: tuple[datetime, datetime]) -> bool:
    """Whether ``moment`` lies in ``window`` (start inclusive, end exclusive), compared as instants."""
    ts = moment.timestamp()
    return window[0].timestamp() <= ts < window[1].timestamp()


MARGIN_SHARE = 0.5
"""The share of the window bonus for what occurred in the recording lag after the window."""

RECALL_SHARE = 0.5
"""The share of the window bonus for an exchange of the window that only asked to be
reminded (:func:`asks_to_recall`): still lifted above what is outside, less than what
was told then."""


def window_bonus(
    candidates: Sequence[Candidate],
    window: tuple[datetime, datetime] | None,
    weight: float,
    *,
    margin_end: datetime | None = None,
) -> list[Candidate]:
    """Add ``weight`` × the best score to the candidates that occurred in ``window``, and
    :data:`MARGIN_SHARE` of it to those between its end and ``margin_end`` (the recording
    lag: what happened "last week" is often told on Monday); re-sort.

    The window comes from the message's own time expressions ("last month",
    "a few weeks ago", "on 21 May, 2023"). It is a soft prior, not a filter:
    people misplace dates, and what is outside keeps its rank among itself.
    The margin's smaller share keeps this week's Tuesday below last week's
    when "last week" is asked. An exchange that only asked to be reminded
    (:func:`asks_to_recall`) is also marked ``recall_only`` and gets :data:`RECALL_SHARE`
    of its share: the user's earlier "What did I do last week?" tells less of the time
    than what they told then, but more than what is outside it.
    """
    if window is None or weight <= 0 or not candidates:
        return list(candidates)
    margin = (window[1], margin_end) if margin_end is not None else None
    top = max(c.score for c in candidates)
    out: list[Candidate] = []
    for c in candidates:
        share = 0.0
        if in_window(c.episode.occurred_at, window):
            share = 1.0
        elif margin is not None and in_window(c.episode.occurred_at, margin):
            share = MARGIN_SHARE
        if share:
            recall = asks_to_recall(c.episode)
            c = replace(
                c,
                score=c.score + share * (RECALL_SHARE if recall else 1.0) * weight * top,
                components={
                    **c.components,
                    "window": share,
                    **({"recall_only": 1.0} if recall else {}),
                },
            )
        out.append(c)
    out.sort(key=lambda c: -c.score)
    return out


def answer_type_bonus(
    candidates: Sequence[Candidate], kinds: frozenset[AnswerType], weight: float
) -> list[Candidate]:
    """Add ``weight`` × the best score to the candidates whose text carries one of the
    asked ``kinds`` of answer (:func:`.answer_type.carries_any`); re-sort.

    Like the window, a soft prior: a question's words still rank the
    candidates that hold a date or a number among themselves.
    """
    if not kinds or weight <= 0 or not candidates:
        return list(candidates)
    top = max(c.score for c in candidates)
    out: list[Candidate] = []
    for c in candidates:
        if carries_any(c.episode.text[:ANSWER_TYPE_CHARS], kinds):
            c = replace(
                c, score=c.score + weight * top, components={**c.components, "answer_type": 1.0}
            )
        out.append(c)
    out.sort(key=lambda c: -c.score)
    return out


def asks_back(episode: Episode) -> bool:
    """Whether ``episode`` put a question that the next turn may answer: a question mark
    in the companion's reply of an exchange ("Do you know the date yet?"), or in a message.
    The user's own question in an exchange does not count: the reply already followed it."""
    text = episode.reply_text if episode.kind == EpisodeKind.exchange else episode.text
    return text is not None and ("?" in text or "？" in text)


NOT_TOLD = lazy_compile(
    r"\b(?:(?:not sure|don't think|do not think|doubt) (?:you(?:'ve| have)? )?"
    r"(?:ever )?(?:told|mentioned|said)"
    r"|(?:you )?(?:haven't|have not|never|didn't|did not) (?:ever )?(?:told|mentioned|said)"
    r"|(?:don't|do not|can't|cannot|couldn't) (?:remember|recall)"
    r"|(?:forgot|forgotten) (?:it|that|what|who|where|when|which|your)\b)"
    r"|覚えてない|覚えていない|思い出せない|聞いてない|聞いていない|忘れちゃった|忘れてしまった"
    r"|教えてもらってない|聞いたことない",
    re.IGNORECASE,
)
"""Words of a reply that does not know what the user told ("I'm not sure you told me", "I
can't remember", 聞いてないかも, 覚えてないや), not the feedback judge's wider words of an
answer that does not know: "not sure", "no idea" and わからない answer advice as often
("Hmm, I'm not sure — what does your gut say?", うーん、わからないけど)."""

DISOWN_CHARS = 200
"""How much of a reply :func:`disowns` reads (a not-knowing is said at once)."""


def disowns(episode: Episode) -> bool:
    """Whether ``episode`` is an exchange whose user asked something (:func:`.signals.
    asks_something`) and whose companion's reply said it did not know what the user told
    (:data:`NOT_TOLD`: "What's my cat's name again?" — "Hmm, I'm not sure you told me.",
    聞いてないかも): the user's next turn, as often as not, gives the answer ("Mochi! The grey
    one."). A reply to a statement that says so is surprise ("I didn't know you played
    guitar!"), not a question left open."""
    if episode.kind != EpisodeKind.exchange or not episode.reply_text:
        return False
    if NOT_TOLD.search(episode.reply_text[:DISOWN_CHARS]) is None:
        return False
    return asks_something(episode.user_text or "")


def asks_to_recall(episode: Episode) -> bool:
    """Whether ``episode`` is an exchange whose user turn only asked to be reminded
    (:func:`.signals.only_asks_to_recall`: "What did I do last week?", 何だっけ？): what it
    holds happened before, or is told elsewhere, not at the time it was asked."""
    return episode.kind == EpisodeKind.exchange and only_asks_to_recall(episode.user_text or "")


def lift_next_turns(
    candidates: Sequence[Candidate],
    following: Mapping[int, Episode],
    kinds: frozenset[AnswerType],
    *,
    weight: float,
    factor: float,
) -> list[Candidate]:
    """Lift the turn that follows a candidate (``following[candidate id]``) when the
    candidate asked a question (:func:`asks_back`) and the turn's text carries an asked
    kind of answer, or when its reply said it did not know (:func:`disowns`), whatever the
    question asks; re-sort.

    Its score becomes at least ``factor`` × its predecessor's plus the
    answer-type bonus (``weight`` × the best score), it is marked ``next_turn``
    (also when it already scored higher), and a turn that was not among the
    candidates joins them. Only the predecessors given in
    ``following`` are read (the caller looks up the next turns of its top
    few). A turn after one that asked nothing is left alone: it is as
    likely small talk ("ok, bed now, class at 2 tomorrow") that happens to
    hold a number.
    """
    if not following or not candidates:
        return list(candidates)
    top = max(c.score for c in candidates)
    out = list(candidates)
    index = {c.episode.id: i for i, c in enumerate(out)}
    for c in list(out):
        nxt = following.get(c.episode.id)
        if nxt is None:
            continue
        if not disowns(c.episode) and not (
            kinds
            and asks_back(c.episode)
            and carries_any(nxt.text[:ANSWER_TYPE_CHARS], kinds)  # read only after a question
        ):
            continue
        score = factor * c.score + weight * top
        i = index.get(nxt.id)
        if i is None:
            index[nxt.id] = len(out)
            comps = {"answer_type": 1.0, "next_turn": 1.0}
            out.append(replace(c, episode=nxt, score=score, components=comps))
        else:  # marked even when its own bonus already placed it higher: it is the answer
            comps = {**out[i].components, "answer_type": 1.0, "next_turn": 1.0}
            out[i] = replace(out[i], score=max(out[i].score, score), components=comps)
    out.sort(key=lambda c: -c.score)
    return out
