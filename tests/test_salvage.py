"""A damaged file: a plain export stops at the damage; a salvage saves every row that
still reads and names the ids it could not read.

The damage is real: one page of the ``episodes`` table is overwritten in a
copy of a file written by memengine, as a failing disk would.
"""

from __future__ import annotations

import io
import json
import threading
import traceback
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import (
    Config,
    DamagedDatabase,
    FixedClock,
    Memory,
    NewEpisode,
    StoreError,
    salvage_file,
)
from memengine.arguments import MAX_KEPT_ID
from memengine.cli import app
from memengine.diagnostics import diagnose
from memengine.store.connect import sqlite_module
from memengine.store.salvage import SalvageReport, id_ranges
from memengine.text import shell_word

from .helpers import T0, HashEmbedder, word_episodes

PAGE = 16384
TOTAL = 2400


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A closed file of two agents' episodes, interleaved by id."""
    path = tmp_path_factory.mktemp("salvage") / "sound.db"
    with Memory.open(path, embedder=HashEmbedder()) as m:
        for start in range(0, TOTAL, 200):
            m.add_many(word_episodes(100, "alice", seed=start))
            m.add_many(word_episodes(100, "bob", seed=start + 1))
    return path


def _damaged(
    sound: Path,
    tmp_path: Path,
    which: int,
    table: str = "episodes",
    span: tuple[int, int] = (0, PAGE),
) -> Path:
    """A copy of ``sound`` with one leaf page of ``table`` overwritten (``which``: its
    place among the table's leaves, -1 the last; ``span``: the bytes of the page)."""
    conn = sqlite_module().connect(str(sound))
    try:
        leaves = [
            r[0]
            for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path",
                (table,),
            )
        ]
    except sqlite_module().OperationalError:
        pytest.skip("this SQLite has no dbstat table")
    finally:
        conn.close()
    data = bytearray(sound.read_bytes())
    page = leaves[which]
    lo, hi = span
    data[(page - 1) * PAGE + lo : (page - 1) * PAGE + hi] = b"\x55" * (hi - lo)
    copy = tmp_path / "damaged.db"
    copy.write_bytes(bytes(data))
    return copy


def _ids(text: str) -> list[int]:
    return [json.loads(line)["id"] for line in text.splitlines()]


@pytest.mark.parametrize("which", [3, -1], ids=["a middle leaf", "the last leaf"])
def test_a_salvage_saves_every_row_that_reads_and_names_the_rest(
    sound: Path, tmp_path: Path, which: int, clock: FixedClock
) -> None:
    damaged = _damaged(sound, tmp_path, which)
    with Memory.open(damaged, embedder=HashEmbedder(), clock=clock, read_only=True) as m:
        with pytest.raises(DamagedDatabase, match="export --all-agents --salvage"):
            m.export(io.StringIO())
        out = io.StringIO()
        report = m.salvage(out)
    saved = _ids(out.getvalue())
    lost = [i for a, b in report.unreadable for i in range(a, b + 1)]
    assert report.episodes == len(saved) and not report.complete
    assert saved == sorted(saved) and 0 < len(lost) < 100  # one page's rows, no more
    assert sorted(saved + lost) == list(range(1, TOTAL + 1))  # (the last page too: the
    if which == -1:  # highest id is read from the vectors' rowids when max(id) fails)
        assert lost[-1] == TOTAL


@pytest.mark.parametrize("which", [0, 3])
def test_a_page_with_a_damaged_header_ends_the_walk(
    sound: Path, tmp_path: Path, which: int, clock: FixedClock
) -> None:
    """Such a page answered the same rows again and again: export and salvage ran forever."""
    damaged = _damaged(sound, tmp_path, which, span=(8, 40))
    done: dict[str, object] = {}

    def both() -> None:
        with Memory.open(damaged, embedder=HashEmbedder(), clock=clock, read_only=True) as m:
            with pytest.raises(DamagedDatabase):
                m.export(io.StringIO())
            done["salvage"] = m.salvage(io.StringIO())

    worker = threading.Thread(target=both, daemon=True)
    worker.start()
    worker.join(120)
    assert not worker.is_alive() and "salvage" in done, "the walk did not end"
    report = done["salvage"]
    assert isinstance(report, SalvageReport) and not report.complete


