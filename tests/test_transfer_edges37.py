"""Edges of import, export and backup: times given as numbers, arguments of the wrong
type, files of one format named as another, long file names, a folder's path.

Real SQLite + sqlite-vec + FTS5; the files are written as a user would.
"""

from __future__ import annotations

import io
import json
import os
import re
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memengine import DatabaseLocked, InvalidInput, Memory
from memengine.cli import app
from memengine.store.maintenance import partial_path, remove_stale_partials

from .helpers import T0, HashEmbedder


def _jsonl(path: Path, *lines: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("occurred_at", 1775030400000, "occurred_at: a time as ISO 8601 text, not 1775030400000"),
        ("occurred_at", 1700000000.5, "not 1700000000.5"),
        ("occurred_at", True, "not true"),
        ("occurred_at", "1700000000", "not '1700000000': memengine reads no Unix timestamp"),
        ("occurred_at", "1775030400000", "reads no Unix timestamp"),
        ("created_at", 20260401, "created_at: a time as ISO 8601 text, not 20260401"),
        ("decayed_at", "1.7e9", "decayed_at: a time as ISO 8601 text"),
        ("occurred_at", "next tuesday", "occurred_at: not an ISO 8601 time: 'next tuesday'"),
    ],
)
def test_a_time_given_as_a_number_is_refused(
    mem: Memory, tmp_path: Path, field: str, value: object, says: str
) -> None:
    """A number (or a string of digits) is not read as a Unix timestamp, silently."""
    line = {"user_text": "I moved to Osaka", "occurred_at": T0.isoformat(), field: value}
    path = _jsonl(tmp_path / "in.jsonl", {"user_text": "fine", "occurred_at": "2026-01-01"}, line)
    with pytest.raises(InvalidInput, match=f"in.jsonl:2: invalid episode: .*{re.escape(says)}"):
        mem.import_(path)
    assert mem.store.count() == 0


def test_a_basic_form_date_is_read_as_add_at_reads_it(mem: Memory, tmp_path: Path) -> None:
    """``20260401`` is 1 April 2026 (ISO 8601's basic form), as ``add --at`` reads it."""
    (new_id,) = mem.import_(
        _jsonl(tmp_path / "in.jsonl", {"user_text": "I moved to Osaka", "occurred_at": "20260401"})
    )
    assert mem.get(new_id).occurred_at == datetime(2026, 4, 1, tzinfo=timezone.utc)


def test_an_export_reimports_byte_for_byte(tmp_path: Path, mem: Memory) -> None:
    """The times an export writes (UTC as Z, other offsets, fractions) read back the same."""
    tokyo = timezone(timedelta(hours=9))
    mem.add_exchange("lunch with Aiko", "nice", occurred_at=T0.replace(microsecond=123456))
    mem.add("the rent is due on the 3rd", kind="fact", occurred_at=T0.astimezone(tokyo))
    mem.add("an old note", kind="fact", occurred_at=datetime(1999, 12, 31, 23, 59, 59))
    first = tmp_path / "first.jsonl"
    mem.export(first)
    with Memory.open(tmp_path / "copy.db", embedder=mem.embedder, clock=mem.clock) as copy:
        copy.import_(first)
        second = tmp_path / "second.jsonl"
        copy.export(second)
    assert second.read_bytes() == first.read_bytes()


runner = CliRunner()


