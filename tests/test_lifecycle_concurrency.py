"""A sleep running while retrievals run is never observed half-done (one transaction, WAL snapshots)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from memengine import Config, FixedClock, Memory, NewEpisode, RetrievalConfig

from .helpers import HashEmbedder

N_MEMORIES = 3000
READERS = 3


def test_retrievals_see_a_sleep_before_or_after_never_half_way(
    db_path: Path, clock: FixedClock
) -> None:
    # vector search only: this test is about snapshots, and keeps the readers quick
    cfg = Config(retrieval=RetrievalConfig(search="vector"))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        mem.add_many(
            NewEpisode(
                kind="fact", content=f"crate k{i % 300} zone z{i % 97}", occurred_at=clock.now
            )
            for i in range(N_MEMORIES)
        )
        ids = list(range(1, N_MEMORIES + 1))
        # every memory starts at 1.0, level 0: each sleep of 10 tasks multiplies all by 0.95,
        # and the last one (1000 tasks) archives every one of them
        states = [1.0, 0.95, 0.95**2, 0.95**3]
        stop = threading.Event()
        observed: list[tuple[float, float, frozenset[float], int]] = []
        snapshots: list[frozenset[float]] = []
        errors: list[BaseException] = []

        def reader(n: int) -> None:
            queries = ["crate k17 zone", "k5 z5", "zone z40 k299"]
            i = 0
            try:
                while not stop.is_set():
                    t0 = time.perf_counter()
                    r = mem.retrieve(queries[(i + n) % 3], limit=8)
                    t1 = time.perf_counter()
                    found = frozenset(round(e.strength, 9) for e in r.episodes)
                    observed.append((t0, t1, found, len(r.results)))
                    assert all(e.status == "active" for e in r.episodes)
                    got = mem.store.get(ids[n * 500 : n * 500 + 500])
                    snapshots.append(frozenset(round(e.strength, 9) for e in got.values()))
                    i += 1
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        threads = [threading.Thread(target=reader, args=(n,)) for n in range(READERS)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        windows = []
        for tasks in (10, 10, 10, 1000):
            time.sleep(0.15)
            s0 = time.perf_counter()
            report = mem.sleep(tasks=tasks, train=False)
            windows.append((s0, time.perf_counter()))
            assert report.decayed == N_MEMORIES
        deadline = time.perf_counter() + 30  # (a busy host: wait for reads begun after it)
        while time.perf_counter() < deadline and not errors:
            if sum(o[0] > windows[-1][1] for o in list(observed)) >= 2:
                break
            time.sleep(0.05)
        stop.set()
        for t in threads:
            t.join(timeout=60)
        assert not errors, errors[0]
        assert report.archived == N_MEMORIES

    valid = {round(s, 9) for s in states}
    for _t0, _t1, found, n in observed:
        # one retrieval shows one state: every returned memory has the same strength
        assert len(found) <= 1, found
        assert found <= valid, found
        assert n > 0 or not found
    for snap in snapshots:
        assert len(snap) <= 1, snap  # 500 memories read in one snapshot: all before or all after
    overlapping = [
        o for o in observed if any(o[0] < end and o[1] > start for start, end in windows)
    ]
    print(
        f"\n{len(observed)} retrievals, {len(overlapping)} overlapped a sleep; sleeps took "
        + ", ".join(f"{(e - s) * 1000:.0f} ms" for s, e in windows)
    )
    assert overlapping, "no retrieval ran while a sleep was running"
    seen = set().union(*(o[2] for o in observed))
    assert len(seen) >= 3  # the readers saw several successive states
    after = [n for t0, _, _, n in observed if t0 > windows[-1][1]]
    assert after and all(n == 0 for n in after)  # begun after the archiving sleep: nothing


def test_deep_retrieval_after_archiving_recalls(mem: Memory) -> None:
    ep = mem.add("an old harbour memory", kind="fact")
    mem.sleep(tasks=1000, train=False)
    assert mem.get(ep).status == "archived"
    assert mem.retrieve("old harbour memory").results == ()
    r = mem.retrieve("old harbour memory", deep=True)
    assert [e.id for e in r.episodes] == [ep] and r.episodes[0].status == "active"
