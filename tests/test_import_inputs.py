"""What an import says of an input it cannot take: a disk with no room for the temporary
copy of standard input, a pipe or a UTF-16 file is a DiskFull naming the folder (not "could
not print the output"), a copy past the limit on the size of files a DiskError naming the
limit (no space freed lifts it), and the common wrong files (one episode pretty-printed, a JSON
array of episodes, a gzip file, UTF-16 without its mark, a line cut inside a text) are
named for what they are, while the files that import still do.

Real SQLite files; the input files are written as a user or a tool would write them.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memengine import Episode, InvalidInput, Memory, NewEpisode
from memengine.cli import app

from .helpers import T0

ROOT = Path(__file__).resolve().parents[1]
WHEN = T0.isoformat()
EPISODES: list[dict[str, Any]] = [
    {"user_text": "猫の名前はモチ", "occurred_at": "2026-04-01T09:00:00+09:00"},
    {"user_text": "I moved to Osaka", "occurred_at": WHEN, "tags": ["move"]},
]


def _jsonl(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    return path


def _big(path: Path, n: int = 2000) -> Path:
    """A JSONL file of ``n`` episodes, some 300 KB for 2,000."""
    return _jsonl(
        path, [{"user_text": f"garden note {i} " * 8, "occurred_at": WHEN} for i in range(n)]
    )


LIMITED = textwrap.dedent(
    """
    import resource, signal, sys

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, resource.RLIM_INFINITY))

    if sys.argv[1] == "library":
        from memengine import Memory, MemEngineError
        from tests.helpers import HashEmbedder
        with Memory.open(sys.argv[3], embedder=HashEmbedder()) as mem:
            limit()
            try:
                mem.import_(sys.argv[2])
            except MemEngineError as exc:
                print(type(exc).__name__, exc, sep="|")
            print(mem.store.count())
            resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
    else:  # (the command reads its input before it opens the memory file)
        limit()
        from memengine.cli import app
        app(["import", sys.argv[2], "--db", sys.argv[3]], prog_name="memengine")
    """
)


def _limited(tmp_path: Path, *args: str, data: bytes = b"") -> subprocess.CompletedProcess[str]:
    """Run :data:`LIMITED` (files of at most 100,000 bytes, ``TMPDIR`` a folder of
    tmp_path) with ``data`` piped to its standard input."""
    (tmp_path / "tmp").mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(tmp_path / "tmp")}
    done = subprocess.run(
        [sys.executable, "-c", LIMITED, *args],
        cwd=ROOT,
        env=env | {"PYTHONDONTWRITEBYTECODE": "1"},
        input=data,
        capture_output=True,
        timeout=120,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


TOO_LARGE = (
    "File too large: the file reached this process's `ulimit -f` of 100,000 bytes on the "
    "size of files, not a full disk; raise it (nothing was imported)"
)


@pytest.mark.parametrize("name", ["-", "/dev/stdin"], ids=["import -", "a pipe"])
def test_no_room_for_the_copy_of_standard_input_or_a_pipe_says_so(
    tmp_path: Path, name: str
) -> None:
    """A copy past the limit on file sizes said "could not print the output: File too large;
    it is lost" (the copy of the input was taken for the output), then "free some space
    there", which does not lift that limit: it is named, with its bytes."""
    big = _big(tmp_path / "big.jsonl")
    done = _limited(tmp_path, "cli", name, str(tmp_path / "m.db"), data=big.read_bytes())
    shown = "standard input" if name == "-" else name
    assert done.returncode == 1
    assert done.stderr == (
        f"error: could not write the temporary copy of {shown} an import reads "
        f"({big.stat().st_size:,} bytes) to {tmp_path / 'tmp'}: {TOO_LARGE}\n"
    )
    assert not (tmp_path / "m.db").exists() and not list((tmp_path / "tmp").iterdir())


