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
    raises :class:`.StoreError`."""

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        """Schedule ``fn(*args, **kwargs)``; a :class:`.StoreError` once the pool is shut."""
        try:
            return super().submit(fn, *args, **kwargs)
        except RuntimeError as exc:  # "cannot schedule new futures after shutdown"
            raise MemoryClosed(CLOSED) from exc
