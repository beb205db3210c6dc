"""Loading sqlite-vec, setting the PRAGMAs and handing out one connection per thread.

The SQLite module is chosen once per process by :mod:`.driver` (the stdlib
:mod:`sqlite3` when it can, else ``sqlean``) and reported by
:func:`driver_info` (and ``memengine doctor``).

SQLAlchemy provides the engine, the connection pool and the ``connect``
hook that loads the extension and sets the PRAGMAs; the store then works on
the pooled DB-API connection directly, one per thread.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

import sqlalchemy as sa
import sqlite_vec
from sqlalchemy import event
from sqlalchemy.pool import QueuePool

from ..errors import (
    LONGER_WAIT,
    DamagedDatabase,
    DatabaseLocked,
    DiskError,
    DiskFull,
    ExtensionError,
    MemoryClosed,
    ReadOnlyDatabase,
    StoreError,
)
from ..lazy_re import lazy_compile
from ..text import doctor_command, salvage_command
from .driver import (
    DriverInfo,
    driver_info,
    no_extension_loading,
    probe_extensions,
    sqlite_module,
)
from .process_lock import process_lock_for
from .write_queue import forked_write_reason, write_queue_for

__all__ = [  # the driver's names re-exported, as before store/driver.py
    "Access",
    "Connections",
    "DriverInfo",
    "driver_info",
    "probe_extensions",
    "read_only_access",
    "sqlite_module",
    "translate_error",
]

Access = Literal["rw", "ro", "immutable"]
"""How the file is opened: read-write; read-only (``mode=ro``: other processes may
still write, SQLite's locks keep each read consistent); or read-only and
``immutable`` (no locks and no ``-shm``/``-wal`` files made: for a file no
writer has open; a read that finds the file changed or a writer come since
reopens it as it then is, see :meth:`Connections.read`)."""

WRITE_WAIT_S = 10.0
"""How long a write waits for the file's other writers, by default (``write_wait_s``)."""
CLOSED = "the memory has been closed"
"""What every call after :meth:`Connections.close` raises (a :class:`.StoreError`)."""


def same_process(opened_in: int, path: Path) -> None:
    """Raise a :class:`.StoreError` in a process forked from the one (``opened_in``) that
    opened ``path``: SQLite connections and threads do not cross a fork (a connection
    used on both sides can damage the file, and the pools' threads are gone)."""
    now = os.getpid()
    if now != opened_in:
        raise StoreError(
            f"{path} was opened in process {opened_in}, which this process ({now}) was "
            "forked from: a memory's connections and threads do not cross a fork; open "
            "the file again in this process (Memory.open after the fork, e.g. in a "
            "worker's start-up hook)"
        )


MMAP_BYTES = 1 << 40
"""Reads go through a memory map of the whole file (SQLite caps this at its build's
maximum): a page already in the OS cache is read without a system call, which
matters for the vector chunk blobs (128 KiB at 64 rows of 512 floats)."""

VACUUM_CACHE_MB = 2
"""The page cache of a compaction (``VACUUM``), which reads and writes every page once: a
cache as large as the connections' (or a memory map) would hold its copy of the file in
memory, hundreds of MB for a file of a few hundred."""

PAGE_SIZE = 16384
"""Page size of a new file (an existing file keeps the one it was made with). The
vector chunks are blobs stored on overflow pages: 16 KiB pages make a quarter as
many pages to chain, write and walk as SQLite's default 4 KiB, and batch ingest ran
8–29 % faster with them in paired runs (docs/benchmarks.md; measured with 2 MiB
chunks, before :data:`.vectors.CHUNK_SIZE` became 64 rows)."""


JOURNAL_LIMIT = 64 * 2**20
"""The write-ahead log is cut back to this size each time it starts over (long reads that
overlap can still make it grow meanwhile: ``optimize`` empties it)."""

PAGE_CACHE_MB = 64
"""Each connection's page cache, by default (``[retrieval] page_cache_mb``)."""


def _on_connect(
    dbapi_conn: Any, _record: Any, *, cache_mb: int, busy_ms: int, salvage: bool = False
) -> None:
    if salvage:  # a file cut short (its header counts pages it no longer has) reads at all
        dbapi_conn.execute("PRAGMA writable_schema = ON")  # only so (read-only: no write)
    try:
        dbapi_conn.enable_load_extension(True)
        sqlite_vec.load(dbapi_conn)
        dbapi_conn.enable_load_extension(False)
    except AttributeError as exc:
        if not hasattr(dbapi_conn, "enable_load_extension"):  # a module built without it
            raise ExtensionError(f"cannot load sqlite-vec: {no_extension_loading()}") from exc
        raise ExtensionError(f"cannot load sqlite-vec: {exc}") from exc
    except sqlite_module().OperationalError as exc:
        raise ExtensionError(f"cannot load sqlite-vec: {exc}") from exc
    cur = dbapi_conn.cursor()
    cur.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # takes effect only in a new, empty file
    cur.execute(f"PRAGMA busy_timeout = {busy_ms}")
    cur.execute("PRAGMA foreign_keys = ON")
    cur.execute("PRAGMA synchronous = NORMAL")
    _memory_use(cur, "MEMORY", cache_mb, MMAP_BYTES)
    cur.execute(f"PRAGMA journal_size_limit = {JOURNAL_LIMIT}")
    cur.close()


class Connections:
    """A pool of connections to one database file, handing each thread its own.

    A thread keeps its connection while it lives, and after: the connections of
    ended threads go back to the pool when a thread without one asks for one, so
    there are as many as there are threads using the file (and ended threads not
    yet replaced); ``pool_size`` of them are kept open for the next threads. Each has a
    page cache of up to ``cache_mb`` MiB, filled as it reads."""

    def __init__(
        self,
        path: Path,
        *,
        pool_size: int = 8,
        access: Access = "rw",
        why: str = "",
        cache_mb: int = PAGE_CACHE_MB,
        write_wait_s: float = WRITE_WAIT_S,
        salvage: bool = False,
    ) -> None:
        self.path = path
        self._cache_mb = cache_mb
        self._salvage = salvage and access != "rw"  # (a salvage reads a file it never writes)
        self._busy_ms = max(1, round(write_wait_s * 1000))
        self.access: Access = access
        self._why = why
        self._stamp = _stamp(path) if access == "immutable" else None
        self._wal, self._shm = log_files(path)
        self.module = sqlite_module()
        self._pool_size = pool_size
        # the file's (device, inode), once open: a writable memory keeps to that file
        self._identity: tuple[int, int] | None = None
        self.engine = self._engine(access)
        self._generation = 0  # raised each time an immutable file is opened anew
        self._retired: list[sa.Engine] = []
        self._local = threading.local()
        self._all: dict[Any, threading.Thread] = {}  # each connection handed out: its thread
        self._lock = threading.Lock()
        self._closed = False
        self._stopped: set[int] = set()  # threads whose long job a close from inside stops
        self.opened_in = os.getpid()  # the process; a forked child may not use them
        self._uses: dict[int, int] = {}  # thread id → transactions under way (close waits)
        self._uses_changed = threading.Condition()
        self._queue = write_queue_for(path)
        self._process_lock = process_lock_for(path)

    def _engine(self, access: Access) -> sa.Engine:
        """An engine whose connections open the file with ``access``."""
        module = self.module
        options: dict[str, Any] = {"check_same_thread": False, "isolation_level": None}
        if access != "rw":  # a file URI: SQLite itself refuses every write
            uri = f"file:{_uri_path(self.path)}?mode=ro"
            if access == "immutable":
                uri += "&immutable=1"
            options.update(uri=True)
            database = uri
        else:
            database = str(self.path)

        def connect() -> Any:
            if access == "rw" and self._identity is not None:  # never make the file anew:
                again = f"file:{_uri_path(self.path)}?mode=rw"  # (it may have been deleted)
                return module.connect(again, **options, uri=True)
            conn = module.connect(database, **options)
            if self._identity is None:
                with contextlib.suppress(OSError):  # (not told: the first write tells it)
                    self._identity = _identity(self.path)
            return conn

        engine = sa.create_engine(
            "sqlite://",
            module=module,
            creator=connect,
            poolclass=QueuePool,
            pool_size=self._pool_size,
            max_overflow=-1,  # each thread keeps one while it lives: any number of threads
            pool_timeout=30,
        )
        event.listen(
            engine,
            "connect",
            functools.partial(
                _on_connect, cache_mb=self._cache_mb, busy_ms=self._busy_ms, salvage=self._salvage
            ),
        )
        return engine

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._closed

    @property
    def read_only(self) -> bool:
        """Whether the file was opened read-only (every write raises :class:`.ReadOnlyDatabase`)."""
        return self.access != "rw"

    def refuse_writes(self) -> None:
        """Raise :class:`.ReadOnlyDatabase` when the file was opened read-only, and a
        :class:`.StoreError` when it has been closed (before a caller embeds anything)."""
        if self._closed:
            raise MemoryClosed(CLOSED)
        self.refuse_if_stopped()
        same_process(self.opened_in, self.path)
        if self.read_only:
            why = f" ({self._why})" if self._why else ""
            raise ReadOnlyDatabase(
                f"{self.path} is open read-only{why}, so nothing can be written to it "
                "(adding, deleting, feedback, sleep and maintenance need it writable)"
            )

    def stop_this_thread(self) -> None:
        """Start no new transaction from this thread (the one under way ends as it would:
        a long job stops at its next one); other threads and the connections carry on
        until :meth:`close`."""
        with self._uses_changed:
            self._stopped.add(threading.get_ident())

    def refuse_if_stopped(self) -> None:
        """A :class:`.MemoryClosed` in a thread :meth:`stop_this_thread` stopped (a long job
        that reads in one transaction checks this between its batches)."""
        if threading.get_ident() in self._stopped:
            raise MemoryClosed(CLOSED)

    @contextmanager
    def in_use(self) -> Iterator[None]:
        """Mark a use of the connections by this thread: :meth:`close` waits for it to end,
        and none starts once it is called (nor in a thread :meth:`stop_this_thread`
        stopped), but inside a use of the same thread under way (a :class:`.StoreError`
        says it was closed)."""
        me = threading.get_ident()
        with self._uses_changed:
            if (self._closed or me in self._stopped) and me not in self._uses:
                raise MemoryClosed(CLOSED)  # (a use inside one under way goes on)
            self._uses[me] = self._uses.get(me, 0) + 1
        try:
            yield
        finally:
            with self._uses_changed:
                if self._uses[me] == 1:
                    del self._uses[me]
                else:
                    self._uses[me] -= 1
                self._uses_changed.notify_all()

    def probe(self) -> None:
        """Read the schema once, so that a file this process cannot read fails here, with
        a clear error: a :class:`.ReadOnlyDatabase` for a read-only open whose file has
        changes in its ``-wal`` that need a ``-shm`` index this process cannot make."""
        try:
            with self.read() as cur:
                cur.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except StoreError as exc:
            wal, shm = Path(self._wal), Path(self._shm)
            if self.access == "ro" and _pending(wal) and not shm.exists():
                raise ReadOnlyDatabase(
                    f"{self.path} has changes in its write-ahead log ({wal.name}) that SQLite "
                    f"reads only through a {shm.name} index, which this process cannot make "
                    f"({exc}): open the file writable once (that folds the log in), or copy it "
                    f"with its {wal.name} into a folder this process can write"
                ) from exc
            raise

    def get(self) -> Any:
        """This thread's DB-API connection (checked out of the pool on first use)."""
        same_process(self.opened_in, self.path)
        conn = getattr(self._local, "conn", None)
        if (
            conn is not None
            and self._local.generation != self._generation
            and not conn.driver_connection.in_transaction
        ):
            self._forget(conn)  # it reads the file as it was when opened immutable
            conn = None
        if conn is None:
            if self._closed:
                raise MemoryClosed(CLOSED)
            self._return_orphans()
            try:
                conn = self.engine.raw_connection()
            except self.module.DatabaseError as exc:  # a PRAGMA of the connect hook failed
                lost = self._lost_since_open()
                if lost is not None:
                    raise lost from exc
                with self._lock:
                    held = len(self._all)
                if "unable to open" in str(exc) and (held >= 64 or _out_of_descriptors()):
                    raise StoreError(
                        f"cannot open another connection to {self.path} ({exc}): this process "
                        f"is out of file descriptors; it holds {held} connections to the file, "
                        "one for each live thread that used the memory, and each takes two; "
                        "use fewer threads (a pool), or raise the limit on open files"
                    ) from exc
                changed = self._changed_under_us(exc)
                if changed is None and "unable to open" in str(exc):  # (it names no file)
                    raise StoreError(f"cannot open {self.path}: {exc}") from exc
                raise (
                    changed or _damaged(exc, self.path) or translate_error(exc, path=self.path)
                ) from _cause(exc)
            except sa.exc.TimeoutError as exc:
                raise DatabaseLocked(
                    f"every connection to {self.path} is held by another thread of this "
                    f"process ({exc})"
                ) from exc
            lost = self._lost_since_open()
            if lost is not None:  # (it would read another file, or one no longer there)
                conn.invalidate()
                raise lost
            self._local.conn = conn
            self._local.generation = self._generation
            with self._lock:
                self._all[conn] = threading.current_thread()
        return conn

    def _return_orphans(self) -> None:
        """Give back to the pool the connections of threads that have ended (a server that
        runs each request in a new thread would otherwise use the pool up)."""
        with self._lock:
            orphans = [c for c, t in self._all.items() if not t.is_alive()]
            for conn in orphans:
                del self._all[conn]
        for conn in orphans:
            try:
                conn.close()  # back to its pool (rolled back first), or closed
            except self.module.Error:
                continue

    def _forget(self, conn: Any) -> None:
        """Close this thread's connection for good (it is taken out of its pool)."""
        with self._lock:
            self._all.pop(conn, None)
        conn.invalidate()
        self._local.conn = None

    def _follow_writers(self) -> None:
        """For a file opened ``immutable``: when a writer has changed the file or opened it
        since, open it anew as it now is (``mode=ro`` through the writer's ``-shm``, or
        ``immutable`` again when the writer has closed it). Each thread takes a connection
        of the new kind at its next read; one inside a read keeps its snapshot (and does
        not look)."""
        held = getattr(self._local, "conn", None)
        if held is not None and held.driver_connection.in_transaction:
            return
        if self.access != "immutable" or not self._moved():
            return
        with self._lock:
            if self.access != "immutable" or not self._moved() or self._closed:
                return
            access = read_only_access(self.path)
            self._retired.append(self.engine)
            self.engine = self._engine(access)
            self.access = access
            self._stamp = _stamp(self.path) if access == "immutable" else None
            self._generation += 1
        if access == "ro":
            self.probe()  # a log that cannot be read from here: say so once, clearly

    def _moved(self) -> bool:
        """Whether the file opened ``immutable`` was written since, or a writer has it open
        (:func:`read_only_access`, with the paths made once: this runs at every read)."""
        return _stamp(self.path) != self._stamp or _writer_signs(self._shm, self._wal)

    @contextmanager
    def read(self) -> Iterator[Any]:
        """A cursor inside a read transaction: every statement sees one snapshot.

        Any error rolls the transaction back; SQLite's errors reach the caller
        as :class:`.StoreError`.
        """
        with self.in_use():
            self._follow_writers()
            conn = self.get()
            cur = conn.cursor()
            if conn.driver_connection.in_transaction:
                yield cur
                return
            stamp = self._stamp  # None unless the file is read immutable
            try:
                with self._rolled_back_on_error(cur):
                    cur.execute("BEGIN")
                    yield cur
                    cur.execute("COMMIT")
            except self.module.Error as exc:
                raise self._store_error(exc) from _cause(exc)
            except Exception as exc:  # a torn row may not even decode (bad JSON, …)
                torn = self._changed_under_us(exc, stamp)
                if torn is None:
                    raise
                raise torn from exc
            if stamp is not None:  # read immutable: what it read may be torn
                changed = self._changed_under_us(RuntimeError("the file changed"), stamp)
                if changed is not None:
                    raise changed

    @contextmanager
    def write(self, *, wait_s: float | None = None) -> Iterator[Any]:
        """A cursor inside ``BEGIN IMMEDIATE`` … ``COMMIT``; any error rolls everything back.

        The threads of this process take their turns in arrival order
        (:mod:`.write_queue`), then the processes on the lock file
        (:mod:`.process_lock`), so a writer in a loop cannot keep a single
        write of another thread or process waiting. ``wait_s`` bounds the
        whole wait for the lock: in the queue, on the lock file, then in
        SQLite's busy handler for writers that use no lock file (default: the
        busy timeout, ``write_wait_s``: 10 s by default); past it the write fails with
        :class:`.DatabaseLocked`. SQLite's errors reach the caller as
        :class:`.StoreError`, once the locks are released.
        """
        self.refuse_writes()
        with self.in_use():
            conn = self.get()
            cur = conn.cursor()
            if conn.driver_connection.in_transaction:
                raise StoreError("nested write transaction")
            try:
                with self._writers_turn(wait_s) as left_ms:
                    with self._queue.waiting_for("another writer"):  # one with no lock file
                        _waiting(cur, "BEGIN IMMEDIATE", left_ms, self._busy_ms)
                    with self._queue.in_transaction(), self._rolled_back_on_error(cur):
                        self._check_same_file()
                        yield cur
                        cur.execute("COMMIT")
            except self.module.Error as exc:
                raise self._store_error(exc) from _cause(exc)

    def _check_same_file(self) -> None:
        """A :class:`.StoreError` when the file at the path is no longer the one this memory
        opened (deleted, or another moved in its place): a write would go to a file that
        no one can open again, and be lost when the memory closes. A file whose identity
        cannot be told (a stat refused, EACCES, or failed, EIO) is written as before: it is
        not gone, and a disk that fails says so in the write's own error."""
        try:
            now = _identity(self.path)
        except OSError:
            return
        if self._identity is None:
            self._identity = now  # (a connection made before the file was: the first write)
        if now is None or now != self._identity:
            raise self._lost(now, "nothing was written to it")

    def _lost_since_open(self) -> StoreError | None:
        """The error for a thread about to take a connection when the file at the path is
        no longer the one this memory opened (deleted or moved; for a writable memory,
        replaced too): a new connection cannot read the file the others have open, so the
        thread says so rather than "unable to open database file". None otherwise (a
        read-only memory follows a file put in its place: :meth:`_follow_writers`; one whose
        identity cannot be told: the connection is made, or fails in its own words)."""
        if self._identity is None:  # (not opened yet)
            return None
        try:
            now = _identity(self.path)
        except OSError:
            return None
        if now == self._identity or (now is not None and self.access != "rw"):
            return None
        if self.access != "rw":  # (its connections follow the file: they read no more)
            return self._lost(now, "a new connection would not read it")
        return self._lost(
            now,
            "a new connection would not read it (a new thread needs one, as may a "
            "retrieval's searches; those already open read it as it was)",
        )

    def _lost(self, now: tuple[int, int] | None, outcome: str) -> StoreError:
        """The :class:`.StoreError` for the file at the path found deleted or moved (``now``
        None) or replaced since this memory opened it, with what that meant (``outcome``:
        "nothing was written to it")."""
        what = "deleted or moved" if now is None else "replaced by another file"
        return StoreError(
            f"{self.path} was {what} while this memory had it open: {outcome}; close the "
            "memory and open the file again (a copy of what it held is in a backup or an "
            "export, if one was made)"
        )

    def vacuum(self, *, wait_s: float | None = None) -> None:
        """Rebuild the file without its free pages (``VACUUM``), taking the writers' turn
        in this process and on the lock file like :meth:`write` (``VACUUM`` cannot run
        inside a transaction, so it is not one). :class:`.DatabaseLocked` when another
        writer keeps the file past ``wait_s`` (default: the busy timeout); the file is
        then unchanged. Readers do not stop it: in WAL mode they keep their snapshot.
        Its temporary copy of the file goes to a temporary file (SQLite's temp folder:
        ``SQLITE_TMPDIR``, else ``TMPDIR``, else ``/var/tmp`` or ``/tmp``), not to memory
        as the connections' other temporary tables do."""
        self.refuse_writes()
        with self.in_use():
            conn = self.get()
            if conn.driver_connection.in_transaction:
                raise StoreError("cannot compact the file inside a transaction")
            cur = conn.cursor()
            try:
                with self._writers_turn(wait_s) as left_ms:
                    # its copy of the file on disk, through a small cache: not in memory
                    _memory_use(cur, "FILE", VACUUM_CACHE_MB, 0)
                    try:
                        with self._queue.in_transaction():  # (VACUUM is one of its own)
                            _waiting(cur, "VACUUM", left_ms, self._busy_ms)
                    finally:  # (as every connection is made)
                        _memory_use(cur, "MEMORY", self._cache_mb, MMAP_BYTES)
            except self.module.Error as exc:
                raise self._store_error(exc) from _cause(exc)
            finally:
                cur.close()

    def truncate_log(self) -> bool:
        """Checkpoint the write-ahead log into the file and empty it, in the writers' turn
        and waiting for no reader: False when a reader's snapshot (of any process) or a
        full disk kept it from being emptied. (A checkpoint that waited for readers would
        hold every writer off meanwhile.)"""
        with self.in_use():
            cur = self.get().cursor()
            try:
                with self._writers_turn(None):
                    cur.execute(f"PRAGMA busy_timeout = {_CHECKPOINT_WAIT_MS}")
                    try:  # (busy, log frames, checkpointed frames)
                        return not cur.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
                    finally:
                        cur.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            except DatabaseLocked:  # other writers kept the turn for the whole wait
                return False
            except self.module.OperationalError as exc:
                error = self._store_error(exc)
                if isinstance(error, (DatabaseLocked, DiskError)):
                    return False  # (the log stays as it is)
                raise error from _cause(exc)
            finally:
                cur.close()

    @contextmanager
    def writers_turn(self, *, wait_s: float | None = None) -> Iterator[None]:
        """Hold the writers' turn (this process's queue, then the lock file) without a
        transaction, for set-up that is not one: switching a new file to WAL, then its
        migrations. :class:`.DatabaseLocked` past ``wait_s`` (default: the busy timeout)."""
        self.refuse_writes()
        with self._writers_turn(wait_s):
            yield

    @contextmanager
    def _writers_turn(self, wait_s: float | None) -> Iterator[int]:
        """Hold this process's writer queue, then the lock file; yield the milliseconds
        left of the ``wait_s`` wait (default: the busy timeout) for SQLite's own lock.
        The threads queued behind learn that this one waits for another process meanwhile
        (:meth:`.WriteQueue.waiting_for`)."""
        whole = self._busy_ms / 1000 if wait_s is None else wait_s
        deadline = time.monotonic() + whole
        with self._queue.turn(deadline - time.monotonic()), ExitStack() as held:
            with self._queue.waiting_for("another process"):
                held.enter_context(
                    self._process_lock.held(deadline - time.monotonic(), wait_s=whole)
                )
            yield max(0, int((deadline - time.monotonic()) * 1000))

    @contextmanager
    def _rolled_back_on_error(self, cur: Any) -> Iterator[None]:
        """Roll the transaction back when the body (or its COMMIT) raises."""
        try:
            yield
        except BaseException:
            self._end_quietly(cur)
            raise

    def _store_error(self, exc: Exception) -> StoreError:
        """The memengine error for an SQLite error raised inside a transaction.

        A damaged page can surface as any error of whatever reads it (sqlite-vec
        says "vectors blob read error", FTS5 "vtable constructor failed"), so an
        error that is not a known kind, or an I/O error (a :class:`.DiskFull` told
        from one too), runs SQLite's page check before it is reported: a file that
        fails it is reported as damaged.
        """
        changed = self._changed_under_us(exc)
        if changed is not None:
            return changed
        known = _damaged(exc, self.path)
        if known is not None:
            return known
        if isinstance(
            exc,
            self.module.IntegrityError | self.module.ProgrammingError | self.module.InterfaceError,
        ):
            return StoreError(str(exc))
        error = translate_error(exc, path=self.path)
        if type(error) is StoreError or (isinstance(error, DiskError) and "I/O" in str(exc)):
            check = self.check_pages()  # (a full disk told by an I/O error may be damage)
            unread = isinstance(error, DiskFull) and ("I/O" in check or "disk is full" in check)
            if _fails(check) and not unread:  # (a check the full disk stopped says nothing)
                return damaged_error(str(exc), self.path)
        forked = forked_write_reason(self.path)
        if isinstance(error, DatabaseLocked) and forked is not None:
            return DatabaseLocked(f"{error}; {forked}")
        return error

    def _changed_under_us(
        self, exc: Exception, stamp: tuple[int, int] | None = None
    ) -> StoreError | None:
        """For a file opened ``immutable`` that a writer has changed since (since ``stamp``,
        by default the one taken when it was opened so), the error that says so (SQLite
        reads it as damaged); None otherwise."""
        stamp = stamp or self._stamp
        if stamp is None or _stamp(self.path) == stamp:
            return None
        return StoreError(
            f"{self.path} was changed by a writer during a read without locks (immutable, "
            f"as no writer had it open when the read began): the next read sees it as it "
            f"now is ({not_utf8(exc) or exc})"
        )

    def check_pages(self) -> str:
        """SQLite's ``quick_check`` of every page, table and index: "ok", or what it found
        (at most 20 problems), or the error that stopped it."""
        with self.in_use():
            self._follow_writers()  # an immutable file a writer changed: check it as it is
            conn = self.get()
            cur = conn.cursor()
            own = not conn.driver_connection.in_transaction
            try:
                if own:
                    cur.execute("BEGIN")
                self._refresh_fulltext(cur)
                return "; ".join(str(r[0]) for r in cur.execute("PRAGMA quick_check(20)"))
            except self.module.DatabaseError as exc:
                return str(exc)
            finally:
                if own:
                    self._end_quietly(cur)
                cur.close()

    def _refresh_fulltext(self, cur: Any) -> None:
        """Have each FTS5 table read its index structure in this transaction: the page check
        runs FTS5's own check, which uses the structure this connection read last, and
        calls a sound index damaged when other connections have written since."""
        tables = cur.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING fts5%'"
        ).fetchall()
        for (name,) in tables:
            quoted = '"' + str(name).replace('"', '""') + '"'
            try:
                cur.execute(
                    f"SELECT 1 FROM {quoted} WHERE {quoted} MATCH '\"x\"' LIMIT 1"
                ).fetchall()
            except self.module.DatabaseError:
                continue  # a damaged index: the page check says so

    def _end_quietly(self, cur: Any) -> None:
        """Roll back after an error; the error being raised matters, not this one's."""
        try:
            cur.execute("ROLLBACK")
        except self.module.Error:  # e.g. no transaction left, or the file is damaged
            return

    def close(self, *, wait_s: float = 60.0) -> None:
        """Wait for the transactions under way in other threads (at most ``wait_s``; past
        it a :class:`.StoreError`, and nothing is closed), then close every connection and
        dispose of the engine. No transaction starts once it is called."""
        me = threading.get_ident()
        deadline = time.monotonic() + wait_s
        with self._uses_changed:
            self._closed = True
            while others := sum(n for t, n in self._uses.items() if t != me):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreError(
                        f"{others} transactions of other threads still use {self.path} after "
                        f"{wait_s:g} s: it was not closed"
                    )
                self._uses_changed.wait(left)
        with self._lock:
            for conn in self._all:
                try:
                    conn.close()
                except self.module.Error:  # a connection already closed by its thread
                    continue
            self._all.clear()
        self._local = threading.local()
        self.engine.dispose()
        for engine in self._retired:
            engine.dispose()
        self._retired.clear()


