"""Letting a memory's calls under way finish when it is closed.

A server shutting down closes its :class:`~memengine.Memory` while requests
are still in it: a turn embedding its query, an exchange about to be
written. :class:`CallGate` counts the calls under way, per thread; once
:meth:`CallGate.close` is called no new call starts (:class:`.MemoryClosed`),
and the close waits, for a bounded time, for the calls already started to
end (a call of the closing thread itself, or one nested in a call under way of
the same thread and context, is never refused: two asyncio tasks on one thread
are two contexts, so a task's new turn is refused while another's ends). A
check given to the gate runs as each call starts (the memory's: that it is not
used in a process forked from the one that opened it). Long jobs (an import, a
re-embed, a backup, an export, maintenance) are counted apart and not waited
for: they stop at their next transaction.

A turn (:meth:`CallGate.turn`) is one call whose own calls are let through
while the gate closes, also those it makes on other threads in a copy of its
context (``asyncio.to_thread``), so that a shutdown does not store half a turn.

A close asked for from inside a call of the same thread (a signal handler
run between two steps of a turn, a callback), or from a thread that runs in a
turn's context (``await asyncio.to_thread(mem.close)`` in the turn), cannot
close anything under that call's feet: the gate refuses new calls at once and
runs the close when the thread's outermost call returns
(:meth:`CallGate.close_later`); on an event loop's thread, on a thread of its
own, so that the loop's other tasks go on while it waits for their calls.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from .errors import MemEngineError, MemoryClosed, StoreError
from .store.connect import CLOSED
from .text import counted

__all__ = ["CallGate", "gated", "gated_job"]

P = ParamSpec("P")
R = TypeVar("R")

_TURNS: ContextVar[frozenset[int]] = ContextVar("memengine_turns", default=frozenset())
"""The turns (:meth:`CallGate.turn`) the running code is part of: a context is copied into
the thread ``asyncio.to_thread`` runs a call on, so that call belongs to its turn too."""
_turn_numbers = itertools.count(1)
_INSIDE: ContextVar[frozenset[int]] = ContextVar("memengine_calls", default=frozenset())
"""The gates (by :attr:`CallGate.number`) the running code has a call under way in: a call
nested in another of the same context is let through while its gate closes, but not one
of another asyncio task that runs on the same thread (each task has its own context)."""
_gate_numbers = itertools.count(1)
_LONGEST_WAIT = 3600.0
"""The longest one wait for the calls under way (a close's may be endless: it waits again)."""


class CallGate:
    """The calls under way of one memory, per thread; see the module's docstring."""

    def __init__(self, check: Callable[[], None] = lambda: None) -> None:
        """``check`` runs as each call starts (raising refuses the call)."""
        self._check = check
        self._calls: dict[int, int] = {}  # thread id → calls under way (nested ones too)
        self._jobs: dict[int, int] = {}  # thread id → long jobs under way (not waited for)
        self._job_first: set[int] = set()  # threads whose outermost call is a long job
        self._closers: set[int] = set()  # threads inside close()
        self._after: dict[int, Callable[[], None]] = {}  # thread id → its close, asked inside
        self.failed: MemEngineError | None = None
        """Why the last deferred close did not close (:meth:`_run_after`), or None."""
        self._turns: dict[int, int] = {}  # the turns under way (:meth:`turn`) → their thread
        self._changed = threading.Condition()
        self._closing = False
        self.number = next(_gate_numbers)
        """This gate's number in :data:`_INSIDE`."""

    @property
    def closing(self) -> bool:
        """Whether :meth:`close` has been called (new calls are refused)."""
        return self._closing

    @contextmanager
    def call(self, *, job: bool = False) -> Iterator[None]:
        """Count the body as a call under way (with ``job``, a long job: not waited for);
        :class:`.MemoryClosed` once the gate is closing, unless it is nested in a call under
        way of the same context (the same thread, or the same asyncio task: another task's
        call on the loop's thread is refused). A close asked for inside it runs as this
        thread's outermost call ends (:meth:`close_later`)."""
        me = threading.get_ident()
        counts = self._jobs if job else self._calls
        inside = _INSIDE.get()
        with self._changed:
            nested = self.number in inside and self._inside(me)
            if self._closing and not nested and not (_TURNS.get() & self._turns.keys()):
                raise MemoryClosed(self._refusal())
            self._check()
            if job and not self._inside(me):
                self._job_first.add(me)
            counts[me] = counts.get(me, 0) + 1
        after = None
        token = _INSIDE.set(inside | {self.number})
        try:
            yield
        finally:
            with suppress(ValueError):  # ended in another context (a generator closed
                _INSIDE.reset(token)  # by another task, or thread)
            with self._changed:
                if counts[me] == 1:
                    del counts[me]
                else:
                    counts[me] -= 1
                if not self._inside(me):
                    self._job_first.discard(me)
                    after = self._after.pop(me, None)
                self._changed.notify_all()
            if after is not None:
                self._run_after(after)

    @contextmanager
    def turn(self) -> Iterator[None]:
        """Count the body as one call under way, whose calls are not refused while the gate
        closes: those of this thread, and those of any thread that runs in a copy of this
        context (``asyncio.to_thread``), for as long as the body runs."""
        with self.call():
            number = next(_turn_numbers)
            with self._changed:
                self._turns[number] = threading.get_ident()
            token = _TURNS.set(_TURNS.get() | {number})
            try:
                yield
            finally:
                with self._changed:
                    self._turns.pop(number, None)
                    self._changed.notify_all()
                with suppress(ValueError):  # ended in another context (a generator closed
                    _TURNS.reset(token)  # by another task, or thread)

    def _run_after(self, close: Callable[[], None]) -> None:
        """Run a deferred close: here, or on a thread of its own when this thread runs an
        asyncio event loop (the close may wait for other threads' calls: the loop's other
        tasks go on meanwhile). Its failure (calls of other threads still under way past
        its wait) does not replace the outcome of the call it waited for, which stands (an
        add that returned is stored): it is kept in :attr:`failed`, named by the refusal
        of every later call, and the memory stays open, refusing calls, until ``close()``
        is called again."""

        def run() -> None:
            try:
                close()
            except MemEngineError as exc:
                with self._changed:
                    self.failed = exc

        if _in_event_loop():
            threading.Thread(target=run, name="memengine-close").start()
        else:
            run()

    def _refusal(self) -> str:
        """Why a call is refused: the memory is closed, or its deferred close failed."""
        if self.failed is None:
            return CLOSED
        return f"the memory is closing and refuses calls, but is not closed: {self.failed}"

    def _inside(self, me: int) -> bool:
        """Whether thread ``me`` has a call or a long job under way (the lock held)."""
        return me in self._calls or me in self._jobs

    def close_later(self, close: Callable[[], None]) -> bool:
        """From inside a call of this thread, or of a turn (:meth:`turn`) whose context
        this thread runs in (``asyncio.to_thread``): refuse new calls now and run ``close``
        when that thread's outermost call ends, and return True; elsewhere do nothing and
        return False.

        A signal handler runs in the main thread between two steps of whatever it was
        doing: closing the file (or a thread pool the call is handing work to) there
        would break the call under way, or wait forever for a lock the call holds; a
        close from inside a turn would wait for that turn, which waits for the close."""
        me = threading.get_ident()
        with self._changed:
            if self._inside(me):
                owner = me
            elif mine := _TURNS.get() & self._turns.keys():
                owner = self._turns[min(mine)]
            else:
                return False
            self._closing = True
            self._after.setdefault(owner, close)
            self._changed.notify_all()
            return True

    @property
    def in_job(self) -> bool:
        """Whether this thread's outermost call under way is a long job."""
        with self._changed:
            return threading.get_ident() in self._job_first

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
                while others_left := sum(1 for t in self._calls if t not in self._closers):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise StoreError(
                            f"calls of {counted(others_left, 'other thread')} were still under "
                            f"way after {wait_s:g} s: the memory was not closed (close it "
                            "again to wait more)"
                        )
                    self._changed.wait(min(left, _LONGEST_WAIT))  # (math.inf overflows)
            finally:
                self._closers.discard(me)
            self.failed = None  # (the close goes on: a deferred one's failure is past)
        return max(0.0, deadline - time.monotonic())


def _in_event_loop() -> bool:
    """Whether this thread is running an asyncio event loop (its tasks' code is)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


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


def gated_job(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Run a method of an object with a ``_gate`` as a long job of that gate (counted, so a
    close from inside it waits for its end, but not waited for by other threads' closes)."""

    @functools.wraps(method)
    def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._gate.call(job=True):
            return method(self, *args, **kwargs)

    return wrapper
