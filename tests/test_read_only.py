"""Read-only files: searched, packed, checked and exported without a single write.

A backup on a read-only mount, or a file another user owns, must still be
readable. Opened read-only, every write raises ReadOnlyDatabase and the file's
bytes stay as they were; the CLI opens such a file read-only by itself (run
here as a user who cannot write it: ``nobody`` through ``setpriv`` when the
tests run as root, else the folder's write bit taken away).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memengine import FixedClock, Memory, NewEpisode, NotFound, ReadOnlyDatabase, StoreError
from memengine.embed.usem3 import USEM3Embedder
from memengine.store.database import FTS_NOT_CHECKED

from .helpers import T0, HashEmbedder


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def written(db_path: Path, clock: FixedClock) -> Path:
    """A closed file with three episodes (the WAL checkpointed into it on close)."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        m.add_exchange("I adopted a cat named Mochi", "Lovely!")
        m.add_exchange("The dentist is on 3 June", "Noted.")
        m.add_exchange("My sister Hana moved to Osaka", "Big change!")
    return db_path


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_read_only_open_searches_and_exports_without_writing(
    written: Path, clock: FixedClock
) -> None:
    before, listing = _digest(written), _listing(written.parent)
    with Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True) as m:
        # no writer has it open: no -shm or -wal is made (a reader's would block the owner)
        assert m.read_only and m.store.connections.access == "immutable"
        assert _listing(written.parent) == listing
        r = m.retrieve("what is my cat called", day_range=None)
        assert r.results and "Mochi" in r.results[0].episode.text
        assert r.turn_id is None  # nothing recorded
        assert all(m.get(x.episode.id).candidate_count == 0 for x in r.results)
        assert m.pack(r, query="what is my cat called").text
        lines = []
        assert m.export(_Lines(lines)) == 3
        assert [json.loads(line)["id"] for line in lines] == [1, 2, 3]
        report = m.check()
        assert report.ok and report.fts_integrity == FTS_NOT_CHECKED
        for write in (
            lambda: m.add("new"),
            lambda: m.delete([1]),
            lambda: m.create_agent("bob"),
            lambda: m.optimize(),
        ):
            with pytest.raises(ReadOnlyDatabase, match="open read-only"):
                write()
        assert m.stats()["episodes"] == 3
    assert _digest(written) == before and _listing(written.parent) == listing


def test_a_read_only_open_beside_a_writer_sees_its_log(written: Path, clock: FixedClock) -> None:
    """With a writer's changes still in the ``-wal``, the reader goes through its ``-shm``
    and sees them; a copy with the ``-wal`` but no ``-shm`` is read whole too."""
    with Memory.open(written, embedder=HashEmbedder(), clock=clock) as writer:
        writer.add_exchange("The plumber comes on Friday", "Good.")
        assert Path(f"{written}-wal").stat().st_size > 0
        with Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True) as m:
            assert m.store.connections.access == "ro"
            assert m.stats()["episodes"] == 4
            writer.add_exchange("The plumber moved to Monday", "Noted.")
            assert m.stats()["episodes"] == 5  # a later commit is seen by the next read
        copy = written.parent / "copy"
        copy.mkdir()
        shutil.copy(written, copy / written.name)
        shutil.copy(f"{written}-wal", copy / f"{written.name}-wal")
    with Memory.open(copy / written.name, embedder=HashEmbedder(), read_only=True) as m:
        assert m.store.connections.access == "ro"  # the log's changes need its index
        assert m.stats()["episodes"] == 5 and m.check().ok


def test_an_immutable_reader_follows_a_writer_that_came_after_it(
    written: Path, clock: FixedClock
) -> None:
    """A reader opened ``immutable`` (no writer then) reads through the writer's ``-shm``
    once one has the file open, and sees its commits; once the writer has closed the
    file it reads it ``immutable`` again, as it now is."""
    reader = Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True)
    try:
        assert reader.store.connections.access == "immutable"
        assert reader.stats()["episodes"] == 3
        with ThreadPoolExecutor(1) as other:  # a thread that holds a connection of its own
            assert other.submit(lambda: reader.stats()["episodes"]).result() == 3
            with Memory.open(written, embedder=HashEmbedder(), clock=clock) as writer:
                writer.add_exchange("The plumber comes on Friday", "Good.")
                assert reader.stats()["episodes"] == 4
                assert other.submit(lambda: reader.stats()["episodes"]).result() == 4
                assert reader.store.connections.access == "ro"
                r = reader.retrieve("when does the plumber come", day_range=None)
                assert "plumber" in r.results[0].episode.text
                writer.add_exchange("The plumber moved to Monday", "Noted.")
                assert reader.stats()["episodes"] == 5  # mode=ro: each read sees the last commit
        # the reader's open -shm keeps the writer from folding its log in on close
        assert reader.stats()["episodes"] == 5 and reader.check().ok
    finally:
        reader.close()


