"""The Retriever: builds the context query, runs the phases, and decides what to inject.

Without an LLM a turn is the fast path alone: the context query (the
last few recent messages joined with the user's new text) plus any extra
queries go through :class:`FastPath`; the two lists are re-fused with
weights adapted to the query (:mod:`.adapt`), the candidates from the
message's time window (:mod:`.temporal`) get a bonus, the results are labelled and
the should-inject rule (:mod:`.inject`, then :mod:`.coverage` for a question
the evidence rule lets through) is applied. The LLM phases (expansion, reranking) hook
in through :class:`Phases` when configured.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Executor
from dataclasses import replace
from datetime import datetime

from ..config import RetrievalConfig
from ..embed.base import Embedder
from ..errors import EmbeddingError
from ..models import Episode, EpisodeKind, Message, Relevance, Retrieval, Retrieved, may_answer
from ..store.database import Store
from ..store.filters import Filters
from ..text import Language, guess_language, is_blank, near_cut, query_terms, within
from .adapt import dense_spread, list_scales, reweight
from .answer_type import asked_types
from .change_words import change_sentences
from .changes import later_changes, own_words
from .corrected_pairs import corrected_when, first_keeping_corrected
from .corrections import MAX_CHAIN, bring_corrections
from .coverage import (
    WordVectors,
    check_analyser,
    content_words,
    soft_coverage,
    word_document_counts,
    word_terms,
)
from .evidence import (
    answer_type_bonus,
    asks_back,
    asks_to_recall,
    disowns,
    in_window,
    lift_next_turns,
    window_bonus,
)
from .fastpath import Candidate, FastPath, FastResult, age_days, lexical_agreement
from .inject import evidence_found, should_inject, top_cosine
from .proposal import proposes
from .recent import (
    HeldTurns,
    RepeatCheck,
    carries_on,
    conversation,
    held_in_recent,
    key_of,
    lookback,
    read_parts,
    repeat_check,
    repeat_key,
)
from .said_once import later_copies_last, said_key, text_key
from .signals import (
    TermStats,
    asks_something,
    code_words,
    content_terms,
    lexical_reach,
    may_ask,
)
from .temporal import (
    TimeExpression,
    find_time_expressions,
    time_is_asked,
    union,
    widen,
    window_filters,
)
from .topic_change import asked_after

__all__ = [
    "Retriever",
    "context_query",
    "fast_results",
    "label",
    "mark_own_copies",
    "time_terms",
    "to_pack",
    "turn_language",
    "turn_queries",
]

_COVERAGE_CHARS = 2000
_COVERAGE_WORDS = 100
"""How much of a long episode the coverage reads: its first 2,000 characters, 100 words."""


def context_query(text: str, said: Sequence[Message], turns: int, max_chars: int) -> str:
    """The conversation before the new text (``said``, as :func:`.recent.conversation`
    gives it; its last ``turns`` exchanges, i.e. 2×turns messages; none when the new text
    starts another topic, :func:`.recent.carries_on`) and the new text, in
    ``max_chars`` at most: the new text comes whole (longer, its beginning and end:
    :func:`~memengine.text.within`), the messages fill the room left, the newest first,
    each cut to its first :data:`.recent.RECENT_MESSAGE_CHARS`, so a long paste two
    messages back neither pushes the question out nor drowns it."""
    return _conversation_queries(text, said, turns, max_chars)[0]


def _conversation_queries(
    text: str, said: Sequence[Message], turns: int, max_chars: int
) -> list[str]:
    """The context query (:func:`context_query`), and, when that is the new text alone,
    the new text joined to the conversation after it."""
    new = "" if is_blank(text) else within(text.strip(), max_chars)  # (zero-width space: nothing)
    parts = [part for _, part in read_parts(text, said, turns, max_chars)]
    joined = "\n".join([*parts, new])
    if carries_on(new, parts):
        return [joined]
    return [new, joined] if joined != new else [new]  # another topic: the messages follow


def turn_queries(
    text: str, said: Sequence[Message], config: RetrievalConfig
) -> tuple[list[str], frozenset[int], frozenset[int]]:
    """A turn's queries of its message and conversation, which of them are joined
    (:meth:`.FastPath.run`: they only add candidates) and which is the question typed after
    a long paste (``typed`` there: a candidate's cosine is read against it too). First the
    context query (:func:`context_query`); when that is the message alone (another topic, as
    far as its words tell), the message joined to the conversation, a joined query (a
    follow-up's implied subject, "Which hotel did we stay at?" after talk of a Kyoto trip,
    counts when near the message); then the question typed after a long paste
    (:func:`typed_after`). A message that asks after words that open another matter
    (:func:`.topic_change.asked_after`: "…what a day. Anyway, what's the wifi password?") is
    split as two messages would be: that question first, then these queries, joined (the
    day's words would drown it)."""
    turns, max_chars = config.recent_conversation_turns, config.max_query_chars
    queries = _conversation_queries(text, said, turns, max_chars)
    asked = asked_after(text) if len(text) <= max_chars else None  # (longer: typed_after)
    if asked is not None:
        queries = [asked, *queries]
    typed = [t for t in typed_after(text, max_chars) if t not in queries]
    return (
        [*queries, *typed],
        frozenset(range(1, len(queries))),
        frozenset(range(len(queries), len(queries) + len(typed))),
    )


TYPED_AFTER_CHARS = 300
"""The most of a long message's last line :func:`typed_after` searches (its end)."""


PASTE_CHARS = 600
"""A message at least this long whose last line follows a line break is read as a paste
with a line typed after it (:func:`typed_after`), though it fits ``max_query_chars``."""


def typed_after(text: str, max_chars: int) -> list[str]:
    """The last line of a ``text`` longer than ``max_chars`` (a paste, then "By the way,
    what's my cat's name again?"), at most its last :data:`TYPED_AFTER_CHARS`, when it
    may ask something (:func:`.signals.may_ask`): searched as a query of its own beside
    the context query, where the paste's words would drown it. So too the last line of a
    text that fits, but is longer than :data:`PASTE_CHARS` and breaks a line before a last
    line of at most :data:`TYPED_AFTER_CHARS` (1,500 characters of a report, then "When is
    the Fenwick tender due?": the report's words drowned it as well). None for a shorter
    text, one line that fits, or a last line that asks nothing (the paste's own last
    line: "Photo caption: …")."""
    text = text.strip()
    head, _, last = text.rpartition("\n")
    if len(text) <= max_chars and (
        len(text) < PASTE_CHARS or not head.strip() or len(last) > TYPED_AFTER_CHARS
    ):
        return []
    if len(last) > TYPED_AFTER_CHARS:
        start = near_cut(last, len(last) - TYPED_AFTER_CHARS)
        space = last.find(" ", start, start + 50)  # (not a word cut in two)
        last = last[space + 1 if space >= 0 else start :]
    return [last.strip()] if not is_blank(last) and may_ask(last) else []


OWN_LANGUAGE_LETTERS = 12
"""How many letters a message needs for its own language to be the turn's."""


def turn_language(text: str, said: Sequence[Message]) -> Language:
    """The language of a turn: of the new text when it has :data:`OWN_LANGUAGE_LETTERS`
    letters or more ("When is Mochi's birthday?" after a reply in Japanese asks in
    English) or any Japanese (はい), else of it and the last two messages before it
    ("OK!")."""
    own = guess_language(text)
    if own == "ja" or sum(ch.isalpha() for ch in text[:500]) >= OWN_LANGUAGE_LETTERS:
        return own
    return guess_language(text + " " + " ".join(m.text for m in said[-2:]))


def label(
    candidate: Candidate,
    config: RetrievalConfig,
    top_score: float,
    lexical_only: bool = False,
    top_at: datetime | None = None,
) -> Relevance:
    """Relevance without an LLM.

    ``high``: both the vector and the full-text search ranked it in their
    top 3 (the full-text search for its own words, not only its neighbours':
    :func:`.fastpath.lexical_agreement`); ``medium``: its fused score is at least
    ``pack_score_ratio`` of the best one and its cosine similarity clears
    ``relevance_threshold``, both searches found it or the full-text search ranked it
    first by its own words (〆切 in 「〆切いつだっけ」, a word the vectors barely weigh), or
    it occurred in the time the message asks about ("What did I
    do yesterday?", 先週何話したっけ: :func:`.temporal.time_is_asked`), or it corrects in
    the next turn a result to be packed (``correction``, :mod:`.corrections`); ``low``
    otherwise (listed, never packed). When the full-text search answered alone
    (``lexical_only``) its top 3 are ``medium`` (those found by their own words) and
    nothing is ``high``. When the message asks about nothing but a time, a memory of
    another time (``asked_time`` 0) is ``low``: it is no answer; an earlier request
    to be reminded made in the window (``recall_only``, :func:`.evidence.asks_to_recall`:
    "What did I do last week?") is never ``high``. The first of both
    searches (by its own words) is never below the ratio: of a turn of several queries
    ("When is Mochi's birthday and what's our vet called?" split in two), each part's
    answer is first in its own lists, while the fused score sums every list; nor is a
    change or a correction both searches rank in their top 3 that occurred after the best
    one (``top_at``, :func:`_an_update`): the update of what the best one says ("Scratch
    that, the meeting is at 4" after "The meeting is on Monday at 3") shares its words and
    ranks just below it, where newer chatter that shares them ("My sister hates going to
    the dentist") stays below the ratio.
    """
    c = candidate.components
    in_time = c.get("asked_time", 0.0) >= 1.0
    first = c.get("knn_rank", 99) <= 1 and c.get("bm25_rank", 99) <= 1 and lexical_agreement(c)
    newer = top_at is not None and candidate.episode.occurred_at > top_at and not lexical_only
    top3 = c.get("knn_rank", 99) <= 3 and c.get("bm25_rank", 99) <= 3 and lexical_agreement(c)
    if candidate.score < config.pack_score_ratio * top_score and not (
        in_time or first or (newer and top3 and _an_update(candidate))
    ):
        return "low"
    if not may_answer(c):  # another time than the one asked about, or small talk's own copy
        return "low"
    if lexical_only:
        top3 = c.get("bm25_rank", 99) <= 3 and lexical_agreement(c)
        return "medium" if top3 or in_time else "low"
    both = "knn_rank" in c and lexical_agreement(c)
    recall = c.get("recall_only", 0.0) >= 1.0  # (its words match a window question's own)
    if both and c["knn_rank"] <= 3 and c["bm25_rank"] <= 3 and not recall:
        return "high"
    if both or in_time or c.get("cosine", 0.0) >= config.relevance_threshold:
        return "medium"
    if c.get("bm25_rank", 99) <= 1 and lexical_agreement(c):  # a rare word matched exactly
        return "medium"
    if c.get("correction", 0.0) >= 1.0:  # what corrects a result to be packed goes in too
        return "medium"
    return "low"


def to_pack(candidates: Sequence[Candidate], config: RetrievalConfig, n: int) -> list[Candidate]:
    """Of the first ``n`` of ``candidates`` (best first), those the ranking packs: not
    ``low`` by :func:`label` against the best one."""
    if not candidates:
        return []
    best = candidates[0]
    return [
        c
        for c in candidates[:n]
        if label(c, config, best.score, top_at=best.episode.occurred_at) != "low"
    ]


def _an_update(candidate: Candidate) -> bool:
    """Whether a result is itself an update: a change told (:func:`.change_words.change_sentences`
    of its own words: "Scratch that, the meeting is at 4") or a correction of a result
    (``correction``)."""
    if candidate.components.get("correction", 0.0) >= 1.0:
        return True
    return bool(change_sentences(own_words(candidate.episode)))


_POINTING = frozenset("last past ago previous earlier couple".split())
"""The words of a time that point from now, and name no thing ("last" of "last week")."""


def time_terms(found: Sequence[TimeExpression]) -> frozenset[str]:
    """The words of the time expressions a message names that point from now ("last",
    "ago": :data:`_POINTING`), which its full-text search leaves out: the time window
    answers for them ("last" as a word found every "Traceback (most recent call last)").
    The words that name the time stay ("week", "saturday", 先週): a memory that says
    "last Saturday" is often the one asked about."""
    return frozenset(t for e in found for t in query_terms(e.surface) if t in _POINTING)


SMALL_TALK_CHARS = 200
"""The longest message whose older copies can be small talk's (:func:`mark_own_copies`):
a traceback pasted again is no greeting, and its old copy's reply may hold the fix."""
SMALL_TALK_LINES = 3
"""The fewest lines of a message that is no small talk ("おはよう\n今日もがんばる" is)."""


def mark_own_copies(
    candidates: list[Candidate], text: str, config: RetrievalConfig
) -> list[Candidate]:
    """When ``text`` is small talk (at most :data:`SMALL_TALK_CHARS` on fewer than
    :data:`SMALL_TALK_LINES` lines, naming no code, :func:`.signals.code_words`, and asks
    nothing, or only the partner: "how are you?",
    :func:`.signals.asks_the_partner`) and ``skip_repeats`` is on, mark ``repeat``
    on the exchanges whose user turn repeats it (:func:`.recent.repeat_key`) and move them
    after the others: a daily "Morning!" is no memory the message restates. They stay
    results, ``low``, and count for no should-inject rule (nor are they shown to an LLM
    rerank)."""
    small = (
        len(text) <= SMALL_TALK_CHARS
        and text.strip().count("\n") + 1 < SMALL_TALK_LINES
        and not code_words(text, capitals=False)  # ("That movie was AMAZING" is small talk)
    )
    key = repeat_key(text) if small else ""
    if not key or not config.skip_repeats or asks_something(text):
        return candidates
    copies: list[Candidate] = []
    others: list[Candidate] = []
    for c in candidates:
        ep = c.episode
        if ep.kind is EpisodeKind.exchange and key_of(ep.user_text or "", len(key)) == key:
            c.components["repeat"] = 1.0
            copies.append(c)
        else:
            others.append(c)
    return [*others, *copies]


TOLD_CHARS = 200
"""How much of a memory :func:`told_about` reads for the times it names."""

TOLD_CANDIDATES = 10
"""How many of the best candidates of other times :func:`told_about` reads (the time
expressions cost about 0.3 ms a memory)."""


def told_about(
    candidates: list[Candidate], window: tuple[datetime, datetime], now: datetime
) -> list[Candidate]:
    """Mark ``names_time`` on the best :data:`TOLD_CANDIDATES` candidates that occurred outside
    ``window`` but name a time in it, no longer than it, read from when they were told ("On
    Saturday April 4 I went hiking", told on the 6th; 昨日 told the day after; not "In April
    I was busy" for April 4): they tell of the time asked about."""
    span = window[1] - window[0]
    others = [c for c in candidates if c.components.get("window", 0.0) < 1.0]
    for c in others[:TOLD_CANDIDATES]:
        told = c.episode.occurred_at.astimezone(now.tzinfo)
        found = find_time_expressions(c.episode.text[:TOLD_CHARS], told, max_chars=TOLD_CHARS)
        if any(
            e.start < window[1] and e.end > window[0] and e.end - e.start <= span for e in found
        ):
            c.components["names_time"] = 1.0
    return candidates


def asked_time_first(candidates: Sequence[Candidate]) -> list[Candidate]:
    """When a message asks about nothing but the time it names, what occurred then is the
    answer: those candidates, and those that name it (``names_time``, :func:`told_about`),
    are lifted above the rest (by the best score) in their own
    order, and marked ``asked_time`` 1 (relevant, and evidence to inject); those told in
    the recording lag after it (``window`` 0.5: "last weekend" told on Monday) are marked
    0.5 and judged as any other; the rest are marked ``asked_time`` 0 (no answer: ``low``,
    and no evidence, so that a message about a day with no memory injects nothing). An
    exchange of the time that only asked to be reminded (``recall_only``: "What did I do
    last week?", 3月は何してたっけ？), or a later one that names the time, is marked 1 and
    ``recall_only`` and lifted between the two, in its own order: after what was told
    then, before every memory of another time."""
    top = max(c.score for c in candidates)
    then = [
        c.components.get("window", 0.0) >= 1.0 or c.components.get("names_time", 0.0) >= 1.0
        for c in candidates
    ]
    recall = [
        t and (c.components.get("recall_only", 0.0) >= 1.0 or asks_to_recall(c.episode))
        for c, t in zip(candidates, then, strict=True)
    ]  # (a later "What did I do in March?" names March, and tells nothing of it either)
    told = [c.score for c, t, r in zip(candidates, then, recall, strict=True) if t and not r]
    floor = min(told, default=top)  # (the least lift of what was told then)
    out: list[Candidate] = []
    for c, t, r in zip(candidates, then, recall, strict=True):
        window = c.components.get("window", 0.0)
        if r:
            score = top + 0.5 * floor * c.score / top if top > 0 else c.score
            comps = {**c.components, "asked_time": 1.0, "recall_only": 1.0}
            c = replace(c, score=score, components=comps)
        elif t:
            c = replace(c, score=c.score + top, components={**c.components, "asked_time": 1.0})
        else:
            c = replace(c, components={**c.components, "asked_time": min(window, 0.5)})
        out.append(c)
    out.sort(key=lambda c: -c.score)
    return out


def fast_results(
    candidates: Sequence[Candidate],
    config: RetrievalConfig,
    limit: int | None,
    lexical_only: bool = False,
) -> list[Retrieved]:
    """The fast path's ranking as results, the first ``limit`` (else ``max_results``) but
    for a correction's memory (kept with it: :func:`.corrected_pairs.first_keeping_corrected`),
    each labelled by :func:`label` against the best."""
    if not candidates:
        return []
    best = candidates[0]
    top = first_keeping_corrected(
        candidates, limit or config.max_results, lambda c: c.episode.id, lambda c: c.components
    )
    return [
        Retrieved(
            episode=c.episode,
            score=c.score,
            rank=i + 1,
            relevance=label(c, config, best.score, lexical_only, best.episode.occurred_at),
            components=c.components,
        )
        for i, c in enumerate(top)
    ]


def offers_any(results: Sequence[Retrieved]) -> bool:
    """Whether any of ``results`` is relevant enough to be offered (not ``low``): a turn
    that would inject none decides not to inject, so ``should_inject`` never promises an
    empty MemoryPack."""
    return any(r.relevance != "low" for r in results)


class Retriever:
    """Runs a turn's retrieval over one store."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        config: RetrievalConfig,
        executor: Executor,
        *,
        analyser: bool = True,
    ) -> None:
        """``analyser`` False skips the check that ``coverage_min`` finds the Japanese
        analyser (:func:`.coverage.check_analyser`): for a store that is searched by nothing
        (an export, a delete)."""
        self.config = config
        self.store = store
        self.executor = executor
        self.fast = FastPath(store, embedder, config, executor)
        self.word_vectors = WordVectors(self.fast.deadlined)  # as the turn's query waits
        if analyser and config.coverage_min > 0:
            check_analyser()

    def forget_texts(self) -> None:
        """Drop the cached word vectors (an agent forgotten: they are its words); a turn
        under way keeps the cache it began with."""
        self.word_vectors = WordVectors(self.fast.deadlined, self.word_vectors.max_entries)

    def close(self) -> None:
        """Stop the query embedding's threads (:meth:`.FastPath.close`)."""
        self.fast.close()

    def reach(self, query: str) -> float:
        """The lexical reach of ``query`` in this store (:func:`.signals.lexical_reach`)."""
        terms = content_terms(query)[: self.config.reach_max_terms]
        if not terms:
            return 1.0
        n, counts = self.store.document_counts(terms)
        return lexical_reach(terms, TermStats(n, counts))

    def coverage(self, text: str, candidates: Sequence[Candidate]) -> float:
        """How well the top ``coverage_results`` candidates (at most ``max_results``) cover
        the words of ``text`` (:func:`.coverage.soft_coverage`; 1.0 without content words)."""
        cfg = self.config
        words = content_words(within(text, cfg.max_query_chars))[: cfg.reach_max_terms]
        if not words:
            return 1.0
        found: list[str] = []
        for c in candidates[: min(cfg.coverage_results, cfg.max_results)]:
            found.extend(content_words(c.episode.text[:_COVERAGE_CHARS])[:_COVERAGE_WORDS])
        found = list(dict.fromkeys(found))
        n, counts = self.store.document_counts(word_terms(words))
        stats = TermStats(n, word_document_counts(words, counts))
        vectors = self.word_vectors.get([*words, *found])
        idf = {w: stats.idf(w) for w in words}
        return soft_coverage(words, found, vectors, idf, word_min=cfg.coverage_word_min)

    def refine(
        self,
        candidates: list[Candidate],
        *,
        text: str,
        now: datetime,
        reach: float,
        filters: Filters,
        window: tuple[datetime, datetime] | None,
        time_asked: bool = False,
        signals: dict[str, float] | None = None,
        exclude: AbstractSet[int] = frozenset(),
        screen: Callable[[Collection[int]], set[int]] | None = None,
        repeats: bool = True,
    ) -> list[Candidate]:
        """The fast path's second look at fused ``candidates``: the lists re-weighted by the
        context query's lexical ``reach`` (:meth:`reach`; unused without ``adaptive_weights``)
        and the dense spread (:mod:`.adapt`), then the bonuses for the time ``window`` the
        user's ``text`` names (:func:`.temporal.parse_time_window`; part of it in the
        recording lag after it, :func:`.temporal.widen`; what occurred in it first when the
        message asks about nothing else, ``time_asked``) and for the kind of answer it asks
        (:mod:`.answer_type`), where the
        turn after one of the best few (within ``filters``) may hold the answer. The reach
        goes to ``signals``. No turn in ``exclude`` is lifted or fetched by date, nor one
        that ``screen`` finds repeats what the user said (:attr:`.FastResult.screen`).
        Of the time asked about, each exchange is shown once before any twice
        (:mod:`.said_once`, unless ``skip_repeats`` or ``repeats`` is off). Last, unless the message
        names a time, each result to be packed that is a later change of another comes
        before it (:mod:`.changes`); a correction said in the next turn comes before what it
        corrects either way, but of a time named only one said within that time."""
        cfg = self.config
        known: dict[int, Episode | None] = {}  # the next turns read (one read for each id)
        if cfg.adaptive_weights and signals is not None:
            signals["reach"] = round(reach, 4)
        spread = dense_spread(candidates, cfg.spread_k)
        scales = list_scales(cfg, reach=reach, spread=spread)
        out = reweight(candidates, cfg, scales)
        if cfg.window_weight > 0 and window is not None:
            if time_asked:  # (the message asks about nothing else: time_is_asked)
                out = self.dated(out, window, filters, now, exclude, screen, repeats=repeats)
            out = window_bonus(out, window, cfg.window_weight, margin_end=widen(window, now)[1])
            if out and time_asked:
                out = asked_time_first(told_about(out, window, now))
                out = later_copies_last(out) if cfg.skip_repeats and repeats else out
        if cfg.answer_type_weight > 0:
            kinds = asked_types(within(text, cfg.max_query_chars))
            out = answer_type_bonus(out, kinds, cfg.answer_type_weight)
            if cfg.next_turn_candidates > 0 and out:
                top = out[: cfg.next_turn_candidates]
                # only a turn that asked, or whose reply did not know, can be answered next:
                # the others need no lookup
                ids = [
                    c.episode.id
                    for c in top
                    if (kinds and asks_back(c.episode)) or disowns(c.episode)
                ]
                out = lift_next_turns(
                    out,
                    self._next_turns(ids, filters, exclude, screen, known),
                    kinds,
                    weight=cfg.answer_type_weight,
                    factor=cfg.next_turn_factor,
                )
        if cfg.next_turn_candidates > 0 and out:  # a correction said in the next turn
            packed = to_pack(out, cfg, min(cfg.next_turn_candidates, cfg.max_results))
            for _ in range(MAX_CHAIN):  # (a correction of a correction: the newest first)
                if not packed:
                    break
                ids = [c.episode.id for c in packed]
                following = self._next_turns(ids, filters, exclude, screen, known)
                later = self._next_turns(  # (two turns on: "oh wait, Tuesday not Monday")
                    [e.id for e in following.values()], filters, exclude, screen, known
                )
                if window is not None:  # (said after the time asked about: a later state)
                    following = {
                        i: e for i, e in following.items() if in_window(e.occurred_at, window)
                    }
                    later = {i: e for i, e in later.items() if in_window(e.occurred_at, window)}
                out, packed = bring_corrections(out, packed, following, later)
            out = corrected_when(out)
        if cfg.later_changes and window is None and out:
            packed = to_pack(out, cfg, cfg.max_results)
            out = later_changes(out, packed, self.similar(filters), cfg.later_change_cosine)
        return out

    def _next_turns(
        self,
        ids: Sequence[int],
        filters: Filters,
        exclude: AbstractSet[int],
        screen: Callable[[Collection[int]], set[int]] | None,
        known: dict[int, Episode | None],
    ) -> dict[int, Episode]:
        """The turn that follows each of ``ids`` within ``filters`` (:meth:`.Store.next_turns`),
        none of ``exclude`` nor one that ``screen`` finds repeats what the user said; each id
        read once a turn (``known``: the next-turn lift and the corrections ask of the same
        best few)."""
        todo = [i for i in ids if i not in known]
        if todo:
            found = self.store.next_turns(todo, filters)
            gone = screen([e.id for e in found.values()]) if screen and found else set()
            for i in todo:
                nxt = found.get(i)
                skip = nxt is None or nxt.id in exclude or nxt.id in gone
                known[i] = None if skip else nxt
        return {i: nxt for i in ids if (nxt := known[i]) is not None}

    def similar(self, filters: Filters) -> Callable[[int, Sequence[int]], dict[int, float]]:
        """The cosines of one stored episode's vector to others' within ``filters``' agent."""
        return lambda episode, ids: self.store.similar_to(episode, ids, agent=filters.agent)

    def dated(
        self,
        candidates: list[Candidate],
        window: tuple[datetime, datetime],
        filters: Filters,
        now: datetime,
        exclude: AbstractSet[int],
        screen: Callable[[Collection[int]], set[int]] | None = None,
        *,
        repeats: bool = True,
    ) -> list[Candidate]:
        """The ``candidates`` and, after them, the memories of the ``window`` the searches
        did not find (marked ``by_date``; the most important and strongest, up to
        ``max_results`` of the window's in all, each exchange counted once and fetched
        before any copy of one, :mod:`.said_once`, unless ``skip_repeats`` or ``repeats``
        is off; none of ``exclude`` nor one that
        ``screen`` finds repeats what the user said, screened in rounds that double, by a
        light read;
        the window replaces the configured day range, as
        :func:`.temporal.window_filters` has it): a message that asks about nothing but a
        time is answered by what occurred then, whatever its words."""
        cfg = self.config
        once = cfg.skip_repeats and repeats
        have = {c.episode.id for c in candidates}
        # each saying counts once (:mod:`.said_once`): a week's five "Morning!"s found leave
        # room for the visit to the dentist that the question's words did not find
        said = [
            said_key(c.episode) if once else ""
            for c in candidates
            if in_window(c.episode.occurred_at, window)
        ]
        keys = {k for k in said if k}
        room = cfg.max_results - len(keys) - said.count("")
        if room <= 0:
            return candidates
        narrowed = window_filters(filters, window, lag=False)  # as the LLM turn searches it
        ranked: list[int] = []
        copies: list[int] = []  # (after every first: the same words, another event)
        for i, said_text, reply in self.store.window_ids(narrowed, skip=have | exclude):
            key = text_key(said_text, reply) if once else ""
            if not key or key not in keys:  # (the first of each saying, in the store's order)
                ranked.append(i)
                keys.add(key)
            else:
                copies.append(i)
        ranked += copies
        kept: list[int] = []
        start, ask = 0, room
        while start < len(ranked) and len(kept) < room:  # past what repeats the user's words
            chunk = ranked[start : start + ask]
            gone = screen(chunk) if screen else set()
            kept += [i for i in chunk if i not in gone][: room - len(kept)]
            start += len(chunk)
            ask *= 2  # a month of daily greetings: a few rounds, not one per greeting
        episodes = self.store.get(kept)  # only what it adds is read whole
        added = [
            Candidate(ep, 0.0, {"by_date": 1.0, "age_days": age_days(ep.occurred_at, now)})
            for ep in (episodes[i] for i in kept if i in episodes)
        ]
        return [*candidates, *added]

    def decide(
        self,
        text: str,
        candidates: Sequence[Candidate],
        results: Sequence[Retrieved],
        timings: dict[str, float],
        signals: dict[str, float] | None = None,
        lexical_only: bool = False,
        degraded: list[str] | None = None,
    ) -> bool:
        """The should-inject decision for the user's ``text`` over ranked ``candidates``:
        :func:`.inject.should_inject`, then the opt-in coverage for a question it lets
        through that does not ask only about a time whose memories were found (its
        milliseconds go to ``timings["coverage"]``; not read when the full-text search
        answered alone, ``lexical_only``, nor when its word vectors are not made within
        ``embed_deadline_s``: a note in ``degraded`` says so). What it read goes to
        ``signals``. It injects only if one of the labelled ``results`` is offered
        (:func:`offers_any`)."""
        cfg = self.config
        # an empty message leaves it to the context; "how are you?" asks no memory
        asks = asks_something(text) or is_blank(text)
        codes = code_words(text)
        plan = not asks and proposes(text)  # "Let's get sushi tonight!": read only if not asked
        decided = should_inject(
            candidates, cfg, asks=asks, lexical_only=lexical_only, codes=codes, proposes=plan
        )
        if signals is not None:
            signals["asks"] = float(asks)
            signals["proposes"] = float(plan)
            signals["evidence"] = float(evidence_found(candidates, cfg, codes))
            signals["top_cosine"] = round(top_cosine(candidates, cfg), 4)
        # a memory of the time asked about is matched by its date, not by the question's words
        in_time = any(c.components.get("asked_time", 0.0) >= 1.0 for c in candidates)
        if (
            decided
            and asks
            and not in_time
            and not is_blank(text)
            and cfg.coverage_min > 0
            and not lexical_only
        ):
            t1 = time.perf_counter()
            value: float | None = None
            try:
                value = self.coverage(text, candidates)
            except EmbeddingError as exc:
                if degraded is not None:
                    degraded.append(f"coverage skipped: {exc}; decided without it")
            finally:
                timings["coverage"] = round((time.perf_counter() - t1) * 1000, 3)
            if value is not None:
                if signals is not None:
                    signals["coverage"] = round(value, 4)
                decided = value >= cfg.coverage_min
        return decided and offers_any(results)

    def timed_reach(self, query: str) -> tuple[float, float]:
        """:meth:`reach` and the milliseconds it took."""
        t0 = time.perf_counter()
        value = self.reach(query)
        return value, round((time.perf_counter() - t0) * 1000, 3)

    def held(self, recent: Sequence[Message], filters: Filters) -> HeldTurns:
        """The agent's newest turns that ``recent`` repeats word for word
        (:func:`.recent.held_in_recent`; none without ``skip_recent``), and of them those the
        retrieval may name: all but the ones above ``max_sensitivity``."""
        if not self.config.skip_recent or not recent or filters.until_ts is None:
            return HeldTurns(frozenset(), ())
        newest = self.store.newest_turns(filters.agent, filters.until_ts, lookback(recent))
        ids = held_in_recent(newest, recent)
        shown = sorted(
            e.id for e in newest if e.id in ids and e.sensitivity <= filters.max_sensitivity
        )
        return HeldTurns(frozenset(ids), tuple(shown))

    def repeats(self, said: Sequence[Message], text: str) -> RepeatCheck | None:
        """What older exchanges must not merely repeat to be searched (:func:`.recent.repeat_check`
        of the conversation ``said`` before the new ``text``; None without ``skip_repeats``)."""
        if not self.config.skip_repeats:
            return None
        cfg = self.config
        return repeat_check(said, text, cfg.recent_conversation_turns, cfg.max_query_chars)

    def filters(
        self,
        *,
        agent: str,
        now: datetime,
        kinds: Sequence[str] | None,
        max_sensitivity: int,
        day_range: int | None,
        deep: bool,
        day_range_asked: bool = False,
    ) -> Filters:
        """The search filters of one turn (``day_range_asked``: the caller gave the day
        range, which a time window the message names must not widen)."""
        since = None
        if day_range is not None:
            since = int(now.timestamp()) - day_range * 86_400  # no datetime: year 2 minus 200 years
        return Filters(
            agent=agent,
            kinds=tuple(kinds) if kinds is not None else None,
            max_sensitivity=max_sensitivity,
            since_ts=since,
            until_ts=int(now.timestamp()),  # (to the second, as occurred_ts is cut: int)
            statuses=("active", "archived") if deep else ("active",),
            since_is_asked=day_range_asked and since is not None,
        )

    def retrieve(
        self,
        text: str,
        *,
        recent: Sequence[Message],
        filters: Filters,
        now: datetime,
        extra_queries: Sequence[str] = (),
        limit: int | None = None,
        repeats: bool = True,
    ) -> Retrieval:
        """One turn's retrieval on the fast path. ``repeats`` False sets no repeat aside
        (``skip_repeats`` off for this call): a search box's words are no greeting said
        again."""
        t0 = time.perf_counter()
        cfg = self.config
        said = conversation(recent, text)
        queries, joined, typed = turn_queries(text, said, cfg)
        query = queries[0]
        lang = turn_language(text, said)
        # the reach's term counts run beside the searches; the lists are re-fused after
        reach = self.executor.submit(self.timed_reach, query) if cfg.adaptive_weights else None
        held, in_recent = self.held(recent, filters)
        found = (
            find_time_expressions(text, now, max_chars=cfg.max_query_chars)
            if cfg.window_weight > 0
            else []
        )
        result: FastResult = self.fast.run(
            [*queries, *extra_queries],
            filters,
            now=now,
            exclude=held,
            repeats=self.repeats(said, text) if repeats else None,
            joined=joined,
            time_terms=time_terms(found),
            typed=typed,
        )
        timings = dict(result.timings_ms)
        reach_value, timings["reach"] = reach.result() if reach is not None else (1.0, 0.0)
        signals: dict[str, float] = {}
        window = union((e.start, e.end) for e in found)
        result.candidates = self.refine(
            result.candidates,
            text=text,
            now=now,
            reach=reach_value,
            filters=filters,
            window=window,
            time_asked=time_is_asked(text, found, max_chars=cfg.max_query_chars),
            signals=signals,
            exclude=held | set(result.repeats),
            screen=result.screen,
            repeats=repeats,
        )
        if repeats:
            result.candidates = mark_own_copies(result.candidates, text, cfg)
        degraded = list(result.degraded)
        results = tuple(fast_results(result.candidates, cfg, limit, result.lexical_only))
        decided = self.decide(
            text, result.candidates, results, timings, signals, result.lexical_only, degraded
        )
        timings["turn"] = round((time.perf_counter() - t0) * 1000, 3)
        return Retrieval(
            results=results,
            queries=tuple(result.queries),
            timings_ms=timings,
            degraded=tuple(degraded),
            should_inject=decided,
            language=lang,
            candidates=len(result.candidates),
            time_window=widen(window, now) if window is not None else None,
            signals=signals,
            in_recent=in_recent,
            repeats=tuple(result.repeats),
        )