def test_ctrl_c_in_the_merge_after_an_import_says_all_are_in(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted in the index merge that ends a large import, it says that every episode
    is in and suggests `optimize`, not an import with --skip-existing (which would add none
    and never merge)."""
    monkeypatch.setattr("memengine.memory.BULK_EPISODES", 20)

    def interrupted(self: Memory, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(Memory, "optimize", interrupted)
    lines = [
        {"user_text": f"note {i} about the garden", "occurred_at": "2026-01-01"} for i in range(30)
    ]
    db = str(tmp_path / "m.db")
    result = runner.invoke(app, ["import", str(_jsonl(tmp_path / "in.jsonl", *lines)), "--db", db])
    assert result.exit_code == 130
    said = " ".join(result.output.split())
    assert "interrupted while merging the full-text index: all 30 episodes were imported" in said
    assert f"memengine optimize --db {db}" in said and "--skip-existing" not in said


def test_a_merge_that_fails_after_an_import_says_all_are_in(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A merge stopped by another writer holding the file says so too (not --skip-existing)."""
    monkeypatch.setattr("memengine.memory.BULK_EPISODES", 20)

    def locked(self: Memory, **kwargs: object) -> object:
        raise DatabaseLocked("the memory file is locked by another writer")

    monkeypatch.setattr(Memory, "optimize", locked)
    lines = [{"user_text": f"note {i}", "occurred_at": "2026-01-01"} for i in range(30)]
    db = str(tmp_path / "m.db")
    result = runner.invoke(app, ["import", str(_jsonl(tmp_path / "in.jsonl", *lines)), "--db", db])
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "locked" in said
    assert "stopped while merging the full-text index: all 30 episodes were imported" in said
    assert "--skip-existing" not in said


@pytest.mark.parametrize("path", [None, 123, b"/tmp/x", ["in.jsonl"]])
def test_an_import_of_a_wrong_type_is_invalid_input(mem: Memory, path: object) -> None:
    with pytest.raises(InvalidInput, match="an import reads a file's path"):
        mem.import_(path)  # type: ignore[arg-type]


def test_an_export_to_a_binary_file_is_invalid_input(mem: Memory, tmp_path: Path) -> None:
    mem.add("the rent is due on the 3rd", kind="fact")
    binary = pytest.raises(InvalidInput, match="not a binary file: open it with mode 'w'")
    with (tmp_path / "out.jsonl").open("wb") as fh, binary:
        mem.export(fh)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="not a binary file"):
        mem.export(io.BytesIO())  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="an open text file, not bytes"):
        mem.export(b"/tmp/out.jsonl")  # type: ignore[arg-type]
    text = io.StringIO()
    assert mem.export(text) == 1 and "the rent" in text.getvalue()


@pytest.mark.parametrize("dest", [None, 123, b"/tmp/copy.db"])
def test_a_backup_to_a_wrong_type_is_invalid_input(mem: Memory, dest: object) -> None:
    with pytest.raises(InvalidInput, match="a backup goes to a file's path"):
        mem.backup(dest)  # type: ignore[arg-type]


_LOCOMO = [
    {
        "sample_id": "s",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I went camping."}],
        },
        "qa": [],
    }
]


@pytest.mark.parametrize("indent", [2, None])
def test_a_memsets_or_locomo_file_named_jsonl_is_read_by_its_content(
    mem: Memory, tmp_path: Path, indent: int | None
) -> None:
    """``x.jsonl`` holding memsets or LoCoMo JSON (pretty-printed or on one line) is read as
    what it holds: its name used to make it JSONL, whose line 1 was no episode."""
    sample = resources.files("memengine.sample").joinpath("companion_en.json").read_text("utf-8")
    memsets = tmp_path / "ms.jsonl"
    memsets.write_text(json.dumps(json.loads(sample), indent=indent), encoding="utf-8")
    assert len(mem.import_(memsets)) == 40
    locomo = tmp_path / "locomo.jsonl"
    locomo.write_text(json.dumps(_LOCOMO, indent=indent), encoding="utf-8")
    (one,) = mem.import_(locomo)
    assert mem.get(one).content == "Ann: I went camping."


