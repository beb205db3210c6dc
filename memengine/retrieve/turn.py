"""One turn with the LLM phases, within a deadline, degrading to the fast path.

:class:`LLMTurn` runs a turn's retrieval in three phases:

1. **Expansion** (:mod:`.expand`): the LLM rewrites the message into up to
   five standalone queries and resolves references; temporal ones become
   a search window (:mod:`.temporal`). The fast-path search of the raw
   context query starts at the same moment on another thread, so its
   candidates are ready when expansion returns.
2. **Hybrid search** (:class:`~.fastpath.FastPath`) of the context query
   plus the expanded queries, fused by RRF, narrowed to the window; a
   window that finds nothing is dropped (and said so in ``degraded``). What
   the fast path found outside the window stays (:func:`with_unwindowed`):
   a question may name a time for one of its parts only. When the new
   queries fail to embed, the message's keep their cached vectors and what
   the fast path found stays (:func:`with_first`); a window whose search had
   no vector at all is not taken for an empty one.
3. **Rerank** (:mod:`.rerank`): the LLM picks ≤ 5 relevant candidates
   with a reason each, and the injection strategy; a pick's later change
   (:mod:`.changes`) comes before it (right before, unless the model ranked it
   higher), brought back if left out.

Every LLM call has a per-phase deadline and the whole turn a deadline
(``[llm] turn_deadline_s``, 2.0 s by default); the rerank deadline is
``min(rerank_deadline_s, time left in the turn)``. A phase that is late,
fails or answers nonsense is replaced by what is ready — the fast-path
ranking — and the reason is recorded in ``Retrieval.degraded``, e.g.
``"expansion: timeout after 0.90 s"`` or ``"rerank: 2 unknown ids dropped"``.
The turn never fails because of the LLM, and the phases never write to
the database.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

from ..config import LLMConfig, RetrievalConfig
from ..embed.base import Embedder
from ..embed.cache import CachingEmbedder
from ..errors import LLMError, LLMResponseError, LLMTimeout
from ..lazy_re import lazy_compile
from ..llm.client import ChatClient
from ..models import Message, Retrieval, Retrieved, may_answer
from ..store.database import Store
from ..store.filters import Filters
from ..text import cut_at, fold, strip_controls
from .corrected_pairs import first_keeping_corrected
from .expand import DetectedReference, Expander, Expansion, clean_queries
from .fastpath import VECTORS_SKIPPED, Candidate, FastPath, FastResult, shown_queries
from .pool import Pool
from .recent import HeldTurns, RepeatCheck, conversation
from .rerank import Reranker, RerankOutcome, with_later_changes
from .retriever import fast_results, mark_own_copies, time_terms, turn_language, turn_queries
from .temporal import (
    TimeExpression,
    Window,
    find_time_expressions,
    is_iso_range,
    parse_iso_range,
    parse_time_window,
    time_is_asked,
    union,
    widen,
    window_filters,
)
from .time_rules import kana_word_at

__all__ = [
    "Decide",
    "LLMTurn",
    "PhaseStatus",
    "Reach",
    "Refine",
    "TurnTrace",
    "llm_window",
    "with_first",
    "with_unwindowed",
]

Decide = Callable[
    [
        str,
        Sequence[Candidate],
        Sequence[Retrieved],
        dict[str, float],
        dict[str, float] | None,
        bool,
        list[str] | None,
    ],
    bool,
]
"""The fast path's should-inject decision (:meth:`.Retriever.decide`): message, ranked
candidates, the turn's timings and the signals it read (both to add to), whether the
full-text search answered alone, and the turn's ``degraded`` notes (to add to)."""


Reach = Callable[[str], tuple[float, float]]
"""The context query's lexical reach and the milliseconds it took (:meth:`.Retriever.timed_reach`)."""


class Refine(Protocol):
    """The fast path's second look at fused candidates (:meth:`.Retriever.refine`)."""

    def __call__(
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
    ) -> list[Candidate]: ...


Held = Callable[[Sequence[Message], Filters], HeldTurns]
"""The stored turns the recent messages repeat (:meth:`.Retriever.held`)."""

Repeats = Callable[[Sequence[Message], str], RepeatCheck | None]
"""What older exchanges must not merely repeat to be searched (:meth:`.Retriever.repeats`)."""