def test_a_copy_of_a_utf16_file_past_the_size_limit_is_a_disk_error(tmp_path: Path) -> None:
    """From the library, a raw ``OSError: [Errno 27] File too large`` escaped the import of a
    UTF-16 file (read through a UTF-8 copy): now a DiskError naming the limit (as the store
    names one it meets), with nothing imported."""
    text = _big(tmp_path / "big.jsonl").read_text("utf-8")
    wide = tmp_path / "wide.jsonl"
    wide.write_text(text, encoding="utf-16")
    done = _limited(tmp_path, "library", str(wide), str(tmp_path / "m.db"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        f"DiskError|could not write the temporary copy of {wide} an import reads "
        f"({len(text.encode()):,} bytes) to {tmp_path / 'tmp'}: {TOO_LARGE}\n0\n"
    )
    assert not list((tmp_path / "tmp").iterdir())  # (the partial copy is removed)


def test_a_pretty_printed_episode_is_named_as_such(mem: Memory, tmp_path: Path) -> None:
    """`json.dumps(episode, indent=2)` was read as "a one-line export", then by its lines:
    "pretty.json:1: invalid episode: Expecting property name enclosed in double quotes"."""
    one = tmp_path / "pretty.json"
    one.write_text(json.dumps(EPISODES[0], ensure_ascii=False, indent=2), encoding="utf-8")
    two = tmp_path / "pretty.jsonl"  # two of them, one after the other
    two.write_text("\n".join(json.dumps(e, indent=1) for e in EPISODES) + "\n", encoding="utf-8")
    for path, lines in ((one, 4), (two, 4)):
        with pytest.raises(InvalidInput) as caught:
            mem.import_(path)
        assert str(caught.value) == (
            f"{path}: an episode written over {lines} lines, where an import reads one "
            "episode per line (JSONL): write each episode on one line"
        )
    flat = _jsonl(tmp_path / "flat.json", EPISODES[:1])  # on one line: it imports
    flat.write_text(flat.read_text("utf-8") + "\n\n", encoding="utf-8")
    assert mem.import_(flat) == [1] and mem.get(1).user_text == "猫の名前はモチ"


@pytest.mark.parametrize(
    ("given", "wrong"),
    [
        ({"content": "x", "foo": 1}, "unknown field 'foo' (known: agent, content, "),
        ({"user_text": "猫の名前はモチ", "occurred_at": "昨日"}, "occurred_at: not an ISO 8601"),
        ({"user_text": "I moved to Osaka"}, "occurred_at: Field required"),
    ],
)
def test_a_pretty_printed_object_that_is_no_episode_says_what_is_wrong_with_it(
    mem: Memory, tmp_path: Path, given: dict[str, Any], wrong: str
) -> None:
    """Told "an episode written over 4 lines … write each episode on one line", a user who
    did so was then told the line was no episode ("unknown field 'foo'"): what one line of
    it would be refused for comes first, with the lines it spans; a valid one keeps the
    hint (:func:`test_a_pretty_printed_episode_is_named_as_such`)."""
    path = tmp_path / "pretty.json"
    path.write_text("\n" + json.dumps(given, ensure_ascii=False, indent=2), encoding="utf-8")
    lines = len(given) + 2
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path)
    said = str(caught.value)
    assert said.startswith(f"{path}:2: invalid episode written over {lines} lines: {wrong}")
    assert "write each episode on one line" not in said
    flat = _jsonl(tmp_path / "flat.jsonl", [given])  # on one line: refused for the same reason
    with pytest.raises(InvalidInput) as caught:
        mem.import_(flat)
    assert str(caught.value).startswith(f"{flat}:1: invalid episode: {wrong}")
    assert mem.store.count() == 0


def test_an_import_of_standard_input_names_it_one_way(tmp_path: Path, cli_env: None) -> None:
    """The empty input's summary said "standard input", every error "<stdin>"."""
    pretty = json.dumps({"content": "x", "foo": 1}, indent=2).encode()
    for data, said in [
        (b'{"user_text": "hi", "occurred_at": "' + WHEN.encode() + b'"}\n{bad\n', ":2: invalid"),
        (gzip.compress(b"{}"), ": gzip-compressed"),
        (pretty, ":1: invalid episode written over 4 lines"),
        (b"", " holds none"),
    ]:
        done = CliRunner().invoke(app, ["import", "-", "--db", "m.db"], input=data)
        assert f"standard input{said}" in done.output and "<stdin>" not in done.output


