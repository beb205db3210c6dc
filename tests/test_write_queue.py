"""The threads of one process take write turns in arrival order (store/write_queue.py)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from memengine import (
    Config,
    DatabaseLocked,
    FixedClock,
    LifecycleConfig,
    Memory,
    StoreError,
)
from memengine.store.connect import Connections, sqlite_module
from memengine.store.write_queue import WriteQueue, forked_while_written, write_queue_for

from .helpers import HashEmbedder, in_forked_child


def _wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    """Poll ``condition()`` until it is true (a test of order, not of speed)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.002)


def _waiting_is(queue: WriteQueue, n: int) -> bool:
    return queue.waiting == n


def test_waiting_writers_get_the_database_in_the_order_they_asked(db_path: Path) -> None:
    with Memory.open(db_path, embedder=HashEmbedder()):
        pass  # creates the file and its schema
    conns = Connections(db_path)
    queue = write_queue_for(db_path)
    order: list[str] = []
    holding = threading.Event()
    release = threading.Event()

    def first() -> None:
        with conns.write() as cur:
            cur.execute(
                "INSERT INTO agents (name, created_at) VALUES ('first', '2026-06-01T12:00:00+00:00')"
            )
            holding.set()
            release.wait(10)
        order.append("first")

    def later(name: str) -> None:
        with conns.write() as cur:
            order.append(name)
            cur.execute(
                "INSERT INTO agents (name, created_at) VALUES (?, '2026-06-01T12:00:00+00:00')",
                (name,),
            )

    threads = [threading.Thread(target=first)]
    threads[0].start()
    holding.wait(10)
    for name in ("second", "third", "fourth"):
        t = threading.Thread(target=later, args=(name,))
        t.start()
        threads.append(t)
        _wait_for(partial(_waiting_is, queue, len(threads) - 1))
    release.set()
    for t in threads:
        t.join(10)
    conns.close()
    assert order == ["first", "second", "third", "fourth"]
    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        assert {a.name for a in mem.agents()} >= {"first", "second", "third", "fourth"}


def test_a_thread_that_waits_too_long_gets_a_clear_error_and_leaves_the_queue() -> None:
    queue = WriteQueue()
    errors: list[BaseException] = []

    def impatient() -> None:
        try:
            with queue.turn(0.05):
                pass
        except StoreError as exc:
            errors.append(exc)

    with queue.turn(10.0):
        t = threading.Thread(target=impatient)
        t.start()
        t.join(10)
        assert queue.waiting == 0
    assert len(errors) == 1
    assert "database is locked" in str(errors[0])
    with queue.turn(0.0):  # free again: nobody holds it, nobody is waiting
        assert queue.waiting == 0


def test_the_queue_is_handed_to_the_waiter_then_free() -> None:
    queue = WriteQueue()
    got: list[str] = []
    with queue.turn(10.0):
        waiter = threading.Thread(target=lambda: _turn(queue, got, "waiter"))
        waiter.start()
        _wait_for(lambda: queue.waiting == 1)
    waiter.join(10)
    assert got == ["waiter"]
    # the queue was handed over to the waiter and given back: free now
    with queue.turn(0.0):
        assert queue.waiting == 0


def _turn(queue: WriteQueue, got: list[str], name: str) -> None:
    with queue.turn(10.0):
        got.append(name)


