"""Review 53 of crashes and full disks: a file deleted under an open memory, a disk with no
room for the ``-shm`` a crash's ``-wal`` needs, a backup the disk refuses, and the lock
file of a new database that could not be made."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memengine import (
    DamagedDatabase,
    DatabaseLocked,
    DiskError,
    DiskFull,
    FixedClock,
    Memory,
    StoreError,
)
from memengine.store import connect, process_lock
from memengine.store.connect import (
    DOCTOR_CHECKS,
    LOW_SPACE_BYTES,
    Connections,
    disk_error,
    free_bytes,
    sqlite_module,
    translate_error,
)
from memengine.store.maintenance import backup_error
from memengine.store.process_lock import ProcessLock, lock_path, remove_unused

from .helpers import HashEmbedder, word_episodes

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX limits and locks")

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}

LIMITED = textwrap.dedent(
    """
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[1]), resource.RLIM_INFINITY))
    exec(sys.argv[2])
    """
)
"""Run the code given as the second argument under a limit on file sizes (the first)."""


def limited(limit: int, code: str, *args: str, cwd: Path = ROOT) -> str:
    """Run ``code`` (with ``args`` in ``sys.argv[3:]``) in a new process whose files may
    grow to ``limit`` bytes; return what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, str(limit), textwrap.dedent(code), *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def in_a_new_thread(fn: Callable[[], Any]) -> Any:
    """What ``fn()`` returns or raises in a thread that has not used the memory yet."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn())
        except Exception as exc:  # (handed back to the test)
            out.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    return out[0]


def test_a_read_that_needs_a_new_connection_to_a_deleted_file_says_it_was_deleted(
    db_path: Path, tmp_path: Path, clock: FixedClock
) -> None:
    """A read in a new thread, or an unrecorded retrieval (whose search threads connect on
    first use), failed with "cannot open …: unable to open database file" once the file
    was deleted, while the README promised such reads answered; a backup from a thread
    that reads it (the way to keep what the file held) raised a bare FileNotFoundError."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    first = mem.add_exchange("I like green tea from Kyoto", "nice")
    assert in_a_new_thread(lambda: mem.get(first).user_text) == "I like green tea from Kyoto"
    db_path.unlink()
    assert mem.get(first).user_text == "I like green tea from Kyoto"  # this thread's connection
    assert mem.stats()["episodes"] == 1
    rescued = mem.backup(tmp_path / "rescued.db")  # (it raised a bare FileNotFoundError)
    assert rescued.episodes == 1 and (rescued.path.stat().st_mode & 0o077) == 0
    said = f"{db_path} was deleted or moved while this memory had it open: a new connection"
    with pytest.raises(StoreError, match="close the memory and open the file again") as caught:
        mem.retrieve("green tea?", record=False)
    assert said in str(caught.value)
    fresh = in_a_new_thread(lambda: mem.get(first))
    assert isinstance(fresh, StoreError) and said in str(fresh)
    mem.close()
    assert not db_path.exists()  # (no new empty file made in its place)


def test_a_new_thread_of_a_memory_whose_file_was_replaced_says_so(
    tmp_path: Path, clock: FixedClock
) -> None:
    """A new connection to a file moved in its place read that other file; a read-only
    memory whose file is deleted says so too (rather than "unable to open")."""
    ours, other = tmp_path / "ours.db", tmp_path / "other.db"
    with Memory.open(other, embedder=HashEmbedder(), clock=clock) as m:
        m.add_exchange("my dog is called Pochi", "cute")
    shutil.copy(other, tmp_path / "kept.db")
    mem = Memory.open(ours, embedder=HashEmbedder(), clock=clock)
    first = mem.add_exchange("my cat is called Mochi", "cute")
    os.replace(other, ours)
    assert mem.get(first).user_text == "my cat is called Mochi"
    fresh = in_a_new_thread(lambda: mem.get(first))
    assert isinstance(fresh, StoreError) and "was replaced by another file" in str(fresh)
    mem.close()

    kept = tmp_path / "kept.db"
    reader = Memory.open(kept, embedder=HashEmbedder(), read_only=True)
    assert reader.get(first).user_text == "my dog is called Pochi"
    kept.unlink()
    with pytest.raises(StoreError, match="was deleted or moved while this memory had it open"):
        reader.get(first)
    reader.close()