def test_a_copy_the_disk_has_no_room_for_is_a_disk_full_and_one_past_a_limit_is_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No room (a full disk, a quota) is a DiskFull: free some space. A file past the file
    system's limit on its size (FAT's 4 GiB, no ``ulimit -f`` set) is a DiskError saying
    so, which freeing space does not lift; another failure a DiskError as before."""
    from memengine import DiskError, DiskFull
    from memengine.importers import _no_copy

    monkeypatch.setattr("memengine.store.connect.file_size_limit", lambda: None)
    full = _no_copy(OSError(errno.ENOSPC, "No space left on device"), "standard input", 9, "/t")
    assert type(full) is DiskFull and str(full) == (
        "could not write the temporary copy of standard input an import reads (9 bytes) to "
        "/t: No space left on device; free some space there, or set TMPDIR to a folder with "
        "room (nothing was imported)"
    )
    large = _no_copy(OSError(errno.EFBIG, "File too large"), "standard input", 9, "/t")
    assert type(large) is DiskError and str(large).endswith(
        ": File too large: the file reached the file system's limit on the size of a file, "
        "not a full disk; set TMPDIR to a folder on another file system (nothing was imported)"
    )
    failed = _no_copy(OSError(errno.EIO, "Input/output error"), "standard input", 9, "/t")
    assert type(failed) is DiskError and "free some space" not in str(failed)


@pytest.mark.parametrize("name", ["arr.json", "arr.jsonl"])
def test_a_json_array_of_episodes_is_named_as_such(mem: Memory, tmp_path: Path, name: str) -> None:
    """An array of episodes was "unknown format" (as .json) or "arr.jsonl:1: invalid
    episode: not a JSON object" (as .jsonl); `[]` was "unknown format" too."""
    path = tmp_path / name
    path.write_text(json.dumps(EPISODES, ensure_ascii=False, indent=1), encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path)
    assert str(caught.value) == (
        f"{path}: a JSON array of 2 episodes, where an import reads one episode per line "
        "(JSONL): write one object per line (`jq -c '.[]' FILE`)"
    )
    path.write_text("[]\n", encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path)
    assert str(caught.value) == f"{path}: an empty JSON array ([]), which holds no episodes"
    assert mem.store.count() == 0


