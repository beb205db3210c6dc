"""An import writes all of its lines or none: every value and every kept id is checked
before the first batch goes in (a failure in the third batch used to leave two).

Real SQLite + sqlite-vec + FTS5; the JSONL files are written as a user would.
"""

from __future__ import annotations

import json
import re
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest

from memengine import InvalidInput, Memory, NewEpisode, StoreError
from memengine.arguments import MAX_KEPT_ID, MAX_METADATA_DEPTH

from .helpers import T0

WHEN = T0.isoformat()


def _jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _lines(n: int, *, ids: bool = True, start: int = 1) -> list[dict[str, Any]]:
    return [
        {"user_text": f"line {i} about the garden", "occurred_at": WHEN}
        | ({"id": i} if ids else {})
        for i in range(start, start + n)
    ]


@pytest.mark.parametrize(
    ("last", "says"),
    [
        ({"id": 5}, "gives 1 episode id to more than one episode (first: 5)"),
        ({"id": 0}, "an episode id to keep is from 1 to 2**53 - 1, not 0"),
        ({"id": -5}, "not -5"),
        ({"id": MAX_KEPT_ID + 1}, f"not {MAX_KEPT_ID + 1}"),
        ({"id": 2**64}, f"not {2**64}"),
        ({"strength": float("nan")}, "strength is a finite number ≥ 0, not nan"),
        ({"strength": float("inf")}, "not inf"),
        ({"strength": -1}, "not -1"),
        ({"sensitivty": 3}, "unknown field 'sensitivty'"),
    ],
)
def test_a_bad_last_line_imports_nothing(
    mem: Memory, tmp_path: Path, last: dict[str, Any], says: str
) -> None:
    lines = [*_lines(300), {"user_text": "my bank PIN is 4821", "occurred_at": WHEN} | last]
    with pytest.raises(InvalidInput, match=re.escape(says)):
        mem.import_(_jsonl(tmp_path / "in.jsonl", lines))
    assert mem.store.count() == 0


def test_lines_with_and_without_ids_import_together(mem: Memory, tmp_path: Path) -> None:
    """The lines without an id get theirs above every kept id: none can clash."""
    lines = [*_lines(300, ids=False), *_lines(3, start=2)]
    ids = mem.import_(_jsonl(tmp_path / "mixed.jsonl", lines))
    assert ids[-3:] == [2, 3, 4] and ids[:300] == list(range(5, 305))
    assert mem.store.count() == 303 and mem.check().ok
    assert mem.add("a new one", kind="fact") == 305


def test_a_kept_id_that_a_turn_names_is_refused(mem: Memory, tmp_path: Path) -> None:
    """An id given to an episode that is deleted since, and that a recorded turn names:
    kept by another episode, the turn (and its feedback) would name a memory it did not
    mean."""
    first = mem.add_exchange("the dentist is on 3 June", "noted", occurred_at=T0)
    mem.add_exchange("the plumber comes on Friday", "ok", occurred_at=T0)
    turn = mem.retrieve("when is the dentist?", day_range=None)
    assert first in [r.episode.id for r in turn.results]
    mem.delete([first])
    pin = [{"id": first, "user_text": "my bank PIN is 1234", "occurred_at": WHEN}]
    with pytest.raises(InvalidInput, match="recorded turns or sleeps name them"):
        mem.import_(_jsonl(tmp_path / "pin.jsonl", pin))
    assert mem.store.count() == 1
    assert mem.import_(tmp_path / "pin.jsonl", keep_ids=False) == [3]