def test_an_io_error_on_a_disk_with_no_room_left_is_a_full_disk() -> None:
    """SQLite reports a ``-shm`` it cannot make or grow on a full disk as "disk I/O error":
    it was a DiskError whose advice was ``memengine doctor``, which said the same."""
    full = disk_error("disk I/O error", "/data", 0, "SQLITE_IOERR_WRITE")
    assert type(full) is DiskFull and "free some space" in str(full)
    assert "the disk holding /data is full (0.0 MiB free" in str(full)
    assert "doctor" not in str(full)
    shm = disk_error("disk I/O error", "/data", LOW_SPACE_BYTES - 1, "SQLITE_IOERR_SHMSIZE")
    assert type(shm) is DiskFull and "(SQLITE_IOERR_SHMSIZE)" in str(shm)
    for free, name in [
        (LOW_SPACE_BYTES, None),  # room enough: a failing disk, or a limit on file sizes
        (None, None),  # the room could not be told
        (0, "SQLITE_IOERR_READ"),  # no want of room makes a read fail
    ]:
        failed = disk_error("disk I/O error", "/data", free, name)
        assert type(failed) is DiskError and DOCTOR_CHECKS in str(failed)
    error = sqlite_module().OperationalError
    here = free_bytes(ROOT)
    assert here is not None and free_bytes(ROOT / "no such folder") is None
    if here >= LOW_SPACE_BYTES:
        assert type(translate_error(error("disk I/O error"), path=ROOT / "m.db")) is DiskError
    assert type(translate_error(error("database or disk is full"))) is DiskFull
    assert type(translate_error(error("disk I/O error"))) is DiskError  # (no file: no room told)


def test_an_io_error_with_room_left_stays_a_disk_error_that_doctor_does_not_send_to_itself(
    db_path: Path, tmp_path: Path
) -> None:
    """A ``-wal`` with changes and no ``-shm`` (a crash, a copy) under a limit on file sizes
    smaller than the ``-shm``: a real I/O error on a disk with room, so a DiskError, and
    ``memengine doctor`` no longer tells the user to run ``memengine doctor``."""
    here = free_bytes(tmp_path)
    if here is None or here < LOW_SPACE_BYTES:
        pytest.skip("the temporary folder's disk is nearly full itself")
    copy = tmp_path / "copy.db"
    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        mem.add_exchange("I like green tea from Kyoto", "nice")
        shutil.copy(db_path, copy)
        shutil.copy(f"{db_path}-wal", f"{copy}-wal")
    assert Path(f"{copy}-wal").stat().st_size > 0 and not Path(f"{copy}-shm").exists()
    opened = """
        import sys
        from memengine import Memory
        from tests.helpers import HashEmbedder
        try:
            Memory.open(sys.argv[3], embedder=HashEmbedder())
        except Exception as exc:
            print(type(exc).__name__, exc, sep="|")
        """
    kind, said = limited(8000, opened, str(copy)).strip().split("|", 1)
    assert kind == "DiskError" and "disk I/O error" in said
    doctor = """
        import sys
        from memengine.cli import main
        sys.argv[1:] = ["doctor", "--db", sys.argv[3]]
        main()
        """
    env = {k: v for k, v in ENV.items() if not k.startswith("MEMENGINE_")}
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, "8000", textwrap.dedent(doctor), str(copy)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    line = next(x for x in done.stdout.splitlines() if "database:" in x)
    assert line.startswith("FAIL") and "disk I/O error" in line
    assert "memengine doctor" not in line and "copy it, with its -wal, to another disk" in line
    with Memory.open(copy, embedder=HashEmbedder()) as mem:  # no limit: the log's changes read
        assert mem.stats()["episodes"] == 1 and mem.check().ok


def test_a_backup_the_disk_refuses_is_a_disk_error_naming_its_target(
    db_path: Path, tmp_path: Path
) -> None:
    """A backup past the limit on file sizes (as on a full disk) raised a plain StoreError,
    though a write the disk refuses is a DiskError (a DiskFull when it had no room)."""
    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        mem.add_many(word_episodes(3000, "a"))
        mem.optimize()
    target = tmp_path / "copies" / "b.db"
    target.parent.mkdir()
    backed_up = """
        import sys
        from memengine import Memory
        from tests.helpers import HashEmbedder
        with Memory.open(sys.argv[3], embedder=HashEmbedder()) as mem:
            try:
                mem.backup(sys.argv[4])
            except Exception as exc:
                print(type(exc).__name__, isinstance(exc, __import__("memengine").DiskError),
                      exc, sep="|")
        """
    limit = db_path.stat().st_size // 2
    kind, disk, said = limited(limit, backed_up, str(db_path), str(target)).strip().split("|", 2)
    assert disk == "True" and kind in ("DiskError", "DiskFull")
    assert said.startswith(f"backup to {target} failed: ") and "nothing was replaced" in said
    assert not list(target.parent.iterdir())  # no copy, whole or partial


