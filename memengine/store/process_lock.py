"""The writers of separate processes take turns on a lock file beside the database.

SQLite decides between processes with its busy handler: a waiting writer
sleeps and retries with growing pauses (up to 100 ms), so a process that
writes in a loop takes the lock again and again while another process's
single write keeps sleeping (``memengine bench``'s process rows measured a
single write waiting 4.5 s behind a process adding rows in a loop). So a
writer first takes an exclusive ``flock`` on ``<database>-lock`` and waits
for it in the kernel, which wakes it the moment the holder lets go, and only
then asks SQLite for the write lock. The kernel drops the lock of a process
that dies, so a crash never leaves the file locked.

Where there is no ``fcntl`` (Windows), or the lock file cannot be created
(a read-only directory), writers go straight to SQLite's busy timeout, as
before.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import DatabaseLocked

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["ProcessLock", "lock_path"]


def lock_path(database: str | os.PathLike[str]) -> Path:
    """The lock file of the database at ``database``: its real path with ``-lock`` added
    (so that a symbolic link and its target share one lock)."""
    return Path(f"{os.path.realpath(database)}-lock")


class ProcessLock:
    """An exclusive lock shared by every process that writes one database file."""

    def __init__(self, database: str | os.PathLike[str]) -> None:
        self.path = lock_path(database)

    @property
    def supported(self) -> bool:
        """Whether this platform has ``flock`` (otherwise :meth:`held` does nothing)."""
        return fcntl is not None

    @contextmanager
    def held(self, timeout_s: float) -> Iterator[None]:
        """Hold the lock for the body; :class:`.DatabaseLocked` after ``timeout_s`` of waiting.

        Each call opens the file anew: ``flock`` belongs to an open file, so
        a wait given up (whose helper may still get the lock later, and then
        drops it at once) can never release the lock of a later call.
        """
        fd = self._open()
        if fd is not None and not _acquire(fd, timeout_s):
            fd = None  # the file system cannot lock (e.g. some network mounts)
        try:
            yield
        finally:
            if fd is not None:
                _release(fd)

    def _open(self) -> int | None:
        if fcntl is None:
            return None
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError:  # a read-only directory or file: SQLite alone arbitrates
            return None


def _acquire(fd: int, timeout_s: float) -> bool:
    """Lock ``fd`` within ``timeout_s``: True when held, False when the file cannot be
    locked at all (``fd`` is then closed); :class:`.DatabaseLocked` on timeout."""
    assert fcntl is not None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        pass
    except OSError:
        os.close(fd)
        return False
    held = _Waiter(fd).wait(timeout_s)
    if held is False:
        raise DatabaseLocked(
            f"database is locked: another process kept writing for {timeout_s:g} s"
        )
    return held is True


class _Waiter:
    """A blocking ``flock`` on a helper thread, so that the caller can stop waiting.

    The kernel wakes a blocked ``flock`` as soon as the lock is released. A
    caller that stops waiting (timeout or interrupt) leaves the file to the
    helper, which drops the lock and closes the file as soon as it gets it.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._mutex = threading.Lock()
        self._done = threading.Event()
        self._got = False
        self._abandoned = False
        threading.Thread(target=self._run, name="memengine-process-lock", daemon=True).start()

    def _run(self) -> None:
        assert fcntl is not None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            got = True
        except OSError:
            got = False
        with self._mutex:
            if self._abandoned:
                _let_go(self._fd, got)
                return
            self._got = got
            self._done.set()

    def wait(self, timeout_s: float) -> bool | None:
        """True once the lock is held, False after ``timeout_s`` (the wait is then given
        up), None when the file cannot be locked (the file is then closed)."""
        try:
            self._done.wait(max(timeout_s, 0.0))
        except BaseException:  # interrupted: nobody will use the lock
            with self._mutex:
                if self._done.is_set():
                    _let_go(self._fd, self._got)
                else:
                    self._abandoned = True
            raise
        with self._mutex:
            if not self._done.is_set():
                self._abandoned = True
                return False
            if not self._got:
                _let_go(self._fd, False)
                return None
            return True


def _release(fd: int) -> None:
    """Drop the lock and close the file."""
    _let_go(fd, True)


def _let_go(fd: int, locked: bool) -> None:
    """Close ``fd``, dropping its lock first when it holds it."""
    try:
        if locked and fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
