"""Section ``concurrency``: readers beside a writer thread in one process, and writer
processes side by side.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ...memory import Memory
from ..synth import (
    Corpus,
)
from .config import EMBEDDER_ID
from .harness import (
    Bench,
    ms,
    ratio,
    summarize,
)
from .writers import PACE_S, run_writer_processes


def run(bench: Bench) -> dict[str, Any]:
    """Two readers alone and beside a writer thread, then two writer processes."""
    cfg = bench.cfg
    built = bench.single(min(cfg.sizes))
    qs = bench.queries(built, cfg.queries + cfg.warmup)
    emb = bench.embedder(qs)
    extra = Corpus(size=20_000, dimension=cfg.dimension, seed=cfg.seed + 6)
    writes = extra.batch(0, 4000)
    for text, vec in zip(writes.texts, writes.vectors, strict=True):
        emb.add(text, vec)
    agent = built.corpus.agent_prefix

    def is_lock(exc: BaseException) -> bool:
        msg = str(exc).lower()
        return "locked" in msg or "busy" in msg

    with Memory.open(built.path, embedder=emb, clock=bench.clock) as mem:
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
                    lat[slot].append(ms(t0))

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
                threading.Thread(target=reader, args=(s,), name=f"bench-reader-{s}") for s in (0, 1)
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
                bench.progress(label, done, int(seconds))
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
    bench.progress("concurrency: 2 writer processes", 0, 1)
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
    bench.drop(built)  # it has grown; later runs must not reuse it as the exact file
    return {
        "readers": 2,
        "writers": 1,
        "readers_alone": alone,
        "with_writer": mixed,
        "reader_p95_ratio": ratio(mixed["reader_ms"]["p95"], alone["reader_ms"]["p95"]),
        "writer_processes": processes,
        "writer_processes_pace_ms": PACE_S * 1000,
    }