def test_a_jsonl_file_whose_first_line_is_no_episode_names_the_line(
    mem: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('not json\n{"user_text": "a", "occurred_at": "2026-01-01"}\n', "utf-8")
    with pytest.raises(InvalidInput, match=re.escape("x.jsonl:1: invalid episode")):
        mem.import_(path)


@pytest.mark.parametrize("stem", ["a" * 236, "é" * 120])
def test_an_export_and_a_backup_to_a_long_name(mem: Memory, tmp_path: Path, stem: str) -> None:
    """A name the OS takes (here up to 244 bytes) works: the temporary name beside it was
    longer than a file name may be (Errno 36)."""
    mem.add("the rent is due on the 3rd", kind="fact")
    out = tmp_path / f"{stem}.jsonl"
    assert mem.export(out) == 1 and out.exists()
    copy = tmp_path / f"{stem}.db"
    assert mem.backup(copy).episodes == 1
    assert sorted(p.name for p in tmp_path.iterdir() if ".partial-" in p.name) == []


def test_a_stale_partial_of_a_long_name_is_removed(tmp_path: Path) -> None:
    target = tmp_path / ("b" * 240 + ".db")
    left = partial_path(target)
    assert len(os.fsencode(left.name)) <= 255 - len("-journal")
    left.write_bytes(b"killed")
    os.utime(left, (0, 0))
    assert remove_stale_partials(target) == [left] and not left.exists()


@pytest.mark.parametrize("made", [False, True])
def test_a_path_ending_in_a_slash_is_a_folder(mem: Memory, tmp_path: Path, made: bool) -> None:
    """``exports/`` means a folder: it used to become a file named ``exports``."""
    mem.add("the rent is due on the 3rd", kind="fact")
    if made:
        (tmp_path / "exports").mkdir()
    folder = f"{tmp_path / 'exports'}/"
    with pytest.raises(InvalidInput, match="is a folder: give the export's file name"):
        mem.export(folder)
    with pytest.raises(InvalidInput, match="is a folder: give the export's file name"):
        mem.salvage(folder)
    with pytest.raises(InvalidInput, match="is a folder: give the backup's file name"):
        mem.backup(folder)
    assert (tmp_path / "exports").is_dir() == made and not (tmp_path / "exports").is_file()


def test_the_cli_refuses_an_export_or_backup_to_a_folder(tmp_path: Path, cli_env: None) -> None:
    db = str(tmp_path / "m.db")
    path = _jsonl(tmp_path / "in.jsonl", {"user_text": "a", "occurred_at": "2026-01-01"})
    assert runner.invoke(app, ["import", str(path), "--db", db]).exit_code == 0
    for args in (["export", "-o", "exports/"], ["export", "--salvage", "-o", "exports/"],
                 ["backup", "bk/"], ["backup", str(tmp_path)], ["export", "-o", str(tmp_path)]):  # fmt: skip
        result = runner.invoke(app, [*args, "--db", db])
        assert result.exit_code == 1 and "is a folder: give the" in result.output, args
    assert not (tmp_path / "exports").exists() and not (tmp_path / "bk").exists()


def test_an_agent_name_now_refused_suggests_one_named_agent(mem: Memory, tmp_path: Path) -> None:
    """A line whose agent an earlier version took (a zero-width space, now blank) names the
    way to import the file all the same: into one named agent."""
    path = _jsonl(
        tmp_path / "old.jsonl",
        {"agent": "bob", "user_text": "the dentist is on 3 June", "occurred_at": "2026-01-01"},
        {"agent": "\u200b", "user_text": "the plumber comes Friday", "occurred_at": "2026-01-01"},
    )
    with pytest.raises(InvalidInput, match=r"old\.jsonl:2: .*not '\\u200b'; .*--agent NAME"):
        mem.import_(path)
    assert mem.store.count() == 0
    with pytest.raises(InvalidInput, match="2 agents"):  # (bob's would go into ann too)
        mem.import_(path, agent="ann")
    path.write_text(path.read_text(encoding="utf-8").splitlines()[1], encoding="utf-8")
    assert len(mem.import_(path, agent="ann")) == 1


def test_an_export_to_a_codecs_text_writer_is_written(mem: Memory, tmp_path: Path) -> None:
    import codecs

    mem.add("the rent is due on the 3rd", kind="fact")
    with codecs.open(str(tmp_path / "out.jsonl"), "w", "utf-8") as fh:  # (its mode says "wb")
        assert mem.export(fh) == 1
    assert "the rent" in (tmp_path / "out.jsonl").read_text(encoding="utf-8")


def test_a_backup_whose_name_leaves_no_room_for_sqlites_files_says_so(
    mem: Memory, tmp_path: Path
) -> None:
    mem.add("the rent is due on the 3rd", kind="fact")
    with pytest.raises(InvalidInput, match="the name is too long for the files SQLite keeps"):
        mem.backup(tmp_path / ("e" * 248 + ".db"))


@pytest.mark.parametrize("source", [None, 123])
def test_a_salvage_of_a_wrong_type_is_invalid_input(tmp_path: Path, source: object) -> None:
    from memengine.transfer import salvage_file

    with pytest.raises(InvalidInput, match="a salvage reads a file's path"):
        salvage_file(source, tmp_path / "y.jsonl")  # type: ignore[arg-type]


def test_an_export_to_a_binary_temporary_file_is_invalid_input(mem: Memory) -> None:
    import tempfile

    mem.add("the rent is due on the 3rd", kind="fact")
    for make in (tempfile.NamedTemporaryFile, tempfile.SpooledTemporaryFile):
        with make() as fh, pytest.raises(InvalidInput, match="not a binary file"):
            mem.export(fh)  # type: ignore[arg-type]


def test_an_export_to_a_file_open_for_reading_says_so(mem: Memory, tmp_path: Path) -> None:
    mem.add("the rent is due on the 3rd", kind="fact")
    (tmp_path / "old.jsonl").write_text("", encoding="utf-8")
    reading = pytest.raises(InvalidInput, match="open for writing")
    with (tmp_path / "old.jsonl").open("r", encoding="utf-8") as fh, reading:
        mem.export(fh)  # type: ignore[arg-type]

    class Sink:
        def __init__(self) -> None:
            self.text = ""

        def mode(self) -> str:  # a method named mode is no binary mode
            return "whatever b"

        def write(self, text: str) -> int:
            self.text += text
            return len(text)

    sink = Sink()
    assert mem.export(sink) == 1 and "the rent" in sink.text  # type: ignore[arg-type]


def test_an_export_to_a_closed_file_says_so(mem: Memory, tmp_path: Path) -> None:
    mem.add("the rent is due on the 3rd", kind="fact")
    fh = (tmp_path / "out.jsonl").open("w", encoding="utf-8")
    fh.close()
    with pytest.raises(InvalidInput, match="this one is closed"):
        mem.export(fh)  # type: ignore[arg-type]


def test_an_export_never_replaces_a_database_open_elsewhere(
    mem: Memory, db_path: Path, tmp_path: Path, cli_env: None
) -> None:
    """``-o`` naming another memory file by mistake, with ``--force``: its episodes stay,
    while another process holds it open, and its own writes carry on."""
    mem.add("something to export", occurred_at=T0)
    other_path = tmp_path / "other.db"
    with Memory.open(other_path, embedder=HashEmbedder()) as other:
        kept = other.add("an important fact", occurred_at=T0)
        for out in (other_path, tmp_path / "renamed.jsonl"):
            if out.suffix == ".jsonl":  # (its first bytes say what it is, not its name)
                out.write_bytes(other_path.read_bytes())
            with pytest.raises(InvalidInput, match=r"is an SQLite database .* another file"):
                mem.export(out, overwrite=True)
            with pytest.raises(InvalidInput, match="is an SQLite database"):
                mem.salvage(out, overwrite=True)
        assert other.get(kept).text == "an important fact"
        assert other.add("written after", occurred_at=T0) > kept
    cli = ["export", "-o", str(other_path), "--force", "--db", str(db_path)]
    result = CliRunner().invoke(app, cli)
    assert result.exit_code == 1 and "is an SQLite database" in result.output
    with Memory.open(other_path, embedder=HashEmbedder()) as other:
        assert other.stats()["episodes"] == 2
