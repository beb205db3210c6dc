"""The writers of separate processes take turns on a lock file beside the database.

SQLite decides between processes with its busy handler: a waiting writer
sleeps and retries with growing pauses (up to 100 ms), so a process that
writes in a loop takes the lock again and again while another process's
single write keeps sleeping (a process writing every 10 ms waited up to
4.5 s behind one adding rows in a loop; ``memengine bench`` measures it). So a
writer first takes an exclusive ``flock`` on ``<database>-lock`` and waits
for it in the kernel, which wakes it the moment the holder lets go, and only
then asks SQLite for the write lock. The kernel drops the lock of a process
that dies, so a crash never leaves the file locked.

A wait that times out leaves its ``flock`` pending on a helper thread; the
next write of the process takes that wait over rather than starting another,
so timeouts never pile up threads or open files. Where there is no
``fcntl`` (Windows), or the lock file can be neither created nor opened (a
read-only directory), writers go straight to SQLite's busy timeout.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import DatabaseLocked

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["ProcessLock", "lock_path", "process_lock_for", "remove_unused"]


def lock_path(database: str | os.PathLike[str]) -> Path:
    """The lock file of the database at ``database``: its real path with ``-lock`` added
    (so that a symbolic link and its target share one lock)."""
    return Path(f"{os.path.realpath(database)}-lock")


def remove_unused(database: str | os.PathLike[str]) -> bool:
    """Delete the lock file of ``database`` when it is empty and no process holds it (for
    a new database that an open which failed removed again: the lock file would be left
    beside nothing); True when it was deleted. A process holding it keeps it."""
    if fcntl is None:
        return False
    path = lock_path(database)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # gone already, or not this process's to open
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held: another process writes (or is about to make) the database
        os.close(fd)
        return False
    try:
        if os.fstat(fd).st_size or not _at_path(fd, path):  # (one deleted since: not ours)
            return False
        path.unlink()
        return True
    except OSError:
        return False
    finally:
        _let_go(fd, locked=True)


class ProcessLock:
    """An exclusive lock shared by every process that writes one database file.

    One object per file and process (:func:`process_lock_for`); the threads of
    a process reach it one at a time (behind :mod:`.write_queue`).
    """

    def __init__(self, database: str | os.PathLike[str]) -> None:
        self.path = lock_path(database)
        self._mutex = threading.Lock()
        self._pending: _Waiter | None = None

    @property
    def supported(self) -> bool:
        """Whether this platform has ``flock`` (otherwise :meth:`held` does nothing)."""
        return fcntl is not None

    @contextmanager
    def held(self, timeout_s: float, *, wait_s: float | None = None) -> Iterator[None]:
        """Hold the lock for the body; :class:`.DatabaseLocked` after ``timeout_s`` of waiting
        (its message names ``wait_s``, the whole wait as set, when the caller spent part of
        it in a queue before)."""
        fd: int | None = None
        try:
            fd = self._take(timeout_s, timeout_s if wait_s is None else wait_s)
            yield
        finally:
            if fd is not None:
                _let_go(fd, locked=True)

    def _take(self, timeout_s: float, wait_s: float) -> int | None:
        """The locked file, or None when this file system cannot lock it. A lock taken on a
        file no longer at the path (:func:`remove_unused` deleted it between this open and
        this lock, and another process may lock the new one made there) is let go and
        taken again on the file that is: the lock-file pattern. Taken again once at least, then
        only until ``timeout_s`` has passed, after which the file is kept as when the path
        cannot be read: a path that never matches (a file system that reports another
        inode) would otherwise retake forever at full speed."""
        deadline = time.monotonic() + timeout_s
        retaken = False
        while True:
            fd = self._take_once(max(deadline - time.monotonic(), 0.0), wait_s)
            if fd is None or _at_path(fd, self.path):
                return fd
            if retaken and time.monotonic() >= deadline:
                return fd
            _let_go(fd, locked=True)
            retaken = True

    def _take_once(self, timeout_s: float, wait_s: float) -> int | None:
        """The locked file (which may since have been deleted), or None when this file
        system cannot lock it."""
        with self._mutex:
            waiter, self._pending = self._pending, None
        if waiter is None or not waiter.adopt():
            fd = self._open()
            if fd is None:
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return fd
            except BlockingIOError:
                if timeout_s <= 0:
                    _let_go(fd, locked=False)
                    raise DatabaseLocked.waited("another process", wait_s) from None
            except OSError:  # e.g. a network file system without locks
                _let_go(fd, locked=False)
                return None
            waiter = _Waiter(fd)
        try:
            held = waiter.wait(timeout_s)
        except BaseException:
            with self._mutex:
                self._pending = waiter
            raise
        if held is None:
            return None
        if not held:
            with self._mutex:
                self._pending = waiter
            raise DatabaseLocked.waited("another process", wait_s)
        return waiter.fd

    def _open(self) -> int | None:
        if fcntl is None:
            return None
        cloexec = getattr(os, "O_CLOEXEC", 0)
        try:
            return _opened(os.open(self.path, os.O_RDWR | os.O_CREAT | cloexec, 0o666))
        except PermissionError:  # another user's lock file: flock works on a read-only file
            pass
        except OSError:
            return None
        try:
            return _opened(os.open(self.path, os.O_RDONLY | cloexec))
        except OSError:  # a read-only directory: SQLite alone arbitrates
            return None


class _Waiter:
    """A blocking ``flock`` on a helper thread, so that the caller can stop waiting.

    The kernel wakes a blocked ``flock`` as soon as the lock is released. A
    caller that stops waiting (timeout or interrupt) *abandons* the wait: the
    next caller may :meth:`adopt` it; if the lock comes while nobody waits,
    the helper drops it and closes the file (the waiter is then *gone*).
    """

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._mutex = threading.Lock()
        self._done = threading.Event()
        self._got = False
        self._abandoned = False
        self._gone = False
        threading.Thread(target=self._run, name="memengine-process-lock", daemon=True).start()

    def _run(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
            got = True
        except OSError:
            got = False
        with self._mutex:
            self._got = got
            if self._abandoned:
                _let_go(self.fd, locked=got)
                self._gone = True
            self._done.set()

    def adopt(self) -> bool:
        """Take over an abandoned wait; False when it is gone (start a new one)."""
        with self._mutex:
            if self._gone:
                return False
            self._abandoned = False
            return True

    def wait(self, timeout_s: float) -> bool | None:
        """True once the lock is held, False after ``timeout_s`` (the wait is then
        abandoned), None when the file cannot be locked (the file is then closed)."""
        try:
            self._done.wait(max(timeout_s, 0.0))
        except BaseException:  # interrupted: nobody will use the lock
            self._abandon()
            raise
        with self._mutex:
            if not self._done.is_set():
                self._abandoned = True
                return False
            if not self._got:
                _let_go(self.fd, locked=False)
                self._gone = True
                return None
            return True

    def _abandon(self) -> None:
        with self._mutex:
            if self._done.is_set() and not self._gone:
                _let_go(self.fd, locked=self._got)
                self._gone = True
            else:
                self._abandoned = True


def _at_path(fd: int, path: Path) -> bool:
    """Whether the open file ``fd`` is the one at ``path`` still (not deleted, nor replaced);
    True when the path cannot be read (nothing better is known)."""
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    held = os.fstat(fd)
    return (held.st_dev, held.st_ino) == (there.st_dev, there.st_ino)


def _let_go(fd: int, *, locked: bool) -> None:
    """Close ``fd``, dropping its lock first when it holds it."""
    try:
        if locked and fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        with _OPEN_LOCK:
            _OPEN.discard(fd)
        os.close(fd)


_OPEN: set[int] = set()
"""The lock files this process has open. A ``flock`` belongs to the open file, which a
forked child shares: a child (a multiprocessing helper forked during a write) would keep
the lock of a parent that died, and every writer of the file would wait for it."""
_OPEN_LOCK = threading.Lock()


def _opened(fd: int) -> int:
    with _OPEN_LOCK:
        _OPEN.add(fd)
    return fd


def _close_in_child() -> None:
    """In a forked child: close the lock files it shares with its parent (the lock stays
    the parent's, and goes with it), and forget the parent's locks, and the mutexes that
    guard them (a parent thread may have held one at the fork)."""
    global _OPEN_LOCK, _LOCKS_LOCK
    for fd in list(_OPEN):
        with contextlib.suppress(OSError):
            os.close(fd)
    _OPEN.clear()
    _LOCKS.clear()
    _OPEN_LOCK = threading.Lock()
    _LOCKS_LOCK = threading.Lock()


_LOCKS: weakref.WeakValueDictionary[Path, ProcessLock] = weakref.WeakValueDictionary()
"""Each file's lock while a store of this process holds it (an entry goes with the last of
them: a process that opened 500 files one after another kept 500)."""
_LOCKS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(after_in_child=_close_in_child)


def process_lock_for(database: str | os.PathLike[str]) -> ProcessLock:
    """The one :class:`ProcessLock` of this process for the database at ``database`` (held
    weakly: it goes once no store holds it)."""
    key = lock_path(database)
    with _LOCKS_LOCK:
        lock = _LOCKS.get(key)
        if lock is None:
            lock = _LOCKS[key] = ProcessLock(database)
        return lock
