"""What every section of ``memengine bench`` shares: the work folder, the files built
from the synthetic corpus (each once per run), the queries and the timed loop.
"""

from __future__ import annotations

import contextlib
import queue
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ...clock import FixedClock
from ...embed.base import Vectors, normalize
from ...memory import Memory
from ...store.database import Store
from ...store.filters import Filters
from ...store.maintenance import OptimizeReport
from ...text import dense_query
from ..synth import (
    EPOCH,
    Batch,
    Corpus,
    QuerySource,
    query_text,
    random_unit_vectors,
    text_seed,
)
from .config import BATCH, BIG_BATCH, EMBEDDER_ID, BenchConfig, Progress


def summarize(values_ms: Sequence[float]) -> dict[str, float]:
    """Median, 95th percentile, mean, min and max (ms) of a list of latencies, and its count."""
    if not values_ms:
        return {
            "n": 0,
            "p50": float("nan"),
            "p95": float("nan"),
            "mean": float("nan"),
            "min": float("nan"),
            "max": float("nan"),
        }
    arr = np.asarray(values_ms, dtype=np.float64)
    return {
        "n": len(arr),
        "p50": round(float(np.percentile(arr, 50)), 4),
        "p95": round(float(np.percentile(arr, 95)), 4),
        "mean": round(float(arr.mean()), 4),
        "min": round(float(arr.min()), 4),
        "max": round(float(arr.max()), 4),
    }


def ratio(a: float, b: float) -> float:
    """``a / b`` to three places (NaN when ``b`` is not positive)."""
    return round(a / b, 3) if b > 0 else float("nan")


class TableEmbedder:
    """Precomputed vectors for known texts, a seeded random unit vector otherwise; timed."""

    def __init__(self, dimension: int, *, embedder_id: str = EMBEDDER_ID) -> None:
        self.id = embedder_id
        self.dimension = dimension
        self.table: dict[str, npt.NDArray[np.float32]] = {}
        self.seconds = 0.0
        self.misses = 0
        self._lock = threading.Lock()

    def add(self, text: str, vector: npt.NDArray[np.float32]) -> None:
        """Register the vector to return for ``text``."""
        self.table[text] = vector

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Look every text up (unknown texts get a random vector seeded by the text)."""
        t0 = time.perf_counter()
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        misses = 0
        for i, text in enumerate(texts):
            vec = self.table.get(text)
            if vec is None:
                misses += 1
                vec = random_unit_vectors(
                    np.random.default_rng(text_seed(text)), 1, self.dimension
                )[0]
            out[i] = vec
        with self._lock:
            self.seconds += time.perf_counter() - t0
            self.misses += misses
        return out


@dataclass
class Built:
    """A bench file as built: its corpus, path, timings and size (and, kept for the exact
    scan it is compared with, the ids and vectors it holds)."""

    corpus: Corpus
    path: Path
    sources: dict[int, QuerySource]
    add_s: float
    wall_s: float
    bytes: int
    ids: npt.NDArray[np.int64] | None = None
    vectors: npt.NDArray[np.float32] | None = None
    optimize_s: float = 0.0
    segments_before: int = 0

    @property
    def bytes_per_episode(self) -> float:
        """File bytes per episode stored."""
        return round(self.bytes / max(self.corpus.size, 1), 1)

    @property
    def add_rate(self) -> float:
        """Episodes stored per second of ``add`` time."""
        return round(self.corpus.size / self.add_s, 1) if self.add_s else float("nan")


@dataclass
class Query:
    """One timed query: its text and vector, the agent it searches, its language, where its
    text came from, and extra (text, vector) queries that go with it."""

    text: str
    vector: npt.NDArray[np.float32]
    agent: str
    language: str
    source: QuerySource
    extras: list[tuple[str, npt.NDArray[np.float32]]] = field(default_factory=list)


def read_through(path: Path, block: int = 8 << 20) -> None:
    """Read a file once from start to end, so the OS has it in its cache."""
    buf = bytearray(block)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def file_bytes(path: Path) -> int:
    """Bytes of a database file with its write-ahead log."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def ms(start: float) -> float:
    """Milliseconds since ``start`` (a ``time.perf_counter()`` reading)."""
    return (time.perf_counter() - start) * 1000.0


