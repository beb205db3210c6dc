"""The store on real SQLite + sqlite-vec + FTS5: migrations, triggers, consistency, atomicity."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from memengine import (
    EmbedderMismatch,
    FixedClock,
    InvalidInput,
    Memory,
    NewEpisode,
    NotAMemEngineDatabase,
    ReadOnlyDatabase,
    SchemaTooNew,
    StoreError,
)
from memengine.embed.base import Vectors
from memengine.embed.probe import PROBE_TEXT, same_model
from memengine.store.connect import PAGE_SIZE, sqlite_module
from memengine.store.database import Store
from memengine.store.migrate import APPLICATION_ID, latest_version
from memengine.store.vectors import PARTITION_INDEX

from .helpers import HashEmbedder, last_line_printed, word_episodes

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)


def _raw(mem: Memory):  # the test may speak SQL to check what the store wrote
    return mem.store.connections.get().cursor()


def test_new_file_is_migrated_and_reopens(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version()
        meta = mem.store.meta()
        assert meta["embedder_id"] == "hash:64"
        assert meta["dimension"] == "64"
        assert meta["metric"] == "cosine"
        new_id = mem.add_exchange("hello", "hi there", occurred_at=T0)
        cur = _raw(mem)
        assert cur.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        assert cur.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert cur.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert cur.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.get(new_id).user_text == "hello"
        assert mem.store.schema_version() == latest_version()


def test_an_episode_id_is_never_given_out_twice(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        first = mem.add("first")
        top = mem.add("second")
        mem.delete([top])  # the newest: its id must not come back
        third = mem.add("third")
        assert third > top
        batch = mem.add_many([mem._new(content=f"note {i}", kind="fact") for i in range(3)])
        assert batch == [third + 1, third + 2, third + 3]
        mem.delete(batch)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:  # the mark is kept
        again = mem.add("fourth")
        assert again == batch[-1] + 1
        assert [mem.get(i).content for i in (first, third, again)] == ["first", "third", "fourth"]
        assert mem.store.count() == 3
        mem.delete([first])  # not the newest: changes nothing
        assert mem.add("fifth") == again + 1
        assert mem.check().ok


def test_a_version_5_file_gets_the_id_mark(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        ids = [mem.add(f"note {i}") for i in range(3)]
        cur = _raw(mem)  # the file as schema version 5 left it
        cur.execute("DROP TRIGGER episodes_id_high")
        cur.execute("DELETE FROM meta WHERE key = 'episode_id_high'")
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")
        cur.execute("PRAGMA user_version = 5")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version()
        assert mem.store.meta()["episode_id_high"] == str(ids[-1])
        mem.delete([ids[-1]])
        assert mem.add("new") == ids[-1] + 1


def test_a_version_6_file_gets_the_turn_id_mark(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add("bob plays the piano", kind="fact", agent="bob")
        turns = [mem.retrieve("piano", agent="bob").turn_id for _ in range(3)]
        cur = _raw(mem)  # the file as schema version 6 left it
        cur.execute("DROP TRIGGER turns_id_high")
        cur.execute("DELETE FROM meta WHERE key = 'turn_id_high'")
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")
        cur.execute("PRAGMA user_version = 6")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version()
        assert mem.store.meta()["turn_id_high"] == str(turns[-1])
        mem.forget_agent("bob")  # every turn goes
        mem.add("alice has a cat", kind="fact", agent="alice")
        assert mem.retrieve("cat", agent="alice").turn_id == turns[-1] + 1


def test_a_version_8_file_gets_its_id_mark_above_the_ids_its_turns_name(
    db_path: Path, clock: FixedClock
) -> None:
    """An earlier release of migration 6 seeded the mark from the largest stored id only, and
    a file it migrated kept that mark: a deleted top id an old turn names was given out
    again, and a feedback on that turn credited the new, unrelated memory."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        kept = mem.add("likes green tea", kind="fact")
        top = mem.add("歯医者の予約は月曜日", kind="fact")
        turn = mem.retrieve("歯医者の予約", day_range=None)
        assert top in [x.episode.id for x in turn.results] and turn.turn_id is not None
        mem.delete([top])
        cur = _raw(mem)  # as that release left it: the mark at the largest id stored
        cur.execute("UPDATE meta SET value = ? WHERE key = 'episode_id_high'", (str(kept),))
        cur.execute("PRAGMA user_version = 8")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version()
        assert mem.store.meta()["episode_id_high"] == str(top)
        new = mem.add_exchange("My new hobby is pottery.", "ok")
        assert new == top + 1
        done = mem.feedback(turn.turn_id, used=[top])
        assert done.used == () and any("deleted after the turn" in d for d in done.degraded)
        assert mem.get(new).access_count == 0 and mem.check().ok


