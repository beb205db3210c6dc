"""A first-come, first-served queue for the write transactions of one process.

SQLite lets one writer in at a time and makes the others wait in its busy
handler, which sleeps and retries with growing pauses (up to 100 ms). A
thread that writes in a loop therefore takes the lock again and again while
a thread that writes once (a retrieval recording its turn) keeps sleeping:
in ``memengine bench`` such a retrieval waited up to 3 s behind a thread
adding one exchange after another. The threads of one process therefore
queue here, in arrival order, before ``BEGIN IMMEDIATE``; SQLite's busy
timeout still arbitrates between processes.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import DatabaseLocked

__all__ = ["WriteQueue", "write_queue_for"]


class WriteQueue:
    """A fair mutex: it is handed to the waiting threads in the order they asked for it."""

    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._held = False
        self._waiting: deque[threading.Lock] = deque()

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
            self._give_up(gate)
            raise DatabaseLocked.waited("another thread of this process", timeout_s)

    def _give_up(self, gate: threading.Lock) -> None:
        """Leave the queue; if the queue was handed over meanwhile, pass it on."""
        with self._mutex:
            try:
                self._waiting.remove(gate)
            except ValueError:  # released to us after the wait ended: hand it on
                self._hand_on()

    def _release(self) -> None:
        with self._mutex:
            self._hand_on()

    def _hand_on(self) -> None:
        """Give the queue to the longest-waiting thread, or mark it free (``_mutex`` held)."""
        if self._waiting:
            self._waiting.popleft().release()
        else:
            self._held = False


_QUEUES: dict[str, WriteQueue] = {}
_QUEUES_LOCK = threading.Lock()


def write_queue_for(path: str | os.PathLike[str]) -> WriteQueue:
    """The one queue of this process for the database file at ``path``.

    Keyed by the file's real path, so that two stores opened on the same file
    in one process also queue behind each other.
    """
    key = os.path.realpath(path)
    with _QUEUES_LOCK:
        queue = _QUEUES.get(key)
        if queue is None:
            queue = _QUEUES[key] = WriteQueue()
        return queue
