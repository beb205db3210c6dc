"""``Memory.backup`` / ``memengine backup``: a whole, consistent copy that opens as a memory."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import BackupReport, FixedClock, InvalidInput, Memory, NewEpisode
from memengine.cli import app
from memengine.store.connect import Connections
from memengine.store.maintenance import put_in_place

from .helpers import HashEmbedder


def _filled(db_path: Path, clock: FixedClock) -> tuple[int, int]:
    """A file with episodes in two languages, a used memory and an agent's perspectives."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.create_agent("a", perspectives=["コスト", "納期"])
        cat = mem.add_exchange("We adopted a cat and named her Miso", "Miso is lovely", agent="a")
        mem.add_exchange("締切は金曜日になった", "了解、がんばって", agent="a")
        mem.add("The dentist is on 3 June", agent="a")
        turn = mem.retrieve("cat Miso", agent="a")
        assert turn.turn_id is not None
        mem.feedback(turn.turn_id, [cat], helpful=True)
        return cat, turn.turn_id


def test_the_copy_holds_everything_and_opens(db_path: Path, clock: FixedClock) -> None:
    cat, _ = _filled(db_path, clock)
    dest = db_path.with_name("copy.db")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        report = mem.backup(dest)
        original = mem.get(cat)
    assert isinstance(report, BackupReport)
    assert report.path == dest and report.episodes == 3 and report.bytes == dest.stat().st_size
    assert not list(dest.parent.glob(".copy.db.partial-*"))
    with Memory.open(dest, embedder=HashEmbedder(), clock=clock) as copy:
        assert copy.check().ok
        restored = copy.get(cat)
        assert restored.access_count == original.access_count == 1
        assert restored.strength == original.strength
        agent = next(a for a in copy.agents() if a.name == "a")
        assert set(agent.perspectives) >= {"コスト", "納期"}
        found = copy.retrieve("締切", agent="a", limit=1).results
        assert found and "締切" in (found[0].episode.user_text or "")


def test_the_copy_is_one_snapshot(db_path: Path, clock: FixedClock) -> None:
    """Uncommitted writes of another connection are not in the copy, and do not block it."""
    _filled(db_path, clock)
    other = Connections(db_path)
    dest = db_path.with_name("snap.db")
    try:
        with other.write() as cur:
            cur.execute("DELETE FROM episodes")
            with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
                report = mem.backup(dest)
    finally:
        other.close()
    assert report.episodes == 3


def test_copies_taken_while_another_writer_commits_are_whole(
    db_path: Path, clock: FixedClock
) -> None:
    """Commits that land during a copy are in it entirely or not at all: every copy is
    consistent (each episode with its vector and full-text row) and holds a count
    between the one before and the one after it."""
    _filled(db_path, clock)
    stop = threading.Event()
    writing = threading.Event()
    errors: list[Exception] = []

    def write() -> None:
        try:
            with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as writer:
                n = 0
                while not stop.is_set():
                    writer.add_many(
                        [
                            NewEpisode(
                                kind="message",
                                content=f"note {n}-{i} about tea",
                                agent="a",
                                occurred_at=clock(),
                            )
                            for i in range(20)
                        ]
                    )
                    writing.set()
                    n += 1
        except Exception as exc:  # surfaced by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    copies = []
    try:
        # the copies begin once the writer commits, and go on (at least three, at most
        # fifty) until a commit has landed between the first copy's start and a copy's end
        assert writing.wait(timeout=60), errors or "the writer never committed"
        with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
            for k in range(50):
                before = mem.store.count()
                report = mem.backup(db_path.with_name(f"live{k}.db"))
                after = mem.store.count()
                copies.append((report, before, after))
                if k >= 2 and after > copies[0][1]:
                    break
    finally:
        stop.set()
        thread.join()
    assert not errors, errors
    assert copies[-1][2] > copies[0][1]  # the writer did commit while the copies were taken
    for report, before, after in copies:
        assert before <= report.episodes <= after
        assert (report.episodes - 3) % 20 == 0  # whole batches only
        with Memory.open(report.path, embedder=HashEmbedder(), clock=clock) as copy:
            check = copy.check()
            assert check.ok, check
            assert check.episodes == report.episodes


