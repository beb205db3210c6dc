"""Writers of separate processes take turns on the lock file (store/process_lock.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memengine import Config, DatabaseLocked, FixedClock, Memory
from memengine.store import maintenance
from memengine.store.connect import Connections
from memengine.store.process_lock import ProcessLock, lock_path

from .helpers import HashEmbedder

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(not ProcessLock(".").supported, reason="no flock here")

HOLDER = """
import sys
from memengine.store.connect import Connections
conns = Connections(sys.argv[1])
with conns.write() as cur:
    cur.execute("INSERT INTO agents (name, created_at) VALUES ('other', '2026-06-01T12:00:00+00:00')")
    print("holding", flush=True)
    sys.stdin.readline()
conns.close()
print("done", flush=True)
"""


@contextmanager
def _other_process_writing(db_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process inside a write transaction until its stdin gets a line."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    try:
        line = proc.stdout.readline()
        if line.strip() != "holding":
            raise AssertionError(f"the other process did not start writing: {proc.stderr.read()}")
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=60)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            pipe.close()


def _add(conns: Connections, name: str, wait_s: float) -> None:
    with conns.write(wait_s=wait_s) as cur:
        cur.execute(
            "INSERT INTO agents (name, created_at) VALUES (?, '2026-06-01T12:00:00+00:00')",
            (name,),
        )


@pytest.fixture
def made(db_path: Path, clock: FixedClock) -> Path:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock):
        pass  # the file and its schema
    return db_path


def test_a_write_waits_for_another_process_and_then_goes_in(made: Path) -> None:
    conns = Connections(made)
    try:
        with _other_process_writing(made) as proc:
            with pytest.raises(DatabaseLocked, match="another process") as locked:
                _add(conns, "too-early", wait_s=0.3)
            # the wait as set (not what was left of it, 0.299991 s), and how to wait longer:
            # the file or the environment only through load_config() (a library's
            # Memory.open(path) reads neither, and the variable alone changed nothing)
            assert "kept writing for 0.3 s (a longer write_wait_s waits longer" in str(locked.value)
            assert "MEMENGINE_WRITE_WAIT_S, which load_config() reads" in str(locked.value)
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
            _add(conns, "after", wait_s=10)  # waits for the other commit, then writes
            assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
        with conns.read() as cur:
            names = {r[0] for r in cur.execute("SELECT name FROM agents")}
    finally:
        conns.close()
    assert {"other", "after"} <= names and "too-early" not in names
    assert lock_path(made).exists()


def test_a_wait_given_up_does_not_keep_the_lock(made: Path) -> None:
    conns = Connections(made)
    try:
        with _other_process_writing(made) as proc:
            with pytest.raises(DatabaseLocked):
                _add(conns, "gave-up", wait_s=0.2)
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
            proc.wait(timeout=60)
        # the abandoned wait got the lock when the other process let go, and dropped it:
        # a new open file of this process (which contends like another process) gets it
        deadline = time.monotonic() + 10
        while True:
            try:
                with ProcessLock(made).held(0.05):
                    break
            except DatabaseLocked:
                if time.monotonic() > deadline:
                    raise
    finally:
        conns.close()


def test_a_vacuum_takes_the_writers_turn(made: Path) -> None:
    """``VACUUM`` (``optimize --vectors``) waits for another process's write like a write
    does, gives up cleanly with the file unchanged, and runs once the turn is free."""
    conns = Connections(made)
    try:
        config = Config(db=made, write_wait_s=0.3)
        with Memory.open(made, embedder=HashEmbedder(), config=config) as mem:
            with _other_process_writing(made) as proc:
                with pytest.raises(DatabaseLocked, match="another process"):
                    conns.vacuum(wait_s=0.3)
                kept = maintenance.vacuum(mem.store.connections)
                assert isinstance(kept, DatabaseLocked)  # what optimize reports, and why:
                assert maintenance.not_compacted(kept) == "other writers kept the file busy"
                assert maintenance.truncate_wal(mem.store.connections) is False  # (not raised)
                assert proc.stdin is not None
                proc.stdin.write("go\n")
                proc.stdin.flush()
                conns.vacuum(wait_s=10)  # waits for the other commit, then runs
                assert proc.stdout is not None and proc.stdout.readline().strip() == "done"
            assert maintenance.vacuum(mem.store.connections) is None  # compacted
        with conns.read() as cur:
            names = {r[0] for r in cur.execute("SELECT name FROM agents")}
        assert "other" in names and conns.check_pages() == "ok"
    finally:
        conns.close()


def test_a_process_killed_while_writing_leaves_the_file_unlocked(made: Path) -> None:
    conns = Connections(made)
    try:
        with _other_process_writing(made) as proc:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=60)
            _add(conns, "after-crash", wait_s=5)
        with conns.read() as cur:
            names = {r[0] for r in cur.execute("SELECT name FROM agents")}
    finally:
        conns.close()
    assert "after-crash" in names and "other" not in names  # its transaction rolled back


def test_writes_go_on_without_the_lock_when_it_cannot_be_made(made: Path) -> None:
    lock_path(made).unlink(missing_ok=True)
    lock_path(made).mkdir()  # opening it for writing fails
    conns = Connections(made)
    try:
        _add(conns, "unlocked", wait_s=1)
        with conns.read() as cur:
            assert cur.execute("SELECT 1 FROM agents WHERE name = 'unlocked'").fetchone()
    finally:
        conns.close()


def test_the_lock_file_follows_the_real_path(made: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.db"
    link.symlink_to(made)
    assert ProcessLock(link).path == ProcessLock(made).path == lock_path(made)


def test_timed_out_waits_do_not_pile_up_threads_or_open_files(made: Path) -> None:
    conns = Connections(made)
    lock = lock_path(made)

    def open_on_lock() -> int:
        fds = Path("/proc/self/fd")
        if not fds.exists():
            return 0
        n = 0
        for fd in fds.iterdir():
            try:
                n += os.readlink(fd) == str(lock)
            except OSError:
                continue
        return n

    try:
        with _other_process_writing(made) as proc:
            for wait in (0.0, 0.01, 0.02) * 7:
                with pytest.raises(DatabaseLocked):
                    _add(conns, "never", wait_s=wait)
            helpers = [t for t in threading.enumerate() if t.name == "memengine-process-lock"]
            assert len(helpers) <= 1 and open_on_lock() <= 1
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
            _add(conns, "after", wait_s=10)  # takes over the pending wait
        with conns.read() as cur:
            names = {r[0] for r in cur.execute("SELECT name FROM agents")}
    finally:
        conns.close()
    assert "after" in names and "never" not in names


OPENER = """
import sys, time
from pathlib import Path
from memengine import Memory
from tests.helpers import HashEmbedder
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.001)
with Memory.open(sys.argv[1], embedder=HashEmbedder()) as m:
    print(m.add("opened at the same moment", kind="fact"), flush=True)