@dataclass(frozen=True)
class Skip:
    """What every search of a turn leaves out: the ``held`` stored turns ``recent``
    repeats, and the older exchanges that ``repeats`` finds repeat what the user said."""

    held: frozenset[int]
    repeats: RepeatCheck | None
    joined: frozenset[int] = frozenset()
    """The queries that only add candidates (:meth:`.FastPath.run`): the conversation
    joined to a message on another topic."""
    time_terms: frozenset[str] = frozenset()
    """The words of the times the message names, which no full-text search reads
    (:func:`.retriever.time_terms`)."""
    typed: frozenset[int] = frozenset()
    """The question typed after a long paste, which a candidate's cosine is read against
    too (:meth:`.FastPath.run`)."""


PhaseStatus = Literal["ok", "cached", "empty", "timeout", "error", "invalid", "skipped", "disabled"]
"""How a phase ended: ``ok``/``cached``/``empty`` made it; the others fell back."""

GRACE_S = 0.1
"""How long past a phase deadline the turn waits for the client to report its own error."""
FINISH_S = 0.05
"""Kept free at the end of the turn deadline to build the result."""
MIN_PHASE_S = 0.1
"""A phase left with less time than this is skipped."""

_NOTE_CHARS = 220


@dataclass
class TurnTrace:
    """What happened in one turn: each phase's status and time, the window, what was dropped."""

    expansion: PhaseStatus = "disabled"
    rerank: PhaseStatus = "disabled"
    expansion_s: float = 0.0
    rerank_s: float = 0.0
    elapsed_s: float = 0.0
    window: Window | None = None
    window_source: Literal["llm", "text"] | None = None
    window_fallback: bool = False
    unknown_ids: int = 0
    unread: int = 0
    """Items of the rerank's list past those read (three times the candidates, plus 10)."""
    expanded_queries: list[str] = field(default_factory=list)

    @property
    def expansion_on_time(self) -> bool:
        """Phase 1 produced a usable answer within its deadline."""
        return self.expansion in ("ok", "cached")

    @property
    def rerank_on_time(self) -> bool:
        """Phase 3 produced a usable answer within its deadline."""
        return self.rerank in ("ok", "empty")


def llm_window(references: Sequence[DetectedReference], now: datetime) -> Window | None:
    """The window of the LLM's temporal references: its ISO range, else its words, parsed here."""
    windows: list[Window | None] = []
    for ref in references:
        if ref.type != "temporal":
            continue
        resolved = parse_iso_range(ref.resolved, now)
        if resolved is None and not is_iso_range(ref.resolved):  # (a reversed range: no date)
            resolved = parse_time_window(ref.resolved, now)
        windows.append(resolved or parse_time_window(ref.surface, now))
    return union(windows)


def _plain(text: str) -> str:
    """``text`` as a time reference's words are looked for in the conversation: folded
    (NFKC, lower case, a phone's apostrophe) and its spaces one ("Last  Week" is "last week")."""
    return " ".join(fold(text).split())


def _latin(char: str) -> bool:
    """Whether ``char`` is a letter or digit of a word written in Latin letters (folded)."""
    return char.isascii() and char.isalnum()


_MODAL_MAY = lazy_compile(r"may (?:i|we|you|he|she|they|it)\b")
"""A question that opens with the modal "may" ("May I ask…", "May we…"), not the month."""


_HIRAGANA = lazy_compile("[ぁ-ゖゝゞー]+")


def _modal_may(text: str, start: int) -> bool:
    """Whether the "may" at ``start`` of ``text`` (as :func:`_plain` gives it) opens a
    sentence as the modal of a question ("May I ask where we had ramen?"; not "in May I
    went to Kyoto")."""
    before = text[:start].rstrip()
    opens = not before or before[-1] in ".!?。！？"
    return opens and _MODAL_MAY.match(text, start) is not None


