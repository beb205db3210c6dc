"""Review 52 (command line): a path keeps the bytes it was typed in under any locale, a
``~user`` that names no home is a one-line configuration error, a damaged file's salvage
hint names the file, an output that cannot be written claims no work, and a Ctrl-C while
the command loads is quiet."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import memengine
from memengine import ConfigError, _startup, load_config
from memengine._startup import command_started
from memengine.cli._app import given_path
from memengine.text import salvage_command, shell_word

from .test_cli_shell import _cli, _env

C_LOCALE = {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
"""The locale of ``test_a_c_locale_keeps_japanese``: an ASCII filesystem encoding."""

SOURCE = str(Path(memengine.__file__).resolve().parents[1])
"""Where this memengine is, for a command run in another folder."""


def _here(**extra: str) -> dict[str, str]:
    """The tests' environment with ``extra``, running this memengine from any folder."""
    return _env(PYTHONPATH=SOURCE, **extra)


def _interruptible() -> None:
    """In a child before it starts Python: Ctrl-C as a terminal's process has it. A test
    run started in the background (``make test &`` in a script) inherits SIGINT ignored,
    and Python then keeps it ignored rather than install its KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _run(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    """The command run in ``cwd`` with ``env`` added to the tests' environment."""
    return subprocess.run(_cli(*args), env=_here(**env), cwd=cwd, capture_output=True)


def _names(folder: Path) -> set[bytes]:
    """The names in ``folder`` as the bytes on disk."""
    return set(os.listdir(os.fsencode(folder)))


def test_japanese_paths_under_the_c_locale_name_the_files_typed(tmp_path: Path) -> None:
    """Every path argument was read again as UTF-8, which an ASCII filesystem encoding
    cannot name a file with: init, search, export -o, backup gave a traceback, and import
    a usage error."""
    (tmp_path / "日本語").mkdir()
    db, c = "日本語/メモ.db", C_LOCALE
    made = _run("init", "--db", db, cwd=tmp_path, **c)
    assert made.returncode == 0, made.stderr
    assert "ready: " in made.stdout.decode() and "日本語/メモ.db" in made.stdout.decode()
    added = _run("add", "日本語のメモ", f"--db={db}", cwd=tmp_path, **c)  # (--opt=value too)
    assert added.returncode == 0, added.stderr
    out = _run("export", "--db", db, "-o", "日本語/出力.jsonl", cwd=tmp_path, **c)
    assert out.returncode == 0, out.stderr
    assert "exported 1 episode to 日本語/出力.jsonl" in out.stdout.decode()
    copied = _run("backup", "日本語/コピー.db", "--db", db, cwd=tmp_path, **c)
    assert copied.returncode == 0, copied.stderr
    imported = _run("import", "日本語/出力.jsonl", "--db", "日本語/読込.db", cwd=tmp_path, **c)
    assert imported.returncode == 0, imported.stderr
    found = _run("search", "日本語", "--db", "日本語/読込.db", cwd=tmp_path, **c)
    assert found.returncode == 0 and "日本語のメモ" in found.stdout.decode()
    typed = {n.encode() for n in ("メモ.db", "出力.jsonl", "コピー.db", "読込.db")}
    assert typed <= _names(tmp_path / "日本語")  # the UTF-8 bytes typed, nothing else
    line = json.loads((tmp_path / "日本語" / "出力.jsonl").read_text(encoding="utf-8"))
    assert line["user_text"] == "日本語のメモ"  # text arguments are still read as UTF-8


def test_a_path_in_bytes_that_are_not_utf8_names_that_file(tmp_path: Path) -> None:
    """A Latin-1 ``café`` (one byte é) under the C locale: its own bytes, and a message
    that names it pastes back as the same bytes (``$'caf\\xe9.db'``)."""
    latin = os.fsdecode(b"caf\xe9.db")  # (this process: UTF-8; the child reads the bytes)
    missing = _run("stats", "--db", latin, cwd=tmp_path, **C_LOCALE)
    said = missing.stderr.decode()
    assert missing.returncode == 1 and "Traceback" not in said
    assert "--db $'caf\\xe9.db'" in said  # (the bytes, not \udce9)
    made = _run("init", "--db", latin, cwd=tmp_path, **C_LOCALE)
    assert made.returncode == 0, made.stderr
    assert b"caf\xe9.db" in _names(tmp_path)