"""


def test_processes_opening_a_new_file_at_the_same_moment_all_open_it(tmp_path: Path) -> None:
    """Each migration step and the first embedder record look again under the write lock:
    a process that finds another has just done it goes on (they failed with "table agents
    already exists")."""
    db, go = tmp_path / "new.db", tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPENER, str(db), str(go)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    time.sleep(1.5)  # let every one of them import and wait
    go.touch()
    outcomes = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outcomes]
    assert sorted(int(out) for out, _ in outcomes) == [1, 2, 3, 4]
    with Memory.open(db, embedder=HashEmbedder()) as m:
        assert m.check().ok and m.store.count() == 4


def test_opening_a_file_in_use_waits_for_no_writer(db_path: Path, clock: FixedClock) -> None:
    """Only a file that needs set-up (a new one, an older schema) takes the writers' turn to
    open: a search opened while another process writes starts at once."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        m.add_exchange("the dentist is on 3 June", "noted")
    with _other_process_writing(db_path):
        t0 = time.monotonic()
        with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
            assert m.retrieve("dentist", day_range=None, record=False).results
        assert time.monotonic() - t0 < 5.0  # the other writer holds the lock throughout


def test_write_wait_s_bounds_a_memory_s_wait_for_another_writer(
    made: Path, clock: FixedClock
) -> None:
    """``write_wait_s`` is how long a write of a Memory waits for another process's."""
    config = Config(db=made, write_wait_s=0.4)
    with Memory.open(made, embedder=HashEmbedder(), clock=clock, config=config) as mem:
        before = mem.store.count()
        with _other_process_writing(made):
            started = time.monotonic()
            with pytest.raises(DatabaseLocked):
                mem.add("waits a little")
            waited = time.monotonic() - started
        assert 0.3 < waited < 5 and mem.store.count() == before  # not the default 10 s
        mem.add("goes in now")
        assert mem.store.count() == before + 1