def read_only_access(path: Path) -> Access:
    """How to open the file at ``path`` read-only without making anything beside it.

    SQLite reads a file in WAL mode through a ``-shm`` index beside it, and a
    reader makes one (and a ``-wal``) when there is none; in a shared folder
    the writer could then not use them. So: with no ``-shm`` and no changes in
    a ``-wal``, the file holds everything and no writer has it open, and it is
    opened ``immutable`` (nothing is made); with a ``-shm`` (a writer has it
    open, or stopped without closing it) it is read through that index
    (``mode=ro``), and so are changes in a ``-wal`` without a ``-shm``, for which
    SQLite makes the index (:meth:`Connections.probe` says so when it cannot).
    """
    wal, shm = log_files(path)
    return "ro" if _writer_signs(shm, wal) else "immutable"


def _uri_path(path: str | os.PathLike[str]) -> str:
    """``path``, resolved, as the path of an SQLite file URI (its bytes quoted: a name that
    is not UTF-8 keeps them)."""
    return quote(os.fsencode(Path(path).resolve()))


def _identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``; None when there is none (no such file,
    or a folder of its path is none). Any other failure of the stat (EACCES, EIO) is
    raised: the file may well be there, and is not told "deleted or moved"."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return (st.st_dev, st.st_ino)


