"""Section ``vector``: the vector stage against an exact numpy scan of the same vectors,
its recall@10, and the first searches of a newly opened store.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...store.database import Store
from ...store.filters import Filters
from ..synth import (
    EPOCH,
)
from .config import EMBEDDER_ID, K
from .harness import (
    Bench,
    Query,
    ms,
    ratio,
    summarize,
    top_k,
)


def run(bench: Bench) -> dict[str, Any]:
    """The vector stage against numpy at each size, with recall@10 and the first searches."""
    cfg = bench.cfg
    out: dict[str, Any] = {"sizes": {}, "k": K}
    for size in cfg.sizes:
        built = bench.single(size)
        assert built.vectors is not None and built.ids is not None
        vecs, ids = built.vectors, built.ids
        qs = bench.queries(built, cfg.queries + cfg.warmup)
        store = Store(built.path, embedder_id=EMBEDDER_ID, dimension=cfg.dimension, now=bench.clock)
        times: dict[str, list[float]] = {"mem": [], "bare": [], "blas": [], "einsum": []}
        found: dict[int, set[int]] = {}
        mode = store.warm(qs[0].agent)  # its load is timed by _first_searches below
        # two passes over the same queries: vec0 first, then numpy, so that BLAS
        # threads still spinning after a matrix product cannot slow vec0 down
        try:
            for i, q, measured in bench.loop(qs, f"vector {size:,}: vec0"):
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
                        times[key].append(ms(t0))
                    if key == "mem":
                        found[i] = {h[0] for h in hits}
            mode = store.vector_index.mode(qs[0].agent)
        finally:
            store.close()
        recall: list[float] = []
        for i, q, measured in bench.loop(qs, f"vector {size:,}: numpy"):
            t0 = time.perf_counter()
            exact = top_k(vecs @ q.vector, K)
            t_blas = ms(t0)
            t0 = time.perf_counter()
            top_k(np.einsum("ij,j->i", vecs, q.vector), K)
            t_einsum = ms(t0)
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
            "ratio_p50": ratio(m["p50"], min(n["p50"], e["p50"])),
            "ratio_blas_p50": ratio(m["p50"], n["p50"]),
            "ratio_no_time_filter_p50": ratio(b["p50"], min(n["p50"], e["p50"])),
            "ratio_einsum_p50": ratio(m["p50"], e["p50"]),
            "recall_at_10": round(float(np.mean(recall)), 4) if recall else float("nan"),
            "index": mode,
            "vectors_mb": round(vecs.nbytes / 2**20, 1),
            "scan_gb_per_s": round(vecs.nbytes / 2**30 / (m["p50"] / 1000), 2)
            if m["p50"] > 0
            else float("nan"),
            "first_searches": {
                how: _first_searches(bench, built.path, qs, background=how == "background")
                for how in ("inline", "background")
            },
        }
    return out


def _first_searches(
    bench: Bench, path: Path, qs: Sequence[Query], *, background: bool
) -> dict[str, Any]:
    """Back-to-back searches of one agent in a newly opened store until its vectors are
    in memory: loaded inside its second search, or (``background``) by the loader thread
    while the searches go on in ``vec0``. What a server's first turns after a start see."""
    store = Store(path, embedder_id=EMBEDDER_ID, dimension=bench.cfg.dimension, now=bench.clock)
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
            times.append(ms(t0))
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
