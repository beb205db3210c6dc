"""The fast path: for each query, KNN and BM25 in parallel; fuse; score; fetch.

It needs no LLM and is what every turn falls back to. When the embedder
fails (a remote endpoint down or timing out) the full-text search answers
alone: the result says so in ``degraded`` and ``lexical_only``. Each search runs on
its own thread with its own connection; the lists are fused by weighted
Reciprocal Rank Fusion and each candidate then gets a documented score
(:func:`score_candidates`), plus the session and speaker evidence of
:mod:`.evidence`. The vector search embeds the query's content words
(:func:`~memengine.text.dense_query`) when ``dense_content_words`` is on;
the ``cosine`` component stays that of the context query as written.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Executor, Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt

from ..config import RetrievalConfig
from ..embed.base import Embedder, Vectors
from ..embed.cache import CachingEmbedder
from ..errors import EmbeddingError, MemEngineError, MemoryClosed
from ..models import Episode
from ..store.connect import CLOSED
from ..store.database import Store
from ..store.filters import Filters
from ..store.vectors import MAX_K
from ..text import dense_query, query_terms, within
from . import workers
from .evidence import rescore
from .fusion import Fused, RankedList, rrf
from .recent import KEYED_CHARS, REPEAT_MIN_COSINE, RepeatCheck

__all__ = [
    "REPEAT_KNN_SLACK",
    "REPEAT_SLACKS",
    "VECTORS_SKIPPED",
    "Candidate",
    "FastPath",
    "FastResult",
    "shown_queries",
]

VECTORS_SKIPPED = "vector search skipped, the full-text search answered alone: "
"""How the note of a search whose every query failed to embed begins (the reason follows)."""

REPEAT_SLACKS = (10, 400, 1600)
"""How many more hits each search asks for when repeats of what the user said are left
out: they are known only once found, and a daily "Morning!" has a copy a day. The hits are
checked in rank order only as far as each list needs (:meth:`FastPath._settle`). The
second, deeper search runs only for the lists full of them that came out short, and the
third for the full-text lists still short (over a year of a daily greeting; a vector
list too when no full-text list is searched beside it, else it goes no deeper than
:data:`REPEAT_KNN_SLACK`); past that, the list comes out shorter. The first is small
because every turn with a user message in ``recent`` pays it (`memengine bench`, 100,000
episodes, a remark in ``recent``: 10 more hits cost the turn about 2 ms at the median, 40
about 6; a greeting with 3,000 stored copies is searched deeper either way)."""

REPEAT_KNN_SLACK = 400
"""The deepest a vector list is searched again past repeats (:data:`REPEAT_SLACKS`) when a
full-text list is searched beside it (alone, it goes as deep as they do). Its copies are
the nearest to the context query's vector, which holds the repeated message; the
full-text lists, where the question's own rarer words rank its memories among the copies,
go on to 1,600. Cost: at 100,000 episodes with 3,000 copies of a greeting, a
vector list searched 1,600 deep and its copies read cost the turn about 15 ms at the
median (the bench's 100K file and greeting turn, 300 turns: 50 → 65 ms)."""


@dataclass
class Candidate:
    """A fused candidate with its episode and every component of its score."""

    episode: Episode
    score: float
    components: dict[str, float] = field(default_factory=dict)


@dataclass
class FastResult:
    """What the fast path found, with per-stage timings (ms) and what it had to skip;
    ``lexical_only`` when the embedder failed and the full-text search answered alone."""

    candidates: list[Candidate]
    queries: list[str]
    timings_ms: dict[str, float]
    degraded: list[str] = field(default_factory=list)
    lexical_only: bool = False
    repeats: list[int] = field(default_factory=list)
    """The stored exchanges left out because their user turn repeats what the user just
    said (:class:`.recent.RepeatCheck`): those the searches met, as far as each list was
    checked, and those :attr:`screen` found."""
    screen: Callable[[Collection[int]], set[int]] | None = None
    """Which of some other ids repeat what the user said, checked as the searches' hits
    were (the memories a by-date fetch or a lifted next turn would add; each found joins
    :attr:`repeats`). None without a repeats check."""
    unembedded: list[str] = field(default_factory=list)
    """The queries searched by their words alone because embedding them failed (every one
    when :attr:`lexical_only`; the LLM's alone when the message's vectors were cached)."""


MAX_ABANDONED = 16
"""Query embeddings left running past their deadline (a slow or hung endpoint) beyond which
a turn asks the embedder nothing more until some of them end."""


class _Deadlined:
    """:attr:`FastPath.deadlined`: the embedder, each call waited for as :meth:`FastPath.embed`
    waits (an :class:`.EmbeddingError` past ``embed_deadline_s``)."""

    def __init__(self, fast: FastPath) -> None:
        # a weak reference: no cycle keeps a closed memory's model loaded until a full
        # garbage collection (a process that opens a memory per user or per day)
        self._fast: FastPath = weakref.proxy(fast)

    @property
    def id(self) -> str:
        return self._fast.embedder.id

    @property
    def dimension(self) -> int:
        return self._fast.embedder.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._fast.embed(texts)


class FastPath:
    """Hybrid search (vector + full text) over one store, fused by RRF."""

    def __init__(
        self, store: Store, embedder: Embedder, config: RetrievalConfig, executor: Executor
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.config = config
        self.executor = executor
        self._lock = threading.Lock()
        self._abandoned = 0  # embeddings still running whose turn has stopped waiting
        self._closed = False
        self.deadlined: Embedder = _Deadlined(self)
        """The embedder as a turn waits for it (:meth:`embed`), for the turn's other stages."""

    def close(self) -> None:
        """Take no more embeddings; one still under way ends at the embedder's own limits
        (on a daemon thread: it does not hold up the process's exit)."""
        with self._lock:
            self._closed = True

    def embed(self, texts: Sequence[str]) -> Vectors:
        """The vectors of ``texts``, waited for at most ``embed_deadline_s``
        (:class:`.EmbeddingError` past it).

        The embedding starts at once on a daemon thread (:mod:`.workers`: concurrent
        turns do not queue for it, and no search waits behind it); one left running past
        its deadline ends at the embedder's own limits, and while :data:`MAX_ABANDONED`
        are, a turn asks the embedder nothing and the full text answers alone."""
        deadline = self.config.embed_deadline_s
        if deadline is None:
            return self.embedder.embed(texts)
        with self._lock:
            if self._closed:
                raise MemoryClosed(CLOSED)
            if self._abandoned >= MAX_ABANDONED:
                raise EmbeddingError(
                    f"{self._abandoned} query embeddings are still running past their "
                    "deadline: the embedder is not answering"
                )
        future = workers.submit(lambda: self.embedder.embed(texts))
        try:
            return future.result(timeout=deadline)
        except FutureTimeout:
            pass
        except MemEngineError as exc:
            # the future holds the error, and its traceback the frames that hold the future
            # (the memory's retrieve among them): that cycle kept a closed memory, its model
            # with it, until a full garbage collection
            exc.__traceback__ = None
            del future
            raise
        with self._lock:  # left running: counted until it ends
            self._abandoned += 1
        future.add_done_callback(self._ended)  # (at once if it has ended meanwhile)
        raise EmbeddingError(
            f"the query was not embedded within {deadline:g} s ([retrieval] embed_deadline_s)"
        )

    def _cached(
        self, texts: Sequence[str], queries: int, searched: int, said: int
    ) -> tuple[Vectors | None, list[int]]:
        """What is left of a failed embedding of ``texts`` (the ``queries``, their
        ``searched`` forms, the ``said`` exchanges, in that order): the vectors the cache
        holds (a row of NaN for each text it does not) and the queries that have theirs,
        for a search whose new queries (the LLM's) failed to embed after the message's
        did. None when the first query has none: its vector scores every candidate's
        cosine."""
        known = self.embedder.known(texts) if isinstance(self.embedder, CachingEmbedder) else {}

        def has(i: int) -> bool:
            return texts[i] in known and (not searched or texts[queries + i] in known)

        if not has(0):
            return None, []
        dimension = len(known[texts[0]])  # (a remote embedder's may be learned since built)
        rows = np.full((len(texts), dimension), np.nan, dtype=np.float32)
        for i, text in enumerate(texts):
            if text in known:
                rows[i] = known[text]
        return rows, [i for i in range(queries) if has(i)]

    def _ended(self, _future: Future[Vectors]) -> None:
        with self._lock:
            self._abandoned -= 1

    def bm25(
        self, terms: Sequence[str], filters: Filters, extra: int = 0
    ) -> list[tuple[int, float]]:
        """The full-text stage for one query's terms, with this path's settings (``extra``
        more hits than configured)."""
        cfg = self.config
        hits, _dropped = self.store.text_search(
            terms,
            cfg.bm25_k_per_query + extra,
            filters,
            context_weight=cfg.context_weight,
            max_df=cfg.max_term_df,
            posting_budget=cfg.bm25_posting_budget,
        )
        return hits

    def run(
        self,
        queries: Sequence[str],
        filters: Filters,
        *,
        now: datetime,
        exclude: AbstractSet[int] = frozenset(),
        repeats: RepeatCheck | None = None,
        skip_vectors: str | None = None,
        joined: AbstractSet[int] = frozenset(),
        time_terms: AbstractSet[str] = frozenset(),
        rewrites: int = 0,
        typed: AbstractSet[int] = frozenset(),
    ) -> FastResult:
        """Search every query, fuse, score and fetch the candidates (best first). The
        queries numbered in ``joined`` only add candidates: their ranks are not the
        candidates' ``knn_rank``/``bm25_rank`` (which label and decide) nor their words the
        candidates' own (the conversation joined to a message on another topic). The ids
        in ``exclude`` are left out of every list before it is ranked (each search asks for
        as many more hits), and so are the older exchanges that ``repeats`` finds repeat
        what the user said (:class:`.recent.RepeatCheck`; known once found: each search
        asks for :data:`REPEAT_SLACKS` [0] more hits, a list full of them that came out
        short is searched again [1] deeper, and a full-text list still short [2] deeper;
        a vector list goes no deeper than :data:`REPEAT_KNN_SLACK` unless no full-text
        list is searched beside it). ``skip_vectors`` (a reason) searches the full text alone,
        asking the embedder nothing; so does a turn whose vector read finds the file
        re-embedded by another process since the query was embedded (another model under
        the same id: an :class:`.EmbeddingError` from the store), saying so. The full-text
        search leaves out ``time_terms``, the words of the times the message names that
        point from now (:func:`.retriever.time_terms`: "last", "ago"; the time window
        answers for them, and "last" as a word found every "most recent call last"). The
        last ``rewrites`` queries are the LLM's rewrites of the message: one without a word
        the full text can search ("The Who", "IT", 🎸, a model's padding "a") is searched by
        its meaning alone (by nothing with ``search = "bm25"``), saying nothing of it in
        ``degraded``, which notes a skipped full-text search only for
        the message's own words (where no word to search tells something). A candidate's
        ``cosine`` is to the first query (the context query), or to a query numbered in
        ``typed`` when nearer: the question typed after a long paste
        (:func:`.retriever.typed_after`), which the context query, the paste's first and last
        characters, drowns (the memory asked for at −.03 to it, .34 to the question alone:
        nothing would clear ``relevance_threshold``, and the pack would be empty)."""
        args = (filters, now, exclude, repeats)
        rest = (joined, time_terms, rewrites, typed)
        try:
            return self._run(queries, *args, skip_vectors, *rest)
        except EmbeddingError as exc:
            if skip_vectors is not None:
                raise
            note = str(exc)
            exc.__traceback__ = None  # (its frames hold the searches' futures, which hold it)
            del exc
        return self._run(queries, *args, note, *rest)

    def _run(
        self,
        queries: Sequence[str],
        filters: Filters,
        now: datetime,
        exclude: AbstractSet[int],
        repeats: RepeatCheck | None,
        skip_vectors: str | None,
        joined: AbstractSet[int],
        time_terms: AbstractSet[str],
        rewrites: int,
        typed: AbstractSet[int],
    ) -> FastResult:
        """:meth:`run`, but for a re-embed seen by a vector read (raised)."""
        cfg = self.config
        timings: dict[str, float] = {}
        degraded: list[str] = []
        queries = [within(q, cfg.max_query_chars) for q in queries if q.strip()]
        if not queries:
            return FastResult([], [], timings, ["empty query"])
        t0 = time.perf_counter()
        searched = [dense_query(q) for q in queries] if cfg.dense_content_words else []
        said = dict(repeats.said) if repeats is not None else {}  # embedded with the query
        vectors = None
        texts = [*queries, *searched, *(s.text for s in said.values())]
        embedded = list(range(len(queries)))  # the queries searched by their vectors
        unembedded: list[str] = []
        try:
            if skip_vectors is None:
                vectors = self.embed(texts)
                if len(vectors) != len(texts):
                    raise EmbeddingError(
                        f"the embedder returned {len(vectors)} vector(s) for {len(texts)} "
                        "texts (the queries and the recent exchanges compared)"
                    )
        except EmbeddingError as exc:
            vectors, embedded = self._cached(texts, len(queries), len(searched), len(said))
            if vectors is None:
                skip_vectors = str(exc)
            else:
                unembedded = [q for i, q in enumerate(queries) if i not in embedded]
                degraded.append(_unembedded_note(unembedded, len(queries), str(exc)))
        if skip_vectors is not None:
            unembedded = list(queries)
            degraded.append(f"{VECTORS_SKIPPED}{skip_vectors}")
        n = len(queries) + len(searched)
        qvecs = vectors[: len(queries)] if vectors is not None else None
        knn_vecs = vectors[len(queries) : n] if vectors is not None and searched else qvecs
        if knn_vecs is not None and len(embedded) < len(queries):
            knn_vecs = knn_vecs[embedded]
        said_vectors = (
            dict(zip(said, vectors[n:], strict=True)) if vectors is not None and said else {}
        )
        if said_vectors and not all(np.isfinite(v).all() for v in said_vectors.values()):
            said_vectors = {}  # (one not cached: the repeats are not told by meaning)
        timings["embed"] = _ms(t0)

        t1 = time.perf_counter()
        use_knn = cfg.search != "bm25" and knn_vecs is not None
        use_bm25 = cfg.search != "vector" or knn_vecs is None
        all_terms = [query_terms(q) if use_bm25 else [] for q in queries]
        term_lists = [[t for t in terms if t not in time_terms] for terms in all_terms]
        own = len(queries) - rewrites  # (the blanks dropped are the message's: rewrites have none)
        for i, terms in enumerate(all_terms[:own]):
            if use_bm25 and not terms:
                degraded.append(f"bm25 skipped for query {i}: no searchable terms")
        knn_vecs = knn_vecs if use_knn else None
        # repeats are told by their meaning too: without vectors none is left out
        check = repeats if repeats is not None and said_vectors else None
        extra = len(exclude) + (REPEAT_SLACKS[0] if check is not None else 0)
        knn_hits, bm25_hits = self._search(knn_vecs, term_lists, filters, extra, timings)
        repeated: set[int] = set()
        checked: set[int] = set()
        if check is not None:
            k_knn, k_bm25 = cfg.knn_k_per_query, cfg.bm25_k_per_query
            t5 = time.perf_counter()
            settle = [(h, k_knn) for h in knn_hits] + [(h, k_bm25) for _, h in bm25_hits]
            repeated = self._settle(check, settle, exclude, checked, filters, said_vectors)
            timings["repeats"] = _ms(t5)
            asked = extra  # how many more hits than it keeps each list asked for
            # a vector list goes past REPEAT_KNN_SLACK only with no full-text list beside it
            knn_cap = REPEAT_KNN_SLACK if bm25_hits else REPEAT_SLACKS[-1]
            for slack in REPEAT_SLACKS[1:]:  # the lists full of them again, each time deeper
                skip = exclude | repeated
                ask_knn = min(k_knn + asked, MAX_K)  # as _search asked
                again = [
                    i
                    for i, h in enumerate(knn_hits)
                    if slack <= knn_cap and _short(h, k_knn, ask_knn, skip)
                ]
                deeper = {i for i, h in bm25_hits if _short(h, k_bm25, k_bm25 + asked, skip)}
                if not again and not deeper:
                    break
                more = len(exclude) + slack
                knn_again = knn_vecs[again] if knn_vecs is not None and again else None
                terms_again = [t if i in deeper else [] for i, t in enumerate(term_lists)]
                t7 = time.perf_counter()
                deep_knn, deep_bm25 = self._search(knn_again, terms_again, filters, more, timings)
                timings["search_deeper"] = timings.get("search_deeper", 0.0) + _ms(t7)
                if slack == REPEAT_SLACKS[-1]:  # (the deepest round alone, when taken)
                    timings["search_deepest"] = _ms(t7)
                for j, i in enumerate(again):
                    knn_hits[i] = deep_knn[j]
                deep = dict(deep_bm25)
                bm25_hits = [(i, deep.get(i, h)) for i, h in bm25_hits]
                t6 = time.perf_counter()
                settle = [(knn_hits[i], k_knn) for i in again]
                settle += [(h, k_bm25) for i, h in bm25_hits if i in deeper]
                repeated |= self._settle(check, settle, skip, checked, filters, said_vectors)
                timings["repeats"] += _ms(t6)
                asked = more
        timings["search"] = _ms(t1)
        skip = exclude | repeated
        lists: list[RankedList] = []
        copies = self._copies(knn_hits, skip)
        for row, hits in enumerate(knn_hits):
            i = embedded[row]  # (the query's own number: one failed to embed has no list)
            hits = [h for h in hits if h[0] not in skip and h[0] not in copies]
            hits = hits[: cfg.knn_k_per_query]
            lists.append(
                RankedList(
                    f"{_list_prefix(i, joined)}knn{i}",
                    [h[0] for h in hits],
                    [1 - h[1] for h in hits],
                    cfg.knn_weight,
                )
            )
        for i, hits in bm25_hits:
            hits = [h for h in hits if h[0] not in skip][: cfg.bm25_k_per_query]
            lists.append(
                RankedList(
                    f"{_list_prefix(i, joined)}bm25{i}",
                    [h[0] for h in hits],
                    [h[1] for h in hits],
                    cfg.bm25_weight,
                )
            )

        t2 = time.perf_counter()
        fused = rrf(lists, k=cfg.rrf_k, limit=cfg.max_candidates)
        joined_part = _joined_part(fused, lists, cfg.rrf_k)
        timings["fusion"] = _ms(t2)

        t3 = time.perf_counter()
        episodes = self.store.get([f.id for f in fused])
        cosines = (
            self._cosines(qvecs, [i for i in typed if i in embedded], fused, filters)
            if qvecs is not None
            else {}
        )
        timings["fetch"] = _ms(t3)
        candidates = score_candidates(
            fused, episodes, cosines, now, cfg.cosine_weight, joined_part=joined_part
        )
        candidates = rescore(
            candidates,
            queries[0],
            gap_s=cfg.neighbour_gap_minutes * 60,
            session_weight=cfg.session_weight,
            session_top_n=cfg.session_top_n,
            speaker_weight=cfg.speaker_weight,
        )
        t4 = time.perf_counter()
        own_terms = [t for i, t in enumerate(term_lists) if i not in joined]
        self._mark_neighbours_only(candidates, own_terms, lexical_only=qvecs is None)
        timings["own_text"] = _ms(t4)
        timings["total"] = _ms(t0)
        result = FastResult(
            candidates,
            list(queries),
            timings,
            degraded,
            qvecs is None,
            sorted(repeated),
            unembedded=unembedded,
        )
        if check is not None:
            result.screen = self._screen(result.repeats, check, checked, filters, said_vectors)
        return result

    def _cosines(
        self, qvecs: Vectors, typed: Sequence[int], fused: Sequence[Fused], filters: Filters
    ) -> dict[int, float]:
        """Each fused candidate's cosine to the context query (``qvecs[0]``), or to one of
        the ``typed`` queries (embedded) when nearer (:meth:`run`). Only a paste with a line
        typed after it has one (:func:`.retriever.typed_after`): every other turn reads the
        context query's alone, its labels and decision untouched (a nearer question could
        lift any of them)."""
        ids = [f.id for f in fused]
        cosines = self.store.similarities(qvecs[0], ids, agent=filters.agent)
        for i in typed:
            for id_, value in self.store.similarities(qvecs[i], ids, agent=filters.agent).items():
                if value > cosines.get(id_, -math.inf):
                    cosines[id_] = value
        return cosines

    def _copies(
        self, knn_hits: Sequence[Sequence[tuple[int, float]]], skip: AbstractSet[int]
    ) -> set[int]:
        """The vector hits that are another copy of a text a nearer (or as near, stored
        later) hit holds: "Traffic was awful" told on six evenings took six of ten places,
        and the trip to Lisbon none. Only ties are read (their texts compared); the first
        kept is the latest stored (the scan's order of ties), and the copies can still come
        from the full-text search."""
        runs = [
            run for hits in knn_hits for run in tied_runs([h for h in hits if h[0] not in skip])
        ]
        if not runs:
            return set()
        texts = {i: ep.text for i, ep in self.store.get([i for run in runs for i in run]).items()}
        copies: set[int] = set()
        for run in runs:
            seen: set[str] = set()
            for i in run:
                text = texts.get(i)
                if text is None:
                    continue
                if text in seen:
                    copies.add(i)
                seen.add(text)
        return copies

    def _screen(
        self,
        repeats: list[int],
        check: RepeatCheck,
        checked: set[int],
        filters: Filters,
        vectors: dict[str, npt.NDArray[np.float32]],
    ) -> Callable[[Collection[int]], set[int]]:
        """:attr:`FastResult.screen` of a run whose hits ``check`` read (``checked``); the
        repeats it finds join ``repeats`` (the result's list, kept sorted; the closure holds
        the list, not the result: no reference cycle keeps a closed memory's embedder)."""
        lock = threading.Lock()

        def screen(ids: Collection[int]) -> set[int]:
            with lock:
                ask = set(ids) - checked
                if ask:
                    new = self._repeats(check, ask, filters, vectors)
                    checked.update(ask)
                    if new:
                        repeats[:] = sorted({*repeats, *new})
                return set(ids) & set(repeats)

        return screen

    def _settle(
        self,
        check: RepeatCheck,
        lists: Sequence[tuple[Sequence[tuple[int, float]], int]],
        skip: AbstractSet[int],
        checked: set[int],
        filters: Filters,
        vectors: dict[str, npt.NDArray[np.float32]],
    ) -> set[int]:
        """The repeats (:meth:`_repeats`) among the hits of ``lists`` (each with the number
        of hits it keeps), checked in rank order only as far as each list needs: until its
        first that many hits that are neither repeats nor in ``skip`` are all checked. A
        list with hits left to check looks as many further as the repeats it met (a daily
        greeting's hundreds of copies take a few rounds, not one per hit). ``checked``
        holds the ids already checked, and gets the ones checked here."""
        found: set[int] = set()
        ahead = [0] * len(lists)  # per list, the repeats met so far: the next round's look-ahead
        while True:
            ask: set[int] = set()
            for j, (hits, keep) in enumerate(lists):
                taken, pending = 0, []
                for h in hits:
                    if h[0] in skip or h[0] in found:
                        continue
                    if h[0] not in checked:
                        pending.append(h[0])
                    taken += 1
                    if taken >= keep and not pending:
                        break  # its first ``keep`` are checked: settled
                    if taken >= keep + ahead[j]:
                        break
                ask.update(pending)
            if not ask:
                return found
            new = self._repeats(check, ask, filters, vectors)
            checked |= ask
            found |= new
            for j, (hits, _) in enumerate(lists):
                ahead[j] += sum(h[0] in new for h in hits)

    def _repeats(
        self,
        check: RepeatCheck,
        ids: AbstractSet[int],
        filters: Filters,
        vectors: dict[str, npt.NDArray[np.float32]],
    ) -> set[int]:
        """The ``ids`` that repeat an exchange the context query reads (``check``): by their
        words (:meth:`.recent.RepeatCheck.keyed`), and their vector within
        :data:`.recent.REPEAT_MIN_COSINE` of its (``vectors``: the recent exchanges', by key,
        embedded with the query)."""
        if not ids:
            return set()
        # no key is longer than KEYED_CHARS: a user turn past 4× that is none (key_of)
        keyed = check.keyed(self.store.exchange_texts(sorted(ids), max_chars=5 * KEYED_CHARS))
        keys = sorted(set(keyed.values()))
        out: set[int] = set()
        for key in keys:
            same = [i for i, k in keyed.items() if k == key]
            sims = self.store.similarities(vectors[key], same, agent=filters.agent)
            out |= {i for i, s in sims.items() if s >= REPEAT_MIN_COSINE}
        return out

    def _search(
        self,
        knn_vecs: Vectors | None,
        term_lists: Sequence[Sequence[str]],
        filters: Filters,
        extra: int,
        timings: dict[str, float],
    ) -> tuple[list[list[tuple[int, float]]], list[tuple[int, list[tuple[int, float]]]]]:
        """The KNN hits of every query vector and the BM25 hits of every query with terms
        (``(query, hits)``), each search ``extra`` hits deeper than configured, in parallel;
        the KNN's milliseconds go to ``timings["knn"]``."""
        t0 = time.perf_counter()
        k = min(self.config.knn_k_per_query + extra, MAX_K)
        knn_job = (
            self.executor.submit(self.store.knn_many, knn_vecs, k, filters)
            if knn_vecs is not None
            else None
        )
        bm25_jobs = [
            (i, self.executor.submit(self.bm25, terms, filters, extra))
            for i, terms in enumerate(term_lists)
            if terms
        ]
        knn_hits = knn_job.result() if knn_job is not None else []
        timings["knn"] = timings.get("knn", 0.0) + _ms(t0)
        return knn_hits, [(i, job.result()) for i, job in bm25_jobs]

    def _mark_neighbours_only(
        self,
        candidates: Sequence[Candidate],
        term_lists: Sequence[Sequence[str]],
        *,
        lexical_only: bool,
    ) -> None:
        """Mark ``bm25_neighbours_only`` on each candidate of both searches (each full-text
        hit when that search answered alone) whose full-text hit
        matched only its neighbours' words, for every query's terms as its own search kept
        them: the searches do not agree on it then (a turn next to one about the cat is not
        about the cat)."""
        cfg = self.config
        checked = [  # (alone, every hit: a bonus may lift any of them to the top later)
            c
            for c in candidates
            if "bm25_rank" in c.components and (lexical_only or "knn_rank" in c.components)
        ]
        if not checked:
            return
        ids = [c.episode.id for c in checked]
        own: set[int] = set()
        for terms in term_lists:
            if terms and len(own) < len(ids):
                own |= self.store.own_text_matches(
                    terms, ids, max_df=cfg.max_term_df, posting_budget=cfg.bm25_posting_budget
                )
        for c in checked:
            if c.episode.id not in own:
                c.components["bm25_neighbours_only"] = 1.0


JOINED_MIN_COSINE = 0.2
"""How near the message alone a joined query's hit must be for its ranks to count. Of
the offline embedder, a follow-up and its implied subject ("Where did we stay?", the
hotel in Kyoto) mostly .15–.55, a question and the topic it left (15 % of 80, the dog's
limp) mostly −.02–.08; not always ("What's the address?" and the dinner at Luigi's .06,
"Who was the vet again?" and a knee injury .16: docs/benchmarks.md, *Session 42*).
Japanese runs higher: of 30 hand-written chats, memories of other topics came to .12 at
the median against an asking turn, 61 % of them ≥ .1 (English: .065, 35 %). Session 43
raised it from .1: Japanese chats packed another topic's memory on 10 of 92 turns, not
13; the memsets' recall did not move (docs/benchmarks.md, *Session 43*)."""


def shown_queries(queries: Sequence[str]) -> str:
    """``queries`` as a note names them: each on one line, cut to 40 characters, quoted."""
    return ", ".join(repr(" ".join(q.split())[:40]) for q in queries)


def _unembedded_note(unembedded: Sequence[str], of: int, why: str) -> str:
    """The ``degraded`` note of a search whose ``unembedded`` queries (of ``of``) lost their
    vector search, the others keeping theirs: it names them, as the people reading it
    need to know which queries the full text answered for alone."""
    shown = shown_queries(unembedded)
    one = len(unembedded) == 1
    return (
        f"vector search skipped for the {'query' if one else 'queries'} {shown} "
        f"({len(unembedded)} of {of} queries; the rest searched by their vectors), the full-text "
        f"search answered for {'it' if one else 'them'} alone: {why}"
    )


def _with_joined_ranks(f: Fused) -> Fused:
    """``f`` with its joined queries' lists read as its own (their prefix dropped)."""
    if not any(name.startswith("joined_") for name in f.ranks):
        return f
    ranks = {name.removeprefix("joined_"): rank for name, rank in f.ranks.items()}
    raw = {name.removeprefix("joined_"): value for name, value in f.raw.items()}
    return Fused(f.id, f.score, ranks, raw)


def _joined_part(fused: Sequence[Fused], lists: Sequence[RankedList], k: float) -> dict[int, float]:
    """The part of each fused score that the joined queries' lists gave (by id; none when
    it has no such part): taken back from a candidate those ranks are not the own of
    (:func:`score_candidates`)."""
    weights = {lst.name: lst.weight for lst in lists if lst.name.startswith("joined_")}
    out: dict[int, float] = {}
    for f in fused:
        part = sum(weights[name] / (k + rank) for name, rank in f.ranks.items() if name in weights)
        if part:
            out[f.id] = part
    return out


def _list_prefix(query: int, joined: AbstractSet[int]) -> str:
    """What a list's name starts with: "joined_" for a query that only adds candidates
    (:meth:`FastPath.run`), so that its ranks are not read as ``knn_rank``/``bm25_rank``."""
    return "joined_" if query in joined else ""


def tied_runs(hits: Sequence[tuple[int, float]]) -> list[list[int]]:
    """The ids of each run of two or more vector ``hits`` (nearest first) at the same
    distance: the vectors of one text told again, or of texts that only tie."""
    runs: list[list[int]] = []
    for k, (i, distance) in enumerate(hits):
        if k and distance == hits[k - 1][1]:
            if runs and runs[-1][-1] == hits[k - 1][0]:
                runs[-1].append(i)
            else:
                runs.append([hits[k - 1][0], i])
    return runs


def _short(hits: Sequence[tuple[int, float]], k: int, asked: int, skip: AbstractSet[int]) -> bool:
    """Whether a list of ``hits``, full (``asked`` of them), keeps fewer than ``k`` once the
    ids in ``skip`` are left out: full of repeats, it is searched again deeper."""
    return len(hits) >= asked and sum(h[0] not in skip for h in hits) < k


def lexical_agreement(components: dict[str, float]) -> bool:
    """Whether the full-text search found a candidate by its own words, or by the question
    of the turn before it that it answers (``next_turn``), not merely by a neighbour's words
    (``bm25_neighbours_only``)."""
    return "bm25_rank" in components and (
        "bm25_neighbours_only" not in components or components.get("next_turn", 0.0) >= 1.0
    )


def score_candidates(
    fused: Sequence[Fused],
    episodes: dict[int, Episode],
    cosines: dict[int, float],
    now: datetime,
    cosine_weight: float = 0.0,
    *,
    joined_part: Mapping[int, float] | None = None,
) -> list[Candidate]:
    """Turn fused ids into scored candidates.

    The score is the RRF score; each candidate also carries its exact cosine
    similarity to the context query (``cosine``; or to the question typed after a long
    paste when nearer: ``cosines`` as :meth:`FastPath.run` reads them), its best BM25 score, its
    ranks (``knn_rank``, ``bm25_rank``) and its age in days, for the
    should-inject rule and for later stages. A rank in a list of a joined query
    (:meth:`FastPath.run`) is the candidate's only when its cosine to the context query
    is at least :data:`JOINED_MIN_COSINE`: the conversation found it, and it is near the
    message too (a follow-up's implied subject, not the topic the message left). Below
    that, their part of its RRF score (``joined_part``) is taken back too: such a hit is
    a candidate, scored by the message's own lists alone.
    """
    out: list[Candidate] = []
    for f in fused:
        ep = episodes.get(f.id)
        if ep is None:  # deleted between search and fetch
            continue
        if cosines.get(f.id, 0.0) >= JOINED_MIN_COSINE:
            f = _with_joined_ranks(f)
        elif joined_part and f.id in joined_part:
            f = Fused(f.id, f.score - joined_part[f.id], f.ranks, f.raw)
        comps: dict[str, float] = {"rrf": f.score}
        knn = [v for name, v in f.raw.items() if name.startswith("knn")]
        bm = [v for name, v in f.raw.items() if name.startswith("bm25")]
        if f.id in cosines:
            comps["cosine"] = cosines[f.id]
        elif knn:
            comps["cosine"] = max(knn)
        if bm:
            comps["bm25"] = max(bm)
        kr = [r for name, r in f.ranks.items() if name.startswith("knn")]
        br = [r for name, r in f.ranks.items() if name.startswith("bm25")]
        if kr:
            comps["knn_rank"] = float(min(kr))
        if br:
            comps["bm25_rank"] = float(min(br))
        comps["age_days"] = age_days(ep.occurred_at, now)
        score = f.score + cosine_weight * comps.get("cosine", 0.0)
        out.append(Candidate(ep, score, comps))
    out.sort(key=lambda c: -c.score)
    return out


def age_days(moment: datetime, now: datetime) -> float:
    """How many days before ``now`` ``moment`` was (0 for a moment after it)."""
    return max(0.0, (now - moment).total_seconds() / 86400)


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 3)


def recency(age_days: float, half_life_days: float = 30.0) -> float:
    """Exponential recency in (0, 1]: 1 for now, 0.5 after ``half_life_days``."""
    return math.exp(-math.log(2) * age_days / half_life_days)