def test_a_path_keeps_its_reading_where_nothing_was_read_again() -> None:
    """Under UTF-8 (these tests) no argument is read again, so a path is as given: ``é``
    is not turned into other bytes, and an undecodable name keeps its escapes."""
    assert given_path("café.db") == "café.db"
    assert given_path(os.fsdecode(b"caf\xe9.db")) == os.fsdecode(b"caf\xe9.db")
    assert given_path("") == ""


def test_the_bytes_of_a_path_read_as_utf8_are_given_back_in_the_locale_reading() -> None:
    """In a Latin-1 or C process the UTF-8 reading of ``café.db`` goes back to its bytes
    (the one for the file), as the same process's filesystem encoding reads them; a text
    argument that was not read again (a Latin-1 ``b\\xe9``) is left alone."""
    code = (  # (in ASCII: the C locale reads the program's own bytes as ASCII too)
        "import os, sys\n"
        "from memengine.cli._app import given_path, prepare_process\n"
        "args = sys.argv[1:]\n"
        "cafe, day = 'caf\\u00e9.db', '\\u65e5'\n"
        "read = prepare_process(args)\n"
        "print(read[0] == '--db=' + cafe, read[1] == day, read[2] == args[2])\n"
        "print(os.fsencode(given_path(cafe)) == b'caf\\xc3\\xa9.db',"
        " os.fsencode(given_path(day)) == b'\\xe6\\x97\\xa5',"
        " given_path(args[2]) == args[2], given_path('plain.db') == 'plain.db')\n"
    )
    given = [b"--db=caf\xc3\xa9.db", "日".encode(), b"b\xe9"]  # (as a shell passes them)
    done = subprocess.run(
        [sys.executable.encode(), b"-c", code.encode(), *given],
        env=_here(**C_LOCALE),
        capture_output=True,
    )
    assert done.stdout.decode().split() == ["True"] * 7, done.stderr


@pytest.mark.parametrize(
    ("args", "env", "source"),
    [
        (("stats", "--db", "~nosuchuser52/x.db"), {}, "a command-line flag"),
        (("stats",), {"MEMENGINE_DB": "~nosuchuser52/m.db"}, "MEMENGINE_DB"),
        (("stats", "--config", "~nosuchuser52/c.toml"), {}, "cannot read config file"),
        (("stats",), {"MEMENGINE_CONFIG": "~nosuchuser52/c.toml"}, "named by MEMENGINE_CONFIG"),
    ],
)
def test_a_home_that_does_not_exist_is_a_one_line_error(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], source: str
) -> None:
    """``~nosuchuser`` raised RuntimeError("Could not determine home directory.")."""
    done = _run(*args, cwd=tmp_path, **env)
    said = done.stderr.decode().strip()
    assert done.returncode == 1 and "Traceback" not in said and len(said.splitlines()) == 1
    assert "~nosuchuser52 names no home folder (there is no user 'nosuchuser52'" in said
    assert source in said


def test_doctor_reports_a_home_that_does_not_exist_as_its_config_line(tmp_path: Path) -> None:
    done = _run("doctor", "--json", cwd=tmp_path, MEMENGINE_DB="~nosuchuser52/m.db")
    ok, detail = json.loads(done.stdout)["checks"]["config"]
    assert not ok and "MEMENGINE_DB" in detail and "names no home folder" in detail
    assert b"Traceback" not in done.stderr