def test_metadata_nested_too_deeply_is_refused(mem: Memory, tmp_path: Path) -> None:
    deep: Any = "leaf"
    for _ in range(MAX_METADATA_DEPTH + 1):
        deep = [deep]
    with pytest.raises(InvalidInput, match="nested deeper than 32 levels"):
        mem.add_exchange("deep", "x", metadata={"a": deep})
    very_deep = tmp_path / "deep.jsonl"
    very_deep.write_text('{"metadata": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(InvalidInput, match=r"deep\.jsonl:1: invalid episode: nested too deeply"):
        mem.import_(very_deep)
    nan = {"user_text": "x", "occurred_at": WHEN, "metadata": {"v": float("nan")}}
    with pytest.raises(InvalidInput, match="metadata must be JSON-serialisable"):
        mem.import_(_jsonl(tmp_path / "nan.jsonl", [nan]))
    assert mem.store.count() == 0


def test_an_export_imports_with_its_read_only_fields(mem: Memory, tmp_path: Path) -> None:
    """The usage counters an export lists are known fields, not misspellings."""
    mem.add_exchange("the dentist is on 3 June", "noted", occurred_at=T0, metadata={"k": [1]})
    dump = tmp_path / "dump.jsonl"
    mem.export(dump)
    assert "access_count" in dump.read_text()
    with Memory.open(tmp_path / "new.db", embedder=mem.embedder, clock=mem.clock) as fresh:
        assert fresh.import_(dump) == [1]
        assert fresh.get(1).metadata == {"k": [1]}


def test_lines_without_ids_above_the_largest_kept_id_are_refused(
    mem: Memory, tmp_path: Path
) -> None:
    lines = [{"id": MAX_KEPT_ID, "user_text": "last", "occurred_at": WHEN}, *_lines(1, ids=False)]
    with pytest.raises(InvalidInput, match="without an id would get ids past 2\\*\\*53 - 1"):
        mem.import_(_jsonl(tmp_path / "top.jsonl", lines))
    assert mem.store.count() == 0


def test_no_new_id_is_given_out_past_the_largest_an_import_keeps(
    mem: Memory, tmp_path: Path
) -> None:
    """Past it, an export could not be imported again: the add is refused, nothing
    written, and the export imports into a new file with new ids."""
    mem.import_(
        _jsonl(
            tmp_path / "top.jsonl", [{"id": MAX_KEPT_ID, "user_text": "last", "occurred_at": WHEN}]
        )
    )
    with pytest.raises(StoreError, match="given out every episode id up to 2\\*\\*53 - 1"):
        mem.add_exchange("one more", "ok")
    with pytest.raises(StoreError, match="given out every episode id"):
        mem.add_many([NewEpisode(kind="fact", content="and another", occurred_at=WHEN)])
    assert mem.store.count() == 1 and mem.get(MAX_KEPT_ID).user_text == "last"
    assert mem.check().ok
    dump = tmp_path / "dump.jsonl"
    mem.export(dump)
    with Memory.open(tmp_path / "new.db", embedder=mem.embedder, clock=mem.clock) as fresh:
        assert fresh.import_(dump, keep_ids=False) == [1]
        assert fresh.add_exchange("one more", "ok") == 2


def test_the_library_imports_conversation_files_as_the_cli_does(
    mem: Memory, tmp_path: Path
) -> None:
    from importlib import resources

    sample = Path(str(resources.files("memengine.sample") / "companion_en.json"))
    ids = mem.import_(sample, agent="sam", per_conversation=True)
    names = {a.name for a in mem.agents()}
    conversations = json.loads(sample.read_text(encoding="utf-8"))["conversations"]
    assert names >= {f"sam/{c['id']}" for c in conversations}
    assert len(ids) == sum(len(s["exchanges"]) for c in conversations for s in c["sessions"])
    with pytest.raises(InvalidInput, match=r"per_conversation .* is for LoCoMo and memsets"):
        mem.import_(_jsonl(tmp_path / "x.jsonl", _lines(2)), per_conversation=True)
    with pytest.raises(InvalidInput, match="no such file"):
        mem.import_(tmp_path / "missing.json")


def test_an_import_into_a_read_only_file_fails_before_reading(tmp_path: Path) -> None:
    from memengine import ReadOnlyDatabase

    from .helpers import HashEmbedder

    path = tmp_path / "m.db"
    Memory.open(path, embedder=HashEmbedder()).close()
    with (
        Memory.open(path, embedder=HashEmbedder(), read_only=True) as ro,
        pytest.raises(ReadOnlyDatabase),
    ):
        ro.import_(tmp_path / "missing.jsonl")  # not read at all
    with (
        Memory.open(path, embedder=HashEmbedder()) as rw,
        pytest.raises(InvalidInput, match="is a folder"),
    ):
        rw.import_(tmp_path)  # a folder


def test_an_export_saved_under_another_name_imports(mem: Memory, tmp_path: Path) -> None:
    from memengine.importers import detect_format

    many = tmp_path / "dump.txt"
    many.write_text("".join(json.dumps(line) + "\n" for line in _lines(3)), encoding="utf-8")
    one = tmp_path / "one.json"
    one.write_text(json.dumps(_lines(1)[0]) + "\n", encoding="utf-8")
    assert detect_format(many) == detect_format(one) == "jsonl"
    assert len(mem.import_(many)) == 3
    broken = tmp_path / "broken.txt"
    broken.write_text("{not json\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not a JSON or JSONL file"):
        detect_format(broken)


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_an_export_saved_as_utf16_imports(mem: Memory, tmp_path: Path, codec: str) -> None:
    """Windows PowerShell 5's `>` writes UTF-16 with a byte-order mark."""
    text = "".join(json.dumps(line, ensure_ascii=False) + "\r\n" for line in _lines(3))
    text = text.replace("garden", "庭 🌸")
    bom = {"utf-16-be": "\ufeff"}.get(codec, "")  # utf-16 and utf-32 write their own
    path = tmp_path / "wide.jsonl"
    path.write_bytes((bom + text).encode(codec))
    assert mem.import_(path) == [1, 2, 3]
    assert mem.get(2).user_text == "line 2 about the 庭 🌸"
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"\xff\xfe" + "{}".encode("utf-16-le")[:-1])
    with pytest.raises(InvalidInput, match="not UTF-16 after its byte-order mark"):
        mem.import_(broken)