def test_other_json_is_still_an_unknown_format_or_a_bad_line(mem: Memory, tmp_path: Path) -> None:
    """Not every array or object is taken for episodes: an array of other objects is an
    unknown format, and a line that is an array amid episodes is named by its number."""
    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"name": "モチ"}, {"name": "Kinako"}]), encoding="utf-8")
    with pytest.raises(InvalidInput, match="unknown format"):
        mem.import_(other)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("[]\n" + json.dumps(EPISODES[1]) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        mem.import_(mixed)
    assert str(caught.value) == f"{mixed}:1: invalid episode: not a JSON object"


def test_a_line_cut_inside_a_text_is_unterminated(mem: Memory, tmp_path: Path) -> None:
    """A line cut inside a text that still ended in its newline said "Invalid control
    character at: line 1 column 81": the newline was read as part of the text."""
    whole = json.dumps(EPISODES[0], ensure_ascii=False)
    for end in ("\n", "\r\n"):
        path = tmp_path / "cut.jsonl"
        path.write_bytes((json.dumps(EPISODES[1]) + end + whole[:20] + end).encode())
        with pytest.raises(InvalidInput) as caught:
            mem.import_(path)
        assert str(caught.value) == (
            f"{path}:2: invalid episode: Unterminated string starting at: line 1 column 15 "
            "(char 14)"
        )
    assert mem.store.count() == 0


def test_a_gzip_file_says_how_to_import_it(mem: Memory, tmp_path: Path) -> None:
    """A gzip file (`export -o >(gzip > x.gz)`) was "not UTF-8 text (invalid start byte)"."""
    data = "".join(json.dumps(e) + "\n" for e in EPISODES).encode()
    path = tmp_path / "dump.jsonl.gz"
    path.write_bytes(gzip.compress(data))
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path)
    assert str(caught.value) == (
        f"{path}: gzip-compressed, not text: import what it holds, "
        "`memengine import <(zcat FILE)` (or `zcat FILE | memengine import -`)"
    )
    done = CliRunner().invoke(
        app, ["import", "-", "--db", str(tmp_path / "c.db")], input=path.read_bytes()
    )
    assert done.exit_code == 1 and done.output.startswith("error: standard input: gzip-compressed")
    assert mem.store.count() == 0


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le"])
def test_utf16_without_its_mark_says_so(mem: Memory, tmp_path: Path, codec: str) -> None:
    """UTF-16 without a byte-order mark read as UTF-8 holds NULs, and JSON said "Expecting
    property name enclosed in double quotes"; with its mark it imports."""
    text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in EPISODES)
    path = tmp_path / "wide.jsonl"
    path.write_bytes(text.encode(codec))
    wide = codec[:6].upper()
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path)
    assert str(caught.value) == (
        f"{path}: looks like {wide} text without a byte-order mark (NUL bytes between "
        "its letters): save it as UTF-8"
    )
    path.write_bytes(("\ufeff" + text).encode(codec))
    assert mem.import_(path) == [1, 2] and mem.get(1).user_text == "猫の名前はモチ"


def test_a_memsets_conversation_needs_an_id_only_for_an_agent_per_conversation(
    mem: Memory, tmp_path: Path
) -> None:
    """A conversation without an id was "a record lacks 'id'", naming no record, though the
    id names an agent only with --agent-per-conversation."""
    exchange = {"id": "e1", "at": WHEN, "user": "こんにちは", "partner": "やあ"}
    sessions = [{"id": "s1", "exchanges": [exchange]}]
    data = {"conversations": [{"id": "c1", "sessions": sessions}, {"sessions": sessions}]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path, per_conversation=True)
    assert str(caught.value) == (
        f"{path}: conversation 2 has no 'id', which names its agent with "
        "--agent-per-conversation (per_conversation)"
    )
    assert mem.store.count() == 0
    assert len(mem.import_(path)) == 2
    assert [mem.get(i).metadata["conversation"] for i in (1, 2)] == ["c1", ""]


def test_one_episode_given_for_a_list_says_so(mem: Memory) -> None:
    """An episode is a pydantic model, which iterates as its fields: `add_many(episode)`
    said "takes NewEpisode (or Episode) objects, not tuple"."""
    new = NewEpisode(kind="fact", content="my cat is Mochi", occurred_at=T0)
    stored = mem.get(mem.add_many([new])[0])
    assert isinstance(stored, Episode)
    for call, given in (
        (mem.add_many, new),
        (mem.add_many, stored),
        (mem.import_episodes, new),
        (mem.import_episodes, stored),
    ):
        with pytest.raises(InvalidInput) as caught:
            call(given)  # type: ignore[arg-type]
        assert str(caught.value) == (
            f"give a list of episodes, not one episode ({type(given).__name__}): [episode]"
        )
    assert mem.store.count() == 1
    assert len(mem.add_many(e for e in [new])) == 1  # a generator is still a source


def test_empty_standard_input_is_named_standard_input(tmp_path: Path, cli_env: None) -> None:
    """`memengine import - < /dev/null` said "- holds none"."""
    done = CliRunner().invoke(app, ["import", "-", "--db", "m.db"], input=b"")
    assert done.exit_code == 0
    assert "; standard input holds none, so no memory file was made" in done.output
    assert not (tmp_path / "m.db").exists()
    (tmp_path / "empty.jsonl").write_bytes(b"")
    done = CliRunner().invoke(app, ["import", "empty.jsonl", "--db", "m.db"])
    assert "; empty.jsonl holds none, so no memory file was made" in done.output
