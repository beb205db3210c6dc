"""What import and export say about a file they cannot read: a damaged file's way out
saves every agent, a damaged settings page is named as damage, a cut-off JSONL file names
its line, and a malformed LoCoMo or memsets file is named in plain, one-line words.

Real SQLite files and real input files, written as a failing disk or a user would.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

import memengine
from memengine import InvalidInput, Memory, NewEpisode
from memengine.cli import app
from memengine.store.connect import sqlite_module
from memengine.text import salvage_command

from .helpers import T0, HashEmbedder

DATE = "1:56 pm on 8 May, 2023"


def test_every_salvage_hint_names_an_export_of_every_agent() -> None:
    """`memengine export` keeps to the configured agent: a hint that said `export --salvage`
    saved only its memories, and the user who then deleted the damaged file lost the rest.
    Most hints are built by ``salvage_command`` (which adds the file's ``--db``)."""
    package = Path(memengine.__file__).parent
    hints = 0
    for source in package.rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        for found in re.finditer(r"--salvage", text):
            if text[found.start() - 1] == '"':  # the option's own name, not a hint
                continue
            hints += 1
            before = text[max(0, found.start() - 40) : found.start()]
            assert before.endswith("export --all-agents "), f"{source.name}: …{before}--salvage"
        hints += len(re.findall(r"\{salvage_command\(", text))  # (a hint built by it)
    assert hints >= 7
    assert salvage_command(None).startswith("memengine export --all-agents --salvage ")


def _two_agents(path: Path) -> Path:
    with Memory.open(path, embedder=HashEmbedder()) as m:
        for agent in ("alice", "bob"):
            m.add_many(
                [
                    NewEpisode(
                        agent=agent, kind="fact", content=f"{agent} note {i}", occurred_at=T0
                    )
                    for i in range(5)
                ]
            )
    return path


def _meta_damaged(sound: Path, copy: Path, start: int) -> Path:
    """A copy of ``sound`` with 200 bytes of 0xff written into the meta table's root page
    from byte ``start`` of the page (8: its cell pointers, which then point past the page)."""
    conn = sqlite_module().connect(str(sound))
    try:
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'meta'").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    finally:
        conn.close()
    data = bytearray(sound.read_bytes())
    at = (root - 1) * size + start
    data[at : at + 200] = b"\xff" * 200
    copy.write_bytes(bytes(data))
    return copy


@pytest.mark.parametrize("start", [0, 8], ids=["its header", "its cell pointers"])
def test_a_damaged_settings_page_is_named_damaged_by_every_command(
    tmp_path: Path, cli_env: None, start: int
) -> None:
    """Cell pointers past the page read as NULL rows through a memory-mapped file, and
    ``doctor``, ``stats`` and ``export`` said the file "records no embedder yet"."""
    sound = _two_agents(tmp_path / "sound.db")
    damaged = _meta_damaged(sound, tmp_path / "damaged.db", start)
    runner = CliRunner()
    for command in (["doctor"], ["stats"], ["export"], ["retrieve", "note"]):
        done = runner.invoke(app, [*command, "--db", str(damaged)])
        said = " ".join(done.output.split())
        assert done.exit_code == 1, (command, said)
        assert "the database file is damaged" in said, (command, said)
        assert "records no embedder" not in said
    hint = re.search(r"`(memengine export [^`]*)`", said)  # the way out it names, run as given
    assert hint is not None
    saved = runner.invoke(app, [*shlex.split(hint.group(1))[1:], "--db", str(damaged)])
    lines = [json.loads(line) for line in (tmp_path / "saved.jsonl").read_text().splitlines()]
    assert saved.exit_code == 0, saved.output
    assert sorted({line["agent"] for line in lines}) == ["alice", "bob"] and len(lines) == 10
    doctor = runner.invoke(app, ["doctor", "--db", str(sound)])  # the sound file: no damage
    assert "10 episodes" in doctor.output and "is damaged" not in doctor.output, doctor.output
    stats = runner.invoke(app, ["stats", "--db", str(sound)])
    assert stats.exit_code == 0 and "is damaged" not in stats.output, stats.output


def test_a_jsonl_file_cut_inside_a_character_names_its_line(mem: Memory, tmp_path: Path) -> None:
    """It said only "not UTF-8 text (unexpected end of data)"."""
    lines = [
        json.dumps(
            {"content": f"猫の話 {i}", "kind": "fact", "occurred_at": T0.isoformat()},
            ensure_ascii=False,
        )
        for i in range(400)
    ]  # (past the first block the file is decoded in)
    whole = ("\n".join(lines) + "\n").encode()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(whole[: whole.rindex("猫".encode()) + 1])  # 1 of the 3 bytes of 猫
    with pytest.raises(InvalidInput, match=r"cut\.jsonl:400: not UTF-8 text .*looks cut off"):
        mem.import_(cut)
    other = tmp_path / "sjis.jsonl"  # a line in another encoding, lines after it: no cut
    body = [line.encode() for line in lines]
    body[249] = lines[249].encode("cp932")
    other.write_bytes(b"\n".join(body) + b"\n")
    with pytest.raises(InvalidInput, match=r"sjis\.jsonl:250: not UTF-8 text") as caught:
        mem.import_(other)
    assert "cut off" not in str(caught.value) and "save it as UTF-8" in str(caught.value)
    assert mem.store.count() == 0
    sound = tmp_path / "sound.jsonl"
    sound.write_bytes(whole)
    assert len(mem.import_(sound)) == 400


def _locomo(path: Path, conversation: dict[str, object]) -> Path:
    path.write_text(json.dumps([{"sample_id": "s1", "conversation": conversation}]))
    return path


def _turn(**more: object) -> dict[str, object]:
    return {"speaker": "A", "dia_id": "D1:1", "text": "hi"} | more


@pytest.mark.parametrize(
    ("conversation", "says"),
    [
        (
            {"session_1": [_turn()], "session_1_date_time": 5},
            'session_1_date_time: a date as text ("1:56 pm on 8 May, 2023"), not 5',
        ),
        (
            {"session_1": [_turn()], "session_1_date_time": None},
            "session_1_date_time: a date as text",
        ),
        (
            {"session_" + "9" * 5000: [_turn()], "session_1_date_time": DATE},
            "conversation.session_999999999999… (5,000 characters): a session is "
            "session_<n>, n a number of at most 9 digits",
        ),
        (
            {"session_1": [_turn(blip_caption=["a"])], "session_1_date_time": DATE},
            "session_1 turn 1: blip_caption is text, not list",
        ),
        (
            {"session_1": [_turn(blip_caption=5)], "session_1_date_time": DATE},
            "session_1 turn 1: blip_caption is text, not int",
        ),
    ],
)
def test_a_malformed_locomo_value_is_named_in_plain_words(
    mem: Memory, tmp_path: Path, conversation: dict[str, object], says: str
) -> None:
    """A number for a date said "'int' object has no attribute 'strip'", a session number
    of 5,000 digits "use sys.set_int_max_str_digits()", a caption list was stored."""
    with pytest.raises(InvalidInput) as caught:
        mem.import_(_locomo(tmp_path / "l.json", conversation))
    assert says in str(caught.value)
    assert "attribute" not in str(caught.value) and "sys." not in str(caught.value)
    assert mem.store.count() == 0


def test_a_caption_of_text_or_none_and_a_long_session_number_still_import(
    mem: Memory, tmp_path: Path
) -> None:
    conversation = {
        "session_1": [
            _turn(blip_caption="a dog on a beach"),
            _turn(dia_id="D1:2", blip_caption=None),
        ],
        "session_1_date_time": DATE,
        "session_123456789": [_turn(dia_id="D2:1", text="later")],
        "session_123456789_date_time": DATE,
    }
    ids = mem.import_(_locomo(tmp_path / "l.json", conversation))
    texts = sorted(mem.get(i).content for i in ids)
    assert texts == ["A: hi", "A: hi [image: a dog on a beach]", "A: later"]


def test_an_agent_name_with_a_line_break_is_named_on_one_line(
    tmp_path: Path, cli_env: None
) -> None:
    """The raw name came first: "agent default/ab\\n, exchange e1: agent name …"."""
    exchange = {"id": "e\n1", "at": T0.isoformat(), "user": "hello", "partner": "hi"}
    body = {
        "conversations": [
            {"id": "a\u0000b\n", "sessions": [{"id": "s\n1", "exchanges": [exchange]}]}
        ]
    }
    path = tmp_path / "m.json"
    path.write_text(json.dumps(body))
    done = CliRunner().invoke(
        app, ["import", str(path), "--agent-per-conversation", "--db", str(tmp_path / "m.db")]
    )
    assert done.exit_code == 1
    said = done.output.strip()
    assert "\n" not in said, said
    assert "conversation $'a\\x00b\\n': agent name 'default/a\\x00b\\n' holds a NUL" in said


def test_a_number_too_long_to_read_is_named_in_the_files_terms(mem: Memory, tmp_path: Path) -> None:
    """Python refuses a number of more than 4,300 digits with advice for programmers
    ("use sys.set_int_max_str_digits()"); the error names the number's length instead, and
    nothing is stored."""
    long = tmp_path / "long.json"
    long.write_text('{"conversations": [{"id": ' + "9" * 5000 + "}]}", encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"long\.json: .*a number of 5,000 digits\)$") as caught:
        mem.import_(long)
    assert "sys." not in str(caught.value)
    assert mem.store.count() == 0


def _line(**more: object) -> str:
    episode = {"content": "猫の話", "kind": "fact", "occurred_at": T0.isoformat()} | more
    return json.dumps(episode, ensure_ascii=False)


@pytest.mark.parametrize("line", [1, 2])
def test_a_jsonl_number_too_long_to_read_is_named_by_its_line(
    mem: Memory, tmp_path: Path, line: int, cli_env: None
) -> None:
    """A JSONL line said "Exceeds the limit (4300 digits) … use sys.set_int_max_str_digits()"
    (the length was named only where the format is detected); also from standard input."""
    lines = [_line(), _line()]
    lines[line - 1] = lines[line - 1][:-1] + ', "importance": ' + "9" * 5000 + "}"
    body = "\n".join(lines) + "\n"
    path = tmp_path / "big.jsonl"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path)
    assert str(caught.value) == f"{path}:{line}: invalid episode: a number of 5,000 digits"
    assert mem.store.count() == 0
    piped = CliRunner().invoke(app, ["import", "-", "--db", str(tmp_path / "p.db")], input=body)
    assert piped.exit_code == 1
    assert "a number of 5,000 digits" in piped.output and "sys." not in piped.output
    if line == 2:  # (on line 1, with no name to tell JSONL, it is "not a JSON or JSONL file")
        assert "standard input:2: invalid episode: a number of 5,000 digits" in piped.output


