"""The thread pools of a memory's searches and LLM phases.

Once a memory is closed, its pools take no more work; a call still under
way in another thread then gets a :class:`.StoreError` saying so, where
``concurrent.futures`` would raise a bare ``RuntimeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from ..errors import MemoryClosed
from ..store.connect import CLOSED

__all__ = ["Pool"]

P = ParamSpec("P")
T = TypeVar("T")


class Pool(ThreadPoolExecutor):
    """A :class:`~concurrent.futures.ThreadPoolExecutor` whose ``submit`` after shutdown
    raises :class:`.StoreError`, and that does the work in the caller's thread once the
    interpreter is exiting."""

    _closed = False

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Schedule ``fn(*args, **kwargs)``; a :class:`.StoreError` once the pool is shut.

        When the main thread has ended, Python's exit shuts every pool down before it
        waits for the threads still running; a turn in one of them is not refused (no one
        closed the memory) but done in its own thread, without the pool."""
        try:
            return super().submit(fn, *args, **kwargs)
        except RuntimeError as exc:  # "cannot schedule new futures after [interpreter] shutdown"
            if self._closed:
                raise MemoryClosed(CLOSED) from exc
        done: Future[T] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # (as the pool's worker hands it to .result())
            done.set_exception(exc)
        return done

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Take no more work (:meth:`submit` raises :class:`.MemoryClosed`), as the
        executor's own ``shutdown``."""
        self._closed = True
        super().shutdown(wait, cancel_futures=cancel_futures)
