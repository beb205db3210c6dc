"""Letting a memory's calls under way finish when it is closed.

A server shutting down closes its :class:`~memengine.Memory` while requests
are still in it: a turn embedding its query, an exchange about to be
written. :class:`CallGate` counts the calls under way, per thread; once
:meth:`CallGate.close` is called no new call starts (:class:`.MemoryClosed`),
and the close waits, for a bounded time, for the calls already started to
end (a call of the closing thread itself, or one nested in a call under way,
is never refused). A check given to the gate runs as each call starts (the
memory's: that it is not used in a process forked from the one that opened
it). Long jobs (an import, a re-embed, a backup, an export, maintenance) are
not counted: they stop at their next transaction.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from .errors import MemoryClosed, StoreError
from .store.connect import CLOSED

__all__ = ["CallGate", "gated"]

P = ParamSpec("P")
R = TypeVar("R")


class CallGate:
    """The calls under way of one memory, per thread; see the module's docstring."""

    def __init__(self, check: Callable[[], None] = lambda: None) -> None:
        """``check`` runs as each call starts (raising refuses the call)."""
        self._check = check
        self._calls: dict[int, int] = {}  # thread id → calls under way (nested ones too)
        self._closers: set[int] = set()  # threads inside close()
        self._changed = threading.Condition()
        self._closing = False

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` has been called (new calls are refused)."""
        return self._closing

    @contextmanager
    def call(self) -> Iterator[None]:
        """Count the body as a call under way; :class:`.MemoryClosed` once the gate is
        closing, unless this thread already has a call under way."""
        me = threading.get_ident()
        with self._changed:
            if self._closing and me not in self._calls:
                raise MemoryClosed(CLOSED)
            self._check()
            self._calls[me] = self._calls.get(me, 0) + 1
        try:
            yield
        finally:
            with self._changed:
                if self._calls[me] == 1:
                    del self._calls[me]
                else:
                    self._calls[me] -= 1
                self._changed.notify_all()

    def close(self, wait_s: float, *, others: bool = True) -> float:
        """Refuse new calls, then wait at most ``wait_s`` for the calls of the other threads
        to end (not with ``others`` False, nor for threads that are closing the gate
        themselves: two calls that each close from inside would wait for each other);
        return the seconds left of the wait. Past it a :class:`.StoreError` (the gate stays
        closed: a later close waits again)."""
        me = threading.get_ident()
        deadline = time.monotonic() + wait_s
        with self._changed:
            self._closing = True
            if not others:
                return wait_s
            self._closers.add(me)
            self._changed.notify_all()  # another closer stops waiting for this thread
            try:
                while others_left := sum(
                    n for t, n in self._calls.items() if t not in self._closers
                ):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise StoreError(
                            f"{others_left} calls of other threads were still under way after "
                            f"{wait_s:g} s: the memory was not closed (close it again to wait "
                            "more)"
                        )
                    self._changed.wait(left)
            finally:
                self._closers.discard(me)
        return max(0.0, deadline - time.monotonic())


class _Gated(Protocol):
    _gate: CallGate


S = TypeVar("S", bound=_Gated)


def gated(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Run a method of an object with a ``_gate`` as a call under way of that gate."""

    @functools.wraps(method)
    def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._gate.call():
            return method(self, *args, **kwargs)

    return wrapper
