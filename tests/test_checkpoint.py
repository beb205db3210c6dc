"""WAL checkpoints run off the write path and keep the log bounded (real SQLite files)."""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from memengine import FixedClock, Memory, NewEpisode

from .helpers import HashEmbedder

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _batch(n: int, start: int) -> list[NewEpisode]:
    return [
        NewEpisode(
            kind="exchange",
            user_text=f"turn {start + i} about the garden, the piano and a long walk in the rain",
            reply_text="that sounds lovely " * 8,
            occurred_at=T0 + timedelta(minutes=start + i),
        )
        for i in range(n)
    ]


def _wal(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_commits_leave_checkpoints_to_a_background_thread(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        conns = mem.store.connections
        cur = conns.get().cursor()
        assert cur.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        conns.checkpointer.threshold_bytes = 64 * 1024  # wake it often in a small test
        for start in range(0, 1200, 200):
            mem.add_many(_batch(200, start))
        deadline = time.monotonic() + 10
        while conns.checkpointer.runs == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert conns.checkpointer.runs > 0
        assert any(t.name == "memengine-checkpoint" for t in threading.enumerate())
        busy, log, done = cur.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and done == log  # what is left is copied in one go
        assert mem.check().ok
        assert mem.store.count() == 1200
    assert not any(t.name == "memengine-checkpoint" for t in threading.enumerate())
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.count() == 1200 and mem.check().ok


def test_a_log_far_behind_is_checkpointed_by_the_writer(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        ckpt = mem.store.connections.checkpointer
        ckpt.threshold_bytes = 0
        ckpt.inline_bytes = 0  # every commit is "far behind": checkpoint in the committing thread
        mem.add_many(_batch(50, 0))
        assert ckpt.runs >= 1
        assert not any(t.name == "memengine-checkpoint" for t in threading.enumerate())
        before = ckpt.runs
        mem.add_exchange("one more", "ok", occurred_at=T0 + timedelta(days=1))
        assert ckpt.runs == before + 1


def test_the_log_stays_bounded_under_a_long_import(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        ckpt = mem.store.connections.checkpointer
        ckpt.threshold_bytes = 256 * 1024
        ckpt.inline_bytes = 2 * 2**20
        biggest = 0
        for start in range(0, 3000, 250):
            mem.add_many(_batch(250, start))
            biggest = max(biggest, _wal(db_path))
        # one batch past the inline limit at most, then the writer checkpoints itself
        assert biggest < ckpt.inline_bytes + 4 * 2**20
        assert mem.check().ok
    assert _wal(db_path) == 0 or not os.path.exists(f"{db_path}-wal")