def _said_in(
    words: str,
    own: Callable[[], Window | None],
    text: str,
    named: Callable[[], list[TimeExpression]],
) -> bool:
    """Whether a time's ``words`` stand in ``text`` (both as :func:`_plain` gives them) as
    words of their own: not the letters of a longer word ("may" in "maybe", "now" in
    "know"; せんしゅう in あのせんしゅうまいね: :func:`kana_word_at`), not the modal "May
    I…" (:func:`_modal_may`), nor part of a longer time the text names (``named``) outside the words' own time
    (``own``): 昨日 in 一昨日, "yesterday" in "the day before yesterday"; 先週 in 先週の金曜
    still counts. Both are read only when the words stand alone somewhere."""
    longer: dict[str, list[int]] | None = None  # a longer time named: where the words sit in it
    start = text.find(words)
    while start >= 0:
        end, at_next = start + len(words), text.find(words, start + 1)
        if (
            (_latin(words[0]) and _latin(text[start - 1 : start]))
            or (_latin(words[-1]) and _latin(text[end : end + 1]))
            or (words == "may" and _modal_may(text, start))
        ):
            start = at_next
            continue
        if _HIRAGANA.fullmatch(words) and not kana_word_at(text, start, end):
            start = at_next
            continue
        if longer is None:
            window = own()
            elsewhere = (
                set()
                if window is None
                else {_plain(x.surface) for x in named() if not _inside((x.start, x.end), window)}
            )
            longer = {
                t: [k.start() for k in re.finditer(f"(?={re.escape(words)})", t)]
                for t in elsewhere
                if len(t) > len(words) and words in t
            }
        if any(
            start >= at and text.startswith(t, start - at)
            for t, offsets in longer.items()
            for at in offsets
        ):
            start = at_next
            continue
        return True
    return False


def unsaid_references(
    references: Sequence[DetectedReference], said: Sequence[str], now: datetime
) -> tuple[list[DetectedReference], list[str]]:
    """The LLM's temporal references whose words (``surface``) are in ``said`` (the message
    and the turns before it) as words of their own (:func:`_said_in`), and the words of
    those that are not: a time the conversation never named ("yesterday" for "Where did we
    hike?", "May" for "Maybe we should hike again") is the model's guess, not a window."""
    plain = [_plain(t) for t in said]
    found: dict[int, list[TimeExpression]] = {}  # the times each text names, read once

    def named(i: int) -> Callable[[], list[TimeExpression]]:
        def read() -> list[TimeExpression]:
            if i not in found:
                found[i] = find_time_expressions(plain[i], now)
            return found[i]

        return read

    said_words: dict[str, bool] = {}  # (the same words are looked for once)
    kept: list[DetectedReference] = []
    unsaid: list[str] = []
    for ref in references:
        if ref.type != "temporal":
            continue
        words = _plain(ref.surface)
        if words and words not in said_words:
            own = functools.cache(lambda w=words: parse_time_window(w, now))
            said_words[words] = any(_said_in(words, own, t, named(i)) for i, t in enumerate(plain))
        if words and said_words[words]:
            kept.append(ref)
        else:
            unsaid.append(ref.surface)
    return kept, unsaid


def _inside(window: Window, outer: Window) -> bool:
    """Whether ``window`` lies within ``outer`` (the same window does)."""
    return outer[0] <= window[0] and window[1] <= outer[1]


_EDGE_SLACK = timedelta(days=1)


def _within_one(window: Window, own: Sequence[Window]) -> bool:
    """Whether ``window`` lies within one of the message's ``own`` windows, each longer than a
    day taken a day wider on each side: where a week or a weekend begins is a convention (a
    Sunday–Saturday "last week", a Friday–Sunday "last weekend"), where a day does is not
    (一昨日 is not 昨日). Each window alone: "last week and in April" lets no May through."""
    for start, end in own:
        slack = _EDGE_SLACK if end - start > _EDGE_SLACK else timedelta(0)
        if _inside(window, (start - slack, end + slack)):
            return True
    return False


def with_unwindowed(windowed: FastResult, fast: FastResult) -> FastResult:
    """The window's search (``windowed``) with the candidates the fast path's own search of
    the raw queries (``fast``, not narrowed) found outside it, all best first: a message that
    names a time may ask about something else too ("the ramen place last week, and when is
    Juno's cleaning?"), and the fast path only favours the window's memories (the window's
    bonus, :meth:`.Retriever.refine`); the rerank, or the fast path's ranking in its stead,
    still sees what the fast path would have answered."""
    have = {c.episode.id for c in windowed.candidates}
    added = [c for c in fast.candidates if c.episode.id not in have]
    if not added:
        return windowed
    candidates = sorted([*windowed.candidates, *added], key=lambda c: -c.score)
    # (its repeats stay the list its screen adds to; the turn reads both searches' repeats)
    return replace(windowed, candidates=candidates)


def with_first(later: FastResult, first: FastResult) -> FastResult:
    """Phase 2's search (``later``) with what the first search (``first``) found that it
    did not (:func:`with_unwindowed`): outside its window, or by the vectors it lost when
    its queries failed to embed; it answered by full text alone only when both did."""
    lexical_only = later.lexical_only and first.lexical_only
    return replace(with_unwindowed(later, first), lexical_only=lexical_only)


