"""A first-come, first-served queue for the write transactions of one process.

SQLite lets one writer in at a time and makes the others wait in its busy
handler, which sleeps and retries with growing pauses (up to 100 ms). A
thread that writes in a loop therefore takes the lock again and again while
a thread that writes once (a retrieval recording its turn) keeps sleeping:
in ``memengine bench`` such a retrieval waited up to 3 s behind a thread
adding one exchange after another. The threads of one process therefore
queue here, in arrival order, before ``BEGIN IMMEDIATE``; the processes then
take turns on a lock file (:mod:`.process_lock`), and SQLite's busy timeout
arbitrates only with writers that use none (the ``sqlite3`` shell, Windows).
A forked child starts with empty queues: a parent thread that held one at
the fork is not in the child to hand it on. (SQLite's own record of a write
transaction under way at the fork does cross it, and no thread of the child
can end it: :func:`forked_while_written` lets that child's lock errors say so.
A thread that only held its turn, still waiting for the lock file, left no
such record: the child's lock errors then blame the writer they waited for.)
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import DatabaseLocked

__all__ = ["WriteQueue", "forked_while_written", "forked_write_reason", "write_queue_for"]


class WriteQueue:
    """A fair mutex: it is handed to the waiting threads in the order they asked for it."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held = False
        self._waiting: deque[threading.Lock] = deque()
        self._holder_waits_for: str | None = None  # see waiting_for
        self._transaction = False  # see in_transaction

    @property
    def waiting(self) -> int:
        """How many threads are waiting for their turn now."""
        with self._mutex:
            return len(self._waiting)

    @contextmanager
    def turn(self, timeout_s: float) -> Iterator[None]:
        """Hold the queue for the body; :class:`.DatabaseLocked` after ``timeout_s`` of waiting."""
        self._acquire(timeout_s)
        try:
            yield
        finally:
            self._release()

    @contextmanager
    def waiting_for(self, who: str) -> Iterator[None]:
        """Note, for the body, that the thread holding the queue is itself waiting for
        ``who`` ("another process"), so that a thread whose wait runs out behind it says so
        rather than blame "another thread of this process"."""
        with self._mutex:
            self._holder_waits_for = who
        try:
            yield
        finally:
            with self._mutex:
                self._holder_waits_for = None

    @contextmanager
    def in_transaction(self) -> Iterator[None]:
        """Note, for the body, that the thread holding the queue has a write transaction
        open in SQLite (from a ``BEGIN IMMEDIATE`` that succeeded to its ``COMMIT`` or
        rollback): a child forked meanwhile inherits that transaction, which none of its
        threads can end. Only the holder calls it."""
        self._transaction = True
        try:
            yield
        finally:
            self._transaction = False

    def _acquire(self, timeout_s: float) -> None:
        with self._mutex:
            if not self._held:
                self._held = True
                return
            gate = threading.Lock()
            gate.acquire()
            self._waiting.append(gate)
        try:
            handed = gate.acquire(timeout=max(timeout_s, 0.0))
        except BaseException:
            self._give_up(gate)
            raise
        if not handed:
            raise DatabaseLocked.waited(self._give_up(gate), timeout_s)

    def _give_up(self, gate: threading.Lock) -> str:
        """Leave the queue; if the queue was handed over meanwhile, pass it on. Returns who
        kept it: "another thread of this process", or the writer that thread was waiting
        for ("another process (the write ahead of this one in this process was waiting
        for it)")."""
        with self._mutex:
            blocker = (
                "another thread of this process"
                if self._holder_waits_for is None
                else f"{self._holder_waits_for} (the write ahead of this one in this process "
                "was waiting for it)"
            )
            try:
                self._waiting.remove(gate)
            except ValueError:  # released to us after the wait ended: hand it on
                self._hand_on()
        return blocker

    def _release(self) -> None:
        with self._mutex:
            self._hand_on()

    def _hand_on(self) -> None:
        """Give the queue to the longest-waiting thread, or mark it free (``_mutex`` held)."""
        if self._waiting:
            self._waiting.popleft().release()
        else:
            self._held = False


_QUEUES: weakref.WeakValueDictionary[str, WriteQueue] = weakref.WeakValueDictionary()
"""Each file's queue while a store of this process holds it (an entry goes with the last of
them: a process that opened 500 files one after another kept 500)."""
_QUEUES_LOCK = threading.Lock()


_FORKED_WHILE_WRITTEN: set[str] = set()
"""The files a thread of the parent had a write transaction open on when this process was
forked from it."""


def _forget_in_child() -> None:
    """In a forked child: forget the parent's queues (one a parent thread held at the fork
    would stay held, and every write of the child would wait ``write_wait_s`` and fail),
    noting the files a parent thread was inside a write transaction on (not those whose
    turn it only held: waiting for the lock file, it had nothing of SQLite's open)."""
    global _QUEUES_LOCK
    _FORKED_WHILE_WRITTEN.update(key for key, queue in _QUEUES.items() if queue._transaction)
    _QUEUES.clear()
    _QUEUES_LOCK = threading.Lock()


def forked_while_written(path: str | os.PathLike[str]) -> bool:
    """Whether this process was forked while a thread of its parent had a write transaction
    open on the file at ``path``: that transaction then stays under way for SQLite in this
    process (its connection's lock crossed the fork, its thread did not), and every write
    of this process to that file finds it locked."""
    return os.path.realpath(path) in _FORKED_WHILE_WRITTEN


def forked_write_reason(path: str | os.PathLike[str]) -> str | None:
    """Why every write of this process to the file at ``path`` finds it locked, when it was
    forked inside a write transaction of its parent (:func:`forked_while_written`): "this
    process was forked while its parent was writing to …"; None otherwise. Said by a
    failed write and by a turn left unrecorded alike."""
    if not forked_while_written(path):
        return None
    return (
        f"this process was forked while its parent was writing to {path}, and SQLite here "
        "still counts that write as under way for good: write from a process forked while "
        "no write is under way, or started with 'spawn'"
    )


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_forget_in_child)


def write_queue_for(path: str | os.PathLike[str]) -> WriteQueue:
    """The one queue of this process for the database file at ``path``.

    Keyed by the file's real path, so that two stores opened on the same file
    in one process also queue behind each other; held weakly, so that it goes
    once no store holds it.
    """
    key = os.path.realpath(path)
    with _QUEUES_LOCK:
        queue = _QUEUES.get(key)
        if queue is None:
            queue = _QUEUES[key] = WriteQueue()
        return queue
