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
from pathlib import Path

import pytest

from memengine import FixedClock, Memory, ReadOnlyDatabase, StoreError
from memengine.embed.usem3 import USEM3Embedder
from memengine.store.database import FTS_NOT_CHECKED

from .helpers import HashEmbedder


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


def test_a_read_only_open_searches_and_exports_without_writing(
    written: Path, clock: FixedClock
) -> None:
    before = _digest(written)
    with Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True) as m:
        assert m.read_only and m.store.connections.access == "ro"  # the folder is writable
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
    assert _digest(written) == before


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
    con = sqlite3.connect(written)
    con.execute("PRAGMA user_version = 5")
    con.close()
    with pytest.raises(ReadOnlyDatabase, match=r"schema version 5.*open the file writable once"):
        Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True)
    # a writable open migrates it, after which the read-only open works
    Memory.open(written, embedder=HashEmbedder(), clock=clock).close()
    Memory.open(written, embedder=HashEmbedder(), clock=clock, read_only=True).close()


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
    assert "read-only" in refused.stderr
    assert _digest(locked_folder) == before
    assert sorted(p.name for p in locked_folder.parent.iterdir()) == listing