def test_a_backup_never_replaces_or_loses_a_file_unasked(db_path: Path, clock: FixedClock) -> None:
    _filled(db_path, clock)
    dest = db_path.with_name("copy.db")
    dest.write_text("precious")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        with pytest.raises(InvalidInput, match="exists"):
            mem.backup(dest)
        assert dest.read_text() == "precious"
        with pytest.raises(InvalidInput, match="the database itself"):
            mem.backup(db_path)
        with pytest.raises(InvalidInput, match="does not exist"):
            mem.backup(db_path.with_name("missing") / "copy.db")
        with pytest.raises(InvalidInput, match="folder"):
            mem.backup(db_path.parent)
        for side in ("-wal", "-shm", "-lock"):
            with pytest.raises(InvalidInput, match="own files"):
                mem.backup(Path(f"{db_path}{side}"), overwrite=True)
        # another name of the same file (a hard link here; another case of the name on
        # macOS or Windows) is refused too
        other_name = db_path.with_name("OTHER-NAME.DB-WAL")
        os.link(f"{db_path}-wal", other_name)
        with pytest.raises(InvalidInput, match="own files"):
            mem.backup(other_name, overwrite=True)
        other_name.unlink()
        os.link(db_path, other_name)
        with pytest.raises(InvalidInput, match="the database itself"):
            mem.backup(other_name, overwrite=True)
        other_name.unlink()
        dangling = db_path.with_name("dangling.db")
        dangling.symlink_to(db_path.with_name("nowhere.db"))
        with pytest.raises(InvalidInput, match="exists"):
            mem.backup(dangling)
        wal = Path(f"{dest}-wal")
        wal.write_bytes(b"")
        with pytest.raises(InvalidInput, match="-wal exists"):
            mem.backup(dest, overwrite=True)
        wal.unlink()
        report = mem.backup(dest, overwrite=True)
    assert report.episodes == 3
    with Memory.open(dest, embedder=HashEmbedder(), clock=clock) as copy:
        assert copy.check().ok


def test_backup_command(tmp_path: Path, cli_env: None, clock: FixedClock) -> None:
    runner = CliRunner()
    db = tmp_path / "cli.db"
    assert runner.invoke(app, ["add", "I booked the dentist", "--db", str(db)]).exit_code == 0
    out = runner.invoke(app, ["backup", "copy.db", "--db", str(db), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["episodes"] == 1 and Path(data["path"]).exists()
    again = runner.invoke(app, ["backup", "copy.db", "--db", str(db)])
    assert again.exit_code == 1 and "exists" in again.output and "--force" in again.output
    forced = runner.invoke(app, ["backup", "copy.db", "--db", str(db), "--force"])
    assert forced.exit_code == 0 and "backed up 1 episodes" in forced.output
    missing = runner.invoke(app, ["backup", "x.db", "--db", str(tmp_path / "nope.db")])
    assert missing.exit_code == 1 and not (tmp_path / "nope.db").exists()


def test_a_file_that_appears_during_the_copy_is_kept(tmp_path: Path) -> None:
    partial, dest = tmp_path / ".copy.partial", tmp_path / "copy.db"
    partial.write_text("new copy")
    dest.write_text("appeared meanwhile")
    with pytest.raises(InvalidInput, match="exists"):
        put_in_place(partial, dest, overwrite=False)
    assert dest.read_text() == "appeared meanwhile"
    put_in_place(partial, dest, overwrite=True)
    assert dest.read_text() == "new copy" and not partial.exists()
    partial.write_text("another")
    put_in_place(partial, tmp_path / "free.db", overwrite=False)
    assert (tmp_path / "free.db").read_text() == "another" and not partial.exists()


def test_a_killed_backup_leaves_nothing_behind_once_stale(db_path: Path, clock: FixedClock) -> None:
    import os
    import time

    from memengine.store.maintenance import STALE_PARTIAL_S

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add("a fact", kind="fact")
        dest = db_path.parent / "copy[1].db"  # glob characters in the name are names
        old = db_path.parent / ".copy[1].db.partial-dead"  # a killed backup's copy
        fresh = db_path.parent / ".copy[1].db.partial-busy"  # one still being written
        other = db_path.parent / ".other.db.partial-dead"  # another target's
        for leftover in (old, fresh, other):
            leftover.write_bytes(b"half a copy")
        long_ago = time.time() - STALE_PARTIAL_S - 60
        os.utime(old, (long_ago, long_ago))
        os.utime(other, (long_ago, long_ago))
        mem.backup(dest)
    assert dest.exists() and not old.exists()
    assert fresh.exists() and other.exists()


def test_a_private_file_gets_a_private_backup(db_path: Path, clock: FixedClock) -> None:
    import os
    import stat

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add("a fact", kind="fact")
        os.chmod(db_path, 0o600)
        mem.backup(db_path.parent / "copy.db")
    assert stat.S_IMODE((db_path.parent / "copy.db").stat().st_mode) == 0o600


@pytest.mark.skipif(os.name != "posix", reason="named pipes and symbolic links")
def test_a_forced_backup_replaces_only_a_regular_file(db_path: Path, clock: FixedClock) -> None:
    """Forced onto /dev/full, a backup replaced the device itself with a file; onto a
    symbolic link, it replaced the link. A pipe or a device is refused, a link is written
    through."""
    _filled(db_path, clock)
    pipe = db_path.with_name("pipe")
    os.mkfifo(pipe)
    real = db_path.with_name("real.db")
    real.write_text("old")
    link = db_path.with_name("link.db")
    link.symlink_to(real)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        with pytest.raises(InvalidInput, match="not a regular file"):
            mem.backup(pipe, overwrite=True)  # (a device is refused the same way)
        assert pipe.is_fifo()
        assert mem.backup(link, overwrite=True).episodes == 3
    assert link.is_symlink() and link.resolve() == real.resolve()
    with Memory.open(real, embedder=HashEmbedder(), clock=clock) as copy:
        assert copy.check().ok and copy.store.count() == 3