def test_skip_existing_finishes_a_file_without_ids(mem: Memory, tmp_path: Path) -> None:
    """Lines without an id are matched by agent, kind, text and time: an import that was
    stopped part way, run again with skip_existing, adds only the rest."""
    lines = _lines(20, ids=False)
    half = _jsonl(tmp_path / "half.jsonl", lines[:8])
    whole = _jsonl(tmp_path / "whole.jsonl", lines)
    first = mem.import_(half)
    rest = mem.import_(whole, skip_existing=True)
    assert len(first) == 8 and len(rest) == 12 and mem.store.count() == 20
    assert mem.import_(whole, skip_existing=True) == []
    other_time = [line | {"occurred_at": "2030-01-01T00:00:00+00:00"} for line in lines[:2]]
    assert len(mem.import_(_jsonl(tmp_path / "moved.jsonl", other_time), skip_existing=True)) == 2
    assert len(mem.import_(whole, keep_ids=False, skip_existing=True)) == 0
    twice = _jsonl(tmp_path / "twice.jsonl", [lines[0], lines[0], lines[1]])
    assert len(mem.import_(twice, skip_existing=True)) == 1  # the memory holds it once
    assert mem.import_(twice, skip_existing=True) == []


def test_skip_existing_finishes_a_memsets_file(mem: Memory) -> None:
    from importlib import resources

    sample = resources.files("memengine.sample") / "companion_en.json"
    with resources.as_file(sample) as path:
        first = mem.import_(path)
        assert mem.import_(path, skip_existing=True) == []
        assert len(mem.import_(path, agent="another", skip_existing=True)) == len(first)
        assert len(mem.import_(path)) == len(first)  # without it: imported again, as asked
    assert mem.store.count() == 3 * len(first)


def test_times_without_a_zone_are_read_in_the_configured_one(tmp_path: Path) -> None:
    from memengine import Config

    from .helpers import HashEmbedder

    cfg = Config.model_validate({"time_zone": "Asia/Tokyo"})
    naive = [{"user_text": "tea at eight", "occurred_at": "2026-02-10T08:00:00"}]
    memsets = {
        "conversations": [
            {
                "id": "c1",
                "sessions": [
                    {"id": "s1", "exchanges": [
                        {"id": "e1", "user": "tea at eight", "partner": "ok",
                         "at": "2026-02-10T08:00:00"}
                    ]}
                ],
                "questions": [],
            }
        ]
    }  # fmt: skip
    (tmp_path / "ms.json").write_text(json.dumps(memsets))
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=HashEmbedder()) as mem:
        for source in (_jsonl(tmp_path / "naive.jsonl", naive), tmp_path / "ms.json"):
            (got,) = mem.import_(source)
            assert mem.get(got).occurred_at.isoformat() == "2026-02-10T08:00:00+09:00"
        again = mem.import_(tmp_path / "ms.json", skip_existing=True)
        assert again == []  # matched as stored, in the zone
        early = [{"user_text": "x", "occurred_at": WHEN, "created_at": "0001-01-01T00:00:00+14:00"}]
        (kept,) = mem.import_(_jsonl(tmp_path / "early.jsonl", early))  # as an older file held
        assert mem.get(kept).created_at.astimezone(timezone.utc).year == 2  # the span's start
        with pytest.raises(InvalidInput, match="created_at"):
            mem.add_many([NewEpisode.model_validate({"kind": "fact", "content": "x",
                          "occurred_at": WHEN, "created_at": "0001-01-01T00:00:00+14:00"})])  # fmt: skip


