"""Section ``agents``: many agents in one file, a retrieval scoped to one, the vector
cache under pressure, and storage against the unpartitioned layout.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...memory import Memory
from ...store.database import Store
from ...store.filters import Filters
from ...store.fulltext import match_expression
from ...store.inspect import match_count
from ...store.vectors import chunk_size
from ...text import query_terms
from ..synth import (
    Corpus,
)
from .config import BATCH, BIG_BATCH, EMBEDDER_ID, K
from .harness import (
    Bench,
    mean,
    ms,
    ratio,
    read_through,
    summarize,
)


def run(bench: Bench) -> dict[str, Any]:
    """One file of many agents against one agent: scoped retrieval, cache pressure, bytes."""
    cfg = bench.cfg
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
    bp, bf = bench.build_twins(
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
    qs = bench.queries(bp, cfg.queries + cfg.warmup, extra=0)
    emb = bench.embedder(qs)
    fp: dict[str, list[float]] = {}
    knn_ms: list[float] = []
    bm25_ms: list[float] = []
    global_matches: list[int] = []
    agent_matches: list[int] = []
    with Memory.open(bp.path, embedder=emb, clock=bench.clock) as mem:
        with mem.store.connections.read() as cur:
            out["vector_chunk_size"] = chunk_size(cur)
        rc = mem.config.retrieval
        for _, q, measured in bench.loop(qs, "agents: retrieval scoped to one agent"):
            t0 = time.perf_counter()
            r = mem.retrieve(q.text, agent=q.agent)
            wall = ms(t0)
            filters = bench.filters(mem, q.agent)
            t0 = time.perf_counter()
            mem.store.knn(q.vector, rc.knn_k_per_query, filters)
            t_knn = ms(t0)
            expr = match_expression(query_terms(q.text))
            t0 = time.perf_counter()
            mem.retriever.fast.bm25(query_terms(q.text), filters)
            t_bm25 = ms(t0)
            if measured:
                for key, v in r.timings_ms.items():
                    fp.setdefault(key, []).append(v)
                fp.setdefault("retrieve", []).append(wall)
                knn_ms.append(t_knn)
                bm25_ms.append(t_bm25)
                if expr and len(global_matches) < 10:
                    global_matches.append(match_count(mem.store, expr))
                    agent_matches.append(match_count(mem.store, expr, q.agent))
    # the same queries with the file in the OS cache (a server that has been running),
    # from a new Memory: every agent is still at its first search in this process
    t0 = time.perf_counter()
    read_through(bp.path)
    out["warm_read_s"] = round(time.perf_counter() - t0, 2)
    with Memory.open(bp.path, embedder=emb, clock=bench.clock) as mem:
        warm = bench.retrievals(mem, qs, "agents: the same, file in the OS cache")
    out["scoped_fast_path_warm_ms"] = {k: summarize(v) for k, v in warm.items()}
    out["cache"] = _cache_pressure(bench, bp.path, part.agent_names())
    out["scoped_fast_path_ms"] = {k: summarize(v) for k, v in fp.items()}
    out["scoped_knn_ms"] = summarize(knn_ms)
    out["scoped_bm25_ms"] = summarize(bm25_ms)
    out["bm25_rows_matched_all_agents"] = mean(global_matches)
    out["bm25_rows_matched_in_agent"] = mean(agent_matches)

    out["one_agent"] = {
        "build_s": round(bf.wall_s, 2),
        "optimize_s": bf.optimize_s,
        "add_per_s": bf.add_rate,
        "bytes_per_episode": bf.bytes_per_episode,
        "bytes": bf.bytes,
    }
    out["bytes_ratio"] = ratio(bp.bytes, bf.bytes)
    out["add_rate_ratio"] = ratio(bp.add_rate, bf.add_rate)

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
        bsp, bsf = bench.build_twins(
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
            "bytes_ratio": ratio(bsp.bytes, bsf.bytes),
            "add_rate_ratio": ratio(bsp.add_rate, bsf.add_rate),
        }
        for b in (bsp, bsf):  # large and of no further use
            bench.drop(b)
    return out


def _cache_pressure(bench: Bench, path: Path, agents: Sequence[str]) -> dict[str, Any]:
    """Searches of agents drawn at random (four query vectors each) in one store with the
    default vector cache: its latency once agents are searched again and again, and how
    the cache holds them (floats, codes, or not at all)."""
    cfg = bench.cfg
    rng = np.random.default_rng([cfg.seed, 0xCAC4E])
    picks = rng.integers(0, len(agents), cfg.cache_searches).tolist()
    times: list[float] = []
    store = Store(path, embedder_id=EMBEDDER_ID, dimension=cfg.dimension, now=bench.clock)
    try:
        index = store.vector_index
        for j, a in enumerate(picks):
            q = rng.standard_normal((4, cfg.dimension)).astype(np.float32)
            t0 = time.perf_counter()
            store.knn_many(q, K, Filters(agent=agents[a]))
            if j >= len(picks) // 2:  # after every agent was met a few times
                times.append(ms(t0))
            if j % 250 == 0:
                bench.progress("agents: searches under cache pressure", j, len(picks))
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