def test_a_salvage_of_one_agent_and_its_jsonl_import_again(
    sound: Path, tmp_path: Path, clock: FixedClock
) -> None:
    salvaged = tmp_path / "bob.jsonl"
    for leaf in range(3, 20):  # the first leaf that holds some of bob's rows
        damaged = _damaged(sound, tmp_path, leaf)
        with Memory.open(damaged, embedder=HashEmbedder(), clock=clock) as m:
            report = m.salvage(salvaged, agent="bob")
        if report.episodes < TOTAL // 2:
            break
    lines = [json.loads(line) for line in salvaged.read_text().splitlines()]
    assert {line["agent"] for line in lines} == {"bob"} and len(lines) == report.episodes
    assert TOTAL // 2 - 100 < report.episodes < TOTAL // 2
    with Memory.open(tmp_path / "new.db", embedder=HashEmbedder(), clock=clock) as fresh:
        assert fresh.import_(salvaged) == [line["id"] for line in lines]
        assert fresh.check().ok


def test_a_salvage_of_a_sound_file_is_its_export(sound: Path, clock: FixedClock) -> None:
    with Memory.open(sound, embedder=HashEmbedder(), clock=clock, read_only=True) as m:
        exported, salvaged = io.StringIO(), io.StringIO()
        assert m.export(exported) == TOTAL
        report = m.salvage(salvaged)
    assert report.complete and report.episodes == TOTAL
    # the same lines, but for when each strength held, which a salvage does not read
    # (its lines' strengths then hold from their import)
    lines = [json.loads(line) for line in exported.getvalue().splitlines()]
    assert all(line.pop("decayed_at") for line in lines)
    assert [json.loads(line) for line in salvaged.getvalue().splitlines()] == lines


def test_the_cli_salvages_and_exits_1_naming_the_ids(
    sound: Path, tmp_path: Path, cli_env: None
) -> None:
    damaged = _damaged(sound, tmp_path, 3)
    runner = CliRunner()
    plain = runner.invoke(app, ["export", "--db", str(damaged)])
    assert plain.exit_code == 1 and "export --all-agents --salvage" in plain.output
    # pasted as printed, it salvages this file (not the default memengine.db)
    hint = f"--salvage --db {shell_word(str(damaged.resolve()))} -o saved.jsonl"
    assert hint in " ".join(plain.output.split())
    out = tmp_path / "saved.jsonl"
    done = runner.invoke(app, ["export", "--salvage", "-o", str(out), "--db", str(damaged)])
    assert done.exit_code == 1
    message = " ".join(done.output.split())
    assert f"salvaged {len(out.read_text().splitlines()):,} episodes to {out}" in message
    assert "the rows of ids " in message and "could not be read" in message


def test_id_ranges() -> None:
    assert id_ranges([]) == ()
    assert id_ranges([1, 2, 3, 7, 9, 10]) == ((1, 3), (7, 7), (9, 10))


def test_a_file_whose_settings_are_damaged_is_salvaged_without_opening_it(
    sound: Path, tmp_path: Path, cli_env: None
) -> None:
    damaged = _damaged(sound, tmp_path, 0, table="meta")
    with pytest.raises(DamagedDatabase, match="export --all-agents --salvage --db ") as caught:
        Memory.open(damaged, embedder=HashEmbedder(), read_only=True)
    assert f"--db {shell_word(str(damaged.resolve()))} -o saved.jsonl`" in str(caught.value)
    assert "doctor" not in str(caught.value)  # (doctor says it: not a command to run next)
    out = io.StringIO()
    report = salvage_file(damaged, out, agent="alice")
    assert report.complete and report.episodes == TOTAL // 2
    assert {json.loads(line)["agent"] for line in out.getvalue().splitlines()} == {"alice"}
    saved = tmp_path / "saved.jsonl"
    done = CliRunner().invoke(app, ["export", "--salvage", "-o", str(saved), "--db", str(damaged)])
    assert done.exit_code == 0, done.output
    assert len(saved.read_text().splitlines()) == TOTAL
    said = " ".join(done.output.split())  # a salvage, not an export, said so
    assert f"salvaged {TOTAL:,} episodes to {saved}: every row read" in said
    assert "exported" not in said


def test_a_salvage_takes_time_by_the_episodes_not_by_their_largest_id(
    tmp_path: Path, clock: FixedClock
) -> None:
    path = tmp_path / "sparse.db"
    with Memory.open(path, embedder=HashEmbedder(), clock=clock) as m:
        m.add_many(word_episodes(3, "alice"))
        m.add_many([NewEpisode(id=MAX_KEPT_ID, kind="fact", content="the last id", occurred_at=T0)])
        out = io.StringIO()
        report = m.salvage(out)  # a walk of every id up to 2**53 - 1 would never end
    assert report.complete and _ids(out.getvalue()) == [1, 2, 3, MAX_KEPT_ID]


