"""``memengine bench``'s writer processes: two processes writing one file at the same time.

One process adds exchanges back to back, one transaction each (the worst
case: an unbatched import); the other adds one exchange every
:data:`PACE_S` seconds, as a chat backend records turns. What is measured
is how long each write takes from the call to the commit: the paced
process must not starve behind the looping one (``store/process_lock.py``).
"""

from __future__ import annotations

import multiprocessing as mp
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...store.database import Store
from ..synth import Corpus

__all__ = ["PACE_S", "ROLES", "run_writer_processes"]

PACE_S = 0.01
"""The paced process's pause between two writes."""

ROLES = ("loop", "paced")


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _writer(
    path: str,
    embedder_id: str,
    role: str,
    dimension: int,
    seed: int,
    seconds: float,
    ready: Any,
    go: Any,
    out: Any,
) -> None:
    """One writer process: open the store, wait for ``go``, write for ``seconds``, report."""
    corpus = Corpus(size=4000, dimension=dimension, seed=seed)
    batch = corpus.batch(0, 4000)
    agent = f"bench-process-{role}"
    episodes = [ep.model_copy(update={"agent": agent}) for ep in batch.episodes]
    store = Store(path, embedder_id=embedder_id, dimension=dimension, now=_now)
    lat: list[float] = []
    counts = {"rows": 0, "lock_errors": 0, "other_errors": 0}
    errors: list[str] = []
    try:
        ready.put(role)
        go.wait(60)
        t_end = time.perf_counter() + seconds
        i = 0
        while time.perf_counter() < t_end:
            k = i % len(episodes)
            i += 1
            t0 = time.perf_counter()
            try:
                store.add([episodes[k]], [batch.search_texts[k]], batch.vectors[k : k + 1])
            except Exception as exc:  # counted and reported: the bench measures failures too
                msg = str(exc).lower()
                key = "lock_errors" if "locked" in msg or "busy" in msg else "other_errors"
                counts[key] += 1
                if len(errors) < 3:
                    errors.append(f"{role}: {type(exc).__name__}: {exc}")
            else:
                counts["rows"] += 1
            lat.append((time.perf_counter() - t0) * 1000)
            if role == "paced":
                time.sleep(PACE_S)
    finally:
        store.close()
        out.put({"role": role, "write_ms": lat, **counts, "errors": errors})


def run_writer_processes(
    path: Path, *, embedder_id: str, dimension: int, seed: int, seconds: float
) -> list[dict[str, Any]]:
    """Run the :data:`ROLES` writer processes on ``path`` together; one raw result each
    (``write_ms`` holds every write's duration)."""
    ctx = mp.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(
            target=_writer,
            args=(str(path), embedder_id, role, dimension, seed + n, seconds, ready, go, out),
            name=f"bench-writer-{role}",
        )
        for n, role in enumerate(ROLES)
    ]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            ready.get(timeout=120)
        go.set()
        results = [out.get(timeout=seconds + 120) for _ in procs]
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    return sorted(results, key=lambda r: ROLES.index(r["role"]))