def test_an_evaluation_file_with_a_number_too_long_to_read_names_its_length(
    tmp_path: Path,
) -> None:
    from memengine.errors import EvaluationError
    from memengine.evaluation.files import load_json

    data = tmp_path / "set.json"
    data.write_text('{"conversations": [{"id": ' + "9" * 5000 + "}]}", encoding="utf-8")
    with pytest.raises(EvaluationError, match=r"set\.json: cannot read JSON \(a number of 5,000"):
        load_json(data)
    data.write_text('{"conversations": [{"id": ' + "9" * 4000 + "}]}", encoding="utf-8")
    assert load_json(data)["conversations"][0]["id"] == int("9" * 4000)  # (within Python's limit)


def test_a_long_value_is_echoed_cut_to_a_line(mem: Memory, tmp_path: Path) -> None:
    """A LoCoMo date of 100,000 characters gave an error line of 100,087; a short one is
    still shown whole."""
    long = _locomo(
        tmp_path / "l.json", {"session_1": [_turn()], "session_1_date_time": "x" * 100_000}
    )
    with pytest.raises(InvalidInput) as caught:
        mem.import_(long)
    said = str(caught.value)
    assert len(said) < 300 and said.endswith("date: '" + "x" * 79 + "… (100,000 characters)"), said
    short = _locomo(tmp_path / "s.json", {"session_1": [_turn()], "session_1_date_time": "昨日"})
    with pytest.raises(InvalidInput, match=r"unrecognised LoCoMo date: '昨日'$"):
        mem.import_(short)
    exchange = {"id": "e1", "at": "y" * 100_000, "user": "hello", "partner": "hi"}
    sets = tmp_path / "m.json"
    sets.write_text(
        json.dumps({"conversations": [{"id": "c", "sessions": [{"exchanges": [exchange]}]}]})
    )
    with pytest.raises(InvalidInput, match=r"not an ISO 8601 time: 'y+… \(100,000 characters\)$"):
        mem.import_(sets)
    key = tmp_path / "k.jsonl"  # an unknown field of 100,000 characters
    key.write_text(json.dumps({"content": "a", "kind": "fact", "z" * 100_000: 1}) + "\n")
    with pytest.raises(InvalidInput) as caught:
        mem.import_(key)
    assert "unknown field 'zzz" in str(caught.value) and len(str(caught.value)) < 400
    assert mem.store.count() == 0


