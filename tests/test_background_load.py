"""Loading a big agent's vectors in a background thread, on real SQLite + sqlite-vec.

While the loader reads, searches go on in ``vec0``; the rows it read are
taken in at a later search, after the log entries its snapshot had not seen
are replayed, so the index ends exactly in step with ``vec0`` whatever was
written meanwhile. A reset or a pruned log drops the load, a failed load
makes the next search load inline, and closing the store stops the thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import numpy as np
import pytest

from memengine import Memory, StoreError
from memengine.store import vectors
from memengine.store.filters import Filters
from memengine.store.vector_index import VectorIndex, log_reset, prune_log

from .helpers import T0, HashEmbedder, same_hits, word_episodes

FILTERS = [
    Filters(agent="a"),
    Filters(agent="a", kinds=("fact",)),
    Filters(agent="a", max_sensitivity=1),
    Filters(agent="a", since_ts=int((T0 + timedelta(hours=40)).timestamp())),
    Filters(agent="a", statuses=("archived",)),
]


QUERIES = HashEmbedder().embed(["cat tea", "snow report deadline", "guitar"])


def _search(mem: Memory, f: Filters | None = None) -> list[list[tuple[int, float]]]:
    return mem.store.knn_many(QUERIES, 7, f or Filters(agent="a"))


def _same(got: list[list[tuple[int, float]]], want: list[list[tuple[int, float]]]) -> None:
    """Each query's answer agrees (see :func:`same_hits`)."""
    for a, b in zip(got, want, strict=True):
        same_hits(a, b)


def _matches_vec0(mem: Memory) -> None:
    """Every filter gives what ``vec0`` gives."""
    for f in FILTERS:
        with mem.store.connections.read() as cur:
            want = [vectors.knn(cur, q, 7, f) for q in QUERIES]
        _same(_search(mem, f), want)


@pytest.fixture
def index(mem: Memory) -> VectorIndex:
    """The store's index, with agent "a" (120 rows) big enough to load in the background."""
    mem.add_many(word_episodes(120, "a"))
    mem.add_many(word_episodes(30, "b", seed=1))
    idx = mem.store.vector_index
    idx.background_rows = 100
    return idx


def _start_load(mem: Memory, index: VectorIndex) -> None:
    """Two searches of "a": the second hands it to the loader; wait until it has read."""
    _search(mem)
    _search(mem)
    assert index.mode("a") == "vec0"  # the second search did not wait for the load
    assert index.wait_loaded(30)


def test_a_big_agent_loads_in_the_background(mem: Memory, index: VectorIndex) -> None:
    _search(mem)
    before = _search(mem)  # starts the load, answers from vec0
    assert index.wait_loaded(30)
    assert index.loading is None
    _same(_search(mem), before)  # taken in here: the same answer from memory
    assert index.mode("a") == "float32"
    assert index.loaded()["a"] == 120
    _matches_vec0(mem)
    assert mem.check().ok
    _search(mem, Filters(agent="b"))
    _search(mem, Filters(agent="b"))  # under background_rows: loaded inline
    assert index.mode("b") == "float32"


def test_writes_while_it_loads_are_replayed(mem: Memory, index: VectorIndex) -> None:
    with mem.store.connections.read() as cur:  # (not a search: a third would take it in)
        old = [r[0] for r in cur.execute("SELECT id FROM episodes WHERE agent = 'a' ORDER BY id")]
    _start_load(mem, index)  # read; not taken in yet
    mem.delete(old[:4])
    mem.store.set_status(old[10:16], "archived")
    new = mem.add_many(word_episodes(9, "a", seed=2))
    mem.add_many(word_episodes(5, "b", seed=3))
    _search(mem)  # takes the load in, replaying the writes above
    assert index.mode("a") == "float32"
    assert index.loaded()["a"] == 120 - 4 + 9
    held = index._agents["a"].where
    assert not set(old[:4]) & set(held) and set(new) <= set(held)
    _matches_vec0(mem)
    assert mem.check().stale_vector_index == []


def test_a_reset_drops_the_load_and_the_next_one_is_taken(mem: Memory, index: VectorIndex) -> None:
    _start_load(mem, index)
    with mem.store.connections.write() as cur:
        log_reset(cur)
    _search(mem)  # the load's snapshot is before the reset: dropped, a new one starts
    assert index.mode("a") == "vec0"
    assert index.wait_loaded(30)
    _search(mem)
    assert index.mode("a") == "float32"
    _matches_vec0(mem)


def test_a_log_pruned_past_the_load_drops_it(mem: Memory, index: VectorIndex) -> None:
    _start_load(mem, index)
    mem.add_many(word_episodes(3, "a", seed=4))
    with mem.store.connections.write() as cur:
        prune_log(cur, keep=1)
    _search(mem)
    assert index.mode("a") == "vec0"
    assert index.wait_loaded(30)
    _search(mem)
    assert index.loaded()["a"] == 123
    _matches_vec0(mem)


def test_room_taken_while_it_loads_holds_codes(mem: Memory, index: VectorIndex) -> None:
    _start_load(mem, index)
    assert index._load is not None and index._load.floats  # it fitted when it started
    codes = 120 * index.row_bytes(index.dimension, floats=False, codes=True)
    index.budget_bytes = codes + 1000  # room for its codes only now
    _search(mem)
    assert index.mode("a") == "codes"
    _matches_vec0(mem)
    assert mem.check().ok