def _out_of_descriptors() -> bool:
    """Whether this process can open no more files (the limit on open files reached)."""
    try:
        os.close(os.open(os.devnull, os.O_RDONLY))
    except OSError as exc:
        return exc.errno in (errno.EMFILE, errno.ENFILE)
    return False


def log_files(path: str | os.PathLike[str]) -> tuple[str, str]:
    """The ``-wal`` and ``-shm`` files of the database at ``path``: beside the file a link
    names, where SQLite keeps them."""
    real = os.path.realpath(path)
    return f"{real}-wal", f"{real}-shm"


def _writer_signs(shm: str, wal: str) -> bool:
    """Whether a writer has the file open (a ``-shm``) or left changes in its ``-wal``."""
    return os.path.exists(shm) or _pending(wal)


def _pending(wal: Path | str) -> bool:
    """Whether a ``-wal`` file holds changes (a writer's empty one holds none)."""
    try:
        return os.stat(wal).st_size > 0
    except OSError:
        return False


def _stamp(path: Path) -> tuple[int, int] | None:
    """The file's modification time and size (None when it cannot be read)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def _damaged(exc: Exception, path: Path) -> StoreError | None:
    """A clear error for an error that says the file at ``path`` is damaged (None for the
    others)."""
    msg = str(exc)
    if "malformed" in msg or "not a database" in msg:
        return damaged_error(msg, path)
    said = not_utf8(exc)
    if said is not None:  # text memengine wrote, no longer UTF-8 (which row: doctor finds it)
        return damaged_error(f"{said}; `{doctor_command(path)}` names the episodes", path)
    return None


_NOT_UTF8 = lazy_compile(r"Could not decode to UTF-8 column '([^'\n]{1,120})' with text '")
"""The driver's words for a stored text that does not decode; the text follows, quoted."""