def test_the_id_mark_step_takes_the_strength_history_and_never_lowers_a_mark(
    db_path: Path, clock: FixedClock
) -> None:
    """A sleep's strength history outlives a deleted memory, so its ids are above the mark
    too; a mark already above every record (kept by the trigger since schema 6) stays."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        first = mem.add("the boiler was serviced in march", kind="fact")
        slept = mem.add("猫の名前はモチ", kind="fact")
        mem.sleep()  # each active memory's strength is in the history
        mem.delete([slept])
        cur = _raw(mem)
        cur.execute("UPDATE meta SET value = ? WHERE key = 'episode_id_high'", (str(first),))
        cur.execute("PRAGMA user_version = 8")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.meta()["episode_id_high"] == str(slept)
        newest = mem.add("a note written after the upgrade", kind="fact")
        assert newest == slept + 1
        mem.delete([newest])  # the trigger keeps the mark above every record
        cur = _raw(mem)
        cur.execute("PRAGMA user_version = 8")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.meta()["episode_id_high"] == str(newest)  # not lowered to `slept`
        assert mem.add("one more note", kind="fact") == newest + 1


def _as_version(cur: sqlite3.Cursor, version: int, mark: int) -> None:
    """Leave the file as schema ``version`` (5: before the id mark, 8: the mark at ``mark``,
    as an earlier release of migration 6 left it) for the next open to upgrade."""
    if version == 5:
        cur.execute("DROP TRIGGER episodes_id_high")
        cur.execute("DROP TRIGGER turns_id_high")
        cur.execute("DELETE FROM meta WHERE key IN ('episode_id_high', 'turn_id_high')")
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")
    else:
        cur.execute("UPDATE meta SET value = ? WHERE key = 'episode_id_high'", (str(mark),))
    cur.execute(f"PRAGMA user_version = {version}")


_DAMAGED_TURNS = {  # (candidates, used) memengine would never write
    "a string among the candidates": ('["abc"]', None),
    "a list mixing a string and an object": ('[{"id": 1}, "x"]', None),
    "an id past 2**64": ('[{"id": 99999999999999999999}]', None),
    "a negative id": ('[{"id": -3}]', "[-4]"),
    "a float id": ('[{"id": 3.5}]', "[4.0]"),
    "an id in words": ('[{"id": "7x"}, {"id": true}, [1, 2]]', '["abc", {"id": 5}]'),
    "no JSON at all": ("not json", "garbage"),
    "an id past MAX_KEPT_ID": ('[{"id": 9007199254740992}]', "[9007199254740993]"),
}


@pytest.mark.parametrize("version", [5, 8])
@pytest.mark.parametrize("damage", list(_DAMAGED_TURNS))
def test_a_damaged_turn_record_neither_stops_the_upgrade_nor_lifts_the_id_mark(
    db_path: Path, clock: FixedClock, version: int, damage: str
) -> None:
    """Steps 6 and 9 read the ids a turn names: a string among the candidates made
    json_extract fail ("malformed JSON") and the whole file was refused for one turn; an
    id of 1e20 lifted the mark to 2**63 - 1 and every add was refused after. A damaged
    record is passed over; the sound records of the same file still count."""
    candidates, used = _DAMAGED_TURNS[damage]
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        kept = mem.add("likes green tea", kind="fact")
        top = mem.add("歯医者の予約は月曜日", kind="fact")
        turn = mem.retrieve("歯医者の予約", day_range=None)
        assert top in [x.episode.id for x in turn.results] and turn.turn_id is not None
        mem.delete([top])
        cur = _raw(mem)
        cur.execute(
            "INSERT INTO turns (agent, created_at, created_ts, candidates, used) "
            "SELECT agent, created_at, created_ts, ?, ? FROM turns WHERE id = ?",
            (candidates, used, turn.turn_id),
        )
        _as_version(cur, version, kept)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version()
        assert mem.store.meta()["episode_id_high"] == str(top)  # the sound turn's id
        assert mem.add("a note after the upgrade", kind="fact") == top + 1
        assert mem.check().ok


@pytest.mark.parametrize("version", [5, 8])
def test_an_object_among_strings_still_names_its_id_to_the_upgrade(
    db_path: Path, clock: FixedClock, version: int
) -> None:
    """Passing over a damaged element leaves the sound ones of the same list: their ids
    (up to MAX_KEPT_ID) still lift the mark, in candidates and in used alike."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        kept = mem.add("the cat is called Mochi", kind="fact")
        cur = _raw(mem)
        cur.execute(
            "INSERT INTO turns (agent, created_at, created_ts, candidates, used) "
            "VALUES ('default', '2026-01-01T00:00:00+00:00', 1.0, ?, ?)",
            ('["abc", {"id": 40, "f": [0.5]}, {"id": "50"}]', '["x", 45, 3.0]'),
        )
        _as_version(cur, version, kept)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.meta()["episode_id_high"] == "45"
        assert mem.add("next", kind="fact") == 46