def test_a_failed_load_loads_inline_and_raises_there(mem: Memory, index: VectorIndex) -> None:
    @contextmanager
    def failing() -> Iterator[Any]:
        raise StoreError("disk I/O error")
        yield  # pragma: no cover

    index._reader = failing
    _start_load(mem, index)
    assert index._load is not None and isinstance(index._load.error, StoreError)
    _search(mem)  # takes the failure in, then loads inline: an error would reach the caller
    assert index.mode("a") == "float32"
    _matches_vec0(mem)


def test_closing_stops_the_loader(mem: Memory, index: VectorIndex) -> None:
    _search(mem)
    _search(mem)
    assert any(t.name == "memengine-vector-loader" for t in threading.enumerate())
    mem.close()
    assert index._loader is None
    assert not any(t.name == "memengine-vector-loader" for t in threading.enumerate())


def test_warm_loads_now(mem: Memory, index: VectorIndex) -> None:
    assert mem.warm("a") == "float32"
    assert index.loaded()["a"] == 120
    _matches_vec0(mem)
    index.budget_bytes = 0
    assert mem.warm("b") == "vec0"


def test_an_older_snapshot_keeps_the_index(mem: Memory, index: VectorIndex) -> None:
    """A search whose read transaction began before another's newer one synced the index
    searches the newer index instead of dropping it."""
    assert mem.warm("a") == "float32"
    conn = mem.store.connections.engine.raw_connection()
    try:
        old = conn.cursor()
        old.execute("BEGIN")
        old.execute("SELECT count(*) FROM episodes").fetchone()  # the snapshot starts here
        new = mem.add_many(word_episodes(1, "a", seed=5))
        _search(mem)  # syncs the index past the old snapshot
        hits = index.knn(old, QUERIES, 200, Filters(agent="a"))
        assert hits is not None and new[0] in {i for i, _ in hits[0]}
        assert index.mode("a") == "float32"
        old.execute("COMMIT")
    finally:
        conn.close()
    _matches_vec0(mem)


def test_searching_threads_and_a_writer_leave_it_in_step(mem: Memory, index: VectorIndex) -> None:
    """Three threads search two agents while a writer adds, archives and deletes, and prunes
    the log so that both are loaded again and again; afterwards the index and vec0 agree."""
    index.background_rows = 20  # both agents load in the background
    done = threading.Event()
    errors: list[BaseException] = []

    def searcher(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            while not done.is_set():
                agent = "ab"[int(rng.integers(2))]
                mem.store.knn_many(QUERIES, 5, Filters(agent=agent))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=searcher, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    try:
        for i in range(30):
            new = mem.add_many(word_episodes(4, "ab"[i % 2], seed=10 + i))
            mem.store.set_status(new[:1], "archived")
            mem.delete(new[1:2])
            if i % 5 == 4:  # a log pruned past every reader: agents and loads start over
                with mem.store.connections.write() as cur:
                    prune_log(cur, keep=1)
    finally:
        done.set()
        for t in threads:
            t.join(30)
    assert not errors
    assert index.wait_loaded(30)
    _search(mem)
    _search(mem, Filters(agent="b"))
    assert mem.check().stale_vector_index == []
    _matches_vec0(mem)


def test_the_check_agrees_with_an_index_other_threads_move_on(mem: Memory) -> None:
    """check() compared the held agents, synced by another thread to a newer snapshot than
    its own, with that older snapshot: a busy server's check failed on every new episode.
    A deletion that compacted a held agent while it was compared raised an IndexError."""
    emb = HashEmbedder()
    q = emb.embed(["cat"])
    ids = mem.add_many(word_episodes(3000, "a"))
    for _ in range(2):  # the second search holds agent "a" in memory
        mem.store.knn_many(q, 5, Filters(agent="a"))
    with mem.store.connections.read() as cur:
        cur.execute("SELECT count(*) FROM episodes").fetchone()  # the snapshot begins

        def newer() -> None:
            mem.add("note cat new", kind="fact", agent="a")
            mem.store.knn_many(q, 5, Filters(agent="a"))

        t = threading.Thread(target=newer)
        t.start()
        t.join()
        assert mem.store.vector_index.stale_ids(cur) is None  # (it was the new id)
    stop = threading.Event()
    failures: list[BaseException] = []

    def churn() -> None:
        try:
            for start in range(0, 2400, 400):
                if stop.is_set():
                    return
                mem.delete(ids[start : start + 400], agent="a")  # compacts the held agent
                mem.add("note dog", kind="fact", agent="a")
                mem.store.knn_many(q, 5, Filters(agent="a"))
        except BaseException as exc:
            failures.append(exc)

    t = threading.Thread(target=churn)
    t.start()
    try:
        reports = [mem.check() for _ in range(3)]
    finally:
        stop.set()
        t.join()
    assert failures == [] and all(r.stale_vector_index == [] for r in reports)
    assert mem.check().ok and not mem.check().index_unchecked


def test_a_vector_too_short_for_float32_is_not_called_stale(mem: Memory) -> None:
    """The check scaled a vector whose length underflows float32 by 1e30, where the index
    keeps it as it is: a false stale id."""

    class Tiny(HashEmbedder):
        def embed(self, texts: Any) -> Any:
            return super().embed(texts) * np.float32(1e-24)

    tiny = Tiny()
    with Memory.open(mem.store.path, embedder=tiny, allow_embedder_change=True) as other:
        other.add_many(word_episodes(20, "t"))
        q = tiny.embed(["cat"])
        for _ in range(2):  # held in memory
            other.store.knn_many(q, 5, Filters(agent="t"))
        report = other.check()
    assert report.stale_vector_index == [] and report.ok