def test_an_offset_with_seconds_is_kept_as_its_moment(mem: Memory, tmp_path: Path) -> None:
    """Tokyo's local mean time before 1888 is +09:18:59; JSON keeps minutes only, so an
    export moved the episode by 59 s and a later --skip-existing called it another."""
    from datetime import datetime
    from zoneinfo import ZoneInfo

    when = datetime(1850, 1, 1, tzinfo=ZoneInfo("Asia/Tokyo"))
    first = mem.add("an old letter", kind="fact", occurred_at=when)
    stored = mem.get(first).occurred_at
    assert stored == when and stored.utcoffset() is not None
    assert stored.utcoffset().total_seconds() % 60 == 0
    dump = tmp_path / "dump.jsonl"
    mem.export(dump)
    assert mem.import_(dump, skip_existing=True) == []


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"user_text": "x", "occurred_at": "%s", "sensitivity": 3, "sensitivity": 0}',
         "the key 'sensitivity' is given twice"),
        ('{"user_text": "x", "occurred_at": "%s", "id": "7"}', "a number, not text"),
        ('{"user_text": "x", "occurred_at": "%s", "metadata": {"n": ' + "9" * 5000 + "}}",
         "invalid episode"),
        ("[" * 100_000, "invalid episode"),
    ],
)  # fmt: skip
def test_lines_that_would_be_misread_are_refused(
    mem: Memory, tmp_path: Path, line: str, says: str
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text((line % WHEN if "%s" in line else line) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match=re.escape(says)):
        mem.import_(path)
    nested = tmp_path / "deep.json"
    nested.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(InvalidInput, match="not a JSON"):
        mem.import_(nested)
    assert mem.store.count() == 0


def test_another_writer_adding_between_an_imports_batches_gets_ids_above_the_kept_ones(
    mem: Memory, tmp_path: Path
) -> None:
    """The ids an import keeps are reserved before its first batch: an episode another
    writer adds between two batches is numbered above them, and the import goes through."""
    from memengine import Memory as MemoryType

    from .helpers import HashEmbedder

    other = MemoryType.open(mem.store.path, embedder=HashEmbedder(), clock=mem.clock)
    added: list[int] = []

    def between_batches(done: int, total: int) -> None:
        if 0 < done < total and not added:
            added.append(other.add("written meanwhile by another user", kind="fact"))

    try:
        ids = mem.import_(_jsonl(tmp_path / "in.jsonl", _lines(600)), progress=between_batches)
    finally:
        other.close()
    assert ids == list(range(1, 601)) and added == [601]
    assert mem.store.count() == 601 and mem.check().ok


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"user": 123}, "session s1 exchange s1e2: user: Input should be a valid string"),
        ({"at": "not a date"}, "session s1 exchange s1e2: at: not an ISO 8601 time"),
        ({"at": 1717000000}, "exchange s1e2: at: a time as ISO 8601 text, not 1717000000"),
    ],
)
def test_a_bad_memsets_exchange_is_named_in_one_line(
    mem: Memory, tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    good = {"at": WHEN, "user": "hello", "partner": "hi"}
    exchanges = [{"id": "s1e1", **good}, {"id": "s1e2", **good, **change}]
    data = {"conversations": [{"id": "c1", "sessions": [{"id": "s1", "exchanges": exchanges}]}]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InvalidInput, match=re.escape(says)) as caught:
        mem.import_(path)
    assert "\n" not in str(caught.value) and mem.store.count() == 0


def test_a_database_given_to_import_says_what_it_is(mem: Memory, tmp_path: Path) -> None:
    """A memengine file given to ``import`` in place of an export: named as a database, with
    the commands that do what was meant (not a UTF-8 decoding error)."""
    with Memory.open(tmp_path / "other.db", embedder=mem.embedder) as other:
        other.add_exchange("hello there", "hi!")
    before = mem.stats()["episodes"]
    with pytest.raises(InvalidInput, match=r"an SQLite database .*memengine backup.*export"):
        mem.import_(tmp_path / "other.db")
    copy = tmp_path / "copy.jsonl"  # under an export's name too
    copy.write_bytes((tmp_path / "other.db").read_bytes())
    with pytest.raises(InvalidInput, match=r"an SQLite database"):
        mem.import_(copy)
    assert mem.stats()["episodes"] == before
