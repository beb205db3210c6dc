"""Maintenance: merge the full-text index after bulk writes, copy the file (backup),
compact it and empty its write-ahead log.

FTS5 writes a new segment for every statement that adds rows and merges
them only part of the way as it goes (``automerge``): a file built by many
batches keeps a dozen or more segments, and every term lookup then reads
each of them (one b-tree descent per segment, cold or warm). The merge
rewrites the whole full-text index, so it belongs after a bulk load, not
after each turn. It runs in steps of :data:`MERGE_PAGES` pages, each in its
own short write transaction, so other writers wait for one step at most.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

from ..errors import DatabaseLocked, DiskError, DiskFull, InvalidInput, StoreError
from .connect import (
    NO_ROOM_ERRNOS,
    Connections,
    past_size_limit,
    size_limit,
    translate_error,
)

__all__ = [
    "MAX_STEPS",
    "MERGE_PAGES",
    "BackupReport",
    "OptimizeReport",
    "backup",
    "backup_error",
    "backup_into",
    "check_backup_target",
    "compact",
    "deferred_merges",
    "file_bytes",
    "free_share",
    "fts_segments",
    "merge_budget",
    "merge_step",
    "not_compacted",
    "partial_path",
    "put_in_place",
    "remove_stale_partials",
    "secure_deletes",
    "sync_file",
    "truncate_wal",
    "vacuum",
]

MERGE_PAGES = 2000
"""Full-text pages merged per write transaction (about 8 MB; a fraction of a second)."""

MAX_STEPS = 100_000
"""A bound on the steps of one merge (other writers keep adding segments meanwhile)."""


@dataclass(frozen=True)
class OptimizeReport:
    """What :meth:`Store.optimize` did.

    Full-text segments before and after, the write transactions the merge
    took, its seconds, and whether the WAL could be truncated afterwards
    (not while another connection is reading); the rows per vector chunk
    after it, how many vectors were rewritten to get there (0 unless asked
    and the table had another layout) and whether the file was then
    compacted (``VACUUM``; not while another writer keeps it busy); the
    file's bytes (with its WAL) before and after; with ``scrub``, how many
    turns' neighbour words were linked again under the current rule.
    """

    segments_before: int
    segments_after: int
    steps: int
    seconds: float
    wal_truncated: bool
    vector_chunk_size: int
    vectors_rewritten: int = 0
    vacuumed: bool = False
    bytes_before: int = 0
    bytes_after: int = 0
    contexts_relinked: int = 0
    not_compacted: str = ""
    """Why a compaction that was tried did not happen ("" when it did, or was not tried)."""


def fts_segments(cur: Any) -> int:
    """The number of segments in the full-text index (a term lookup probes each one)."""
    return int(cur.execute("SELECT count(DISTINCT segid) FROM episodes_fts_idx").fetchone()[0])


BULK_ROWS = 256
"""Rows from which a write leaves the full-text merge to later (:func:`deferred_merges`):
``Memory.add_many``'s batch."""

_AUTOMERGE = 4
"""FTS5's ``automerge`` when the file sets none."""


@contextlib.contextmanager
def deferred_merges(cur: Any, rows: int) -> Iterator[None]:
    """Inside the caller's write transaction: for a write of at least :data:`BULK_ROWS`
    rows, FTS5's ``automerge`` is off while it runs and set back before it commits.

    Each statement that writes the full-text index flushes a new segment, and
    with ``automerge`` on FTS5 then merges segments as it goes: in the bench's
    batches of 2,000 that merge was about an eighth of ``Store.add``'s CPU, for
    segments a bulk load's ``optimize`` rewrites anyway. Off, only FTS5's
    ``crisismerge`` (16 segments on a level) merges, so the segments stay
    bounded, and the writes after it merge as before. The setting is written in
    the transaction (a crash or an error leaves the file's own), and set back
    to the file's value (FTS5's default, 4, when it names none).
    """
    if rows < BULK_ROWS:
        yield
        return
    row = cur.execute("SELECT v FROM episodes_fts_config WHERE k = 'automerge'").fetchone()
    was = _AUTOMERGE if row is None else int(row[0])
    if was == 0:
        yield
        return
    cur.execute("INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('automerge', 0)")
    yield
    cur.execute("INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('automerge', ?)", (was,))