def test_a_backup_error_is_a_disk_error_only_for_the_disk() -> None:
    """What the OS says decides: no room (ENOSPC, a quota), a failing disk (EIO) or a file
    past a limit on its size (EFBIG), or neither (a permission): a plain StoreError, as
    before."""
    target = Path("/backups/m.db")
    full = backup_error(OSError(errno.ENOSPC, "No space left on device"), target)
    assert type(full) is DiskFull and "no room for the copy in /backups" in str(full)
    assert "free some space there" in str(full)
    failed = backup_error(OSError(errno.EIO, "Input/output error"), target)
    assert type(failed) is DiskError and str(failed).startswith("backup to /backups/m.db failed")
    refused = backup_error(PermissionError(errno.EACCES, "Permission denied"), target)
    assert type(refused) is StoreError and "Permission denied" in str(refused)
    error = sqlite_module().OperationalError
    assert type(backup_error(error("database or disk is full"), target)) is DiskFull
    assert type(backup_error(error("no such table: episodes"), target)) is StoreError


@pytest.mark.parametrize("limit", [8000, None])
def test_a_file_past_a_limit_on_its_size_is_no_full_disk(
    monkeypatch: pytest.MonkeyPatch, limit: int | None
) -> None:
    """EFBIG ("File too large") was a DiskFull told to free some space, which does not lift
    a limit on the size of files: a DiskError naming it, this process's ``ulimit -f`` with
    its bytes when it has one (also where SQLite's "disk I/O error" may be it), else the
    file system's. Not triggered: without a limit no ulimit is named."""
    monkeypatch.setattr("memengine.store.connect.file_size_limit", lambda: limit)
    target = Path("/backups/m.db")
    large = backup_error(OSError(errno.EFBIG, "File too large"), target)
    assert type(large) is DiskError and "free some space" not in str(large)
    failed = disk_error("disk I/O error", "/data", None, None)
    if limit is not None:
        ulimit = "this process's `ulimit -f` of 8,000 bytes on the size of files"
        assert str(large) == (
            f"backup to /backups/m.db failed: [Errno {errno.EFBIG}] File too large: the file "
            f"reached {ulimit}, not a full disk; raise it (nothing was replaced)"
        )
        assert f"(a failing disk, or {ulimit});" in str(failed)
    else:
        assert str(large).endswith(
            "the file reached the file system's limit on the size of a file, not a full disk; "
            "give a target on another file system (nothing was replaced)"
        )
        assert "(a failing disk, or a limit on the size of files);" in str(failed)
        assert "ulimit" not in str(large) + str(failed)


def test_the_store_names_the_size_limit_it_meets(db_path: Path) -> None:
    """A write past ``ulimit -f`` is SQLite's "disk I/O error": its DiskError names the
    process's limit with its bytes, as the import's and the backup's do."""
    opened = """
        import sys
        from memengine import Memory
        from tests.helpers import HashEmbedder
        try:
            Memory.open(sys.argv[3], embedder=HashEmbedder())
        except Exception as exc:
            print(type(exc).__name__, exc, sep="|")
        """
    kind, said = limited(1000, opened, str(db_path)).strip().split("|", 1)
    assert kind == "DiskError"
    assert "or this process's `ulimit -f` of 1,000 bytes on the size of files);" in said


def test_a_new_file_that_fails_to_open_leaves_no_lock_file(tmp_path: Path) -> None:
    """A new database the disk refused was removed, and its empty ``-lock`` stayed beside
    nothing; a lock file that was there before the open stays."""
    opened = """
        import sys
        from memengine import Memory
        from tests.helpers import HashEmbedder
        try:
            Memory.open(sys.argv[3], embedder=HashEmbedder())
        except Exception as exc:
            print(type(exc).__name__)
        """
    new = tmp_path / "new.db"
    assert limited(1000, opened, str(new)).strip() == "DiskError"
    assert not list(tmp_path.iterdir())
    lock_path(new).touch()  # another process's, say, made before
    assert limited(1000, opened, str(new)).strip() == "DiskError"
    assert [p.name for p in tmp_path.iterdir()] == ["new.db-lock"]