def test_an_immutable_reader_reads_a_file_rewritten_between_its_reads(
    written: Path, clock: FixedClock
) -> None:
    reader = Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True)
    try:
        assert reader.retrieve("what is my cat called", day_range=None).results
        with Memory.open(written, embedder=HashEmbedder(), clock=clock) as writer:
            writer.add_many(
                NewEpisode(
                    kind="fact", content=f"a long note {i} about the garden " * 30, occurred_at=T0
                )
                for i in range(300)
            )
            writer.delete([1, 2])
            writer.optimize()
        # every page it had read may have moved; the next read opens the file anew
        assert reader.check().ok  # the page check too: the file is sound, not damaged
        r = reader.retrieve("garden note", day_range=None)
        assert r.results and "garden" in r.results[0].episode.text
        assert reader.store.connections.access == "immutable"  # the writer closed it
        assert reader.stats()["episodes"] == 301
        with pytest.raises(NotFound):
            reader.get(1)
        assert reader.check().ok
    finally:
        reader.close()


def test_a_file_changed_during_an_immutable_read_is_not_called_damaged(
    written: Path, clock: FixedClock
) -> None:
    reader = Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True)
    try:
        connections = reader.store.connections
        with (
            pytest.raises(StoreError, match="was changed by a writer") as caught,
            connections.read() as cur,
        ):
            assert cur.execute("SELECT count(*) FROM episodes").fetchone()[0] == 3
            with Memory.open(written, embedder=HashEmbedder(), clock=clock) as writer:
                writer.add_many(
                    NewEpisode(kind="fact", content=f"note {i} " * 200, occurred_at=T0)
                    for i in range(300)
                )
                writer.delete([1, 2, 3])
                writer.optimize()
            cur.execute("SELECT sum(length(content)) FROM episodes").fetchall()
            cur.execute("PRAGMA quick_check").fetchall()  # the same snapshot, now torn
        assert "damaged" not in str(caught.value)
        assert reader.stats()["episodes"] == 300  # the next read sees the file as it is
    finally:
        reader.close()


def test_a_read_only_check_still_counts_the_full_text_rows(
    written: Path, clock: FixedClock
) -> None:
    con = sqlite3.connect(written)
    con.execute("DELETE FROM episodes_fts_docsize WHERE id = 2")
    con.commit()
    con.close()
    with Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True) as m:
        report = m.check()
        assert not report.ok and "full-text index has 2 rows for 3 episodes" in report.fts_integrity


def test_writes_fail_before_any_work_and_say_why(written: Path, clock: FixedClock) -> None:
    calls: list[int] = []

    class Counting(HashEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            return super().embed(texts)

    with Memory.open(written, embedder=Counting(), clock=clock, read_only=True) as m:
        dump = written.parent / "dump.jsonl"
        with Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True) as r:
            r.export(dump)
        for write in (
            lambda: m.import_(dump),  # its ids clash too, but the first thing to say is this
            lambda: m.add_many([NewEpisode(kind="fact", content="new", occurred_at=T0)]),
            lambda: m.feedback(1, [1]),
            lambda: m.sleep(),
            lambda: m.train_scorer(),
            lambda: m.reembed(),
        ):
            with pytest.raises(ReadOnlyDatabase, match="open read-only"):
                write()
        assert calls == []  # nothing was embedded


def test_a_writable_open_records_the_same_search(written: Path, clock: FixedClock) -> None:
    """The counterpart: the same retrieval on a writable open is a recorded turn, and
    ``record=False`` leaves no trace there either."""
    with Memory.open(written, embedder=HashEmbedder(), clock=clock) as m:
        quiet = m.retrieve("what is my cat called", day_range=None, record=False)
        assert quiet.turn_id is None
        assert all(m.get(x.episode.id).candidate_count == 0 for x in quiet.results)
        r = m.retrieve("what is my cat called", day_range=None)
        assert r.turn_id is not None
        assert all(m.get(x.episode.id).candidate_count == 1 for x in r.results)


def test_read_only_refuses_a_file_that_needs_a_migration(written: Path, clock: FixedClock) -> None:
    with Memory.open(written, embedder=HashEmbedder(), clock=clock) as m:
        cur = m.store.connections.get().cursor()  # the file as version 5 left it
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")
        cur.execute("PRAGMA user_version = 5")
    with pytest.raises(
        ReadOnlyDatabase, match=r"schema version 5.*open the file writable once"
    ) as e:
        Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True)
    assert "salvage" not in str(e.value)  # this process can write it: no copy is needed
    # a writable open migrates it, after which the read-only open works
    Memory.open(written, embedder=HashEmbedder(), clock=clock).close()
    Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True).close()