def test_a_byte_no_character_begins_with_is_not_called_cut_off(mem: Memory, tmp_path: Path) -> None:
    """A last byte \\xff said "the file ends inside a character, it looks cut off"; no UTF-8
    character holds it, so the file is in another encoding, not cut."""
    path = tmp_path / "ff.jsonl"
    path.write_bytes((_line() + "\n").encode() + b"\xff")
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path)
    assert str(caught.value) == f"{path}:2: not UTF-8 text (invalid start byte): save it as UTF-8"


@pytest.mark.parametrize("name", ["-", "cut.json"])
def test_standard_input_and_any_name_cut_inside_a_character_name_the_line(
    tmp_path: Path, cli_env: None, name: str
) -> None:
    """From `import -` (or a file not named .jsonl) it said "<stdin>: not UTF-8 text
    (unexpected end of data at byte 936): save it as UTF-8": no line, no "cut off"."""
    whole = "".join(_line(content=f"猫の話 {i}") + "\n" for i in range(3)).encode()
    cut = whole[: whole.rindex("猫".encode()) + 2]  # 2 of the 3 bytes of 猫, on line 3
    (tmp_path / "cut.json").write_bytes(cut)
    db = str(tmp_path / "c.db")
    done = CliRunner().invoke(app, ["import", name, "--db", db], input=cut if name == "-" else None)
    shown = "standard input" if name == "-" else "cut.json"
    assert done.exit_code == 1
    assert f"{shown}:3: not UTF-8 text (unexpected end of data): " in done.output
    assert "looks cut off" in done.output
    sjis = whole.replace("猫の話 1".encode(), "猫の話 1".encode("cp932"))  # line 2, not cut
    (tmp_path / "cut.json").write_bytes(sjis)
    done = CliRunner().invoke(
        app, ["import", name, "--db", db], input=sjis if name == "-" else None
    )
    assert f"{shown}:2: not UTF-8 text (" in done.output and "save it as UTF-8" in done.output
    assert "cut off" not in done.output