def test_load_config_says_which_setting_names_no_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ConfigError, match=r"db = '~nosuchuser52/x\.db' \(a command-line"):
        load_config(overrides={"db": "~nosuchuser52/x.db"})
    toml = tmp_path / "m.toml"
    toml.write_text('db = "~nosuchuser52/x.db"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\(config file .*m\.toml\): ~nosuchuser52 names"):
        load_config(toml)
    monkeypatch.setenv("HOME", str(tmp_path))  # a home that resolves still does
    assert load_config(overrides={"db": "~/x.db"}).db == tmp_path / "x.db"


def test_the_salvage_command_names_the_file() -> None:
    assert salvage_command(Path("/srv/a dir/m.db")) == (
        "memengine export --all-agents --salvage --db '/srv/a dir/m.db' -o saved.jsonl"
    )
    assert salvage_command("m.db") == (
        "memengine export --all-agents --salvage --db m.db -o saved.jsonl"
    )
    assert "--db" not in salvage_command(None)  # (not known: none named)


def test_shell_word_gives_a_path_byte_back_as_that_byte() -> None:
    """A byte a C locale read as ``\\udce9`` is ``\\xe9`` in ``$'…'`` (bash reads
    ``\\udce9`` as a character it cannot encode); a character past ASCII stays one."""
    assert shell_word(os.fsdecode(b"caf\xe9 x.db")) == "$'caf\\xe9 x.db'"
    assert shell_word("café x.db") == "'café x.db'"
    assert shell_word("a\tb") == "$'a\\tb'"


def test_an_export_into_a_full_disk_claims_no_work_done(tmp_path: Path) -> None:
    """``export > /dev/full`` said "(what the command did is done)": an export does
    nothing but its output."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    db = tmp_path / "w.db"
    long = "tea " * 5000  # (past the output's buffer: the write fails inside the command)
    assert _run("add", long, "--db", str(db), cwd=tmp_path).returncode == 0
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            _cli("export", "--db", str(db)), env=_here(), stdout=full, stderr=subprocess.PIPE
        )
    said = done.stderr.decode().strip()
    assert done.returncode == 1 and "what the command did is done" not in said
    assert said == (
        "error: could not print the output: No space left on device; it is lost (a change "
        "the command made to the memory, if any, is saved)"
    )


def test_a_ctrl_c_while_the_command_loads_exits_130_quietly(tmp_path: Path) -> None:
    """Ctrl-C during ``import memengine`` gave a KeyboardInterrupt traceback. The signal
    is sent once ``-X importtime`` says the quiet handler's module is loaded, and before
    the command has started (the rest of the package takes far longer)."""
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", *_cli("stats", "--db", "none.db")[1:]],
        env=_here(),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_interruptible,
    )
    assert proc.stderr is not None
    seen = b""
    for line in proc.stderr:
        seen += line
        if line.rstrip().endswith(b"memengine._startup"):
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    said = (seen + err).decode()
    assert proc.returncode == 130 and "Traceback" not in said and "KeyboardInterrupt" not in said
    assert "memengine.cli" not in said  # (it was loading: the command had not started)


def test_a_ctrl_c_whose_exit_was_lost_while_loading_ends_the_command(tmp_path: Path) -> None:
    """Python can lose the exit a signal's handler raises while it compiles a module (one
    loaded from source: no cached bytecode): a Ctrl-C at 0.05–0.07 s into ``memengine
    retrieve`` let about one command in four run to its end, exit 0. The Ctrl-C is noted,
    and the command ends (130) as it starts. Here the loss is made on purpose, where the
    quiet handler is in place: the command then does nothing (no file made)."""
    child = (
        "import contextlib, signal, sys\n"
        "sys.orig_argv = [sys.executable, '-m', 'memengine']\n"
        "sys.argv = ['-m']\n"
        "import memengine._startup\n"
        "with contextlib.suppress(SystemExit):  # (lost, as a compile can lose it)\n"
        "    signal.raise_signal(signal.SIGINT)\n"
        "from memengine.cli import main\n"
        "sys.argv = ['memengine', 'add', 'a note', '--db', 'made.db']\n"
        "main()\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child],
        env=_here(),
        cwd=tmp_path,
        capture_output=True,
        preexec_fn=_interruptible,
        timeout=120,
    )
    assert done.returncode == 130, done.stderr
    assert done.stdout == b"" and b"Traceback" not in done.stderr
    assert not (tmp_path / "made.db").exists()


def test_a_lost_ctrl_c_is_told_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program that catches the command's exit and calls it again starts afresh."""
    monkeypatch.setattr(_startup, "_came", [signal.SIGINT])
    with pytest.raises(SystemExit) as stop:
        _startup.loaded()
    assert stop.value.code == 130
    _startup.loaded()  # (no second exit)


def test_only_the_command_gets_the_quiet_ctrl_c() -> None:
    """A program that imports memengine keeps Python's Ctrl-C (its KeyboardInterrupt)."""
    script = "import sys\nfrom memengine.cli import main\n"  # (as pip writes it)
    assert command_started(
        ["/venv/bin/memengine", "stats"], ["python", "/venv/bin/memengine"], script
    )
    assert command_started(["memengine.exe"], ["memengine.exe"], script)
    assert command_started(["-m"], ["python", "-X", "utf8", "-m", "memengine", "stats"])
    assert not command_started(["app.py"], ["python", "app.py"])
    assert not command_started(["-m"], ["python", "-m", "pytest"])
    assert not command_started(["/bin/memengine-helper"], ["python", "/bin/memengine-helper"])
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import signal, memengine; print(signal.getsignal(signal.SIGINT)"
            " is signal.default_int_handler)",
        ],
        env=_here(),
        capture_output=True,
        check=True,
        preexec_fn=_interruptible,
    )
    assert done.stdout.decode().strip() == "True"


