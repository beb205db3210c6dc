"""Review 53 of the command line's closed pipes: whichever stream's reader went away
(standard output, standard error, or both in one pipe: ``2>&1 | head``), a command that
succeeded or was cut short ends quietly with 141 and one that failed with its own code (1,
2 for a usage error), its error line lost; never with the 120 of Python's failed flush at
the exit ("Exception ignored … BrokenPipeError"), from a warning or a log line either."""

from __future__ import annotations

import io
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memengine import Memory
from memengine.cli import main
from memengine.cli._app import start_afresh

from .helpers import HashEmbedder

ROOT = Path(__file__).resolve().parents[1]
ENV = {"PATH": "/usr/bin:/bin", "MEMENGINE_EMBEDDER__NAME": "usem3", "PYTHONPATH": str(ROOT)}
"""The command of this checkout, whatever the directory the tests run in."""

NOISY = """
import logging, sys, warnings
from memengine.cli import core, main

settings = core.settings

def noisy(*args, **kwargs):
    warnings.warn("a library's warning")
    logging.getLogger("memengine.test").warning("a library's log line")
    return settings(*args, **kwargs)

core.settings = noisy
sys.argv[1:] = sys.argv[2:]
main()
"""
"""A ``memengine`` whose commands meet a library's warning and log line (both printed on
standard error by Python itself, not by the command's console) before their work."""


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A file holding one episode of the agent "default"."""
    path = tmp_path / "m.db"
    with Memory.open(path, embedder=HashEmbedder()) as mem:
        mem.add("tea at noon")
    return str(path)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "memengine", *args]


def _closed(args: list[str], gone: str, unbuffered: str = "") -> tuple[int, bytes]:
    """Run ``args`` with the reader of ``gone`` ("stdout", "stderr", or "both": one pipe
    for the two, as ``2>&1 | true``) gone before the command writes anything; its exit
    code and what the stream that was kept received."""
    both = gone == "both"
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if both else subprocess.PIPE,
        env=ENV | ({"PYTHONUNBUFFERED": unbuffered} if unbuffered else {}),
    )
    assert proc.stdout is not None
    closed, kept = (proc.stderr, proc.stdout) if gone == "stderr" else (proc.stdout, proc.stderr)
    assert closed is not None
    closed.close()
    got = kept.read() if kept is not None else b""
    return proc.wait(timeout=120), got


@pytest.mark.parametrize("unbuffered", ["", "1"])
@pytest.mark.parametrize("gone", ["stdout", "stderr", "both"])
def test_a_command_that_succeeds_ends_with_141_whichever_reader_went_away(
    db: str, gone: str, unbuffered: str
) -> None:
    """``stats --agent nobody`` prints its table on stdout and a warning on stderr: with
    stderr's reader gone it ended with 120; the table still arrives (the notes are not the
    command's output, so it goes on without them). Under ``PYTHONUNBUFFERED`` too."""
    code, got = _closed(_cli("stats", "--agent", "nobody", "--db", db), gone, unbuffered)
    assert code == 141, got
    assert b"Traceback" not in got and b"Exception ignored" not in got
    if gone == "stderr":
        assert b"episodes" in got  # the table, after the warning that could not be written
    if gone == "stdout":
        assert b"warning: no agent" in got and b"error" not in got  # the rest quietly


@pytest.mark.parametrize("unbuffered", ["", "1"])
@pytest.mark.parametrize("gone", ["stdout", "stderr", "both"])
def test_a_command_that_fails_keeps_its_code_when_its_error_line_is_lost(
    tmp_path: Path, gone: str, unbuffered: str
) -> None:
    """``stats --db missing.db 2>&1 | true`` ended with 120 (and would have with 141): a
    script must still see the failure."""
    missing = str(tmp_path / "missing.db")
    code, got = _closed(_cli("stats", "--db", missing), gone, unbuffered)
    assert code == 1, got
    assert b"Traceback" not in got and b"Exception ignored" not in got
    if gone == "stdout":
        assert b"error: no memory file at" in got  # said where it still can be


@pytest.mark.parametrize("gone", ["stdout", "stderr", "both"])
def test_a_usage_error_keeps_its_code_2_when_its_message_is_lost(gone: str) -> None:
    """Click's usage message, lost on a closed stderr, ended the command with 141."""
    code, got = _closed(_cli("stats", "--no-such-option"), gone)
    assert code == 2, got
    assert b"Traceback" not in got and b"Exception ignored" not in got


@pytest.mark.parametrize("gone", ["stderr", "both"])
def test_a_warning_or_a_log_line_on_a_closed_stderr_ends_with_141_not_120(
    db: str, gone: str
) -> None:
    """What Python's warnings and logging print on stderr (they swallow the broken pipe,
    and the exit's flush failed on what stayed in the buffer: 120)."""
    code, got = _closed([sys.executable, "-c", NOISY, "memengine", "stats", "--db", db], gone)
    assert code == 141, got
    assert b"Exception ignored" not in got and b"Logging error" not in got