def merge_budget(cur: Any, pages: int = MERGE_PAGES) -> int:
    """The most merge steps an ``optimize`` takes: four times what merging the index's
    pages as they are now needs (a writer's new segments make the merge go on), at least
    64, at most :data:`MAX_STEPS`."""
    blocks = int(cur.execute("SELECT count(*) FROM episodes_fts_data").fetchone()[0])
    return min(MAX_STEPS, max(64, 4 * -(-blocks // max(1, pages))))


def merge_step(cur: Any, pages: int = MERGE_PAGES) -> bool:
    """One step of the full-text merge (inside the caller's write transaction); True when
    there was nothing left to merge.

    FTS5's ``merge`` with a negative page count first puts every segment on one
    level (unless they already are, or all but one are being merged), then
    merges up to that many pages with no minimum segment count: repeated, it
    is ``optimize`` in steps, and a segment another writer adds between two
    steps joins the merge.
    """
    before = int(cur.execute("SELECT total_changes()").fetchone()[0])
    cur.execute("INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('merge', ?)", (-pages,))
    return int(cur.execute("SELECT total_changes()").fetchone()[0]) - before < 2


@dataclass(frozen=True)
class BackupReport:
    """What :meth:`Store.backup` wrote: the copy's path, size, episodes and seconds."""

    path: Path
    bytes: int
    episodes: int
    seconds: float


@dataclass(frozen=True)
class ForgetReport:
    """What :meth:`Store.forget_agent` deleted; whether the file was compacted (not when
    other writers kept it busy past the wait, or the disk was full) and its write-ahead log
    emptied (not while another connection reads): until both, copies of what was deleted
    may remain in them (``memengine optimize --scrub`` compacts them later)."""

    agent: str
    episodes: int
    turns: int
    vacuumed: bool
    wal_truncated: bool
    not_compacted: str = ""
    """Why the file was not compacted ("" when it was)."""


def refuse_own_files(database: Path, dest: Path, verb: str) -> None:
    """InvalidInput when ``dest`` is the database file or one of its own (``-wal``,
    ``-shm``, ``-journal``, ``-lock``), under any name: writing it would destroy the data."""
    real, own = os.path.realpath(dest), os.path.realpath(database)
    if real == own or _same_file(dest, database):
        raise InvalidInput(f"{dest} is the database itself: {verb} to another file")
    sides = [own + side for side in ("-wal", "-shm", "-journal", "-lock")]
    if real in sides or any(_same_file(dest, Path(side)) for side in sides):
        raise InvalidInput(f"{dest} is one of the database's own files: {verb} to another file")


def check_backup_target(source: Path, dest: Path, *, overwrite: bool) -> None:
    """Refuse a backup target that would lose data or could not be written, with the reason."""
    refuse_own_files(source, dest, "back up")
    if dest.is_dir():
        raise InvalidInput(f"{dest} is a folder: give the backup's file name")
    if dest.exists() and not dest.is_file():  # replaced, /dev/full would become a file
        raise InvalidInput(
            f"{dest} is not a regular file (a device, a pipe or a socket): a backup is a "
            "database file, so give a file's name"
        )
    if not dest.parent.is_dir():
        raise InvalidInput(f"folder {dest.parent} does not exist")
    if os.path.lexists(dest) and not overwrite:
        raise _taken(dest)
    for side in ("-wal", "-journal"):
        try:
            beside = Path(f"{dest}{side}").exists()
        except OSError as exc:  # ENAMETOOLONG: the name leaves no room for SQLite's own
            raise InvalidInput(
                f"{dest.name[:40]}…: the name is too long for the files SQLite keeps beside "
                f"a database ({side}: {exc.strerror}); give a shorter one"
            ) from exc
        if beside:
            raise InvalidInput(
                f"{dest}{side} exists: {dest} is open or was not closed cleanly, so it "
                "cannot be replaced (that log would be applied to the new copy)"
            )


def _same_file(a: Path, b: Path) -> bool:
    """Whether both paths name one existing file (``M.DB-WAL`` and ``m.db-wal`` on a file
    system that ignores case, as macOS's and Windows' do by default)."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # either is missing: not one file
        return False


def backup_into(cur: Any, dest: Path) -> None:
    """Write a consistent, compacted copy of the database to ``dest`` (a new file).

    ``VACUUM INTO`` copies one read snapshot: writers go on meanwhile and
    none of their later commits (nor anything uncommitted) is in the copy.
    Virtual tables are copied as their definitions and shadow tables, so the
    copy holds the vectors and the full-text index as they are. The name is given
    as its bytes (a text SQLite does not check): a name in the bytes of a non-UTF-8
    locale (``LC_ALL=C``) is the file the user named, as :func:`os.open` would make it.
    """
    cur.execute("VACUUM INTO CAST(? AS TEXT)", [os.fsencode(dest)])


def backup_error(exc: Exception, target: Path) -> StoreError:
    """The error of a backup to ``target`` that failed with ``exc`` (SQLite's or the OS's),
    naming the target: a :class:`.DiskFull` when the disk (or a quota) had no room for the
    copy, a :class:`.DiskError` when the disk failed or the copy reached a limit on the size
    of files (``EFBIG``: which one, as :func:`.size_limit` says; freeing space does not
    help), else a :class:`.StoreError`. Nothing was replaced in any case."""
    where = f"backup to {target} failed: {exc}"
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return DiskError(
            f"{where}: {past_size_limit('give a target on another file system')} "
            "(nothing was replaced)"
        )
    if isinstance(exc, OSError):
        full, failed = exc.errno in NO_ROOM_ERRNOS, exc.errno == errno.EIO
    else:
        kind = translate_error(exc, path=target)
        full, failed = isinstance(kind, DiskFull), isinstance(kind, DiskError)
    if full:
        return DiskFull(
            f"{where}: no room for the copy in {target.parent} (a full disk, or a quota); "
            "free some space there (nothing was replaced)"
        )
    if failed:
        return DiskError(
            f"{where}: the disk failed a read or write (a failing disk, or {size_limit()}); "
            "nothing was replaced"
        )
    return StoreError(where)


def sync_file(path: Path) -> None:
    """Flush ``path`` (a file, or a folder after a rename in it) to the disk, where the
    platform can; a folder that cannot be opened (Windows) is left to the OS."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems cannot sync a folder
        pass
    finally:
        os.close(fd)


def _taken(dest: Path) -> InvalidInput:
    return InvalidInput(
        f"{dest} exists: choose another name or overwrite it "
        "(overwrite=True; memengine backup --force)"
    )


def put_in_place(partial: Path, dest: Path, *, overwrite: bool) -> None:
    """Move the finished copy ``partial`` to ``dest``. Without ``overwrite`` a file that
    appeared at ``dest`` meanwhile is kept (a hard link fails if the name is taken)."""
    if overwrite:
        os.replace(partial, dest)
        return
    try:
        os.link(partial, dest)
    except FileExistsError as exc:
        raise _taken(dest) from exc
    except OSError:  # no hard links on this file system: check, then rename
        if os.path.lexists(dest):
            raise _taken(dest) from None
        os.replace(partial, dest)
        return
    partial.unlink()


def vacuum(connections: Connections) -> StoreError | None:
    """Compact the file (:meth:`.Connections.vacuum`); None when done, else the error that
    kept it from it (the file is then unchanged): another writer kept it busy for the whole
    wait (:class:`.DatabaseLocked`), or the disk refused the copy (:class:`.DiskError`)."""
    try:
        connections.vacuum()
    except (DatabaseLocked, DiskError) as exc:
        return exc
    return None


def not_compacted(error: StoreError | None) -> str:
    """Why a compaction that :func:`vacuum` tried did not happen ("" when it did)."""
    if error is None:
        return ""
    if isinstance(error, DiskFull):  # (the copy goes to SQLite's temporary folder first)
        return (
            "the disk had no room for the compacted copy (the file's folder, or SQLite's "
            "temporary one: SQLITE_TMPDIR, else TMPDIR, else /var/tmp or /tmp)"
        )
    if isinstance(error, DiskError):
        return "the disk failed a write of the compacted copy"
    return "other writers kept the file busy"


def truncate_wal(connections: Connections) -> bool:
    """Checkpoint the write-ahead log into the file and empty it; False when another
    connection's read kept it from being emptied, or the disk refused the writes
    (:meth:`.Connections.truncate_log`)."""
    return connections.truncate_log()


def free_share(connections: Connections) -> float:
    """The share of the file's pages that are free (left by deleted rows or old chunks)."""
    with connections.read() as cur:
        pages = int(cur.execute("PRAGMA page_count").fetchone()[0])
        free = int(cur.execute("PRAGMA freelist_count").fetchone()[0])
    return free / pages if pages else 0.0


def log_is_empty(path: Path) -> bool:
    """Whether the write-ahead log of the file at ``path`` holds nothing (absent: every
    process closed the file, or of no length)."""
    try:
        return Path(f"{path}-wal").stat().st_size == 0
    except FileNotFoundError:
        return True


def file_bytes(path: Path) -> int:
    """The file's size with its WAL."""
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


PARTIAL = ".partial-"
"""A backup is written as ``.<name>.partial-<random>`` beside its target, then renamed."""

STALE_PARTIAL_S = 3600.0
"""A partial copy untouched this long is left over from a backup that was killed (a
running one writes to its copy all along: the 100,000-episode file copies in 2–3 s)."""


NAME_MAX_BYTES = 255
"""The longest file name (in bytes) of the usual file systems (ext4, APFS, NTFS)."""


def _partial_stem(target: Path) -> str:
    """``.<name>.partial-`` for ``target``, its name cut short (at a character) so that the
    random part that follows, and SQLite's ``-journal`` beside a backup's copy, still fit
    in a file name: any name the OS takes works."""
    name = target.name
    # (12: the random part's hex digits)
    room = NAME_MAX_BYTES - len(f".{PARTIAL}") - 12 - len("-journal")
    while len(os.fsencode(name)) > room:
        name = name[:-1]
    return f".{name}{PARTIAL}"


def partial_path(target: Path) -> Path:
    """A new name beside ``target`` to write its copy under until it is whole
    (``.<name>.partial-<random>``, a long name cut short: what
    :func:`remove_stale_partials` looks for)."""
    return target.with_name(f"{_partial_stem(target)}{secrets.token_hex(6)}")


def remove_stale_partials(target: Path, *, older_than_s: float = STALE_PARTIAL_S) -> list[Path]:
    """Delete the partial copies of earlier backups to ``target`` that were killed before
    they finished (untouched for ``older_than_s``); return what was deleted."""
    removed: list[Path] = []
    cutoff = time.time() - older_than_s
    for leftover in target.parent.glob(f"{glob_escape(_partial_stem(target))}*"):
        try:
            if leftover.is_file() and leftover.stat().st_mtime < cutoff:
                leftover.unlink()
                removed.append(leftover)
        except OSError:  # gone meanwhile, or not ours to delete: leave it
            continue
    return removed


@contextlib.contextmanager
def secure_deletes(cur: Any) -> Iterator[None]:
    """Inside the caller's write transaction: what is deleted is overwritten with zeros
    (SQLite's ``secure_delete``), and the setting is put back afterwards."""
    before = int(cur.execute("PRAGMA secure_delete").fetchone()[0])
    cur.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        cur.execute(f"PRAGMA secure_delete = {before}")


def schema_cookie(connections: Connections) -> int:
    """SQLite's schema cookie of the file (``PRAGMA schema_version``), which a ``VACUUM``
    raises by one (the other connections' statements must be prepared again, their tables'
    pages moved): how a Ctrl-C raised as a compaction returns tells that it was done."""
    with connections.read() as cur:
        return int(cur.execute("PRAGMA schema_version").fetchone()[0])


def compact(connections: Connections) -> tuple[StoreError | None, bool]:
    """Compact the file and empty its log, after a delete meant to leave no copy: what kept
    the file from being compacted (None when it was: :func:`vacuum`), and whether the log
    was emptied (another connection's read, or the disk, can keep either from it)."""
    return vacuum(connections), truncate_wal(connections)


def backup(
    connections: Connections, path: Path, dest: Path, *, overwrite: bool = False
) -> BackupReport:
    """Copy the whole database to ``dest``, consistent while others keep writing.

    The copy is one read snapshot of every table: episodes, vectors, the
    full-text index, usage counters, agents and their perspectives,
    turns and learned scorers. It is written beside ``dest`` under a
    temporary name, flushed to the disk and moved into place when
    complete, so ``dest`` is never half-written; an existing ``dest``
    (even one that appears during the copy) is replaced only with
    ``overwrite``, through a symbolic link to the file it names, and never
    when it is not a regular file.
    """
    t0 = time.perf_counter()
    check_backup_target(path, dest, overwrite=overwrite)
    target = dest
    if dest.is_symlink():  # through it to the file it names, as an export: the link stays
        target = Path(os.path.realpath(dest))
        check_backup_target(path, target, overwrite=overwrite)
    remove_stale_partials(target)
    partial = partial_path(target)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:  # deleted while open: this thread's connection still reads it
        mode = stat.S_IRUSR | stat.S_IWUSR  # (its mode unknown: the copy is private)
    if overwrite and target.is_file():  # (the stricter of the two: a private one stays so)
        mode &= stat.S_IMODE(target.stat().st_mode)
    conn = connections.get()
    if conn.driver_connection.in_transaction:
        raise StoreError("cannot back up inside a transaction")
    module = connections.module
    try:
        with connections.in_use():
            os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode | stat.S_IWUSR))
            cur = conn.cursor()  # (VACUUM INTO fills an empty file: never readable by more)
            try:
                backup_into(cur, partial)
            finally:
                cur.close()
        copy = module.connect(str(partial))
        try:
            episodes = int(copy.execute("SELECT count(*) FROM episodes").fetchone()[0])
        finally:
            copy.close()
        with contextlib.suppress(OSError):  # (a file system without permission bits)
            os.chmod(partial, mode)
        sync_file(partial)
        put_in_place(partial, target, overwrite=overwrite)
        sync_file(target.parent)
    except (module.Error, OSError) as exc:
        raise backup_error(exc, target) from exc
    finally:
        partial.unlink(missing_ok=True)
    return BackupReport(target, target.stat().st_size, episodes, round(time.perf_counter() - t0, 3))