def test_a_lock_file_is_removed_only_when_unused_and_empty(tmp_path: Path) -> None:
    """:func:`remove_unused` leaves a lock file that a process holds, or that holds bytes."""
    import fcntl  # (POSIX: the module is skipped elsewhere)

    db = tmp_path / "m.db"
    lock = lock_path(db)
    lock.touch()
    holder = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        assert not remove_unused(db) and lock.exists()
    finally:
        os.close(holder)
    lock.write_text("x")
    assert not remove_unused(db) and lock.exists()
    lock.write_text("")
    assert remove_unused(db) and not lock.exists()
    assert not remove_unused(db)  # (none there)


@pytest.mark.parametrize(
    "name",
    [
        "SQLITE_IOERR_CORRUPTFS",
        "SQLITE_IOERR_DATA",
        "SQLITE_IOERR_LOCK",
        "SQLITE_IOERR_FSTAT",
        "SQLITE_IOERR_MMAP",
        "SQLITE_IOERR_SHORT_READ",
    ],
)
def test_an_io_error_no_want_of_room_causes_is_no_full_disk(name: str) -> None:
    """Any I/O error but a failed read was a DiskFull on a disk with under 8 MiB free: a
    damaged file system, a failed lock or stat was told "the disk is full, free some
    space"."""
    failed = disk_error("disk I/O error", "/data", 0, name)
    assert type(failed) is DiskError and f"({name})" in str(failed)
    assert "full" not in str(failed) and DOCTOR_CHECKS in str(failed)


def test_a_write_that_needs_room_is_a_full_disk_and_an_untold_io_error_may_be() -> None:
    """A write, a flush, a ``-shm`` made or grown on a disk with next to no room is a full
    disk. Python 3.10's driver tells no extended code, so every I/O error there, a failed
    read too, was a DiskFull: it is a DiskError that says the disk may be full."""
    for name in ("SQLITE_IOERR_WRITE", "SQLITE_IOERR_FSYNC", "SQLITE_IOERR_SHMOPEN"):
        full = disk_error("disk I/O error", "/data", 2**20, name)
        assert type(full) is DiskFull and "is full (1.0 MiB free" in str(full), name
        roomy = disk_error("disk I/O error", "/data", LOW_SPACE_BYTES, name)
        assert type(roomy) is DiskError and "full" not in str(roomy), name
    for name in (None, "SQLITE_IOERR"):
        untold = disk_error("disk I/O error", "/data", 0, name)
        assert type(untold) is DiskError and "/data may be full (0.0 MiB free" in str(untold)
        assert "free some space" in str(untold) and DOCTOR_CHECKS in str(untold)
        assert "(SQLITE_IOERR)" not in str(untold)
        assert "full" not in str(disk_error("disk I/O error", "/data", None, name))


def test_a_read_only_file_system_reports_no_room_and_is_never_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read-only file system (a CD, a squashfs, a read-only mount) reports 0 bytes free:
    any I/O error there was a full disk."""
    if not hasattr(os, "statvfs"):
        pytest.skip("no statvfs here")
    assert free_bytes(tmp_path) is not None  # (a writable folder: its room is told)
    real = os.statvfs

    class ReadOnly:
        """What statvfs tells of a read-only mount: its flag, no room."""

        def __init__(self, folder: object) -> None:
            self.f_flag = real(folder).f_flag | os.ST_RDONLY  # type: ignore[arg-type]

    monkeypatch.setattr(os, "statvfs", ReadOnly)
    assert free_bytes(tmp_path) is None
    error = sqlite_module().OperationalError("disk I/O error")
    error.sqlite_errorname = "SQLITE_IOERR_WRITE"  # type: ignore[attr-defined]
    told = translate_error(error, path=tmp_path / "m.db")
    assert type(told) is DiskError and "full" not in str(told)


def _page_overwritten(db_path: Path, target: Path) -> None:
    """A copy of the memory at ``db_path`` at ``target`` with one page of its tables
    overwritten: SQLite's page check fails on it."""
    data = bytearray(db_path.read_bytes())
    page = 16384
    data[5 * page : 6 * page] = b"\x55" * page
    target.write_bytes(bytes(data))


