"""Full-text maintenance on real SQLite + FTS5: the merge after a bulk load.

A file written in many statements holds many FTS5 segments; ``optimize``
must merge them into one without changing a single search result, keep
the file consistent, and run on its own at the end of a bulk ``add_many``.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from memengine import Config, FixedClock, Memory, NewEpisode, OptimizeReport
from memengine.cli import app
from memengine.diagnostics import diagnose
from memengine.embed.usem3 import USEM3Embedder
from memengine.errors import InvalidInput
from memengine.store.filters import Filters
from memengine.store.maintenance import file_bytes, fts_segments

from .helpers import HashEmbedder

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
WORDS = "cat dog tea coffee rain snow piano guitar train bus deadline report garden 締切 猫".split()


def _episodes(n: int, seed: int) -> list[NewEpisode]:
    rng = np.random.default_rng(seed)
    return [
        NewEpisode(
            kind="message",
            content=" ".join(rng.choice(WORDS, 4)) + f" {seed}-{i}",
            agent="a" if i % 2 else "b",
            occurred_at=T0 + timedelta(minutes=seed * 1000 + i),
        )
        for i in range(n)
    ]


def _segments(mem: Memory) -> int:
    with mem.store.connections.read() as cur:
        return fts_segments(cur)


def _searches(mem: Memory) -> list[object]:
    out: list[object] = []
    for agent in ("a", "b"):
        for words in (["piano", "garden"], ["締切"], ["coffee", "rain", "bus"]):
            out.append(mem.store.text_search(words, 10, Filters(agent=agent))[0])
    return out


def test_optimize_merges_segments_and_changes_no_result(mem: Memory) -> None:
    for seed in range(12):  # one statement per batch: one new segment each
        mem.add_many(_episodes(40, seed))
    mem.delete([5, 17, 300])
    mem.store.set_status([8, 9], "archived")
    before = _searches(mem)
    segments = _segments(mem)
    assert segments > 1
    report = mem.optimize()
    assert isinstance(report, OptimizeReport)
    assert (report.segments_before, report.segments_after) == (segments, 1)
    assert report.steps >= 1 and report.wal_truncated
    assert _segments(mem) == 1
    assert Path(f"{mem.store.path}-wal").stat().st_size == 0  # checkpointed and truncated
    assert _searches(mem) == before
    assert mem.check().ok
    assert mem.stats()["fulltext_segments"] == 1
    again = mem.optimize()  # nothing to merge: a no-op
    assert (again.segments_before, again.segments_after, again.steps) == (1, 1, 0)
    mem.add_many(_episodes(10, 99))  # writes go on after the merge
    assert mem.check().ok and _segments(mem) == 2


def test_other_writers_go_on_during_the_merge(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        for seed in range(30):
            mem.add_many(_episodes(60, seed))
        errors: list[BaseException] = []
        written: list[int] = []

        def write() -> None:
            try:
                with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as other:
                    for seed in range(100, 110):
                        written.extend(other.add_many(_episodes(5, seed)))
            except BaseException as exc:  # reported below, not swallowed
                errors.append(exc)

        writer = threading.Thread(target=write)
        writer.start()
        report = mem.store.optimize(pages=4)  # many small steps, with writes between them
        writer.join()
        assert errors == []
        assert len(written) == 50 and report.segments_before > 1 and report.steps > 5
        assert mem.check().ok
        assert all(mem.get(i) for i in written)
        # a segment written between two steps joins the merge; what came after the last
        # step is merged by the next optimize
        assert report.segments_after <= 1 + 10
        assert mem.store.optimize(pages=4).segments_after == 1 == _segments(mem)


def test_emptying_the_log_waits_for_no_reader(db_path: Path, clock: FixedClock) -> None:
    """optimize's last checkpoint took SQLite's write lock and then waited for a reader
    that held a snapshot (another process's export, a check) for the whole write_wait_s:
    every writer of every process waited with it. It now tries once and says it could not."""
    from memengine import Config

    cfg = Config(write_wait_s=30)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        mem.add_many(_episodes(200, 1))
        reading, done = threading.Event(), threading.Event()

        def hold_a_snapshot() -> None:
            with (
                Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as other,
                other.store.connections.read() as cur,
            ):
                cur.execute("SELECT count(*) FROM episodes").fetchone()
                reading.set()
                done.wait(60)

        reader = threading.Thread(target=hold_a_snapshot)
        reader.start()
        try:
            assert reading.wait(30)
            mem.add_many(_episodes(50, 2))  # the log now holds what the reader does not see
            t0 = time.monotonic()
            report = mem.optimize()
            waited = time.monotonic() - t0
        finally:
            done.set()
            reader.join()
        assert not report.wal_truncated and waited < 10  # (it used to wait all 30 s)
        assert mem.optimize().wal_truncated  # the reader gone, the log is emptied


def test_a_bulk_add_many_ends_with_the_merge(mem: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("memengine.memory.BULK_EPISODES", 60)
    mem.add_many(_episodes(30, 1), batch_size=10)
    assert _segments(mem) > 1  # below the bulk size: left to FTS5's automerge
    mem.add_many(_episodes(60, 2), batch_size=10)  # a bulk load, and most of the file
    assert _segments(mem) == 1
    mem.add_many(_episodes(600, 3), batch_size=100)
    assert _segments(mem) == 1
    mem.add_many(_episodes(60, 4), batch_size=10)  # bulk size, but under a tenth of the file
    assert _segments(mem) > 1
    mem.add_many(_episodes(30, 5), batch_size=10, optimize=True)  # asked for
    assert _segments(mem) == 1
    assert mem.check().ok


def test_optimize_command(
    tmp_path: Path, clock: FixedClock, usem3: USEM3Embedder, cli_env: None
) -> None:
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=usem3, clock=clock) as mem:  # the CLI's default embedder
        for seed in range(3):
            mem.add_many(_episodes(10, seed))
    result = CliRunner().invoke(app, ["optimize", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["segments_before"] > 1 and data["segments_after"] == 1
    assert data["steps"] >= 1 and data["wal_truncated"] is True
    assert data["seconds"] >= 0
    text = CliRunner().invoke(app, ["optimize", "--db", str(db)])
    assert text.exit_code == 0 and "full-text segments: 1 -> 1" in text.output


def test_optimize_ends_while_another_writer_writes_back_to_back(tmp_path: Path) -> None:
    """Each of the other writer's commits adds a segment the merge takes in, so the merge
    never finds nothing left: it ends at one segment or at its work budget instead of
    running as long as the writer does."""
    import time

    path = tmp_path / "busy.db"
    with Memory.open(path, embedder=HashEmbedder(), clock=FixedClock(T0)) as mem:
        with mem.store.connections.write() as cur:  # each batch stays a segment of its own
            cur.execute("INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('automerge', 0)")
        for seed in range(12):
            mem.add_many(_episodes(200, seed))
        with mem.store.connections.read() as cur:
            assert fts_segments(cur) >= 5
        stop = threading.Event()
        written: list[int] = []

        def write() -> None:
            with Memory.open(path, embedder=HashEmbedder(), clock=FixedClock(T0)) as other:
                while not stop.is_set():
                    written.append(other.add_exchange(f"busy line {len(written)}", "ok"))

        writer = threading.Thread(target=write)
        writer.start()
        try:
            while len(written) < 5:
                time.sleep(0.01)
            started = time.monotonic()
            report = mem.optimize()
            took = time.monotonic() - started
        finally:
            stop.set()
            writer.join(30)
        # it ended (against a writer as quick as this one it once ran for many minutes)
        assert took < 60 and len(written) > 5 and report.steps < 1000, report
        assert mem.check().ok


def test_a_drifted_full_text_index_is_named_so_and_rebuilt_by_a_scrub(
    db_path: Path, clock: FixedClock
) -> None:
    """A full-text index out of step with the episodes (what no write of memengine leaves:
    here its update trigger dropped by hand) fails the check in its own words, with the
    command that rebuilds it, and not the list of every empty finding."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        ids = [m.add_exchange(f"note {i} about the garden", "ok") for i in range(5)]
        with m.store.connections.write() as cur:
            cur.execute("DROP TRIGGER episodes_fts_update")
            cur.execute("UPDATE episodes SET search_text = 'quince jam' WHERE id = ?", (ids[0],))
    config = Config(db=db_path)
    ok, detail = diagnose(config)["checks"]["consistency"]
    assert not ok and "the full-text index does not match the episodes" in detail
    assert "memengine optimize --scrub" in detail and "missing vectors" not in detail
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        m.optimize(scrub=True)
        assert m.check().ok
    assert diagnose(config)["checks"]["consistency"][0]


def test_a_compaction_keeps_its_copy_of_the_file_out_of_memory(mem: Memory) -> None:
    """``VACUUM`` copied the file into the connection's in-memory temporary store, through
    its 64 MiB cache and memory map: a file of 400 MB took 500 MB of memory to forget one
    user. It runs with a temporary file and a small cache, and the connection's settings
    come back after."""
    mem.add_many(_episodes(200, 1))
    driver = mem.store.connections.get().driver_connection
    before = [driver.execute(f"PRAGMA {p}").fetchone()[0] for p in ("temp_store", "cache_size")]
    seen: list[str] = []
    driver.set_trace_callback(seen.append)
    try:
        assert mem.optimize(scrub=True).vacuumed
    finally:
        driver.set_trace_callback(None)
    at = seen.index("VACUUM")
    assert "PRAGMA temp_store = FILE" in seen[:at] and "PRAGMA mmap_size = 0" in seen[:at]
    small = [s for s in seen[:at] if s.startswith("PRAGMA cache_size")]
    assert small and small[-1] == "PRAGMA cache_size = -2048"
    after = [driver.execute(f"PRAGMA {p}").fetchone()[0] for p in ("temp_store", "cache_size")]
    assert after == before == [2, -1024 * 64]


def test_a_scrub_reports_the_file_as_it_was_before_it(mem: Memory) -> None:
    """The figures "before" were read after the scrub's own rebuild of the full-text index:
    a merged file was said to hold 10 segments and 86 MiB more than it did."""
    mem.add_many(_episodes(300, 2))
    mem.optimize()
    assert fts_segments_of(mem) == 1
    size = file_bytes(mem.store.path)
    report = mem.optimize(scrub=True)
    assert report.segments_before == 1 and report.segments_after == 1
    assert report.bytes_before == size


def fts_segments_of(mem: Memory) -> int:
    with mem.store.connections.read() as cur:
        return fts_segments(cur)


def test_no_room_for_the_compacted_copy_names_the_temporary_folder_too() -> None:
    from memengine.errors import DiskFull
    from memengine.store.maintenance import not_compacted

    said = not_compacted(DiskFull("database or disk is full"))
    assert "SQLITE_TMPDIR" in said and "TMPDIR" in said


def _automerge(mem: Memory) -> list[tuple[str, int]]:
    with mem.store.connections.read() as cur:
        return cur.execute("SELECT k, v FROM episodes_fts_config WHERE k = 'automerge'").fetchall()


def test_a_bulk_write_leaves_the_merge_to_later_and_the_setting_as_it_was(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memengine.store import maintenance

    monkeypatch.setattr(maintenance, "BULK_ROWS", 20)
    mem.add_many(_episodes(60, 1), batch_size=30, optimize=False)
    assert _automerge(mem) == [("automerge", 4)]  # FTS5's default, named
    with mem.store.connections.write() as cur:  # a file's own setting is kept
        cur.execute("INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('automerge', 6)")
    mem.add_many(_episodes(60, 2), batch_size=30, optimize=False)
    assert _automerge(mem) == [("automerge", 6)]
    taken = _episodes(30, 3)
    taken[-1] = taken[-1].model_copy(update={"id": 1})  # stored: the whole batch fails
    with pytest.raises(InvalidInput):
        mem.store.add(
            taken, [e.content for e in taken], mem.embedder.embed([e.content for e in taken])
        )
    assert _automerge(mem) == [("automerge", 6)]
    before = _searches(mem)
    for seed in range(4, 40):  # small writes after it merge as before (automerge 6, not 0)
        mem.add_many(_episodes(1, seed), optimize=False)
    assert _segments(mem) < 16  # (with automerge off, only FTS5's crisis merge at 16)
    assert mem.check().ok
    assert len(_searches(mem)) == len(before)
    mem.optimize()
    assert mem.check().ok and _segments(mem) == 1
