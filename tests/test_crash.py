"""A writer process killed (SIGKILL) in the middle of a batch loses nothing and breaks nothing.

A real second process opens the same file and stops for good inside the
store's write transaction: after the episode rows (with their full-text
rows and change-log entries) are written, after the vectors too, or after a
delete has re-linked the neighbours. The test kills it there. The reader in
this process, whose in-memory vector index was loaded before the crash,
must then answer as before; the consistency check that ``memengine doctor``
runs must pass, on this connection and on a freshly opened file; and new
writes must go in and be seen.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine import FixedClock, Memory, NewEpisode
from memengine.store.filters import Filters

from .helpers import HashEmbedder

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL")

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)

WRITER = textwrap.dedent(
    """
    import sys, time
    from datetime import datetime, timedelta, timezone
    from memengine import FixedClock, Memory, NewEpisode
    from memengine.store import episodes, vectors
    from tests.helpers import HashEmbedder

    path, stage = sys.argv[1], sys.argv[2]

    def stop_after(module, name):
        original = getattr(module, name)
        def inner(*args, **kwargs):
            out = original(*args, **kwargs)
            print("inside", flush=True)  # the transaction is open: wait to be killed
            time.sleep(600)
            return out
        setattr(module, name, inner)

    stop_after(*{
        "episodes": (episodes, "insert_episodes"),
        "vectors": (vectors, "insert_vectors"),
        "delete": (episodes, "delete_and_relink"),
    }[stage])
    t0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
    clock = FixedClock(datetime(2026, 6, 1, tzinfo=timezone.utc))
    with Memory.open(path, embedder=HashEmbedder(), clock=clock) as mem:
        # a tiny page cache: the open transaction spills its pages into the WAL file
        mem.store.connections.get().execute("PRAGMA cache_size = 4")
        if stage == "delete":
            mem.delete(list(range(1, 11)))
        else:
            mem.add_many([
                NewEpisode(kind="message", content=f"cat tea crash {i}", agent="a",
                           occurred_at=t0 + timedelta(hours=40 + i))
                for i in range(300)
            ])
    print("done", flush=True)
    """
)


def _episodes(n: int, start: int = 0) -> list[NewEpisode]:
    words = ["cat tea", "snow report", "piano garden", "train bus"]
    return [
        NewEpisode(
            kind="message",
            content=f"{words[i % 4]} {i}",
            agent="a",
            occurred_at=T0 + timedelta(hours=i),
        )
        for i in range(start, start + n)
    ]


def _kill_inside(db_path: Path, stage: str) -> int:
    """Run the writer until it is inside its transaction, then SIGKILL it.

    Returns how many bytes the WAL file grew by while the transaction was open.
    """
    wal = db_path.with_name(db_path.name + "-wal")
    size = wal.stat().st_size
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db_path), stage],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        line = proc.stdout.readline()
        if line.strip() != "inside":
            proc.kill()
            raise AssertionError(f"writer did not reach the batch: {line!r} {proc.stderr.read()}")
        grown = wal.stat().st_size - size
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    return grown


@pytest.mark.parametrize("stage", ["episodes", "vectors", "delete"])
def test_a_writer_killed_inside_its_batch_loses_nothing(
    db_path: Path, clock: FixedClock, stage: str
) -> None:
    emb = HashEmbedder()
    q = emb.embed(["cat tea"])[0]
    scope = Filters(agent="a")
    with Memory.open(db_path, embedder=emb, clock=clock) as reader:
        reader.store.vector_index.load_after = 1
        reader.add_many(_episodes(40))
        before = reader.store.knn(q, 10, scope)
        assert reader.store.vector_index.loaded() == {"a": 40}
        text_before, _ = reader.store.text_search(["cat"], 10, scope)
        contexts_before = reader.store.get(list(range(1, 41)))

        spilled = _kill_inside(db_path, stage)
        if stage != "delete":
            assert spilled > 0  # uncommitted pages of the batch were on disk at the kill

        assert reader.store.count() == 40
        assert reader.store.knn(q, 10, scope) == before  # in-memory index, still in step
        assert reader.store.text_search(["cat"], 10, scope)[0] == text_before
        assert reader.store.get(list(range(1, 41))) == contexts_before  # no half re-link
        report = reader.check()
        assert report.ok, report
        assert (report.episodes, report.vectors, report.fts_rows) == (40, 40, 40)

        new = reader.add_many(_episodes(5, start=40))  # the file takes writes again
        assert reader.store.knn(emb.embed(["cat tea 40"])[0], 1, scope)[0][0] == new[0]
        assert reader.check().ok

    with Memory.open(db_path, embedder=emb, clock=clock) as again:  # a new process's view
        report = again.check()
        assert report.ok, report
        assert (report.episodes, report.vectors, report.fts_rows) == (45, 45, 45)


def test_a_turn_on_a_full_disk_gets_its_answer_unrecorded(tmp_path: Path) -> None:
    """A full disk failed every retrieval (the turn's record could not be written): a
    companion lost its whole memory for as long as the disk stayed full. SQLite's own
    page limit fills the file here as a full disk would."""
    from memengine import DiskFull

    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        for i in range(30):
            mem.add_exchange(f"my cat {i} is named kinako", "cute")
        conn = mem.store.connections.get()  # this thread's: the turn is recorded through it
        conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
        for size in (4000, 400, 40, 4):  # fill every free byte
            with pytest.raises(DiskFull, match="full"):
                for i in range(10_000):
                    mem.add_exchange(f"filler {i} " + "x" * size, "y" * size)
        full = [mem.retrieve("what is my cat called?") for _ in range(300)]  # turns fill it up
        assert all(r.results for r in full)
        unrecorded = [r for r in full if r.turn_id is None]
        assert unrecorded and unrecorded[0].degraded[0].startswith(
            "turn not recorded: database or disk is full: nothing of this write is in the file"
        )


LIMITED = textwrap.dedent(
    """
    import resource, signal, sys
    from memengine import Memory
    from tests.helpers import HashEmbedder

    path, limit = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    with Memory.open(path, embedder=HashEmbedder()) as mem:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
        report = mem.forget_agent("bob")
        print(report.vacuumed, report.not_compacted, mem.has_agent("bob"), sep="|", flush=True)
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    """
)


def test_a_forget_the_disk_cannot_compact_says_so_after_deleting(db_path: Path) -> None:
    """A forget whose compaction the disk refused (a full disk, a limit on file sizes)
    raised an error after its deletion had committed: the caller thought nothing happened,
    and a retry said there was no such agent."""
    from .helpers import word_episodes

    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        mem.add_many(word_episodes(6000, "alice"))
        mem.add_many(word_episodes(100, "bob", seed=2))
    limit = db_path.stat().st_size // 3  # room for the delete, none for the compacted copy
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, str(db_path), str(limit)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False|the disk failed a write of the compacted copy|False"
    with Memory.open(db_path, embedder=HashEmbedder()) as mem:
        assert not mem.has_agent("bob") and mem.check().ok