def test_a_row_changed_outside_memengine_is_a_clear_error_and_salvage_skips_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "edited.db"
    with Memory.open(path, embedder=HashEmbedder()) as m:
        ids = m.add_many(word_episodes(5, "alice"))
    conn = sqlite_module().connect(str(path))
    with conn:  # what no memengine call writes: metadata that is not JSON, a bad date
        conn.execute("UPDATE episodes SET metadata = '{not json' WHERE id = ?", (ids[1],))
        conn.execute("UPDATE episodes SET occurred_at = 'yesterday' WHERE id = ?", (ids[3],))
    conn.close()
    with Memory.open(path, embedder=HashEmbedder()) as m:
        assert m.get(ids[0]).id == ids[0]
        with pytest.raises(DamagedDatabase, match=f"episode {ids[1]} does not read back"):
            m.get(ids[1])
        with pytest.raises(DamagedDatabase, match="export --all-agents --salvage"):
            m.export(io.StringIO())
        out = io.StringIO()
        report = m.salvage(out)
    assert report.unreadable == ((ids[1], ids[1]), (ids[3], ids[3]))  # id ranges
    saved = [json.loads(line)["id"] for line in out.getvalue().splitlines()]
    assert saved == [ids[0], ids[2], ids[4]]


def test_the_check_reads_every_row_back(tmp_path: Path) -> None:
    """A byte changed inside a row passes SQLite's page check: `doctor` said the file was
    fine while export and search failed on it, with the driver's own words."""
    path = tmp_path / "bytes.db"
    with Memory.open(path, embedder=HashEmbedder()) as m:
        ids = m.add_many(word_episodes(5, "alice"))
        m.add("I like green tea", metadata={"source": "UNIQUEMARK"})
        assert m.check().ok and m.check().unreadable == []
    conn = sqlite_module().connect(str(path))
    with conn:  # what no memengine call writes: text that is not UTF-8, a bad date
        conn.execute(
            "UPDATE episodes SET metadata = CAST(X'FFFE7B7D' AS TEXT) WHERE id = ?", (ids[1],)
        )
        conn.execute("UPDATE episodes SET occurred_at = 'yesterday' WHERE id = ?", (ids[3],))
    conn.close()
    with Memory.open(path, embedder=HashEmbedder()) as m:
        report = m.check()
        assert not report.ok and report.unreadable == [ids[1], ids[3]]
        assert report.sqlite_check == "ok"  # what SQLite's own check does not see
        with pytest.raises(
            DamagedDatabase, match=f"column 'metadata' of episode {ids[1]} is no longer UTF-8"
        ):
            m.get(ids[1])
        with pytest.raises(DamagedDatabase, match="export --all-agents --salvage"):
            m.export(io.StringIO())
    ok, detail = diagnose(Config.model_validate({"db": str(path)}))["checks"]["consistency"]
    assert not ok and f"rows that do not read back: [{ids[1]}, {ids[3]}]" in detail


def test_a_file_cut_short_is_salvaged_up_to_the_cut(
    sound: Path, tmp_path: Path, cli_env: None
) -> None:
    """A file that lost its last pages (a copy cut short, a full disk) saved nothing: its
    header counts pages it no longer has, so SQLite read none of its tables."""
    cut = tmp_path / "cut.db"
    data = sound.read_bytes()
    cut.write_bytes(data[: len(data) - 15 * PAGE])
    with pytest.raises(DamagedDatabase):
        Memory.open(cut, embedder=HashEmbedder(), read_only=True)
    out = io.StringIO()
    report = salvage_file(cut, out)
    saved = _ids(out.getvalue())
    assert TOTAL // 2 < report.episodes == len(saved) < TOTAL and not report.complete
    assert saved == sorted(saved) and set(saved) <= set(range(1, TOTAL + 1))