def near(vector: npt.NDArray[np.float32], rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """A query vector close to ``vector`` (cosine about 0.9)."""
    noise = random_unit_vectors(rng, 1, len(vector))[0]
    out: npt.NDArray[np.float32] = normalize(vector + 0.5 * noise)[0]
    return out


def mean(values: Sequence[float]) -> float:
    """The mean to one place (0.0 for no values)."""
    return round(float(np.mean(values)), 1) if len(values) else 0.0


def top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` highest scores, best first (exact)."""
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


class Bench:
    """One run: a work folder, the files built so far, and what the sections share."""

    def __init__(self, cfg: BenchConfig, progress: Progress | None) -> None:
        self.cfg = cfg
        self._progress = progress
        self.own_dir = cfg.workdir is None
        self.dir = (
            Path(tempfile.mkdtemp(prefix="memengine-bench-"))
            if cfg.workdir is None
            else cfg.workdir.absolute()  # the cold-start processes run in another folder
        )
        # the folders this run makes (the deepest first), removed again when left empty
        self.made = [d for d in (self.dir, *self.dir.parents) if not d.exists()]
        self.dir.mkdir(parents=True, exist_ok=True)
        self.built: dict[Corpus, Built] = {}
        self.truncated: list[str] = []
        self.files: list[Path] = []
        self.clock = FixedClock(EPOCH)

    def file(self, name: str) -> Path:
        """A fresh file in the work folder, removed at the end of the run."""
        path = self.dir / name
        for suffix in ("", "-wal", "-shm", "-lock"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        self.files.append(path)
        return path

    def progress(self, phase: str, done: int = 0, total: int = 0) -> None:
        """Report a phase to the progress callback, if any."""
        if self._progress is not None:
            self._progress(phase, done, total)

    def cleanup(self) -> None:
        """Remove the files of this run (unless ``keep``)."""
        if self.cfg.keep:
            return
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            return
        for path in [b.path for b in self.built.values()] + self.files:
            for suffix in ("", "-wal", "-shm", "-lock"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        for folder in self.made:
            try:
                folder.rmdir()
            except OSError:  # something else is in it
                break

    # -- building files -------------------------------------------------------------------
    def _batches(self, corpus: Corpus, sources: Sequence[int], size: int) -> Iterator[Batch]:
        """Generate the corpus's batches on a helper thread, one batch ahead of the writer."""
        q: queue.Queue[Batch | BaseException | None] = queue.Queue(maxsize=2)
        stop = threading.Event()

        def produce() -> None:
            try:
                for start, count in corpus.batches(size):
                    if stop.is_set():
                        return
                    q.put(corpus.batch(start, count, sources=sources))
                q.put(None)
            except BaseException as exc:  # handed to the consumer
                q.put(exc)

        worker = threading.Thread(target=produce, name="bench-gen", daemon=True)
        worker.start()
        try:
            while True:
                item = q.get()
                if item is None:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()
            while worker.is_alive():
                with contextlib.suppress(queue.Empty):
                    q.get(timeout=0.1)
            worker.join()

    def build(
        self,
        corpus: Corpus,
        *,
        keep: bool,
        sources: Sequence[int],
        label: str,
        batch: int = BATCH,
    ) -> Built:
        """Write ``corpus`` with Store.add in batches (cached per corpus for this run)."""
        cached = self.built.get(corpus)
        if cached is not None and (cached.vectors is not None or not keep):
            return cached
        return self._write([(corpus, label)], keep=keep, sources=sources, batch=batch)[0]

    def build_twins(
        self,
        first: Corpus,
        second: Corpus,
        *,
        sources: Sequence[int],
        labels: tuple[str, str],
        batch: int,
    ) -> tuple[Built, Built]:
        """Write two layouts of the same episodes (generated once) into two files, in step."""
        if second in self.built:
            return self.build(first, keep=False, sources=sources, label=labels[0], batch=batch), (
                self.built[second]
            )
        a, b = self._write(
            [(first, labels[0]), (second, labels[1])], keep=False, sources=sources, batch=batch
        )
        return a, b

    def _write(
        self,
        targets: Sequence[tuple[Corpus, str]],
        *,
        keep: bool,
        sources: Sequence[int],
        batch: int,
    ) -> list[Built]:
        """Generate the first corpus's batches once and write them to every target's file.

        The other targets hold the same texts and vectors in another layout
        (agents, times); each file's Store.add time is measured on its own.
        """
        corpus = targets[0][0]
        stores: list[Store] = []
        paths: list[Path] = []
        for c, label in targets:
            path = self.dir / f"{label}.db"
            for suffix in ("", "-wal", "-shm", "-lock"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            paths.append(path)
            stores.append(
                Store(path, embedder_id=EMBEDDER_ID, dimension=c.dimension, now=self.clock)
            )
        ids = np.zeros(corpus.size, dtype=np.int64) if keep else None
        vecs = np.zeros((corpus.size, corpus.dimension), dtype=np.float32) if keep else None
        found: dict[int, QuerySource] = {}
        add_s = [0.0] * len(targets)
        done = 0
        t0 = time.perf_counter()
        names = " + ".join(label for _, label in targets)
        phase = f"building {names} ({corpus.size:,} episodes each)"
        self.progress(phase, 0, corpus.size)
        optimized: list[OptimizeReport] = []
        try:
            for b in self._batches(corpus, sources, batch):
                for j, ((c, _), store) in enumerate(zip(targets, stores, strict=True)):
                    eps = b.episodes if j == 0 else c.relabel(b.episodes, done)
                    t1 = time.perf_counter()
                    new_ids = store.add(eps, b.search_texts, b.vectors)
                    add_s[j] += time.perf_counter() - t1
                    if j == 0 and ids is not None and vecs is not None:
                        ids[done : done + len(new_ids)] = new_ids
                        vecs[done : done + len(new_ids)] = b.vectors
                for src in b.sources:
                    found[src.index] = src
                done += len(b.episodes)
                self.progress(phase, done, corpus.size)
            wall = time.perf_counter() - t0
            # a bulk load ends with the full-text merge, as Memory.add_many does
            optimized = [store.optimize() for store in stores]
        finally:
            for store in stores:
                store.close()
        out = []
        for j, ((c, _), path) in enumerate(zip(targets, paths, strict=True)):
            built = Built(
                c,
                path,
                found if j == 0 else {},
                add_s[j],
                wall,
                file_bytes(path),
                ids if j == 0 else None,
                vecs if j == 0 else None,
                optimized[j].seconds,
                optimized[j].segments_before,
            )
            self.built[c] = built
            out.append(built)
        return out

    def single(self, size: int) -> Built:
        """The one-agent file of ``size`` episodes (vectors kept for the exact comparison)."""
        corpus = Corpus(size=size, dimension=self.cfg.dimension, seed=self.cfg.seed)
        n = 4 * (self.cfg.queries + self.cfg.warmup)
        batch = BATCH if size <= 100_000 else BIG_BATCH
        return self.build(
            corpus, keep=True, sources=corpus.pick_sources(n), label=f"single_{size}", batch=batch
        )

    def queries(
        self, built: Built, n: int, *, extra: int = 0, language: str | None = None, salt: int = 0
    ) -> list[Query]:
        """``n`` queries derived from the file's query sources (optionally of one language)."""
        rng = np.random.default_rng([self.cfg.seed, 0xA11CE, salt])
        out: list[Query] = []
        for index in rng.permutation(sorted(built.sources)).tolist():
            src = built.sources[index]
            if (language and src.language != language) or not src.words:
                continue
            text = query_text(src, rng, asks_time=len(out) % 4 == 3)  # one in four asks "when"
            q = Query(text, near(src.vector, rng), built.corpus.agent_of(index), src.language, src)
            for _ in range(extra):
                q.extras.append((query_text(src, rng, words=2), near(src.vector, rng)))
            out.append(q)
            if len(out) == n:
                break
        return out

    def embedder(self, queries: Sequence[Query]) -> TableEmbedder:
        """A table embedder that knows the vectors of ``queries`` (and their extras)."""
        emb = TableEmbedder(self.cfg.dimension)
        for q in queries:
            for text, vec in [(q.text, q.vector), *q.extras]:
                emb.add(text, vec)
                emb.add(dense_query(text), vec)  # the vector search's form of the query
        return emb

    def filters(self, mem: Memory, agent: str) -> Filters:
        """The filters the fast path would search ``agent`` with at the bench's clock."""
        return mem.retriever.filters(
            agent=agent,
            now=EPOCH,
            kinds=None,
            max_sensitivity=3,
            day_range=mem.config.retrieval.occurred_day_range,
            deep=False,
        )

    def retrievals(
        self, mem: Memory, qs: Sequence[Query], label: str, *, extras: bool = False
    ) -> dict[str, list[float]]:
        """``Memory.retrieve`` for each query (with its extra queries when ``extras``):
        the measured queries' stage timings, and their wall time as ``retrieve``."""
        out: dict[str, list[float]] = {}
        for _, q, measured in self.loop(qs, label):
            more = [t for t, _ in q.extras] if extras else []
            t0 = time.perf_counter()
            r = mem.retrieve(q.text, agent=q.agent, extra_queries=more)
            wall = ms(t0)
            if measured:
                for key, v in r.timings_ms.items():
                    out.setdefault(key, []).append(v)
                out.setdefault("retrieve", []).append(wall)
        return out

    def loop(self, items: Sequence[Query], label: str) -> Iterator[tuple[int, Query, bool]]:
        """Yield ``(i, query, measured)``: warm-up queries first, then measured ones.

        The loop stops early once it has run for ``loop_budget_s`` (after at
        least one measured query; warm-up gets a quarter of the budget), and
        says so in ``truncated``, so that a pathological case cannot stall
        the run.
        """
        cfg = self.cfg
        t0 = time.perf_counter()
        measured = 0
        for i, item in enumerate(items):
            elapsed = time.perf_counter() - t0
            warm = i < cfg.warmup
            if warm and elapsed > cfg.loop_budget_s / 4:
                continue
            if not warm and measured and elapsed > cfg.loop_budget_s:
                self.truncated.append(
                    f"{label}: stopped after {elapsed:.0f} s with {measured} of "
                    f"{len(items) - cfg.warmup} queries measured"
                )
                return
            self.progress(label, i, len(items))
            yield i, item, not warm
            measured += not warm

    def commits(
        self, mem: Memory, emb: TableEmbedder, agent: str, n: int, label: str
    ) -> tuple[list[float], list[float], list[int]]:
        """``n`` single add_exchange calls at "now": commit ms (embedding excluded), embed ms, ids."""
        extra = Corpus(size=n, dimension=self.cfg.dimension, seed=self.cfg.seed + 4).batch(0, n)
        for text, vec in zip(extra.texts, extra.vectors, strict=True):
            emb.add(text, vec)
        commit_ms: list[float] = []
        embed_ms: list[float] = []
        ids: list[int] = []
        for i, ep in enumerate(extra.episodes):
            self.progress(f"{label}: single add_exchange", i, n)
            before = emb.seconds
            t1 = time.perf_counter()
            ids.append(mem.add_exchange(ep.user_text, ep.reply_text, agent=agent))
            total = ms(t1)
            spent = (emb.seconds - before) * 1000
            embed_ms.append(spent)
            commit_ms.append(total - spent)
        return commit_ms, embed_ms, ids

    def drop(self, built: Built) -> None:
        """Remove one built file that no later section needs (unless ``keep``)."""
        if self.cfg.keep:
            return
        for suffix in ("", "-wal", "-shm", "-lock"):
            Path(f"{built.path}{suffix}").unlink(missing_ok=True)
        self.built.pop(built.corpus, None)