def not_utf8(exc: BaseException, episode: int | None = None) -> str | None:
    """What to say of an error that a stored text (of ``episode``, when known) does not
    decode (None for another error): the column the driver names, never the text it
    quotes (a user's memory, which a server's log of the error would keep)."""
    msg = str(exc)
    if "Could not decode to UTF-8" not in msg:
        return None
    found = _NOT_UTF8.match(msg)
    text = "a stored text" if found is None else f"the text in column '{found[1]}'"
    of = "" if episode is None else f" of episode {episode}"
    return f"{text}{of} is no longer UTF-8"


def _cause(exc: BaseException) -> BaseException | None:
    """The cause to chain to the error reported for ``exc``: none for one that quotes a
    stored text (a log prints the chain), ``exc`` itself for the others."""
    return None if not_utf8(exc) is not None else exc


def _fails(check: str) -> bool:
    """Whether a :meth:`Connections.check_pages` result says the file is damaged (a check
    that could not run for a lock says nothing)."""
    return check != "ok" and "locked" not in check and "busy" not in check


def damaged_error(msg: str, path: str | os.PathLike[str] | None) -> DamagedDatabase:
    """The error for the file at ``path`` found damaged (``msg`` says how), naming the way
    out: a backup, or the salvage of every agent's episodes that still read from it."""
    return DamagedDatabase(
        f"the database file is damaged ({msg}): restore a backup, or save what still "
        f"reads with `{salvage_command(path)}` (and import it into a new file)"
    )