def test_a_migration_step_that_fails_on_the_data_names_the_step_and_the_salvage(
    db_path: Path, clock: FixedClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step SQLite stops on what the file holds was reported as "not a memengine
    database: malformed JSON", with no way out; it names the step, SQLite's words and
    the salvage export, and the file keeps the version before the step."""
    from memengine import DamagedDatabase, salvage_file
    from memengine.store import migrate

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        kept = mem.add("likes green tea", kind="fact")
        cur = _raw(mem)
        cur.execute(
            "INSERT INTO turns (agent, created_at, created_ts, candidates) "
            "VALUES ('default', '2026-01-01T00:00:00+00:00', 1.0, 'not json')"
        )
        _as_version(cur, 8, kept)
    step = migrate.schema_sql
    monkeypatch.setattr(  # a step reading every record as JSON, as schema 9 once did
        migrate,
        "schema_sql",
        lambda name: step(name) + "\nSELECT max(json_extract(candidates, '$.id')) FROM turns;",
    )
    with pytest.raises(DamagedDatabase) as failed:
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    said = str(failed.value)
    assert not isinstance(failed.value, NotAMemEngineDatabase)
    assert "the upgrade of the file to schema version 9 failed" in said
    assert "SQLite said: malformed JSON" in said and "keeps version 8" in said
    assert f"memengine export --all-agents --salvage --db {db_path}" in said
    conn = sqlite_module().connect(str(db_path))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 8  # the step rolled back
    conn.close()
    assert salvage_file(db_path, tmp_path / "saved.jsonl").episodes == 1  # as it says
    monkeypatch.setattr(migrate, "schema_sql", step)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version() and mem.get(kept) is not None


def test_a_file_with_other_pages_keeps_them(db_path: Path, clock: FixedClock) -> None:
    conn = sqlite_module().connect(str(db_path))  # an empty file made with 4 KiB pages
    conn.execute("PRAGMA page_size = 4096")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("VACUUM")
    conn.close()
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        ids = mem.add_many(
            [
                NewEpisode(kind="fact", content=f"fact {i} about tea", occurred_at=T0)
                for i in range(300)
            ]
        )
        assert _raw(mem).execute("PRAGMA page_size").fetchone()[0] == 4096
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert _raw(mem).execute("PRAGMA page_size").fetchone()[0] == 4096
        top = mem.retrieve("fact 7 about tea", day_range=None).results[0]
        assert top.episode.id == ids[7]
        assert mem.check().ok


def _plan(path: Path) -> str:
    # the statement vec0 runs to find one agent's chunks (a new connection: a fresh plan)
    conn = sqlite_module().connect(str(path))
    rows = conn.execute(
        "EXPLAIN QUERY PLAN SELECT chunk_id, validity, rowids FROM episode_vectors_chunks "
        "WHERE partition00 = ?",
        ("a",),
    ).fetchall()
    conn.close()
    return " ".join(str(r[-1]) for r in rows)


def test_vector_chunks_are_found_by_agent_through_an_index(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        for agent in ("a", "b", "c"):
            mem.add_exchange(f"{agent} likes tea", "noted", agent=agent, occurred_at=T0)
        assert PARTITION_INDEX in _plan(db_path)
        cur = _raw(mem)
        cur.execute(f"DROP INDEX {PARTITION_INDEX}")  # a file from before the index
        assert "SCAN" in _plan(db_path)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert PARTITION_INDEX in _plan(db_path)  # given back on open
        assert mem.retrieve("tea", agent="b", day_range=None).results[0].episode.agent == "b"
        mem.reembed()  # a new vector table gets it too
        assert PARTITION_INDEX in _plan(db_path)
        report = mem.check()
        assert report.ok and report.chunk_index == "ok"


def test_not_a_database(tmp_path: Path, clock: FixedClock) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("this is not SQLite at all, just some text " * 10)
    with pytest.raises(NotAMemEngineDatabase):
        Memory.open(bogus, embedder=HashEmbedder(), clock=clock)
    assert bogus.read_text().startswith("this is not SQLite")


def test_foreign_sqlite_file_is_refused(tmp_path: Path, clock: FixedClock) -> None:
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    con.commit()
    con.close()
    before = other.read_bytes()
    with pytest.raises(NotAMemEngineDatabase, match=f"{other}: .*not a memengine database"):
        Memory.open(other, embedder=HashEmbedder(), clock=clock)
    assert other.read_bytes() == before  # still in rollback-journal mode: not switched to WAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_newer_schema_is_refused(db_path: Path, clock: FixedClock) -> None:
    Memory.open(db_path, embedder=HashEmbedder(), clock=clock).close()
    con = sqlite3.connect(db_path)
    con.execute("PRAGMA journal_mode = DELETE")  # as a newer memengine might leave it
    con.execute(f"PRAGMA user_version = {latest_version() + 1}")
    con.commit()
    con.close()
    before = db_path.read_bytes()
    with pytest.raises(SchemaTooNew, match=f"{db_path}: .*upgrade memengine"):
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    assert db_path.read_bytes() == before


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="POSIX modes, not root")
def test_read_only_file(db_path: Path, clock: FixedClock) -> None:  # pragma: no cover - root in CI
    Memory.open(db_path, embedder=HashEmbedder(), clock=clock).close()
    db_path.chmod(0o444)
    with pytest.raises(ReadOnlyDatabase):
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock)


def test_read_only_check_names_the_file(db_path: Path, clock: FixedClock, monkeypatch) -> None:
    Memory.open(db_path, embedder=HashEmbedder(), clock=clock).close()
    real_access = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if Path(p) == db_path else real_access(p, mode)
    )
    with pytest.raises(ReadOnlyDatabase, match=f"{db_path} is read-only \\(to search or export it"):
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, read_only=None) as mem:
        assert mem.read_only  # None: read-only because this process cannot write it


def test_embedder_mismatch_says_how_to_reembed(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("the deadline is friday", "noted", occurred_at=T0)
    with pytest.raises(EmbedderMismatch, match="memengine reembed"):
        Memory.open(db_path, embedder=HashEmbedder(32, name="other"), clock=clock)
    other = HashEmbedder(32, name="other")
    with Memory.open(db_path, embedder=other, clock=clock, allow_embedder_change=True) as mem:
        seen: list[tuple[int, int]] = []
        assert mem.reembed(progress=lambda d, t: seen.append((d, t))) == 1
        assert seen[-1] == (1, 1)
        assert mem.store.meta()["embedder_id"] == "other:32"
        assert mem.check().ok
    with Memory.open(db_path, embedder=HashEmbedder(32, name="other"), clock=clock) as mem:
        hits = mem.retrieve("deadline", day_range=None)
        assert [r.episode.user_text for r in hits.results] == ["the deadline is friday"]


def test_a_handle_opened_before_a_reembed_reports_it(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as before:
        before.add_exchange("the deadline is friday", "noted", occurred_at=T0)
        before.warm()
        other = HashEmbedder(32, name="other")
        with Memory.open(db_path, embedder=other, clock=clock, allow_embedder_change=True) as m:
            m.reembed()
        stats = before.stats()
        assert (stats["embedder"], stats["dimension"]) == ("other:32", 32)
        with pytest.raises(EmbedderMismatch, match="re-embedded with other:32"):
            before.warm()
        with pytest.raises(EmbedderMismatch, match="re-embedded with other:32"):
            before.retrieve("deadline")


class _Broken(HashEmbedder):
    """Gives the text ``spoiled`` names a vector of zeros, or of NaN."""

    def __init__(self, fill: float) -> None:
        super().__init__(32, name="broken")
        self.fill = fill

    def embed(self, texts: Sequence[str]) -> Vectors:
        out = super().embed(texts)
        for row, text in enumerate(texts):
            if "spoiled" in text:
                out[row] = self.fill
        return out


@pytest.mark.parametrize(("fill", "kind"), [(0.0, "only zeros"), (float("nan"), "NaN")])
def test_vectors_that_cannot_be_searched_are_refused(
    db_path: Path, clock: FixedClock, fill: float, kind: str
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("the deadline is friday", "noted", occurred_at=T0)
        spoiled = mem.add_exchange("the milk is spoiled", "throw it out", occurred_at=T0)
    broken = _Broken(fill)
    with Memory.open(db_path, embedder=broken, clock=clock, allow_embedder_change=True) as mem:
        with pytest.raises(InvalidInput, match=f"the vector of episode {spoiled} holds {kind}"):
            mem.reembed()
        assert mem.store.meta()["embedder_id"] == "hash:64" and mem.check().ok  # as it was
    with Memory.open(db_path, embedder=_Broken(fill), clock=clock, allow_embedder_change=True) as m:
        m.store.replace_embedder(
            "broken:32",
            32,
            lambda eps: np.eye(32, dtype=np.float32)[: len(eps)] + 0.1,
            probe=m.embedder.embed([PROBE_TEXT])[0],  # the model's own
            same_model=same_model,
        )
    with Memory.open(db_path, embedder=_Broken(fill), clock=clock) as mem:
        with pytest.raises(
            InvalidInput, match=f"the vector of the episode 'another spoiled thing' holds {kind}"
        ):
            mem.add("another spoiled thing")
        assert mem.store.count() == 2 and mem.check().ok


def test_fts_triggers_follow_insert_update_delete(mem: Memory) -> None:
    a = mem.add_exchange("my cat Kinako likes tuna", "cute", occurred_at=T0)
    b = mem.add_exchange("the printer is broken", "oh no", occurred_at=T0)
    cur = _raw(mem)

    def fts(term: str) -> list[int]:
        return [
            r[0]
            for r in cur.execute(
                "SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ?",
                (f'search_text : "{term}"',),
            )
        ]

    assert fts("kinako") == [a]
    assert fts("printer") == [b]
    cur.execute("UPDATE episodes SET search_text = 'scanner works' WHERE id = ?", (b,))
    assert fts("printer") == []
    assert fts("scanner") == [b]
    mem.delete(a)
    assert fts("kinako") == []
    assert mem.check().ok


def test_neighbouring_turns_share_their_words_with_a_lower_weight(mem: Memory) -> None:
    a = mem.add_exchange("Where should I take Juno for a walk?", "The harbour?", occurred_at=T0)
    b = mem.add_exchange("Yes, she loved it there", "Lovely", occurred_at=T0 + timedelta(minutes=3))
    c = mem.add_exchange("unrelated, much later", "ok", occurred_at=T0 + timedelta(days=2))
    cur = _raw(mem)
    ctx = dict(cur.execute("SELECT id, context_text FROM episodes").fetchall())
    assert "juno" in ctx[b] and "loved" in ctx[a] and ctx[c] == ""
    hits = mem.retrieve("harbour walk with Juno", day_range=None, limit=3)
    assert [r.episode.id for r in hits.results][:2] == [a, b]


def test_vector_filters_follow_status_changes(mem: Memory) -> None:
    a = mem.add_exchange("archive me", "ok", occurred_at=T0)
    mem.store.set_status([a], "archived")
    cur = _raw(mem)
    assert (
        cur.execute("SELECT status FROM episode_vectors WHERE episode_id = ?", (a,)).fetchone()[0]
        == "archived"
    )
    assert mem.retrieve("archive me", day_range=None).results == ()
    deep = mem.retrieve("archive me", day_range=None, deep=True)
    assert [r.episode.id for r in deep.results] == [a]
    assert mem.check().ok


def test_consistency_check_finds_a_missing_vector(mem: Memory) -> None:
    a = mem.add_exchange("one", "two", occurred_at=T0)
    assert mem.check().ok
    _raw(mem).execute("DELETE FROM episode_vectors WHERE episode_id = ?", (a,))
    report = mem.check()
    assert not report.ok
    assert report.missing_vectors == [a]


def test_consistency_check_finds_a_vector_its_chunk_hides(mem: Memory) -> None:
    """A cleared validity bit in vec0's chunk hid a vector from the KNN scan while the check
    (a lookup by id) still found it: doctor said the file was sound."""
    ids = [mem.add_exchange(f"note {i}", "ok", occurred_at=T0) for i in range(10)]
    mem.delete([ids[3]])
    mem.store.set_status([ids[4]], "archived")
    assert mem.check().ok and mem.check().hidden_vectors == []
    cur = _raw(mem)
    chunk, offset = cur.execute(
        "SELECT chunk_id, chunk_offset FROM episode_vectors_rowids WHERE rowid = ?", (ids[6],)
    ).fetchone()
    (valid,) = cur.execute(
        "SELECT validity FROM episode_vectors_chunks WHERE chunk_id = ?", (chunk,)
    ).fetchone()
    cleared = bytearray(valid)
    cleared[offset // 8] &= ~(1 << (offset % 8)) & 0xFF
    cur.execute(
        "UPDATE episode_vectors_chunks SET validity = ? WHERE chunk_id = ?", (bytes(cleared), chunk)
    )
    report = mem.check()
    assert not report.ok and report.hidden_vectors == [ids[6]]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0])
def test_consistency_check_finds_a_vector_changed_in_the_file(mem: Memory, value: float) -> None:
    """A NaN written into a vector's slot passed the check while the memory fell out of its
    searches' ranking."""
    import numpy as np

    ids = [mem.add_exchange(f"note {i}", "ok", occurred_at=T0) for i in range(10)]
    cur = _raw(mem)
    slots = {
        i: cur.execute(
            "SELECT chunk_id, chunk_offset FROM episode_vectors_rowids WHERE rowid = ?", (i,)
        ).fetchone()
        for i in (ids[3], ids[6])
    }
    mem.delete([ids[3]])  # a slot no longer held: whatever it holds is no finding
    assert mem.check().ok and mem.check().bad_vectors == []
    for chunk, offset in slots.values():
        (blob,) = cur.execute(
            "SELECT vectors FROM episode_vectors_vector_chunks00 WHERE rowid = ?", (chunk,)
        ).fetchone()
        vecs = np.frombuffer(blob, dtype="<f4").copy().reshape(-1, mem.store.dimension)
        if value == 0.0:  # (a zero vector: vec0 ranks it first for every query)
            vecs[offset] = 0.0
        else:
            vecs[offset, 0] = value
        cur.execute(
            "UPDATE episode_vectors_vector_chunks00 SET vectors = ? WHERE rowid = ?",
            (vecs.tobytes(), chunk),
        )
    report = mem.check()
    assert not report.ok and report.bad_vectors == [ids[6]]


def test_failed_batch_leaves_the_file_as_it_was(mem: Memory) -> None:
    mem.add_exchange("before", "the batch", occurred_at=T0)
    first = mem.add_exchange("taken id", "x", occurred_at=T0)
    batch = [
        NewEpisode(user_text=f"new {i}", reply_text="r", occurred_at=T0 + timedelta(minutes=i))
        for i in range(5)
    ]
    # the fourth reuses an existing id: the whole batch must roll back
    batch[3] = batch[3].model_copy(update={"id": first})
    with pytest.raises(InvalidInput):
        mem.add_many(batch, batch_size=10)
    assert mem.store.count() == 2
    assert mem.check().ok
    cur = _raw(mem)
    assert cur.execute("SELECT count(*) FROM episode_vectors").fetchone()[0] == 2
    assert (
        cur.execute("SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH 'new'").fetchone()[
            0
        ]
        == 0
    )


def test_batches_commit_one_transaction_each(mem: Memory) -> None:
    eps = [NewEpisode(content=f"fact {i}", kind="fact", occurred_at=T0) for i in range(25)]
    progress: list[tuple[int, int]] = []
    ids = mem.add_many(eps, batch_size=10, progress=lambda d, t: progress.append((d, t)), total=25)
    assert len(ids) == 25 and ids == sorted(ids)
    assert progress == [(10, 25), (20, 25), (25, 25)]


def test_scoped_delete_never_deletes_more_than_asked(mem: Memory) -> None:
    a = mem.add_exchange("alice's secret", "kept", agent="alice", occurred_at=T0)
    b = mem.add_exchange("bob's note", "kept", agent="bob", occurred_at=T0)
    c = mem.add_exchange("bob's other note", "kept", agent="bob", occurred_at=T0)
    assert mem.delete([a, b], agent="bob") == [b]
    assert mem.get(a).agent == "alice"
    assert mem.get(c).agent == "bob"
    assert mem.delete([999]) == []
    assert mem.store.count() == 2
    assert mem.check().ok


def test_wrong_vector_dimension_is_refused(mem: Memory) -> None:
    import numpy as np

    ep = NewEpisode(content="x", kind="fact", occurred_at=T0)
    with pytest.raises(InvalidInput, match="dimensions"):
        mem.store.add([ep], ["x"], np.ones((1, 3), dtype=np.float32))
    assert mem.store.count() == 0


def test_sqlite_errors_become_store_errors_and_a_sound_file_is_not_called_damaged(
    mem: Memory,
) -> None:
    conns = mem.store.connections
    with pytest.raises(StoreError, match="no such table") as caught, conns.read() as cur:
        cur.execute("SELECT * FROM no_such_table")
    assert "damaged" not in str(caught.value)
    with pytest.raises(StoreError, match="UNIQUE constraint") as caught, conns.write() as cur:
        cur.execute("INSERT INTO agents (name, created_at) VALUES ('x', 'now')")
        cur.execute("INSERT INTO agents (name, created_at) VALUES ('x', 'now')")
    assert "damaged" not in str(caught.value)
    with conns.read() as cur:  # the failed write left nothing behind
        assert cur.execute("SELECT count(*) FROM agents WHERE name = 'x'").fetchone()[0] == 0
    assert conns.check_pages() == "ok"


def test_next_turns_follow_one_agents_conversation_within_the_filters(mem: Memory) -> None:
    from memengine.store.filters import Filters

    at = [T0 + timedelta(minutes=m) for m in (0, 1, 2, 5, 200)]
    a = mem.add_exchange("Maja is getting married!", "When?", occurred_at=at[0])
    mem.add_exchange("another agent's turn", "ok", agent="other", occurred_at=at[1])
    mem.add("a note, not a turn", occurred_at=at[2])
    b = mem.add_exchange("November 21st.", "Lovely", occurred_at=at[3])
    c = mem.add_exchange("three hours later", "ok", occurred_at=at[4])
    d = mem.add_exchange("same minute as c", "ok", occurred_at=at[4])  # ties go by id
    everything = Filters(agent="default")
    found = mem.store.next_turns([a, b, c, d], everything)
    assert {k: v.id for k, v in found.items()} == {a: b, c: d}  # b's next is past the gap
    assert found[a].text.startswith("November 21st.")
    # a next turn the filters hide is not skipped over
    mem.store.set_status([b], "archived")
    assert a not in mem.store.next_turns([a], everything)
    assert mem.store.next_turns([a], Filters(agent="default", statuses=("active", "archived")))
    mem.store.set_status([b], "active")
    with mem.store.connections.write() as cur:
        cur.execute("UPDATE episodes SET sensitivity = 3 WHERE id = ?", (b,))
    assert mem.store.next_turns([a], Filters(agent="default", max_sensitivity=1)) == {}
    assert mem.store.next_turns([], everything) == {}


def test_next_turn_lookups_read_a_few_rows_not_the_agents_history(mem: Memory) -> None:
    from memengine.store.episodes import _NEXT_TURN, visible_sql
    from memengine.store.filters import Filters

    def plan(sql: str, params: list[object]) -> str:
        return " | ".join(
            str(r[-1]) for r in _raw(mem).execute("EXPLAIN QUERY PLAN " + sql, params)
        )

    following = plan(_NEXT_TURN.format(marks="?"), [1, 3600])
    assert "episodes_agent_ts" in following and "SCAN x" not in following, following
    where, params = Filters(agent="default").sql()
    visible = plan(visible_sql(3, where), [1, 2, 3, *params])
    # by id: not a walk over the agent's (agent, status, …) index
    assert "INTEGER PRIMARY KEY" in visible and "episodes_agent_time" not in visible, visible


def test_a_reembed_beside_another_writer_leaves_no_episode_without_its_vector(
    db_path: Path, clock: FixedClock
) -> None:
    """The episodes are listed inside the re-embed's transaction: one added meanwhile by
    another writer is either in the list or waits for it (and gets the new vectors)."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as first:
        first.add_many(word_episodes(300, "default"))
    stop = threading.Event()
    added: list[int] = []

    def writer() -> None:
        with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as w:
            while not stop.is_set():
                added.append(w.add_exchange(f"note {len(added)}", "ok", occurred_at=T0))

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
            for _ in range(8):
                mem.reembed()
    finally:
        stop.set()
        thread.join()
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        report = mem.check()
        assert report.ok and not report.missing_vectors, report
        assert report.vectors == report.episodes == 300 + len(added) and added


def test_a_file_reembedded_by_another_process_is_not_written_or_searched_with_old_vectors(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("the deadline is friday", "noted", occurred_at=T0)
        turn = mem.retrieve("deadline", day_range=None)
        other = HashEmbedder(name="other")  # the same dimension: nothing else would tell
        with Memory.open(db_path, embedder=other, clock=clock, allow_embedder_change=True) as b:
            with pytest.raises(EmbedderMismatch, match="holds vectors of hash:64"):
                b.add_exchange("a vector of the wrong embedder", "no", occurred_at=T0)
            with pytest.raises(EmbedderMismatch, match="holds vectors of hash:64"):
                b.retrieve("deadline", day_range=None)
            assert b.reembed() == 1
        assert turn.turn_id is not None
        for call in (
            lambda: mem.add_exchange("the plumber comes monday", "ok", occurred_at=T0),
            lambda: mem.retrieve("deadline", day_range=None),
            lambda: mem.feedback(turn.turn_id, answer="friday it is", judge="match"),
        ):
            with pytest.raises(
                EmbedderMismatch, match=r"re-embedded with other:64 \(64 dimensions\) by another"
            ):
                call()
        assert mem.store.count() == 1
    with Memory.open(db_path, embedder=HashEmbedder(name="other"), clock=clock) as mem:
        assert mem.retrieve("deadline", day_range=None).results and mem.check().ok


def test_an_export_is_one_snapshot_while_others_write(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_many(word_episodes(1200, "default"))
        batches = mem.store.iter_episodes()
        first = next(batches)
        with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as other:
            other.delete([1100, 1101])
            other.add_exchange("written during the export", "ok", occurred_at=T0)
        rest = [e.id for batch in batches for e in batch]
        assert [e.id for e in first] + rest == list(range(1, 1201))  # as when it began
        assert mem.store.count() == 1199


def test_check_after_other_connections_wrote_does_not_call_the_file_damaged(
    mem: Memory,
) -> None:
    """SQLite's page check runs FTS5's own check, which used the index structure this
    connection read last: after another thread's writes it called a sound file damaged."""
    mem.add_exchange("seed", "seed", occurred_at=T0)
    assert mem.check().ok
    other = threading.Thread(
        target=lambda: [mem.add_exchange(f"hello {i}", "ok", occurred_at=T0) for i in range(30)]
    )
    other.start()
    other.join()
    report = mem.check()
    assert report.ok and report.sqlite_check == "ok", report
    assert report.episodes == 31


def test_an_in_memory_database_is_refused_up_front(tmp_path: Path) -> None:
    for path in (":memory:", "file:x.db?mode=memory"):
        with pytest.raises(InvalidInput, match="keeps its memory in a file"):
            Memory.open(path, embedder=HashEmbedder())
    assert not list(Path.cwd().glob(":memory:*"))


def test_threads_that_end_give_their_connections_back(mem: Memory) -> None:
    """A server running each request in a new thread: the connections of ended threads
    go back to the pool (the 41st thread waited 30 s, then failed)."""
    mem.add_exchange("seed", "seed", occurred_at=T0)
    for _ in range(60):
        t = threading.Thread(target=mem.stats)
        t.start()
        t.join()
    assert len(mem.store.connections._all) <= 2
    assert mem.stats()["episodes"] == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_or_the_database_itself_is_refused(tmp_path: Path) -> None:
    from memengine import Memory, salvage_file
    from memengine.errors import InvalidInput, NotAMemEngineDatabase

    from .helpers import HashEmbedder

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for read_only in (False, True):
        with pytest.raises(NotAMemEngineDatabase, match="not a regular file"):
            Memory.open(fifo, read_only=read_only, embedder=HashEmbedder())
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add_exchange("my cat is Kinako", "cute")
        (tmp_path / "link.db").symlink_to(db)
        for target in (db, tmp_path / "link.db", tmp_path / "m.db-wal", tmp_path / "m.db-shm"):
            with pytest.raises(InvalidInput, match="database"):
                mem.export(target)
            with pytest.raises(InvalidInput, match="database"):
                mem.salvage(target)
        assert mem.check().ok
    with pytest.raises(InvalidInput, match="the database itself"):
        salvage_file(db, db)
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        assert mem.stats()["episodes"] == 1


def test_the_recorded_embedder_is_read_without_writing(tmp_path: Path) -> None:
    from .helpers import HashEmbedder

    assert Store.recorded_embedder(tmp_path / "absent.db") is None
    (tmp_path / "text.db").write_text("not a database")
    assert Store.recorded_embedder(tmp_path / "text.db") is None
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.close()
    assert Store.recorded_embedder(foreign) is None
    emb = HashEmbedder()
    db = tmp_path / "m.db"
    Memory.open(db, embedder=emb).close()
    before = sorted(p.name for p in tmp_path.iterdir())
    assert Store.recorded_embedder(db) == emb.id
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no -wal or -shm made


def test_the_database_is_known_by_its_place_after_a_chdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memengine import Memory
    from memengine.errors import InvalidInput

    from .helpers import HashEmbedder

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    with Memory.open("m.db", embedder=HashEmbedder()) as mem:
        mem.add("a memory")
        monkeypatch.chdir(tmp_path / "b")
        with pytest.raises(InvalidInput, match="the database itself"):
            mem.export(tmp_path / "a" / "m.db")
        with pytest.raises(InvalidInput, match="does not exist"):
            mem.export("nope/x.jsonl")
        assert mem.export("m.jsonl") == 1 and mem.stats()["episodes"] == 1
    assert (tmp_path / "b" / "m.jsonl").is_file()


def test_a_version_7_file_gets_decay_from_and_its_memories_decay_as_before(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        kept = mem.add("the boiler was serviced in march", kind="fact")
        cur = _raw(mem)  # the file as schema version 7 left it
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")
        cur.execute("PRAGMA user_version = 7")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version()
        cur = _raw(mem)
        assert cur.execute("SELECT decay_from FROM episodes WHERE id = ?", (kept,)).fetchone() == (
            None,
        )
        assert mem.get(kept).content == "the boiler was serviced in march" and mem.check().ok
        fresh = mem.add("a new memory counts from its creation", kind="fact")
        assert cur.execute("SELECT decay_from FROM episodes WHERE id = ?", (fresh,)).fetchone() == (
            None,
        )


def test_a_copy_inside_another_project_reads_its_own_schema(tmp_path: Path) -> None:
    """The package copied into another project's folder (``pip install --target .``, a
    vendored copy), whose own pyproject.toml and ``schema/0001_init.sql`` stand beside it,
    reads the schema it carries: the other project's migration ran on the memory file."""
    import shutil

    checkout = Path(__file__).resolve().parents[1]
    host = tmp_path / "host"
    (host / "schema").mkdir(parents=True)
    (host / "pyproject.toml").write_text('[project]\nname = "host"\n')
    (host / "schema" / "0001_init.sql").write_text("CREATE TABLE host_users (id INTEGER);\n")
    shutil.copytree(
        checkout / "memengine", host / "memengine", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(checkout / "schema", host / "memengine" / "schema")  # (as in a wheel)
    script = """
import sys
from datetime import datetime, timezone
from memengine.store.database import Store
from memengine.store.migrate import _schema_dir
store = Store(sys.argv[1], embedder_id="test", dimension=8, now=lambda: datetime.now(timezone.utc))
with store.connections.read() as cur:
    tables = {r[0] for r in cur.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
store.close()
print(_schema_dir(), "episodes" in tables, "host_users" in tables)
"""
    said = last_line_printed(script, str(tmp_path / "m.db"), cwd=str(tmp_path), path=str(host))
    assert said.split() == [str(host / "memengine" / "schema"), "True", "False"]
