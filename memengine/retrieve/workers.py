"""Daemon threads for work a caller may stop waiting for (a turn's query embedding).

A call handed to :func:`submit` starts at once on an idle thread, or on a new
one when none is idle, so callers never queue behind one another; its
:class:`~concurrent.futures.Future` carries the result. The threads are
daemons, shared by the whole process and kept for the next call: one left
running past its caller's deadline (a slow endpoint) neither holds up the
process's exit, as a :class:`~concurrent.futures.ThreadPoolExecutor`'s
would, nor costs a new thread per call (~0.3 ms each, more under load).
There are as many as the most calls that ever ran at once. A forked child
starts with none: the threads do not cross a fork, so it forgets the
parent's idle ones rather than hand its first calls to threads it lacks
(each would wait out ``embed_deadline_s``).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

__all__ = ["submit"]

T = TypeVar("T")

_jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
_lock = threading.Lock()
_idle = 0  # threads waiting for a job that no submitted job has reserved


def submit(fn: Callable[[], T]) -> Future[T]:
    """Run ``fn()`` on a daemon thread now; its future holds what it returns or raises."""
    global _idle
    future: Future[T] = Future()

    def job() -> None:
        try:
            future.set_result(fn())
        except BaseException as exc:  # handed to whoever waits on the future
            future.set_exception(exc)

    with _lock:
        start = _idle == 0
        if not start:
            _idle -= 1  # that thread is this job's
    if start:
        threading.Thread(target=_work, name="memengine-worker", daemon=True).start()
    _jobs.put(job)
    return future


def _work() -> None:
    global _idle
    while True:
        _jobs.get()()
        with _lock:
            _idle += 1


def _forget_in_child() -> None:
    """In a forked child: forget the parent's threads, its queued calls and its lock (held,
    perhaps, by a parent thread at the fork), so that the child's first call starts a thread
    of its own rather than wait for an "idle" one that was not forked."""
    global _jobs, _lock, _idle
    _jobs = queue.SimpleQueue()
    _lock = threading.Lock()
    _idle = 0


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_forget_in_child)