def file_of(cur: Any) -> Path | None:
    """The file the connection behind ``cur`` has open, as the bytes SQLite opened
    (None for a memory database, or when SQLite cannot say), for a message that names it."""
    try:
        row = cur.execute(
            "SELECT CAST(file AS BLOB) FROM pragma_database_list WHERE name = 'main'"
        ).fetchone()
    except Exception:  # (a message's detail: never the error itself)
        return None
    return Path(os.fsdecode(row[0])) if row and row[0] else None


_CHECKPOINT_WAIT_MS = 50
"""How long a checkpoint that empties the log waits for readers to move on."""


def _memory_use(cur: Any, temp_store: str, cache_mb: int, mmap_bytes: int) -> None:
    """Where a connection keeps its temporary tables (``MEMORY`` or ``FILE``), its page
    cache (MiB) and its memory map (bytes)."""
    cur.execute(f"PRAGMA temp_store = {temp_store}")
    cur.execute(f"PRAGMA cache_size = {-1024 * int(cache_mb)}")  # negative: in KiB
    cur.execute(f"PRAGMA mmap_size = {int(mmap_bytes)}")


def _waiting(cur: Any, sql: str, wait_ms: int, usual_ms: int) -> None:
    """Run ``sql`` with SQLite's busy handler waiting at most ``wait_ms`` for the lock (then
    ``usual_ms`` again)."""
    cur.execute(f"PRAGMA busy_timeout = {wait_ms}")
    try:
        cur.execute(sql)
    finally:
        cur.execute(f"PRAGMA busy_timeout = {usual_ms}")