def test_nothing_changes_while_every_reader_stays(db: str, tmp_path: Path) -> None:
    """Not triggered: read whole, the same commands end with 0, 1 and 2, saying all."""
    noisy = subprocess.run(
        [sys.executable, "-c", NOISY, "memengine", "stats", "--agent", "nobody", "--db", db],
        env=ENV,
        capture_output=True,
    )
    assert noisy.returncode == 0 and b"episodes" in noisy.stdout, noisy.stderr
    for said in (b"a library's warning", b"a library's log line", b"warning: no agent"):
        assert said in noisy.stderr
    failed = subprocess.run(
        _cli("stats", "--db", str(tmp_path / "missing.db")), env=ENV, capture_output=True
    )
    assert failed.returncode == 1 and b"error: no memory file at" in failed.stderr
    usage = subprocess.run(_cli("stats", "--no-such-option"), env=ENV, capture_output=True)
    assert usage.returncode == 2 and b"No such option" in usage.stderr


class _ClosedPipe(io.TextIOBase):
    """A standard error whose reader went away: every write is a broken pipe."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Let a test call :func:`main` itself: the SIGTERM handler it sets, and the standard
    streams it wraps, are put back afterwards, and no closed pipe it met stays for the
    commands other tests run through the app."""
    handler = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(sys, "stdout", sys.stdout)
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    yield
    signal.signal(signal.SIGTERM, handler)
    start_afresh()


def _main(monkeypatch: pytest.MonkeyPatch, *args: str, stderr: Any = None) -> Any:
    """The exit code of ``memengine ARGS`` run by :func:`main` in this process (with
    ``stderr`` as its standard error when given, put back after, as a harness does)."""
    monkeypatch.setattr(sys, "argv", ["memengine", *args])
    kept = sys.stderr
    if stderr is not None:
        sys.stderr = stderr
    try:
        main()
    except SystemExit as exc:
        return exc.code
    finally:
        sys.stderr = kept
    return None


def test_each_call_of_main_starts_afresh_after_a_closed_stderr(
    db: str,
    tmp_path: Path,
    cli_env: None,
    in_process: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A program (or a test) that called main() once with its stderr's reader gone got no
    error line from any later call, and 141 for a later success (``--version``): the
    closed pipe was kept for the process. Each call ends by its own streams."""
    missing = str(tmp_path / "missing.db")
    assert _main(monkeypatch, "stats", "--agent", "nobody", "--db", db, stderr=_ClosedPipe()) == 141
    assert "episodes" in capsys.readouterr().out  # (the warning lost, the table printed)
    assert _main(monkeypatch, "stats", "--db", missing) == 1
    assert "error: no memory file at" in capsys.readouterr().err
    assert _main(monkeypatch, "--version") == 0
    assert capsys.readouterr().out.startswith("memengine ")
    assert _main(monkeypatch, "stats", "--agent", "nobody", "--db", db) == 0
    assert "warning: no agent 'nobody'" in capsys.readouterr().err  # said again
    assert _main(monkeypatch, "stats", "--db", missing, stderr=_ClosedPipe()) == 1  # still 1


UNBUFFERED_TWICE = textwrap.dedent(
    """
    import gc, os, sys
    from memengine.cli import main

    def run(*args):
        sys.argv = ["memengine", *args]
        out, err = sys.stdout, sys.stderr
        try:
            main()
        except SystemExit as exc:
            return exc.code
        finally:
            sys.stdout, sys.stderr = out, err  # put back, as a harness does
            gc.collect()

    codes = [run("--version"), run("stats", "--db", sys.argv[1])]
    os.fstat(1), os.fstat(2)
    print("codes", codes, flush=True)
    print("stderr still open", file=sys.stderr, flush=True)
    """
)


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_main_called_twice_leaves_the_process_its_streams(tmp_path: Path, unbuffered: str) -> None:
    """Under ``PYTHONUNBUFFERED`` main() wraps stdout and stderr so each write is whole; the
    wrapper was over the streams' own files, and once a harness put its streams back it
    was collected and closed them: "I/O operation on closed file … lost sys.stderr" and
    nothing more printed. Not triggered: unbuffered or not, all is printed."""
    done = subprocess.run(
        [sys.executable, "-c", UNBUFFERED_TWICE, str(tmp_path / "missing.db")],
        env=ENV | ({"PYTHONUNBUFFERED": unbuffered} if unbuffered else {}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("memengine ") and "codes [0, 1]" in done.stdout
    assert "error: no memory file at" in done.stderr and "stderr still open" in done.stderr
    assert "closed file" not in done.stderr and "lost sys.stderr" not in done.stderr