def _blind(result: FastResult, first: FastResult) -> bool:
    """Whether Phase 2's ``result`` searched no vector where the first search did (every
    query failed to embed): finding nothing then says nothing of a window."""
    return result is not first and result.lexical_only and not first.lexical_only


def _told_blind(result: FastResult) -> FastResult:
    """``result`` (a Phase 2 search no query of which was embedded) with its note saying so
    of that search alone: the first search's vectors were searched, and what they found is
    kept (:func:`with_first`)."""
    shown = shown_queries(result.unembedded)
    notes = [
        f"vector search skipped for the expanded search's queries {shown}, the full-text "
        f"search answered for them alone (the first search's candidates kept): "
        f"{d.removeprefix(VECTORS_SKIPPED)}"
        if d.startswith(VECTORS_SKIPPED)
        else d
        for d in result.degraded
    ]
    return replace(result, degraded=notes)


def _short(exc: BaseException) -> str:
    """An error as a note: on one line, without the control characters and reordering
    marks a server's message may hold, cut short (where a character ends)."""
    text = " ".join(strip_controls(str(exc)).split())
    return text if len(text) <= _NOTE_CHARS else text[: cut_at(text, _NOTE_CHARS - 1)] + "…"


class _StartedLate(Exception):
    """A phase's call that left the LLM threads' queue with less than :data:`MIN_PHASE_S` of
    its turn's budget left: it is not sent (its turn has given up on it, or is about to)."""