def translate_error(
    exc: Exception, where: object = None, *, path: str | os.PathLike[str] | None = None
) -> StoreError:
    """The library's error for an SQLite error ``exc`` (read-only, locked, a full or failing
    disk, else a plain :class:`.StoreError`), its message led by ``where`` when given.
    ``path`` is the file written: an I/O error of a write that needs room, where its disk
    has next to no room left, is a full disk (:func:`disk_error`)."""
    msg = str(exc) if where is None else f"{where}: {exc}"
    if "readonly" in msg or "read-only" in msg:
        return ReadOnlyDatabase(f"the database is read-only: {msg}")
    if "locked" in msg or "busy" in msg:
        return DatabaseLocked(f"{msg}: another writer held it for the whole wait ({LONGER_WAIT})")
    if "disk is full" in msg:  # SQLITE_FULL
        return DiskFull(f"{msg}: nothing of this write is in the file; free some space")
    if "disk I/O error" in msg:  # the disk failed a read or write; the file may be whole
        folder = None if path is None else Path(os.path.abspath(path)).parent
        name = getattr(exc, "sqlite_errorname", None)  # (Python 3.11: SQLITE_IOERR_SHMSIZE, …)
        return disk_error(msg, folder, free_bytes(folder), name)
    return StoreError(msg)


