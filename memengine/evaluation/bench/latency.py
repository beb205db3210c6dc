"""Section ``latency``: the fast path's stages and whole retrievals (1 and 4 queries, and
4 with a recent conversation: :mod:`.greetings`) in one agent of each size.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ...memory import Memory
from ...retrieve.fusion import RankedList, rrf
from ...text import query_terms
from . import greetings
from .harness import (
    Bench,
    ms,
    summarize,
)


def run(bench: Bench) -> dict[str, Any]:
    """Per-stage and whole-retrieval latency in the one-agent file of each size."""
    cfg = bench.cfg
    out: dict[str, Any] = {"sizes": {}, "queries": cfg.queries, "warmup": cfg.warmup}
    for size in cfg.sizes:
        built = bench.single(size)
        qs = bench.queries(built, cfg.queries + cfg.warmup, extra=3)
        emb = bench.embedder(qs)
        row: dict[str, Any] = {
            "build_s": round(built.wall_s, 2),
            "add_per_s": built.add_rate,
            "bytes_per_episode": built.bytes_per_episode,
            "optimize_s": built.optimize_s,
            "fulltext_segments_before_merge": built.segments_before,
        }
        with Memory.open(built.path, embedder=emb, clock=bench.clock) as mem:
            mem.warm(built.corpus.agent_prefix)  # steady state; the load: section vector
            warm_misses = emb.misses  # warm embeds one word, which no query asks
            rc = mem.config.retrieval
            stage: dict[str, list[float]] = {"knn": [], "bm25": [], "fusion": [], "fetch": []}
            hits: list[int] = []
            for _, q, measured in bench.loop(qs, f"latency {size:,}: stages alone"):
                filters = bench.filters(mem, q.agent)
                t0 = time.perf_counter()
                kh = mem.store.knn(q.vector, rc.knn_k_per_query, filters)
                t_knn = ms(t0)
                t0 = time.perf_counter()
                bh = mem.retriever.fast.bm25(query_terms(q.text), filters)
                t_bm25 = ms(t0)
                t0 = time.perf_counter()
                fused = rrf(
                    [
                        RankedList("knn0", [h[0] for h in kh]),
                        RankedList("bm250", [h[0] for h in bh]),
                    ],
                    k=rc.rrf_k,
                    limit=rc.max_candidates,
                )
                t_fusion = ms(t0)
                t0 = time.perf_counter()
                fused_ids = [f.id for f in fused]
                mem.store.get(fused_ids)
                mem.store.similarities(q.vector, fused_ids)
                t_fetch = ms(t0)
                if measured:
                    for key, v in (
                        ("knn", t_knn),
                        ("bm25", t_bm25),
                        ("fusion", t_fusion),
                        ("fetch", t_fetch),
                    ):
                        stage[key].append(v)
                    hits.append(len(bh))
            fp1 = bench.retrievals(mem, qs, f"latency {size:,}: fast path")
            fp4 = bench.retrievals(mem, qs, f"latency {size:,}: fast path, 4 queries", extras=True)
            row["stages_ms"] = {k: summarize(v) for k, v in stage.items()}
            row["stages_sum_p50"] = round(sum(row["stages_ms"][k]["p50"] for k in stage), 3)
            row["fast_path_ms"] = {k: summarize(v) for k, v in fp1.items()}
            row["fast_path_4q_ms"] = {k: summarize(v) for k, v in fp4.items()}
            with_recent, opening = greetings.run(bench, mem, emb, qs, built)
            row.update(with_recent)
            warm_misses += opening
            row["bm25_mean_hits"] = round(float(np.mean(hits)), 2) if hits else 0.0
            row["query_embedder_misses"] = emb.misses - warm_misses
            commit_ms, _, added = bench.commits(
                mem, emb, built.corpus.agent_prefix, cfg.size_commits, f"latency {size:,}"
            )
            row["add_exchange_commit_ms"] = summarize(commit_ms)
            mem.delete(added, all_agents=True)  # keep the file equal to the vectors kept for numpy
        out["sizes"][str(size)] = row
    return out