def _by(deadline: float, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call`` with ``deadline_s`` what is left of ``deadline`` (a monotonic time) when a
    thread takes it up: a call that waited in the queue gets its budget's rest, not all of
    it again (:class:`_StartedLate` when too little is left)."""
    left = deadline - time.monotonic()
    if left < MIN_PHASE_S:
        raise _StartedLate
    return call(*args, deadline_s=left, **kwargs)


def _ms(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 3)


def _failed(exc: LLMError, phase: str, budget: float) -> tuple[PhaseStatus, str]:
    """The status and the note of a phase whose call failed with ``exc``."""
    if isinstance(exc, LLMTimeout):
        return "timeout", f"{phase}: timeout after {budget:.2f} s"
    if isinstance(exc, LLMResponseError):
        note = _short(exc)
        if not note.startswith("invalid reply: "):  # JSON that does not parse, no content
            note = f"{'invalid JSON' if 'JSON' in note else 'invalid reply'}: {note}"
        return "invalid", f"{phase}: {note}"
    return "error", f"{phase}: {_short(exc)}"


def _fmt_window(window: Window) -> str:
    start, end = window
    return f"{start:%Y-%m-%d %H:%M}–{end:%Y-%m-%d %H:%M}"


class LLMTurn:
    """Runs turns with the LLM phases over one store; thread-safe, one per Memory.

    ``executor`` is the pool the fast path's searches run on; the turn's LLM
    calls run on a private pool and its searches on another, so calls a slow
    server holds never starve the searches.
    ``refine`` re-weights the searches' candidates as the fast path does (by
    the ``reach`` of the context query, computed beside the first search), so
    the rerank reads, and a failed rerank falls back to, the fast path's
    ranking; ``decide`` is the fast path's should-inject decision, used on
    that fallback.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        retrieval: RetrievalConfig,
        llm: LLMConfig,
        client: ChatClient,
        executor: Executor,
        *,
        reach: Reach,
        refine: Refine,
        decide: Decide,
        held: Held,
        repeats: Repeats,
        workers: int = 16,
    ) -> None:
        self.retrieval = retrieval
        self.reach = reach
        self.held = held
        self.repeats = repeats
        self.refine = refine
        self.decide = decide
        self.llm = llm
        self.client = client
        self.fast = FastPath(store, CachingEmbedder(embedder), retrieval, executor)
        self.expander = Expander(client, llm, max_queries=retrieval.max_expanded_queries)
        self.reranker = Reranker(client, llm)
        self._pool = Pool(max_workers=workers, thread_name_prefix="memengine-llm")
        # the searches have threads of their own: calls a slow server holds never starve them
        self._searches = Pool(max_workers=workers, thread_name_prefix="memengine-turn-search")
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def close(self) -> None:
        """Stop the phase threads (calls still running end at their own deadline)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._searches.shutdown(wait=False, cancel_futures=True)
        self.fast.close()

    def forget_texts(self) -> None:
        """Drop every cached answer and query vector (an agent forgotten: they are keyed by
        its messages); a search under way keeps the cache it began with."""
        self.expander.clear()
        cached = self.fast.embedder
        if isinstance(cached, CachingEmbedder):
            self.fast.embedder = CachingEmbedder(cached.inner)  # as built above

    @property
    def counters(self) -> dict[str, int]:
        """Running totals: ``turns``, ``expansion.<status>``, ``rerank.<status>``,
        ``window.*``, ``rerank.unknown_ids``, ``rerank.unread``."""
        with self._lock:
            return dict(self._counts)

    def _count(self, trace: TurnTrace) -> None:
        with self._lock:
            self._counts["turns"] += 1
            self._counts[f"expansion.{trace.expansion}"] += 1
            self._counts[f"rerank.{trace.rerank}"] += 1
            self._counts["rerank.unknown_ids"] += trace.unknown_ids
            self._counts["rerank.unread"] += trace.unread
            if trace.window is not None:
                self._counts[f"window.{trace.window_source}"] += 1
            if trace.window_fallback:
                self._counts["window.fallback"] += 1

    # -- the turn ------------------------------------------------------------------------

    @staticmethod
    def _window(
        expansion: Expansion | None,
        text: str,
        recent: Sequence[Message],
        own: Sequence[Window],
        now: datetime,
        trace: TurnTrace,
        degraded: list[str],
    ) -> Window | None:
        """The time the turn searches in. When the message names a time (``own``, a window
        per expression), the LLM's is taken where each of its references lies within one of
        them (:func:`_within_one`: it may narrow "the other day" to three days or read
        せんしゅう as 先週, not move "yesterday" to April), else the message's. When the
        message names none, the LLM's is taken from references whose words the conversation
        holds (:func:`unsaid_references`): "yesterday" for "Where did we hike?" is left out.
        Both refusals are noted in ``degraded``."""
        window: Window | None = None
        if expansion is not None:
            refs = [r for r in expansion.detected_references if r.type == "temporal"]
            if own:
                window = llm_window(refs, now)
                outside = [
                    w
                    for w in (llm_window([r], now) for r in refs)
                    if w is not None and not _within_one(w, own)
                ]
                if outside:
                    mine = " or ".join(_fmt_window(w) for w in own)
                    degraded.append(
                        f"expansion: time window {_fmt_window(outside[0])} is outside the "
                        f"message's own {mine}; the message's used"
                    )
                    window = None
            else:
                kept, unsaid = unsaid_references(refs, [text, *(m.text for m in recent)], now)
                shown = [" ".join(strip_controls(w).split())[:40] for w in unsaid]
                if any(shown):
                    words = ", ".join(repr(w) for w in shown if w)
                    degraded.append(f"expansion: time {words} not in the conversation; ignored")
                if not all(shown):  # (a reference of no words: nothing to look for)
                    degraded.append("expansion: a time reference with no words; ignored")
                window = llm_window(kept, now)
            trace.window_source = "llm" if window is not None else None
        if window is None and own:
            window, trace.window_source = union(own), "text"
        return window

    def run(
        self,
        text: str,
        *,
        recent: Sequence[Message],
        filters: Filters,
        now: datetime,
        extra_queries: Sequence[str] = (),
        limit: int | None = None,
        started: float | None = None,
    ) -> Retrieval:
        """One turn's retrieval with the LLM phases, within ``[llm] turn_deadline_s`` from
        ``started`` (a ``time.monotonic()``; default: now), when the caller began waiting."""
        return self.run_traced(
            text,
            recent=recent,
            filters=filters,
            now=now,
            extra_queries=extra_queries,
            limit=limit,
            started=started,
        )[0]

    def run_traced(
        self,
        text: str,
        *,
        recent: Sequence[Message],
        filters: Filters,
        now: datetime,
        extra_queries: Sequence[str] = (),
        limit: int | None = None,
        started: float | None = None,
    ) -> tuple[Retrieval, TurnTrace]:
        """Like :meth:`run`, also returning the :class:`TurnTrace` of the turn."""
        t0 = time.monotonic() if started is None else started
        cfg, rcfg = self.llm, self.retrieval
        turn_end = t0 + cfg.turn_deadline_s
        trace = TurnTrace()
        degraded: list[str] = []
        timings: dict[str, float] = {}
        # in all of recent; the rest reads the conversation
        held, in_recent = self.held(recent, filters)
        recent = conversation(recent, text)
        queries, joined, typed = turn_queries(text, recent, rcfg)
        query = queries[0]
        lang = turn_language(text, recent)
        base = [*queries, *(q for q in extra_queries if q.strip())]
        text_found = find_time_expressions(text, now, max_chars=rcfg.max_query_chars)
        skip = Skip(held, self.repeats(recent, text), joined, time_terms(text_found), typed)

        # Phase 1, with the fast path of the raw context query running alongside.
        fast0 = self._searches.submit(
            self.fast.run,
            base,
            filters,
            now=now,
            exclude=held,
            repeats=skip.repeats,
            joined=skip.joined,
            time_terms=skip.time_terms,
            typed=skip.typed,
        )
        reach0 = self._searches.submit(self.reach, query) if rcfg.adaptive_weights else None
        own = [(e.start, e.end) for e in text_found]  # each time the message names
        expansion = self._expand(text, recent, now, lang, turn_end, trace, degraded, timings)

        window = self._window(expansion, text, recent, own, now, trace, degraded)
        named = window  # the time the message names, for the bonus and a question about it
        if window is not None:
            window = widen(window, now)  # what is searched (and reported): with the recording lag
        extra = (
            clean_queries(expansion.expanded_queries, [*base, text], rcfg.max_expanded_queries)
            if expansion is not None
            else []
        )
        trace.expanded_queries = extra

        # Phase 2: the hybrid search of every query, in the window; the fast path's own
        # candidates outside it stay (the window's bonus still favours what is in it)
        result0 = self._first_search(fast0, base, filters, now, turn_end, skip)
        t2 = time.monotonic()
        result = result0
        if extra or window is not None:
            queries = [*base, *extra]
            narrowed = window_filters(filters, window, lag=False) if window is not None else filters
            result = self._search(
                queries, narrowed, now, turn_end, result0, degraded, skip, rewrites=len(extra)
            )
            if result is result0:  # the search missed the deadline: no window was applied
                window = None
            if window is not None and not result.candidates and not _blind(result, result0):
                degraded.append(
                    f"time window {_fmt_window(window)}: no candidates; searched without it"
                )
                trace.window_fallback = True
                window = None
                empty = result
                if extra:
                    result = self._search(
                        queries, filters, now, turn_end, result0, degraded, skip, len(extra)
                    )
                else:
                    result = result0
                # (the window's search failing to embed a query is still told)
                degraded.extend(d for d in empty.degraded if d not in result.degraded)
            if result is not result0 and (window is not None or result.unembedded):
                # what the first search found stays: outside the window, and by the vectors
                # of queries that failed to embed here
                if _blind(result, result0):
                    result = _told_blind(result)
                result = with_first(result, result0)
        timings["expanded_search"] = _ms(t2)
        trace.window = window
        if window is None:
            trace.window_source = None

        # Phase 3: the LLM chooses among the candidates, ranked as the fast path ranks them.
        signals: dict[str, float] = {}
        reach = 1.0  # without the adaptive weights the lists keep their configured weights
        if reach0 is not None:
            # it may wait in the search pool behind other turns' searches: past the turn's
            # deadline the lists keep their configured weights
            try:
                reach, timings["reach"] = reach0.result(
                    timeout=max(0.0, turn_end - time.monotonic())
                )
            except FutureTimeout:
                reach0.cancel()
                degraded.append(
                    "search: the adaptive weights missed the turn deadline; list weights as configured"
                )
        # both searches ran one repeats check: the one that could (vectors came) screens
        screen = result.screen or result0.screen
        candidates = self.refine(
            result.candidates,
            text=text,
            now=now,
            reach=reach,
            filters=filters,
            window=named,
            time_asked=time_is_asked(text, text_found, max_chars=rcfg.max_query_chars),
            signals=signals,
            exclude=held | {*result0.repeats, *result.repeats},
            screen=screen,
        )
        repeated = {*result0.repeats, *result.repeats}  # left out of either search, or refine
        candidates = mark_own_copies(candidates, text, rcfg)
        k = min(limit or rcfg.max_results, cfg.rerank_max_results)
        shown = [c for c in candidates if may_answer(c.components)]  # as the fast path would
        outcome = self._rerank(
            text, recent, shown, now, lang, expansion, turn_end, trace, degraded, timings
        )
        if outcome is not None:
            by_id = {c.episode.id: (i, c) for i, c in enumerate(candidates)}
            results: list[Retrieved] = []
            kept = {item.id for item in outcome.chosen}
            # a chosen memory's later change (the fast path's link) comes before it, brought
            # back if the model left it out (a pick ranked past k is the model's, with its
            # reason); then the first k, the newest of a chain first, a correction with the
            # memory it corrects
            kept_first = first_keeping_corrected(
                with_later_changes(outcome.chosen, shown),
                k,
                lambda item: item.id,
                lambda item: by_id[item.id][1].components,
            )
            for item in kept_first:
                pos, cand = by_id[item.id]
                comps = dict(cand.components)
                comps["fast_rank"] = float(pos + 1)
                if item.id not in kept:
                    comps["brought_back"] = 1.0
                results.append(
                    Retrieved(
                        episode=cand.episode,
                        score=cand.score,
                        rank=len(results) + 1,
                        relevance=item.relevance,
                        reason=item.reason or None,
                        components=comps,
                    )
                )
            should_inject = bool(results)
            strategy = outcome.injection_strategy
        else:
            results = fast_results(candidates, rcfg, limit, result.lexical_only)
            should_inject = self.decide(
                text, candidates, results, timings, signals, result.lexical_only, degraded
            )
            strategy = "quote_key_parts"

        for key, value in result0.timings_ms.items():
            timings.setdefault(key, value)  # the first search's stages: embed, knn, …
        if result is not result0:
            for key, value in result.timings_ms.items():
                timings[f"expanded.{key}"] = value  # the expanded search's stages
        trace.elapsed_s = time.monotonic() - t0
        timings["turn"] = round(trace.elapsed_s * 1000, 3)
        self._count(trace)
        retrieval = Retrieval(
            results=tuple(results),
            queries=tuple(result.queries),
            timings_ms=timings,
            degraded=(*result.degraded, *degraded),
            should_inject=should_inject,
            language=lang,
            injection_strategy=strategy,
            candidates=len(candidates),
            time_window=window,
            signals=signals if outcome is None else {},
            in_recent=in_recent,
            repeats=tuple(sorted(repeated)),
        )
        return retrieval, trace

    # -- phases --------------------------------------------------------------------------

    def _expand(
        self,
        text: str,
        recent: list[Message],
        now: datetime,
        lang: Literal["ja", "en"],
        turn_end: float,
        trace: TurnTrace,
        degraded: list[str],
        timings: dict[str, float],
    ) -> Expansion | None:
        cfg = self.llm
        if not cfg.expansion_enabled:
            return None
        cached = self.expander.cached(text, recent, now, lang)
        if cached is not None:
            trace.expansion = "cached"
            return cached
        budget = min(cfg.expansion_deadline_s, turn_end - time.monotonic() - FINISH_S)
        if budget < MIN_PHASE_S:
            trace.expansion = "skipped"
            degraded.append(f"expansion: skipped, {max(budget, 0):.2f} s left in the turn")
            return None
        start = time.monotonic()
        future = self._pool.submit(
            _by, start + budget, self.expander.expand, text, recent, now, lang
        )
        value, status, note = self._await(future, start, budget, turn_end, "expansion")
        expansion: Expansion | None = value
        trace.expansion_s = time.monotonic() - start
        timings["expansion"] = _ms(start)
        trace.expansion = status
        if note:
            degraded.append(note)
        return expansion

    def _rerank(
        self,
        text: str,
        recent: list[Message],
        candidates: list[Candidate],
        now: datetime,
        lang: Literal["ja", "en"],
        expansion: Expansion | None,
        turn_end: float,
        trace: TurnTrace,
        degraded: list[str],
        timings: dict[str, float],
    ) -> RerankOutcome | None:
        cfg = self.llm
        if not cfg.rerank_enabled:
            return None
        if not candidates:
            trace.rerank = "skipped"
            return None
        budget = min(cfg.rerank_deadline_s, turn_end - time.monotonic() - FINISH_S)
        if budget < MIN_PHASE_S:
            trace.rerank = "skipped"
            degraded.append(
                f"rerank: skipped, {max(budget, 0):.2f} s left in the turn; fast-path ranking used"
            )
            return None
        start = time.monotonic()
        refs = expansion.detected_references if expansion is not None else []
        future = self._pool.submit(
            _by,
            start + budget,
            self.reranker.rerank,
            text,
            recent,
            candidates,
            now,
            lang,
            references=refs,
        )
        value, status, note = self._await(future, start, budget, turn_end, "rerank")
        outcome: RerankOutcome | None = value
        trace.rerank_s = time.monotonic() - start
        timings["rerank"] = _ms(start)
        if outcome is not None:
            trace.unread = outcome.unread
        if outcome is not None and (outcome.unknown_ids or outcome.malformed):
            n, bad = len(outcome.unknown_ids), outcome.malformed
            trace.unknown_ids = n
            dropped = " and ".join(
                [
                    *([f"{n} unknown id{'s' if n != 1 else ''}"] if n else []),
                    *([f"{bad} malformed item{'s' if bad != 1 else ''}"] if bad else []),
                ]
            )
            if outcome.unread:
                dropped += f" (of its first {outcome.listed}; {outcome.unread} more not read)"
            if not outcome.chosen and n and n + bad == outcome.listed:
                status = "invalid"
                note = f"rerank: {dropped} dropped, none left; fast-path ranking used"
                outcome = None
            else:
                note = f"rerank: {dropped} dropped"
                status = "ok" if outcome.chosen else "empty"  # (what was left was all low)
        elif outcome is not None and outcome.unread:
            more = outcome.unread
            note = f"rerank: {more} item{'s' if more != 1 else ''} past its first {outcome.listed} not read"
            status = "ok" if outcome.chosen else "empty"
        elif outcome is not None and not outcome.chosen:
            status = "empty"
        elif outcome is None and note:
            note += "; fast-path ranking used"
        trace.rerank = status
        if note:
            degraded.append(note)
        return outcome

    def _await(
        self, future: Future[Any], start: float, budget: float, turn_end: float, phase: str
    ) -> tuple[Any, PhaseStatus, str | None]:
        """Wait for a phase's call until its deadline (plus a little grace; never into the
        time the turn keeps to finish)."""
        wait = min(start + budget + GRACE_S, turn_end - FINISH_S) - time.monotonic()
        not_started = (
            f"{phase}: timeout after {budget:.2f} s, not started (every LLM thread was busy "
            f"with earlier turns' calls)"
        )
        try:
            return future.result(timeout=max(wait, 0.0)), "ok", None
        except FutureTimeout:
            if future.cancel():  # still queued: it never reached the server
                return None, "timeout", not_started
            return None, "timeout", f"{phase}: timeout after {budget:.2f} s"
        except _StartedLate as exc:  # taken up with too little of its budget left: never sent
            exc.__traceback__ = None  # (as below: it would hold this frame and the callers')
            return None, "timeout", not_started
        except LLMError as exc:
            # the future holds the error, and its traceback this frame and the callers'
            # (the memory's retrieve among them): that cycle kept a closed memory, its model
            # with it, until a full garbage collection
            exc.__traceback__ = None
            return (None, *_failed(exc, phase, budget))

    def _wait(self, future: Future[FastResult], turn_end: float) -> FastResult | None:
        """A search's result, waited for until the turn deadline less :data:`FINISH_S`
        (None past it: one that has ended is taken even then)."""
        wait = turn_end - time.monotonic() - FINISH_S
        try:
            return future.result(timeout=max(wait, 0.0))
        except FutureTimeout:
            future.cancel()
            return None

    def _first_search(
        self,
        future: Future[FastResult],
        queries: list[str],
        filters: Filters,
        now: datetime,
        turn_end: float,
        skip: Skip,
    ) -> FastResult:
        """The fast path's search of the raw queries; past the turn deadline (the embedder
        busy with other threads' work, or slow), the full text is searched alone, which
        asks the embedder nothing."""
        result = self._wait(future, turn_end)
        if result is not None:
            return result
        return self.fast.run(
            queries,
            filters,
            now=now,
            exclude=skip.held,
            repeats=skip.repeats,
            skip_vectors="the query was not embedded within the turn deadline",
            joined=skip.joined,
            time_terms=skip.time_terms,
            typed=skip.typed,
        )

    def _search(
        self,
        queries: list[str],
        filters: Filters,
        now: datetime,
        turn_end: float,
        fallback: FastResult,
        degraded: list[str],
        skip: Skip,
        rewrites: int = 0,
    ) -> FastResult:
        """Phase 2's search (without what ``skip`` leaves out; the last ``rewrites`` queries
        the LLM's, :meth:`.FastPath.run`); past the turn deadline, the first search's result."""
        future = self._searches.submit(
            self.fast.run,
            queries,
            filters,
            now=now,
            exclude=skip.held,
            repeats=skip.repeats,
            joined=skip.joined,
            time_terms=skip.time_terms,
            typed=skip.typed,
            rewrites=rewrites,
        )
        result = self._wait(future, turn_end)
        if result is None:
            degraded.append("search: the expanded search missed the turn deadline; fast path used")
            return fallback
        return result