def test_every_store_on_one_file_shares_the_queue(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    target = tmp_path / "memory.db"
    link = tmp_path / "sub" / "link.db"
    link.symlink_to(target)
    assert write_queue_for(target) is write_queue_for(link)
    assert write_queue_for(target) is not write_queue_for(tmp_path / "other.db")


def test_the_queue_and_lock_of_a_file_go_with_its_last_store(tmp_path: Path) -> None:
    """Each file a process opened kept its write queue and process lock for good: opening
    500 files one after another left 500 of each. They now go with the last store that
    holds them, and while one does, every store on the file shares them."""
    import gc

    from memengine.store import process_lock, write_queue

    gc.collect()
    before = len(write_queue._QUEUES), len(process_lock._LOCKS)
    for i in range(12):
        with Memory.open(tmp_path / f"m{i}.db", embedder=HashEmbedder()) as mem:
            mem.add("a fact of this file", kind="fact")
        del mem
    gc.collect()  # (a store's connection pool is a reference cycle)
    assert (len(write_queue._QUEUES), len(process_lock._LOCKS)) == before
    path = tmp_path / "shared.db"
    first = Memory.open(path, embedder=HashEmbedder())
    queue, lock = write_queue_for(path), process_lock.process_lock_for(path)
    with Memory.open(path, embedder=HashEmbedder()) as second:
        assert second.store.connections._queue is queue
        assert second.store.connections._process_lock is lock
    assert write_queue_for(path) is queue  # the first store still holds them
    first.add("still written in turn", kind="fact")
    first.close()
    del first, second, queue, lock
    gc.collect()
    assert (len(write_queue._QUEUES), len(process_lock._LOCKS)) == before


def test_a_retrieval_records_its_turn_while_another_thread_writes_in_a_loop(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        for i in range(50):
            mem.add_exchange(f"my cat Miso ate fish {i}", "Nice!")
        stop = threading.Event()
        written: list[int] = []
        failures: list[BaseException] = []

        def writer() -> None:
            i = 0
            while not stop.is_set():
                try:
                    written.append(mem.add_exchange(f"the weather was grey {i}", "Oh."))
                except BaseException as exc:  # recorded, and the test fails on it
                    failures.append(exc)
                    return
                i += 1

        t = threading.Thread(target=writer)
        t.start()
        try:
            _wait_for(lambda: len(written) > 5)
            turns = [mem.retrieve("what did Miso eat?").turn_id for _ in range(10)]
        finally:
            stop.set()
            t.join(30)
    assert not failures
    assert all(turn is not None for turn in turns)
    assert len(set(turns)) == 10
    assert len(written) > 5


@pytest.mark.parametrize("timeout_s", [0.0, 0.01])
def test_no_wait_at_all_when_nobody_holds_the_queue(timeout_s: float) -> None:
    queue = WriteQueue()
    for _ in range(3):
        with queue.turn(timeout_s):
            assert queue.waiting == 0


def test_a_retrieval_answers_unrecorded_when_another_writer_keeps_the_file(
    db_path: Path, clock: FixedClock
) -> None:
    cfg = Config(lifecycle=LifecycleConfig(turn_record_wait_s=0.2))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        mem.add_exchange("my cat Miso ate fish", "Nice!")
        other = sqlite_module().connect(str(db_path), isolation_level=None)  # another process
        other.execute("BEGIN IMMEDIATE")
        try:
            r = mem.retrieve("what did Miso eat?")
            with pytest.raises(DatabaseLocked), mem.store.connections.write(wait_s=0.05):
                pass
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert [x.episode.id for x in r.results] == [1]
        assert r.turn_id is None
        assert any(
            d.startswith("turn not recorded: another writer kept the file past 0.2 s")
            and "turn_record_wait_s" in d
            for d in r.degraded
        ), r.degraded
        again = mem.retrieve("what did Miso eat?")
        assert again.turn_id is not None and again.degraded == ()
        assert mem.check().ok


def test_a_write_queued_behind_one_waiting_for_an_outside_writer_blames_that_writer(
    db_path: Path,
) -> None:
    """A writer with no lock file (the sqlite3 shell) held the file: the write at the head
    of the queue said so, those queued behind it blamed "another thread of this process"."""
    with Memory.open(db_path, embedder=HashEmbedder()):
        pass  # creates the file and its schema
    conns = Connections(db_path)
    queue = write_queue_for(db_path)
    other = sqlite_module().connect(str(db_path), isolation_level=None)  # another program
    other.execute("BEGIN IMMEDIATE")
    inside = threading.Event()
    release = threading.Event()
    failures: list[BaseException] = []

    def head() -> None:
        try:
            with conns.write(wait_s=10):
                inside.set()
                release.wait(10)
        except BaseException as exc:  # recorded, and the test fails on it
            failures.append(exc)

    t = threading.Thread(target=head)
    t.start()
    try:
        _wait_for(lambda: queue._holder_waits_for is not None)
        with pytest.raises(DatabaseLocked) as behind_waiting, conns.write(wait_s=0.1):
            pass
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert inside.wait(10)
    with pytest.raises(DatabaseLocked) as behind_writing, conns.write(wait_s=0.1):
        pass  # the head now writes: that is this process's own thread
    release.set()
    t.join(10)
    conns.close()
    assert not failures
    assert (
        "database is locked: another writer (the write ahead of this one in this process "
        "was waiting for it) kept writing for 0.1 s"
    ) in str(behind_waiting.value)
    assert "another thread of this process kept writing for 0.1 s" in str(behind_writing.value)
    assert "waiting for it" not in str(behind_writing.value)


def _held_at_the_fork(db_path: Path, transaction: bool, child: Callable[[], object]) -> object:
    """What ``child()`` returns in a child forked while a thread of this process holds the
    file's write queue for 0.5 s (inside a write transaction, or only the writers' turn)."""
    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        mem.add("the dentist is on Friday", kind="fact")
        inside = threading.Event()
        conns = mem.store.connections

        def hold() -> None:
            with conns.write() if transaction else conns.writers_turn():
                inside.set()
                time.sleep(0.5)  # (the lock file too: the child waits this long for it)

        t = threading.Thread(target=hold)
        t.start()
        inside.wait(10)
        try:
            return in_forked_child(child)
        finally:
            t.join(10)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_writes_though_a_parent_thread_held_the_queue_at_the_fork(
    db_path: Path,
) -> None:
    """A parent thread held the queue (waiting for the lock file, say) at the fork: the
    child kept it held with no thread to hand it on, and every write of the child waited
    write_wait_s and failed with "another thread of this process kept writing"."""

    def child() -> list[object]:
        cfg = Config(write_wait_s=5.0)
        t0 = time.monotonic()
        with Memory.open(db_path, embedder=HashEmbedder(), config=cfg) as mem:
            mem.add("written by the child", kind="fact")
            return [time.monotonic() - t0, mem.store.count()]

    outcome = _held_at_the_fork(db_path, False, child)
    assert isinstance(outcome, list) and outcome[1] == 2, outcome
    assert outcome[0] < 3, outcome  # not the whole write_wait_s
    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        assert mem.store.count() == 2 and mem.check().ok


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_child_forked_inside_a_write_transaction_is_told_why_it_cannot_write(
    db_path: Path,
) -> None:
    """SQLite's record of the parent's transaction crosses the fork and no thread of the
    child ends it: the child's writes fail, and say it was forked during a write rather
    than blame a writer the operator will not find; a child forked after the write is
    not told so."""

    def child() -> str:
        cfg = Config(write_wait_s=1.5)  # past the parent's hold of the lock file
        with Memory.open(db_path, embedder=HashEmbedder(), config=cfg) as mem:
            mem.add("written by the child", kind="fact")
        return "written"

    outcome = _held_at_the_fork(db_path, True, child)
    assert isinstance(outcome, str) and outcome.startswith("DatabaseLocked: "), outcome
    assert "forked while its parent was writing to" in outcome and "'spawn'" in outcome
    assert not forked_while_written(db_path)  # (this process was not)
    assert in_forked_child(child) == "written"  # forked with no write under way
    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        assert mem.store.count() == 2 and mem.check().ok


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_child_forked_while_a_parent_thread_only_held_its_turn_blames_the_real_writer(
    db_path: Path,
) -> None:
    """A parent thread that held the writers' turn (waiting for the lock file) had no
    SQLite transaction to leave behind: a child later kept out by a genuine other writer
    was told its parent's write stayed under way for good, a writer no one would find."""

    def child() -> list[object]:
        time.sleep(0.8)  # the parent's hold is over
        other = sqlite_module().connect(str(db_path), isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another program writing, with no lock file
        try:
            with Memory.open(
                db_path, embedder=HashEmbedder(), config=Config(write_wait_s=0.3)
            ) as mem:
                mem.add("written by the child", kind="fact")
            return ["written"]
        except DatabaseLocked as exc:
            return [forked_while_written(db_path), str(exc)]
        finally:
            other.execute("ROLLBACK")
            other.close()

    outcome = _held_at_the_fork(db_path, False, child)
    assert isinstance(outcome, list) and outcome[0] is False, outcome
    assert "another writer held it for the whole wait" in str(outcome[1])
    assert "forked" not in str(outcome[1])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_child_forked_inside_a_write_transaction_says_why_its_turn_is_not_recorded(
    db_path: Path,
) -> None:
    """A retrieval in that child answers but cannot record its turn; its degraded reason
    blamed "another writer kept the file past 0.5 s", which no wait would ever help. A
    child forked with no write under way records its turn."""

    def child() -> list[object]:
        with Memory.open(db_path, embedder=HashEmbedder(), config=Config(write_wait_s=1.0)) as mem:
            r = mem.retrieve("when is the dentist?")
            return [len(r.results), r.turn_id, list(r.degraded)]

    found, turn_id, degraded = _held_at_the_fork(db_path, True, child)  # type: ignore[misc]
    assert found == 1 and turn_id is None, (found, turn_id)
    said = " ".join(degraded)
    assert "turn not recorded: this process was forked while its parent was writing" in said
    assert "'spawn'" in said and "another writer kept the file" not in said
    found, turn_id, degraded = in_forked_child(child)  # type: ignore[misc]
    assert found == 1 and isinstance(turn_id, int) and not degraded