NOT_UTF8_HOME = os.fsdecode(b"~\xe9/x.db")
"""``$'~\\xe9/x.db'``: a ``~user`` whose bytes are not UTF-8 (no account has such a name)."""


@pytest.mark.parametrize(
    ("args", "env", "source"),
    [
        (("stats", "--db", NOT_UTF8_HOME), {}, "a command-line flag"),
        (("stats",), {"MEMENGINE_DB": NOT_UTF8_HOME}, "MEMENGINE_DB"),
        (("stats", "--config", os.fsdecode(b"~\xe9/c.toml")), {}, "cannot read config file"),
    ],
)
def test_a_home_in_bytes_that_are_not_utf8_is_a_one_line_error_shown_as_typed(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], source: str
) -> None:
    """It was a UnicodeEncodeError traceback (pwd cannot look the name up); --config said
    "there is no user '\\udce9'" on the line that showed the path as ``~\\xe9``."""
    done = _run(*args, cwd=tmp_path, **env)
    said = done.stderr.decode().strip()
    assert done.returncode == 1 and "Traceback" not in said and len(said.splitlines()) == 1
    assert "~\\xe9 names no home folder (there is no user $'\\xe9' on this system)" in said
    assert source in said and "udce9" not in said


def test_the_library_says_a_home_in_bytes_that_are_not_utf8_names_none() -> None:
    """``Config(db=…)`` raised a bare UnicodeEncodeError; ``load_config`` one too."""
    with pytest.raises(ValueError, match=r"~\\xe9 names no home folder") as caught:
        memengine.Config(db=NOT_UTF8_HOME)
    assert not isinstance(caught.value, UnicodeError)
    with pytest.raises(ConfigError, match=r"db = \$'~\\xe9/x\.db' \(a command-line"):
        load_config(overrides={"db": NOT_UTF8_HOME})
    home = str(Path.home())  # (not triggered: a ~ that names a home is that home)
    assert str(load_config(overrides={"db": "~/x.db"}, environ={"HOME": home}).db).startswith(home)


_LAUNCHER = """\
import signal, sys, threading
sys.path.insert(0, {source!r})
said = []
def work():
    try:
        import memengine
        said.append("imported")
    except Exception as exc:
        said.append(repr(exc))
worker = threading.Thread(target=work)
worker.start()
worker.join()
import memengine
print(said[0], signal.getsignal(signal.SIGINT) is signal.default_int_handler)
"""


def test_a_program_of_its_own_named_memengine_keeps_pythons_ctrl_c(tmp_path: Path) -> None:
    """A user's launcher ``bin/memengine`` got the quiet handler: imported from a worker
    thread memengine failed ("signal only works in main thread"), from the main one its
    Ctrl-C was SystemExit(130) for good."""
    script = tmp_path / "bin" / "memengine"
    script.parent.mkdir()
    script.write_text(_LAUNCHER.format(source=SOURCE), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)],
        env=_here(),
        capture_output=True,
        preexec_fn=_interruptible,
    )
    assert done.stdout.decode().split() == ["imported", "True"], done.stderr


def test_the_console_script_and_python_m_are_the_command() -> None:
    """What an installer writes (pip, uv) and ``-m`` in either spelling start the command;
    a program named memengine, a module whose name starts so, do not."""
    written = "import sys\nfrom memengine.cli import main\nif __name__ == '__main__':\n"
    own = "import memengine\nmemengine.Memory.open('m.db')\n"
    assert command_started(["/venv/bin/memengine"], ["python", "/venv/bin/memengine"], written)
    assert not command_started(["/venv/bin/memengine"], ["python", "/venv/bin/memengine"], own)
    assert not command_started(["/venv/bin/memengine"], ["python", "/venv/bin/memengine"])
    assert command_started(["-m"], ["python", "-mmemengine", "stats"])
    assert not command_started(["-m"], ["python", "-mmemengine_tools"])
    assert not command_started(["app.py"], ["python", "app.py", "-m", "memengine"])


def test_a_ctrl_c_while_the_console_script_loads_exits_130_quietly(tmp_path: Path) -> None:
    """The console script as pip writes it gets the quiet handler (by its source)."""
    script = tmp_path / "memengine"
    script.write_text(
        "import sys\nfrom memengine.cli import main\nif __name__ == '__main__':\n"
        "    sys.exit(main())\n",
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [sys.executable, "-X", "importtime", str(script), "stats", "--db", "none.db"],
        env=_here(),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_interruptible,
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.rstrip().endswith(b"memengine._startup"):
            break
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and b"Traceback" not in err and b"KeyboardInterrupt" not in err
