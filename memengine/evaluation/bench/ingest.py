"""Section ``ingest``: ``Store.add`` and ``Memory.add_many`` rates with precomputed vectors,
single ``add_exchange`` commits, and the default embedder's own throughput.
"""

from __future__ import annotations

import time
from typing import Any

from ...embed.usem3 import USEM3Embedder
from ...memory import Memory
from ...models import NewEpisode
from ...store.database import Store
from ..synth import (
    Corpus,
)
from .config import BATCH, EMBEDDER_ID
from .harness import (
    Bench,
    TableEmbedder,
    file_bytes,
    ms,
    summarize,
)


def run(bench: Bench) -> dict[str, Any]:
    """Ingest rates through the store and the facade, single commits, and usem3 throughput."""
    cfg = bench.cfg
    corpus = Corpus(size=cfg.ingest_size, dimension=cfg.dimension, seed=cfg.seed + 2)
    bench.progress("ingest: generating", 0, 0)
    t0 = time.perf_counter()
    batches = [corpus.batch(s, c) for s, c in corpus.batches(BATCH)]
    gen_s = time.perf_counter() - t0
    out: dict[str, Any] = {
        "episodes": corpus.size,
        "batch": BATCH,
        "generate_per_s": round(corpus.size / gen_s, 1),
    }

    # Store.add, precomputed vectors
    path = bench.file("ingest_store.db")
    store = Store(path, embedder_id=EMBEDDER_ID, dimension=cfg.dimension, now=bench.clock)
    add_s = 0.0
    for i, b in enumerate(batches):
        bench.progress("ingest: Store.add", i * BATCH, corpus.size)
        t1 = time.perf_counter()
        store.add(b.episodes, b.search_texts, b.vectors)
        add_s += time.perf_counter() - t1
    store.close()
    out["store_add"] = {
        "per_s": round(corpus.size / add_s, 1),
        "seconds": round(add_s, 3),
        "bytes": file_bytes(path),
        "bytes_per_episode": round(file_bytes(path) / corpus.size, 1),
    }

    # Memory.add_many with a precomputing embedder
    emb = TableEmbedder(cfg.dimension)
    for b in batches:
        for text, vec in zip(b.texts, b.vectors, strict=True):
            emb.add(text, vec)
    path2 = bench.file("ingest_memory.db")
    episodes: list[NewEpisode] = [e for b in batches for e in b.episodes]
    with Memory.open(path2, embedder=emb, clock=bench.clock) as mem:
        bench.progress("ingest: Memory.add_many", 0, 0)
        t1 = time.perf_counter()
        mem.add_many(
            episodes,
            progress=lambda d, t: bench.progress("ingest: Memory.add_many", d, corpus.size),
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
        commit_ms, embed_ms, _ = bench.commits(mem, emb, "bench", cfg.commits, "ingest")
        out["add_exchange_commit_ms"] = summarize(commit_ms)
        out["add_exchange_agent_episodes"] = corpus.size
        out["add_exchange_embed_ms"] = summarize(embed_ms)
    out["add_many"]["bytes_per_episode"] = round(file_bytes(path2) / corpus.size, 1)

    # the default embedder
    if cfg.usem3_texts:
        out["usem3"] = _usem3(bench, corpus)
    return out


def _usem3(bench: Bench, corpus: Corpus) -> dict[str, Any]:
    cfg = bench.cfg
    n = min(cfg.usem3_texts, corpus.size // 2)
    first = corpus.batch(0, n)
    second = corpus.batch(n, n)
    emb = USEM3Embedder()
    bench.progress("ingest: loading usem3", 0, 0)
    t0 = time.perf_counter()
    emb.embed(["warm up"])
    load_s = time.perf_counter() - t0
    bench.progress("ingest: usem3 add_many", 0, n)
    path = bench.file("ingest_usem3.db")
    with Memory.open(path, embedder=emb, clock=bench.clock) as mem:
        t1 = time.perf_counter()
        mem.add_many(
            first.episodes, progress=lambda d, t: bench.progress("ingest: usem3 add_many", d, n)
        )
        many_s = time.perf_counter() - t1
    bench.progress("ingest: usem3 embed only", 0, 0)
    t2 = time.perf_counter()
    emb.embed(second.texts)
    embed_s = time.perf_counter() - t2
    single: list[float] = []
    for i in range(cfg.usem3_single):
        t3 = time.perf_counter()
        emb.embed([f"{second.texts[i % n].splitlines()[0]} ({i})"])
        single.append(ms(t3))
    ja = sum(1 for t in first.texts if not t.isascii())
    return {
        "texts": n,
        "japanese_share": round(ja / max(n, 1), 3),
        "model_load_s": round(load_s, 3),
        "add_many_per_s": round(n / many_s, 1),
        "embed_per_s": round(n / embed_s, 1),
        "single_text_ms": summarize(single),
    }