def test_a_damaged_file_on_a_nearly_full_disk_is_called_damaged_not_full(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An I/O error on a disk with under 8 MiB free skipped the page check as a DiskFull: a
    damaged file was told "free some space". A sound file on that disk is still a full
    one, and so is a write SQLite itself found no room for (no page check for that)."""
    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        mem.add_many(word_episodes(400, "default"))
    damaged = tmp_path / "damaged.db"
    _page_overwritten(db_path, damaged)
    monkeypatch.setattr(connect, "free_bytes", lambda folder: 2**20)
    module = sqlite_module()

    def io_error() -> Exception:
        """SQLite's error of a write the disk could not take."""
        error = module.OperationalError("disk I/O error")
        error.sqlite_errorname = "SQLITE_IOERR_WRITE"
        return error

    sound, broken = Connections(db_path), Connections(damaged)
    try:
        assert type(sound._store_error(io_error())) is DiskFull
        assert type(broken._store_error(io_error())) is DamagedDatabase
        full = module.OperationalError("database or disk is full")
        assert type(broken._store_error(full)) is DiskFull
    finally:
        sound.close()
        broken.close()


def test_a_stat_that_fails_but_for_a_missing_file_is_not_told_deleted(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Any failed stat of the file (EACCES: a folder's search permission taken away, EIO)
    was "was deleted or moved while this memory had it open" while the file was there: a
    new thread could not read, nor could anyone write. Only a missing file is gone."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    first = mem.add_exchange("I like green tea from Kyoto", "nice")
    real = os.stat

    def refused(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        """``os.stat``, refused for the memory's file."""
        if os.fspath(path) == os.fspath(db_path):
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", refused)
    with pytest.raises(PermissionError):
        connect._identity(db_path)
    assert in_a_new_thread(lambda: mem.get(first).user_text) == "I like green tea from Kyoto"
    second = mem.add_exchange("and matcha from Uji", "lovely")
    monkeypatch.setattr(os, "stat", real)
    assert mem.get(second).user_text == "and matcha from Uji"
    db_path.unlink()
    assert connect._identity(db_path) is None
    assert connect._identity(db_path / "inside") is None  # (a folder of its path is a file)
    with pytest.raises(StoreError, match="was deleted or moved while this memory had it open"):
        mem.add_exchange("lost", "yes")
    mem.close()


def test_a_lock_taken_on_a_lock_file_removed_meanwhile_is_taken_again_on_the_new_one(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer opened the lock file; a failed first open elsewhere removed it as unused;
    the writer then locked the removed file, and another process made and locked a new one
    at the same time: two writers at once. The writer now locks the file at the path."""
    writer = ProcessLock(db_path)
    opened = writer._open
    removed: list[bool] = []

    def opened_then_removed() -> int | None:
        """The writer's open, and the lock file removed right after, once."""
        fd = opened()
        if not removed:
            removed.append(remove_unused(db_path))
        return fd

    monkeypatch.setattr(writer, "_open", opened_then_removed)
    with writer.held(1.0):
        assert removed == [True] and lock_path(db_path).exists()
        with pytest.raises(DatabaseLocked), ProcessLock(db_path).held(0):  # (it waits its turn)
            pass
        assert not remove_unused(db_path)  # (held: it stays)
    with ProcessLock(db_path).held(0):  # (let go: the next one takes it)
        pass
    assert remove_unused(db_path) and not lock_path(db_path).exists()


def test_a_lock_file_never_at_its_path_is_taken_again_only_until_the_timeout(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lock file that never matches its path (a file system that reports another inode)
    is taken again until the timeout, then kept: the take ends instead of spinning."""
    checks: list[bool] = []

    def never_there(fd: int, path: Path) -> bool:
        """Never the file at the path, counted."""
        checks.append(False)
        return False

    monkeypatch.setattr(process_lock, "_at_path", never_there)
    started = time.monotonic()
    with ProcessLock(db_path).held(0.2):
        pass
    assert time.monotonic() - started < 1.0 and len(checks) >= 2  # (retaken, then kept)
    checks.clear()
    with ProcessLock(db_path).held(0):  # (no time at all: still taken again once)
        pass
    assert len(checks) == 2
