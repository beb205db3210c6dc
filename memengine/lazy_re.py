"""Regular expressions compiled on their first use, not when their module is imported.

The rule tables (dates, changes, owners, quotes …) hold about 500 module-level patterns;
compiling them all took a third of ``import memengine`` (~0.3 s of a ~1 s cold start),
and a command or a turn uses fewer than half of them. :func:`lazy_compile` takes the
arguments of :func:`re.compile` and returns a :class:`LazyPattern` that compiles on its
first search; from then on its methods are the compiled pattern's own (no extra call).
"""

from __future__ import annotations

import os
import re
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["LazyPattern", "compile_all", "lazy_compile", "made"]

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")

_COMPILING = threading.Lock()

made: weakref.WeakSet[LazyPattern] = weakref.WeakSet()
"""Every :class:`LazyPattern` made so far (a test compiles them all: a pattern that does
not compile fails there, not in a user's turn)."""


class LazyPattern:
    """A :class:`re.Pattern` of ``str`` that is compiled on first use.

    ``pattern`` and ``flags`` are the arguments as given (so that a pattern can be built
    from another's text without compiling it); :meth:`compiled` is the real pattern.
    """

    def __init__(self, pattern: str, flags: int | re.RegexFlag = 0) -> None:
        self.pattern = pattern
        self.flags = int(flags)
        with _COMPILING:  # (a snapshot of ``made`` is taken under the lock)
            made.add(self)

    def __repr__(self) -> str:
        return f"lazy_compile({self.pattern!r}, {self.flags})"

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern, compiled now if it was not yet (once: a match's ``re`` is
        this very object in every thread)."""
        found: re.Pattern[str] | None = self.__dict__.get("_compiled")
        if found is not None:
            return found
        with _COMPILING:
            found = self.__dict__.get("_compiled")
            if found is None:
                found = re.compile(self.pattern, self.flags)
                # the compiled pattern's bound methods shadow this class's own from now on
                self.__dict__.update({name: getattr(found, name) for name in _METHODS})
                self.__dict__["_compiled"] = found
        return found

    @property
    def groups(self) -> int:
        """The number of capturing groups."""
        return self.compiled().groups

    @property
    def groupindex(self) -> Mapping[str, int]:
        """Group names to group numbers."""
        return self.compiled().groupindex

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """:meth:`re.Pattern.search`."""
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """:meth:`re.Pattern.match`."""
        return self.compiled().match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        """:meth:`re.Pattern.fullmatch`."""
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        """:meth:`re.Pattern.finditer`."""
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        """:meth:`re.Pattern.findall`."""
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        """:meth:`re.Pattern.sub`."""
        return self.compiled().sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        """:meth:`re.Pattern.subn`."""
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        """:meth:`re.Pattern.split`."""
        return self.compiled().split(string, maxsplit)


def lazy_compile(pattern: str, flags: int | re.RegexFlag = 0) -> LazyPattern:
    """:func:`re.compile` deferred to the first use: for patterns made at import time."""
    return LazyPattern(pattern, flags)


def _unlock_in_child() -> None:
    """In a forked child: a fresh lock (one a parent thread held at the fork, compiling,
    would stay held, and the child's first use of a pattern would wait for it forever)."""
    global _COMPILING
    _COMPILING = threading.Lock()


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_unlock_in_child)


def compile_all() -> int:
    """Compile every pattern made so far that is not compiled yet, and say how many (about
    0.3 s for all): a server's warm-up (:meth:`.Memory.warm`), so that its first turn
    compiles none."""
    with _COMPILING:
        waiting = [p for p in made if "_compiled" not in p.__dict__]
    for pattern in waiting:
        pattern.compiled()
    return len(waiting)
