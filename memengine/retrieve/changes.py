"""Later changes: a newer memory saying that a packed one has changed comes before it.

A fact is often told once and changed later ("Mochi eats the salmon kibble" … weeks on,
"the vet said she should switch to a renal diet, so now she's on Hill's k/d"). A question
("what does my cat eat?") shares its words with the first telling, so the change ranks
below it and, by its own scores, is often not packed at all: the reply would repeat the
old fact. A candidate is a *later change* of a result the turn would pack when it
occurred later, its own words (the user's side of an exchange) say that something changed
(:data:`CHANGE`: "now", "switched", "no longer", "moved", 今は, 変えた, やめた, 引っ越した …),
in a sentence that shares a phrase with that result (:func:`~memengine.text.shared_phrases`:
a name, a thing, 「スペイン語」), and the two are close in meaning (the cosine of their stored
vectors at least ``later_change_cosine``). Such a candidate is
moved just before the result, marked ``later_change`` (and ``changes``: the result's id),
and offered (``medium``) with it; the pack says which memory it changes. A message that
names a time is left as ranked (what it asks about is that time's state).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..models import Episode, EpisodeKind
from ..text import shared_phrases
from .fastpath import Candidate

CHANGE = re.compile(
    r"\b(?:nowadays|these days|anymore|no longer|instead(?! of)|switch(?:ed|ing)?(?! up)"
    r"|chang(?:ed|ing) (?:\w+ ){0,3}?(?:to|from|my mind)|mov(?:ed|ing) (?:\w+ ){0,3}?"
    r"(?:to|into|out|house|away|back)|quit|stopped|gave up|giving up|sold|replaced|broke up"
    r"|divorced|resched\w*|postponed|cancell?ed|from now on)\b"
    r"|今は|今では|最近は|これからは|変え|変わっ|変更|替え|換え|乗り換|引っ越|辞め|やめ|止め"
    r"|代わりに|じゃなくて|ではなく|じゃなく|売っ|別れ|転職|転校|移っ|移し|延期|キャンセル|訂正",
    re.ASCII | re.IGNORECASE,
)
"""Words that say something changed, in English (as words) and Japanese."""

_NOT_BEFORE = re.compile(
    r"\b(?:not|never|won't|don't|didn't|can't|cannot|wouldn't)\W+(?:\w+\W+)?$", re.I
)
"""A negation just before an English change word ("I won't quit", "not giving up")."""

_NOT_AFTER = re.compile(r"^\w{0,2}(?:ない|なかっ|ません|ず(?!っと))")
"""A negation just after a Japanese one (変えない, やめないで, 辞めません)."""

_SENTENCE = re.compile(r"(?<=[.!?。！？\n])\s*")

SHARED_MIN_COSINE = 0.3
"""The default ``later_change_cosine``: how close in meaning (on the default embedder's
scale) a candidate must be to a result to count as its later change, besides sharing a
phrase with it. Of 24 corrections written for the purpose (12 per language), the changes'
cosines to what they change ran from .27 to .82; newer memories with the same change
words about other things came to at most .39, and share no phrase with it."""

MAX_CHANGES = 2
"""How many later changes one result can bring before it (the newest first)."""

Similar = Callable[[int, Sequence[int]], dict[int, float]]
"""The cosine of a stored episode's vector to each of some others' (missing: no vector)."""


def own_words(ep: Episode) -> str:
    """What an episode's own speaker said: an exchange's user turn, else its content."""
    if ep.kind is EpisodeKind.exchange:
        return ep.user_text or ""
    return ep.content or ""


def change_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (its first 2,000 characters) that say something changed: a
    change word (:data:`CHANGE`) not negated, in a sentence that asks nothing ("Any more
    paintings coming up?", "I won't quit" and 変えないで say no change)."""
    out: list[str] = []
    for sentence in _SENTENCE.split(text[:2000]):
        if not sentence or sentence.rstrip().endswith(("?", "？")):
            continue
        for m in CHANGE.finditer(sentence):
            before, after = sentence[: m.start()], sentence[m.end() :]
            if m.group()[0].isascii():
                if _NOT_BEFORE.search(before) is None:
                    out.append(sentence)
                    break
            elif _NOT_AFTER.match(after) is None:
                out.append(sentence)
                break
    return out


def _speaker(ep: Episode) -> str | None:
    speaker = ep.metadata.get("speaker")
    return speaker if isinstance(speaker, str) else None


def _subjects(words: str, sentence: str, names: set[str]) -> list[str]:
    """The phrases of ``words`` that ``sentence`` shares, not a speaker's name nor a change
    word (今は in both says nothing about what changed)."""
    shared = shared_phrases(words, sentence, limit=20)
    return [p for p in shared if p not in names and CHANGE.fullmatch(p) is None]


def later_changes(
    candidates: list[Candidate],
    packed: Sequence[Candidate],
    similar: Similar,
    min_cosine: float = SHARED_MIN_COSINE,
) -> list[Candidate]:
    """``candidates`` with each later change of a ``packed`` result moved just before it (up
    to :data:`MAX_CHANGES`, the newest first), scored as it and marked ``later_change`` and
    ``changes``. A later change occurred after the result, has the same speaker (the user,
    for exchanges), and says in one sentence (:func:`change_sentences`) that something it
    shares with the result (:func:`~memengine.text.shared_phrases`; not a speaker's name)
    changed; its stored vector is at least ``min_cosine`` close to the result's (``similar``,
    asked only about candidates that pass the rest)."""
    said = {id(c): change_sentences(own_words(c.episode)) for c in candidates}
    marked = [c for c in candidates if said[id(c)]]
    if not marked or not packed:
        return candidates
    names = {n.lower() for c in candidates if (n := _speaker(c.episode))}
    order = list(candidates)
    for anchor in packed:
        at = order.index(anchor)
        words = own_words(anchor.episode)
        later = [
            c
            for c in marked
            if c.episode.occurred_at > anchor.episode.occurred_at
            and order.index(c) > at
            and _speaker(c.episode) == _speaker(anchor.episode)
            and any(_subjects(words, s, names) for s in said[id(c)])
        ]
        if not later:
            continue
        cosines = similar(anchor.episode.id, [c.episode.id for c in later])
        found = [c for c in later if cosines.get(c.episode.id, -1.0) >= min_cosine]
        found.sort(key=lambda c: c.episode.occurred_at, reverse=True)
        for c in found[:MAX_CHANGES]:  # each before the result: the newest first
            order.remove(c)
            order.insert(order.index(anchor), c)
            c.score = max(c.score, anchor.score)
            c.components["later_change"] = 1.0
            c.components["changes"] = float(anchor.episode.id)
            marked.remove(c)
    return order