DOCTOR_CHECKS = "`memengine doctor` checks whether the file is damaged"
"""The end of a :class:`.DiskError`'s message (``memengine doctor`` leaves it out of its own)."""

LOW_SPACE_BYTES = 8 * 2**20
"""Free space below which an I/O error of a write that needs room (:data:`_NEEDS_ROOM`) is
taken for a full disk. SQLite says "disk is full" only when a write into the file or its
``-wal`` finds no room; one that makes or grows the ``-shm`` index (which a ``-wal`` left
with changes needs at the next open) reports an I/O error instead, and so does a flush
the disk cannot place. Each needs far less."""

NO_ROOM_ERRNOS = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})
"""What a write fails with when the disk or a quota has no room for it: a :class:`.DiskFull`,
which freeing some space mends. A file past a limit on its size (``EFBIG``, "File too
large") is not one: SQLite reports it as a "disk I/O error", so it is a :class:`.DiskError`
wherever it is met, saying which limit (:func:`size_limit`)."""


def file_size_limit() -> int | None:
    """The largest file in bytes this process may write (``ulimit -f``, which a shell counts
    in blocks of 1,024 bytes), or None when it has no such limit (and on Windows)."""
    try:
        import resource
    except ImportError:  # (Windows)
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def size_limit(*, reached: bool = False) -> str:
    """The limit on the size of files a write may have run into, as a message names it:
    this process's with its bytes when it has one ("this process's `ulimit -f` of 100,000
    bytes on the size of files"), else the file system's when the write was refused
    for it (``reached``: ``EFBIG``), else "a limit on the size of files" (SQLite's "disk I/O
    error" does not say which failure it was)."""
    limit = file_size_limit()
    if limit is not None:
        return f"this process's `ulimit -f` of {limit:,} bytes on the size of files"
    if reached:
        return "the file system's limit on the size of a file"
    return "a limit on the size of files"