def test_an_old_file_this_process_cannot_write_says_to_copy_or_salvage_it(
    written: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said only "open the file writable once", and every command (init too) opened the
    file read-only again, so the advice went round in a circle."""
    with Memory.open(written, embedder=HashEmbedder(), clock=clock) as m:
        cur = m.store.connections.get().cursor()  # the file as version 5 left it
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")
        cur.execute("PRAGMA user_version = 5")
    before = _digest(written)
    real_access = os.access
    for denied, said in (
        (written, "this process cannot write the file"),
        (written.parent, "this process cannot write its folder: SQLite needs it"),
    ):
        monkeypatch.setattr(
            os, "access", lambda p, mode, d=denied: Path(p) != d and real_access(p, mode)
        )
        with pytest.raises(ReadOnlyDatabase) as e:
            Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=None)
        message = str(e.value)
        assert "schema version 5" in message and said in message, message
        assert f"`cp {written} FOLDER/`" in message
        assert f"memengine export --all-agents --salvage --db {written} -o saved.jsonl" in message
        assert "open the file writable once" not in message
    monkeypatch.setattr(os, "access", real_access)
    assert _digest(written) == before
    Memory.open(written, embedder=HashEmbedder(), clock=clock).close()  # writable: migrated


def test_read_only_needs_an_existing_memengine_file(tmp_path: Path, clock: FixedClock) -> None:
    with pytest.raises(StoreError, match="no memory file"):
        Memory.open(tmp_path / "absent.db", embedder=HashEmbedder(), read_only=True)
    assert not (tmp_path / "absent.db").exists()
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()  # an SQLite file memengine never wrote
    with pytest.raises(ReadOnlyDatabase, match="never been written"):
        Memory.open(empty, embedder=HashEmbedder(), clock=clock, read_only=True)


def test_auto_read_only_only_when_the_file_cannot_be_written(
    written: Path, clock: FixedClock
) -> None:
    with Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=None) as m:
        assert not m.read_only  # this process can write it
        m.add("still writable")


def test_record_false_with_deep_leaves_archived_memories_archived(
    written: Path, clock: FixedClock
) -> None:
    with Memory.open(written, embedder=HashEmbedder(), clock=clock) as m:
        m.store.set_status([1], "archived")
        quiet = m.retrieve("cat Mochi", deep=True, record=False, day_range=None)
        assert 1 in {r.episode.id for r in quiet.results}
        assert m.get(1).status == "archived" and m.get(1).strength == 1.0
        said = m.retrieve("cat Mochi", deep=True, day_range=None)
        assert not said.offered and m.get(1).status == "archived"  # offered nothing: kept
        asked = m.retrieve("what is my cat Mochi like?", deep=True, day_range=None)
        assert 1 in {r.episode.id for r in asked.offered}
        assert m.get(1).status == "active"  # a recorded deep turn recalls what it offers


class _Lines:
    """A text sink for :meth:`Memory.export` that keeps the lines."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def write(self, text: str) -> int:
        self.lines.extend(t for t in text.splitlines() if t)
        return len(text)


# -- the CLI as a user who cannot write the file -------------------------------------------


def _as_reader() -> list[str] | None:
    """The command prefix that runs a process as a user without write access here."""
    if os.name != "posix":
        return None
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def locked_folder(usem3: USEM3Embedder, clock: FixedClock) -> Iterator[Path]:
    """A file with the default embedder in a folder its reader cannot write."""
    folder = Path(tempfile.mkdtemp(prefix="memengine-ro-"))
    db = folder / "m.db"
    with Memory.open(db, embedder=usem3, clock=clock) as m:
        m.add_exchange("I adopted a cat named Mochi", "Lovely!")
        m.add_exchange("The dentist is on 3 June", "Noted.")
    db.chmod(0o444)
    folder.chmod(0o555)
    try:
        yield db
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)