def test_a_salvage_that_cannot_read_says_so_without_advising_a_salvage(
    sound: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(StoreError, match="holds no memengine episodes table"):
        salvage_file(empty, io.StringIO())
    stub = tmp_path / "stub.db"
    stub.write_bytes(sound.read_bytes()[: 2 * PAGE])  # the schema's page, little else
    with pytest.raises(DamagedDatabase) as caught:
        salvage_file(stub, io.StringIO())
    assert "--salvage" not in str(caught.value)
    assert "restore a backup" in str(caught.value)
    text = tmp_path / "notes.txt"  # another kind of file: no damaged database
    text.write_text("hello\n", encoding="utf-8")
    with pytest.raises(StoreError, match="is not an SQLite database") as other:
        salvage_file(text, io.StringIO())
    assert "damaged" not in str(other.value)
    schema = _damaged(sound, tmp_path, 0, table="sqlite_schema", span=(4096, 8192))
    with pytest.raises(DamagedDatabase, match="schema is damaged") as caught:
        salvage_file(schema, io.StringIO())  # (it was "holds no memengine episodes table")
    assert "restore a backup" in str(caught.value)


def _notes_file(tmp_path: Path, pagetype: str, at: int, written: bytes) -> Path:
    """Another program's SQLite file (a table of notes and an index), with ``written`` put
    ``at`` an offset of the index's first page of ``pagetype`` (leaf, internal)."""
    other = tmp_path / "notes.db"
    conn = sqlite_module().connect(str(other))
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("CREATE INDEX notes_body ON notes (body)")
    conn.executemany(
        "INSERT INTO notes (body) VALUES (?)", [(f"note {i} " * 20,) for i in range(3000)]
    )
    conn.commit()
    page = conn.execute(
        "SELECT pageno FROM dbstat WHERE name = 'notes_body' AND pagetype = ? LIMIT 1",
        (pagetype,),
    ).fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(other.read_bytes())
    data[(page - 1) * size + at : (page - 1) * size + at + len(written)] = written
    other.write_bytes(bytes(data))
    return other


def test_another_programs_file_with_damage_elsewhere_is_not_called_a_damaged_schema(
    tmp_path: Path,
) -> None:
    other = _notes_file(tmp_path, "leaf", 8, b"\x55" * 300)  # a leaf's cells overwritten
    with pytest.raises(StoreError, match="holds no memengine episodes table") as caught:
        salvage_file(other, io.StringIO())
    assert not isinstance(caught.value, DamagedDatabase)


def test_a_free_list_pointing_at_page_1_is_no_damaged_schema(tmp_path: Path) -> None:
    """SQLite's check says "freelist leaf count too big on page 1" of a free-list page that
    points there: the schema is whole, and the file is another program's."""
    other = tmp_path / "free.db"
    conn = sqlite_module().connect(str(other))
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.executemany(
        "INSERT INTO notes (body) VALUES (?)", [(f"note {i} " * 20,) for i in range(3000)]
    )
    conn.commit()
    conn.execute("DELETE FROM notes WHERE id > 100")
    conn.commit()
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(other.read_bytes())
    trunk = int.from_bytes(data[32:36], "big")  # the file header's first free-list trunk
    data[(trunk - 1) * size : (trunk - 1) * size + 4] = (1).to_bytes(4, "big")
    other.write_bytes(bytes(data))
    with pytest.raises(StoreError, match="holds no memengine episodes table") as caught:
        salvage_file(other, io.StringIO())
    assert not isinstance(caught.value, DamagedDatabase)


def test_damage_that_names_page_1_elsewhere_is_no_damaged_schema(tmp_path: Path) -> None:
    """SQLite's check says "2nd reference to page 1" of an index's page that points there:
    the schema is whole, and the file is another program's."""
    other = _notes_file(tmp_path, "internal", 8, (1).to_bytes(4, "big"))  # its right child: 1
    with pytest.raises(StoreError, match="holds no memengine episodes table") as caught:
        salvage_file(other, io.StringIO())
    assert not isinstance(caught.value, DamagedDatabase)


def test_a_schema_page_that_lists_no_table_is_a_damaged_schema(tmp_path: Path) -> None:
    """Page 1's count of cells zeroed: the schema lists nothing, and SQLite's check speaks
    of "… on page 1" without "Tree 1"; it was called another program's file."""
    path = tmp_path / "mem.db"
    with Memory.open(path, embedder=HashEmbedder()) as m:
        m.add_many(word_episodes(50, "alice", seed=1))
    data = bytearray(path.read_bytes())
    data[103:105] = b"\0\0"  # page 1's b-tree header, after the 100-byte file header
    bad = tmp_path / "bad.db"
    bad.write_bytes(bytes(data))
    with pytest.raises(DamagedDatabase, match="schema is damaged"):
        salvage_file(bad, io.StringIO())


@pytest.mark.parametrize("table", ["episodes_fts_docsize", "episode_vectors_rowids"])
def test_a_salvage_names_no_id_that_no_episode_can_have(
    sound: Path, tmp_path: Path, table: str
) -> None:
    """A damaged leaf of an index read as a row of id 0 (or -1): the report named "the rows
    of ids 0" though no episode ever has an id below 1 (session 44)."""
    damaged = _damaged(sound, tmp_path, 1, table, span=(100, 300))
    with Memory.open(damaged, embedder=HashEmbedder(), read_only=True) as m:
        report = m.salvage(io.StringIO())
    assert all(low >= 1 for low, _ in report.unreadable)
    assert report.episodes == TOTAL


WATCH = "On the bright side, I bought a proper running watch. Garmin Forerunner 165, it's great"


def _text_overwritten(tmp_path: Path, embedder: object) -> tuple[Path, int]:
    """A copy of a file whose stored text of one exchange had three bytes overwritten (as a
    failing disk would: SQLite's page check does not see it), and that exchange's id."""
    sound = tmp_path / "sound.db"
    with Memory.open(sound, embedder=embedder) as m:  # type: ignore[arg-type]
        for i in range(11):
            m.add(f"note {i} about green tea", kind="fact")
        watch = m.add_exchange(WATCH, "A running watch helps with pacing")
    data = bytearray(sound.read_bytes())
    at = data.find(b"Garmin Forerunner")
    assert at > 0 and data.find(b"Garmin Forerunner", at + 1) == -1  # the row, no copy
    data[at : at + 3] = b"\xff\xfe\xfd"
    damaged = tmp_path / "dmg.db"
    damaged.write_bytes(bytes(data))
    return damaged, watch


def _told(exc: BaseException) -> str:
    """Everything a server's log of ``exc`` would record: its traceback and its chain."""
    return "".join(traceback.format_exception(exc))


def test_a_text_no_longer_utf8_is_named_by_its_column_and_episode_never_quoted(
    tmp_path: Path,
) -> None:
    """The error quoted up to 200 characters of the user's memory (the driver's words,
    "with text '…'"), and named no episode; its chained cause quoted it again."""
    damaged, watch = _text_overwritten(tmp_path, HashEmbedder())
    with Memory.open(damaged, embedder=HashEmbedder()) as m:
        for call in (
            lambda: m.retrieve("running watch"),
            lambda: m.get(watch),
            lambda: m.export(io.StringIO()),
        ):
            with pytest.raises(DamagedDatabase) as caught:
                call()
            said = str(caught.value)
            assert f"the text in column 'user_text' of episode {watch} is no longer UTF-8" in said
            assert "export --all-agents --salvage" in said
            assert "bright side" not in _told(caught.value)
            assert "Forerunner" not in _told(caught.value)
        with pytest.raises(DamagedDatabase) as caught, m.store.connections.read() as cur:
            cur.execute("SELECT user_text FROM episodes").fetchall()  # a read not by ids
        said = str(caught.value)
        assert "the text in column 'user_text' is no longer UTF-8" in said
        assert f"`memengine doctor --db {damaged}` names the episodes" in said
        assert "bright side" not in _told(caught.value)
        assert m.check().unreadable == [watch]  # (what doctor names)


def test_a_retrieve_on_a_text_no_longer_utf8_names_the_episode_in_the_cli(
    tmp_path: Path, cli_env: None
) -> None:
    from memengine.embed.usem3 import USEM3Embedder

    damaged, watch = _text_overwritten(tmp_path, USEM3Embedder())
    done = CliRunner().invoke(app, ["retrieve", "running watch", "--db", str(damaged)])
    said = " ".join(done.output.split())
    assert done.exit_code == 1 and "Traceback" not in said
    assert f"the text in column 'user_text' of episode {watch} is no longer UTF-8" in said
    assert "bright side" not in said and "Forerunner" not in said


@pytest.mark.parametrize(
    ("message", "said"),
    [
        (
            "Could not decode to UTF-8 column 'user_text' with text 'it's 'quoted' ' with text 'x'",
            "the text in column 'user_text' is no longer UTF-8",
        ),
        (
            "Could not decode to UTF-8 column 'substr(user_text, 1, 300)' with text 'a\nb'",
            "the text in column 'substr(user_text, 1, 300)' is no longer UTF-8",
        ),
        ("Could not decode to UTF-8: 'my secret'", "a stored text is no longer UTF-8"),
        (
            "Could not decode to UTF-8 column 'a'b' with text 'c'",
            "a stored text is no longer UTF-8",
        ),
    ],
)
def test_what_is_said_of_a_text_no_longer_utf8_keeps_only_the_column(
    message: str, said: str
) -> None:
    from memengine.store.connect import not_utf8

    error = sqlite_module().OperationalError(message)
    assert not_utf8(error) == said
    assert not_utf8(error, 7) == said.replace(" is no longer", " of episode 7 is no longer")
    assert not_utf8(sqlite_module().OperationalError("database is locked")) is None