def past_size_limit(elsewhere: str) -> str:
    """What a write refused with ``EFBIG`` ("File too large") says after the OS's words: the
    file reached a limit on its size (:func:`size_limit`), which no space freed lifts, and
    the way on: raise this process's limit, or where it is the file system's, ``elsewhere``
    ("give a target on another file system")."""
    way = "raise it" if file_size_limit() is not None else elsewhere
    return f"the file reached {size_limit(reached=True)}, not a full disk; {way}"


_NEEDS_ROOM = frozenset(
    {"SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_SHMOPEN", "SQLITE_IOERR_SHMSIZE"}
)
"""SQLite's extended codes of an I/O error that a disk with no room causes: a write that
finds none, a flush of data the disk had not placed yet, the ``-shm`` made or grown. A
failed read, lock, stat or map (SQLITE_IOERR_READ, _LOCK, _FSTAT, _MMAP, _CORRUPTFS) is
none, whatever room is left."""


def mounted_read_only(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is on a file system mounted read-only (a read-only bind mount, a
    CD; False when it cannot be told: no ``statvfs`` on Windows, or no such folder)."""
    try:
        return hasattr(os, "statvfs") and bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def free_bytes(folder: str | os.PathLike[str] | None) -> int | None:
    """The bytes a process without privileges can still write on the disk of ``folder``
    (None when there is no folder, it cannot be told, or its file system is mounted
    read-only: it reports no room, and wants none)."""
    if folder is None or mounted_read_only(folder):
        return None
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def disk_error(
    msg: str, folder: str | os.PathLike[str] | None, free: int | None, errorname: str | None
) -> DiskError:
    """The error for SQLite's "disk I/O error" ``msg`` (``errorname``: its extended code,
    when the driver gives it) on the disk of ``folder``, which has ``free`` bytes left: a
    :class:`.DiskFull` when that is next to nothing (under :data:`LOW_SPACE_BYTES`) and the
    error is one of a write that needs room (:data:`_NEEDS_ROOM`); a :class:`.DiskError`
    that says the disk may be full when the code is not told (Python 3.10's driver tells
    none); else a :class:`.DiskError`, a failing disk or a limit on file sizes."""
    told = errorname not in (None, "", "SQLITE_IOERR")
    if told:
        msg = f"{msg} ({errorname})"
    if free is not None and free < LOW_SPACE_BYTES:
        room = (
            f"({free / 2**20:.1f} MiB free: too little for the files SQLite keeps beside the "
            "database, its -wal and -shm)"
        )
        if errorname in _NEEDS_ROOM:
            return DiskFull(f"{msg}: the disk holding {folder} is full {room}; free some space")
        if not told:
            return DiskError(
                f"{msg}: the disk holding {folder} may be full {room}: free some space, and "
                f"if the error stays, the disk failed a read or write; {DOCTOR_CHECKS}"
            )
    return DiskError(
        f"{msg}: the disk failed a read or write (a failing disk, or {size_limit()}); "
        f"{DOCTOR_CHECKS}"
    )