def test_the_cli_reads_a_file_it_cannot_write(locked_folder: Path) -> None:
    prefix = _as_reader()
    if prefix is None:
        pytest.skip("running as root without setpriv: no user here lacks write access")
    before = _digest(locked_folder)
    listing = sorted(p.name for p in locked_folder.parent.iterdir())
    cli = [*prefix, sys.executable, "-m", "memengine"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMENGINE_")} | {
        "HOME": str(locked_folder.parent)
    }

    def memengine(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cli, *args, "--db", str(locked_folder)],
            capture_output=True,
            text=True,
            env=env,
            cwd=locked_folder.parent,
            timeout=120,
        )

    found = memengine("search", "what is my cat called", "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert "Mochi" in results[0]["episode"]["user_text"]
    exported = memengine("export")
    assert exported.returncode == 0, exported.stderr
    assert len(exported.stdout.splitlines()) == 2
    doctor = memengine("doctor")
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "read-only" in doctor.stdout
    refused = memengine("add", "a new memory")
    assert refused.returncode == 1
    said = " ".join(refused.stderr.split())
    assert "open read-only (this process cannot write the file)" in said
    assert _digest(locked_folder) == before
    assert sorted(p.name for p in locked_folder.parent.iterdir()) == listing


def test_the_cli_names_a_log_it_cannot_read(written: Path, clock: FixedClock) -> None:
    """A copy with changes in its ``-wal`` and no ``-shm``, in a folder the reader cannot
    write: SQLite would need a ``-shm`` to read the log, so the reader is told so rather
    than shown the file without the log's changes."""
    prefix = _as_reader()
    if prefix is None:
        pytest.skip("running as root without setpriv: no user here lacks write access")
    folder = Path(tempfile.mkdtemp(prefix="memengine-ro-"))
    with Memory.open(written, embedder=HashEmbedder(), clock=clock) as writer:
        writer.add_exchange("The plumber comes on Friday", "Good.")
        shutil.copy(written, folder / "m.db")
        shutil.copy(f"{written}-wal", folder / "m.db-wal")
    (folder / "m.db").chmod(0o644)
    (folder / "m.db-wal").chmod(0o644)
    folder.chmod(0o555)
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "memengine", "stats", "--db", str(folder / "m.db")],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if not k.startswith("MEMENGINE_")},
            cwd=folder,
            timeout=120,
        )
        listing = sorted(p.name for p in folder.iterdir())
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)
    assert done.returncode == 1, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert "has changes in its write-ahead log (m.db-wal)" in message, message
    assert listing == ["m.db", "m.db-wal"]


def test_the_cli_tells_how_to_save_an_old_file_it_cannot_write(
    written: Path, clock: FixedClock
) -> None:
    """An old file in a folder the reader cannot write: ``init`` (which the message once
    suggested) names the way out, and the salvage export it names works without writing."""
    prefix = _as_reader()
    if prefix is None:
        pytest.skip("running as root without setpriv: no user here lacks write access")
    with Memory.open(written, embedder=HashEmbedder(), clock=clock) as m:
        cur = m.store.connections.get().cursor()  # the file as version 5 left it
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")
        cur.execute("PRAGMA user_version = 5")
    folder = Path(tempfile.mkdtemp(prefix="memengine-ro-"))
    out = Path(tempfile.mkdtemp(prefix="memengine-out-"))
    db = folder / "m.db"
    shutil.copy(written, db)
    db.chmod(0o444)
    folder.chmod(0o555)
    out.chmod(0o777)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMENGINE_")}

    def memengine(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*prefix, sys.executable, "-m", "memengine", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=out,
            timeout=120,
        )

    try:
        before = _digest(db)
        init = memengine("init", "--db", str(db))
        saved = memengine("export", "--db", str(db), "--all-agents", "--salvage", "-o", "s.jsonl")
        listing = _listing(folder)
        assert _digest(db) == before
    finally:
        folder.chmod(0o755)
        shutil.rmtree(folder)
    try:
        assert init.returncode == 1, init.stdout + init.stderr
        message = " ".join(init.stderr.split())
        assert "this process cannot write" in message and "--salvage" in message, message
        assert "open the file writable once" not in message
        assert saved.returncode == 0, saved.stdout + saved.stderr
        lines = (out / "s.jsonl").read_text(encoding="utf-8").splitlines()
        assert sum("Mochi" in line for line in lines) == 1
        assert listing == ["m.db"]
    finally:
        shutil.rmtree(out)


def test_an_immutable_export_torn_by_a_writer_fails_rather_than_comes_out_short(
    written: Path, clock: FixedClock
) -> None:
    with Memory.open(written, embedder=HashEmbedder(), clock=clock) as m:
        m.add_many(
            NewEpisode(kind="fact", content=f"note {i} " * 40, occurred_at=T0) for i in range(3000)
        )
    reader = Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True)
    try:
        assert reader.store.connections.access == "immutable"
        batches = reader.store.iter_episodes()
        first = next(batches)
        with Memory.open(written, embedder=HashEmbedder(), clock=clock) as writer:
            writer.delete(list(range(1, 2000)))
            writer.optimize(vectors=True)
        with pytest.raises(StoreError, match="changed by a writer"):
            for batch in batches:
                first.extend(batch)
        assert reader.stats()["episodes"] == 1004  # the next read sees the file as it is
    finally:
        reader.close()
