"""The typer application, its shared options and error handling. No memory logic lives here."""

from __future__ import annotations

import contextlib
import difflib
import errno
import io
import json
import math
import os
import signal
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.segment import Segments
from rich.table import Table
from rich.text import Text

from ..clock import iso_text
from ..config import Config, TimeZoneWarning, load_config
from ..errors import InvalidInput, MemEngineError
from ..lazy_re import lazy_compile
from ..memory import AddInterrupted
from ..text import (
    bytes_shown,
    has_surrogate,
    json_escaped,
    json_finite,
    quoted_name,
    readable,
    shown_name,
    strip_controls,
)

__all__ = [
    "STOPS",
    "AgentOpt",
    "ConfigOpt",
    "DbOpt",
    "JsonOpt",
    "Terminated",
    "app",
    "console",
    "err_console",
    "given_file",
    "given_path",
    "guarded",
    "number",
    "open_memory",
    "prepare_process",
    "print_json",
    "print_table",
    "progress_bar",
    "settings",
    "shown",
    "shown_name",
    "stop_code",
    "whole",
    "widest",
]

app = typer.Typer(
    name="memengine",
    help="A local-first memory engine for LLM agents, in one SQLite file.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        sys.stdout.write(f"memengine {__version__}\n")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """A local-first memory engine for LLM agents, in one SQLite file."""
    if warnings.showwarning is not _show_warning:  # (once: the command's own, below)
        _PYTHONS_SHOWWARNING[:] = [warnings.showwarning]
        warnings.showwarning = _show_warning


_PYTHONS_SHOWWARNING: list[Callable[..., None]] = []
"""How Python showed a warning before the first command put :func:`_show_warning` there."""


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A warning of memengine's own (the system's time zone read as UTC) as a line on
    stderr, as the commands' other warnings are; any other as Python shows it."""
    if issubclass(category, TimeZoneWarning):
        err_console.print(
            f"[yellow]warning:[/yellow] {escape(str(message))}",
            highlight=False,
            soft_wrap=True,
            markup=True,
        )
        return
    _PYTHONS_SHOWWARNING[0](message, category, filename, lineno, file, line)


_PIPE_WIDTH = 1_000_000
"""The width of a console that writes to a pipe or file: lines are never wrapped or cut there."""

NARROW_WIDTH = 60
"""A terminal narrower than this gets lines, not a table (whose cells would be cut to
``…`` or left empty)."""


def too_narrow(needed: int = NARROW_WIDTH, out: Console | None = None) -> bool:
    """Whether ``out`` (by default standard output's :data:`console`) is a terminal narrower
    than a table ``needed`` columns wide (by default :data:`NARROW_WIDTH`)."""
    out = console if out is None else out
    return out.is_terminal and out.width < max(needed, NARROW_WIDTH)


MIN_FOLD = 10
"""The narrowest a table's column of text that folds (``overflow="fold"``) is printed."""


def print_table(table: Table, out: Console | None = None) -> None:
    """Print ``table`` on ``out`` (by default :data:`console`) with every cell whole: on a
    terminal a column that does not fold (a name, a number, a time) on one line at its full
    width, one that folds (a text) at least :data:`MIN_FOLD` columns wide; on a terminal too
    narrow for that (rich cut ``user-550e8400-…`` to ``user-55…`` and left cells empty), or
    under :data:`NARROW_WIDTH`, as lines instead (:func:`table_lines`). Into a pipe or a
    file (a console of a fixed width: ``bench > report.txt``) rich wraps a cell at its
    spaces as before (a header on two lines), and the table is drawn wider than the
    console where even that would cut a word to ``…``."""
    out = console if out is None else out
    wide = out.options.update_width(_PIPE_WIDTH)
    needed = wrapped = table._extra_width  # (its borders)
    for i, column in enumerate(table.columns):
        folds = column.overflow == "fold" and not column.no_wrap
        cells = [column.header, *column.cells]
        sizes = [Measurement.get(out, wide, cell) for cell in cells]
        width = max(size.maximum for size in sizes)
        floor = max(MIN_FOLD, column.min_width or 0)
        word = width if column.no_wrap else max(size.minimum for size in sizes)
        padding = table._get_padding_width(i)
        needed += (min(width, floor) if folds else width) + padding
        wrapped += (min(width, floor) if folds else max(word, column.min_width or 0)) + padding
        if out.is_terminal:
            column.no_wrap = not folds  # (rich narrows a column that wraps below its longest word)
    if not out.is_terminal and wrapped > out.width:
        out.print(Segments(out.render(table, out.options.update_width(wrapped))), soft_wrap=True)
    elif too_narrow(needed, out):
        for line in table_lines(table, out):
            out.print(line, highlight=False, soft_wrap=True, markup=False, emoji=False)
    else:
        out.print(table)


def widest(texts: Iterable[str]) -> int:
    """The columns the widest of ``texts`` takes on a terminal (日本 takes 4), 0 for none:
    the ``min_width`` of a column of text that folds, so the names and numbers it also
    holds (an agent, a perspective, a time) are never broken across lines."""
    return max((cell_len(text) for text in texts), default=0)


def table_lines(table: Table, out: Console) -> list[str]:
    """``table`` as lines a terminal wraps without breaking a word: its title, then each
    row on one line, as ``field: value`` for a table without a header (``life``) and
    ``agent: user-42 · active: 3 · archived: 0`` for one with; then its caption."""

    def plain(cell: Any) -> str:
        text = cell.plain if isinstance(cell, Text) else out.render_str(str(cell)).plain
        return " ".join(text.split("\n")).strip()

    heads = [plain(c.header) for c in table.columns]
    lines = [plain(table.title)] if table.title else []
    for row in zip(*(c.cells for c in table.columns), strict=True):
        cells = [plain(cell) for cell in row]
        if not table.show_header:
            lines.append(": ".join([cells[0], " · ".join(c for c in cells[1:] if c)][: len(cells)]))
        else:
            lines.append(" · ".join(f"{h}: {c}" for h, c in zip(heads, cells, strict=True) if c))
    return lines + ([plain(table.caption)] if table.caption else [])


def silence(stream: Any) -> None:
    """Point ``stream`` (standard output or standard error) at the null device, so that the
    exit's flush of what could not be written (a closed pipe, a full disk) does not fail
    once more: Python says "Exception ignored … BrokenPipeError" then and ends with 120."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # (closed: None, `>&-`)
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)


def silence_stdout() -> None:
    """:func:`silence` standard output."""
    silence(sys.stdout)


_READERS_GONE: set[str] = set()
"""The standard streams (``"stderr"``, ``"stdout"``) whose reader went away without ending
the command (its notes are not its output) or was found gone at its end: the command
ends with 141 if it does not fail."""


def notes_lost() -> None:
    """Standard error's reader went away (``2>&1 | head``, ``2>&1 >/dev/null | true``): drop
    what is printed there from now on (a warning, the should-inject line, an error) and let
    the command go on; it ends with 141 unless it fails (:func:`exit_code`)."""
    silence(sys.stderr)
    _READERS_GONE.add("stderr")


def start_afresh() -> None:
    """Forget what an earlier command of this process met (a closed pipe on standard
    error, the arguments read again as UTF-8), so that each command starts as a process of
    its own: a program or a test that calls :func:`memengine.cli.main` twice got no error
    line after one whose stderr was closed, and 141 for a later ``--version``."""
    _READERS_GONE.clear()
    _REREAD.clear()
    err_console.quiet = False


def exit_code(code: Any) -> Any:
    """The exit code of a command that ended with ``code``, once what standard output and
    standard error still hold is written: 141 (as for one killed by ``SIGPIPE``) when the
    reader of either went away and the command succeeded or was cut short by it (0 or
    141); a failure's own code otherwise (``stats --db missing.db 2>&1 | true`` is 1, its
    error line lost). A stream that fails is silenced, so Python's own flush at the exit
    cannot fail once more (it said "Exception ignored" and ended with 120); standard
    output's other failure (a full disk) is raised, to be said."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            if stream is not None:
                stream.flush()
        except OSError as exc:
            silence(stream)
            if reader_gone(exc):
                _READERS_GONE.add(name)
            elif name == "stdout":
                raise
    if _READERS_GONE and code in (0, None, 128 + 13):
        return 128 + 13
    return code


class _PlainConsole(Console):
    """A console that leaves out the control characters of every text it renders (table
    cells, messages, errors): stored text, an agent's name or a file's name cannot move
    the cursor, retitle the window or reorder what is printed after it."""

    def render_str(self, text: str, *args: Any, **kwargs: Any) -> Text:
        """Rich's rendering of ``text`` once its control characters are gone, a path's
        bytes as they were typed (:func:`bytes_shown`)."""
        return super().render_str(strip_controls(bytes_shown(text)), *args, **kwargs)

    def on_broken_pipe(self) -> None:
        """The reader of the output went away (``| head``): end as a command killed by
        SIGPIPE does, with exit code 141 (rich's own ends with 1, which a script cannot tell
        from the command's own failure). On standard error (``2>&1 | head``) the command goes
        on without its notes (:func:`notes_lost`): an error it then meets still ends it
        with 1, not 141."""
        if self.stderr:
            self.quiet = True
            notes_lost()
            return
        silence_stdout()
        raise SystemExit(128 + 13)


def wide_console() -> Console:
    """A console of 160 columns on standard output for wide tables (a benchmark's report)
    into a pipe or a file, with :data:`console`'s rules (no markup of stored text, a
    closed pipe ends with 141)."""
    return _PlainConsole(width=160, highlight=False)


def _console(*, stderr: bool) -> Console:
    """A console that prints user text as written: no markup (``[/]``, ``[bold]``) and no
    ``:emoji:`` codes (styled lines opt in to markup), no control characters. Into a pipe
    or a file nothing is wrapped at 80 columns or cut short."""
    stream = sys.stderr if stderr else sys.stdout
    piped = stream is None or not stream.isatty()  # None: closed (`>&-`), or pythonw
    return _PlainConsole(
        stderr=stderr,
        markup=False,
        emoji=False,
        soft_wrap=piped,
        width=_PIPE_WIDTH if piped else None,
    )


console = _console(stderr=False)
err_console = _console(stderr=True)


def check_output(path: Path | None) -> None:
    """Refuse an output file that cannot be written (no such folder, a folder) before a
    long run, not after it: a ``make eval`` or ``make bench`` takes minutes."""
    from ..transfer import can_write, is_stream  # (here: the command line starts faster)

    if path is None:
        return
    if str(path) == "-":  # (not standard output here: the tables go there; ./- is read so)
        raise InvalidInput(
            "cannot write -: give /dev/stdout to print the JSON after the tables, or a path "
            "with its folder (results/-) for a file of that name"
        )
    if path.is_dir():
        raise InvalidInput(f"cannot write {path}: it is a folder")
    if is_stream(path):  # (/dev/stdout is written where it points)
        return
    folder = path.resolve().parent
    if not folder.is_dir():
        raise InvalidInput(f"cannot write {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InvalidInput(f"cannot write {path}: permission denied")
    can_write(path)


def shown_with_json(path: Path | None, data: Any, show: Callable[[], None]) -> None:
    """``show()`` the tables and write ``data`` to the JSON file ``path`` (when given): the
    file first, so that a pipe closed while the tables print (``| head``) loses nothing;
    a stream (``--json /dev/stdout``) after them, so the two do not overwrite each other."""
    from ..transfer import is_stream

    later = path is not None and is_stream(path)
    if path is not None and not later:
        write_json_file(path, data)
    show()
    if path is not None and later:
        sys.stdout.flush()
        write_json_file(path, data)


def write_json_file(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` as an export is written (whole or not at all,
    through a symbolic link, with the old file's permissions; a device or a pipe such as
    ``/dev/stdout`` where it points), a number that is not finite as null, as
    :func:`print_json` writes it."""
    from ..transfer import write_text_file

    text = json.dumps(json_finite(data), ensure_ascii=False, indent=2, default=_jsonable) + "\n"
    try:
        write_text_file(path, text)
    except BrokenPipeError:  # (`--json /dev/stdout | head`): 141, as standard output's
        raise
    except OSError as exc:
        raise InvalidInput(f"cannot write {path}: {exc.strerror or exc}") from exc


def shown(text: str) -> str:
    """Stored text as a terminal should show it: without escape sequences and the other
    control characters (tab stays; a line break of any kind, ``\\r`` or U+2028, is a
    newline), so no episode can move the cursor, retitle the window or reorder what is
    printed after it, and no word is glued to the next."""
    return readable(text)


_SURROGATE = lazy_compile(r"[\udc80-\udcff]")


def prepare_process(argv: list[str]) -> list[str]:
    """Make the process safe for any locale before the command runs; return ``argv``
    with its arguments read as UTF-8 where their bytes are UTF-8.

    Under a locale that is not UTF-8 (``LC_ALL=C``, Latin-1, eucJP) Python
    decodes the arguments in that locale; an argument whose bytes are UTF-8
    is read again as UTF-8 here (so 日本語 is not stored as mojibake), and
    one whose bytes are not keeps the locale's reading (a Latin-1 ``café``,
    a file name in any bytes); a path option gets its bytes back from
    :func:`given_path`, so it names the file typed. Output to a terminal keeps the terminal's
    encoding (a character it cannot show is printed as ``\\u…``); output to a
    pipe or a file is UTF-8 with ``\\n`` line ends, as JSON and JSONL must be on
    every platform, and each write is written whole or fails (:func:`whole_writes`).
    ``SIGTERM`` unwinds like Ctrl-C does (open transactions roll
    back, temporary folders go) and exits with 143.
    """
    if sys.stdout is None:  # closed (`>&-`): the work is done, what it prints is an error
        sys.stdout = ClosedOutput()
    sys.stdout = whole_writes(sys.stdout)
    sys.stderr = whole_writes(sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        if not isinstance(stream, io.TextIOWrapper):
            continue
        if stream.isatty():
            if not _is_utf8(stream.encoding):
                stream.reconfigure(errors="backslashreplace")
        elif _is_utf8(stream.encoding):
            stream.reconfigure(newline="\n")  # Windows would end JSONL lines with \r\n
        else:
            stream.reconfigure(encoding="utf-8", errors="backslashreplace", newline="\n")
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _terminated)
    out = []
    for arg, raw in zip(argv, _raw_arguments(argv), strict=True):
        if raw is not None:
            # not UTF-8: the locale's reading stays (a path works with it as it is)
            with contextlib.suppress(UnicodeDecodeError):
                text = raw.decode("utf-8")
                if text != arg:
                    _REREAD.add(text)
                arg = text
        out.append(arg)
    return out


class _WholeWriter(io.BufferedWriter):
    """A buffer that writes each write through at once, whole: what an unbuffered stream
    (``PYTHONUNBUFFERED=1``, ``python -u``) is meant to do, with the buffer's retries."""

    def write(self, data: Any) -> int:
        """Write ``data`` whole now (a pipe may take 64 KiB of it per call), or raise."""
        n = super().write(data)
        self.flush()
        return n


def whole_writes(stream: Any) -> Any:
    """``stream``, or when Python left it unbuffered (``PYTHONUNBUFFERED=1``, ``-u``) the
    same stream over a :class:`_WholeWriter`: there a text stream writes to the file
    descriptor directly and drops what one call did not take (a pipe takes 64 KiB, then
    its reader leaves: ``show 7 --json | head -c 10`` ended with 0, the rest lost unsaid).
    It writes to the stream's descriptor through a file of its own, so ``stream`` and the
    descriptor stay open when it is gone (a program that put its own ``sys.stderr`` back
    after :func:`memengine.cli.main` had it closed: "I/O operation on closed file")."""
    if not isinstance(stream, io.TextIOWrapper) or not isinstance(stream.buffer, io.RawIOBase):
        return stream
    try:
        own = io.FileIO(stream.buffer.fileno(), "w", closefd=False)  # (closed, closes nothing)
    except (OSError, ValueError):  # (a raw stream with no descriptor: left as it is)
        return stream
    own.name = getattr(stream.buffer, "name", own.name)  # ("<stdout>", as Python names it)
    return io.TextIOWrapper(
        _WholeWriter(own),  # (not the stream's own file: the stream stays open when this goes)
        encoding=stream.encoding,
        errors=stream.errors,
        line_buffering=stream.line_buffering,
        write_through=True,
    )


_REREAD: set[str] = set()
"""The arguments :func:`prepare_process` read again as UTF-8 (the locale read them otherwise)."""


def given_path(value: str) -> str:
    """A path argument (``--db``, ``import FILE``, ``-o``) as the bytes it was given in, in
    the filesystem's reading: :func:`prepare_process` read ``日本語/メモ.db`` as UTF-8 text,
    which an ``LC_ALL=C`` process cannot name a file with, and a Latin-1 one would name
    another (``café.db`` made as ``caf\\351.db``). Any other value is as given."""
    if value and any(_holds_value(arg, value) for arg in _REREAD):
        return os.fsdecode(value.encode("utf-8"))  # (bytes read as UTF-8 are those UTF-8 bytes)
    return value


def given_file(value: str) -> Path:
    """:func:`given_path` for an argument typed as a :class:`~pathlib.Path`."""
    return Path(given_path(value))


def _holds_value(arg: str, value: str) -> bool:
    """Whether the argument ``arg`` is ``value`` itself or an option given with it
    (``--db=value``, ``-ovalue``)."""
    if arg == value:
        return True
    return arg.startswith("-") and (arg.endswith("=" + value) or arg[2:] == value)


def reader_gone(exc: OSError, *, windows: bool = sys.platform == "win32") -> bool:
    """Whether ``exc``, raised by a command, is its output's reader going away: a broken
    pipe, or on Windows the "invalid argument" a write to a closed pipe raises there."""
    if isinstance(exc, BrokenPipeError):
        return True
    return windows and exc.errno == errno.EINVAL and exc.filename is None


_WRITE_ERRNOS = {errno.ENOSPC, errno.EIO, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}
"""What a write to standard output fails with (a full disk, a file too large): the
memory's own writes raise memengine's errors, so a bare one of these is the output's."""


def refuse_undecodable(**named: str | Sequence[str] | None) -> None:
    """Refuse an argument (or any of a repeated option's values) whose bytes were not UTF-8
    (read as lone surrogates: a Shift_JIS or Latin-1 terminal), naming it: stored or
    searched, it would be ``?`` marks."""
    for what, value in named.items():
        values = [value] if isinstance(value, str) else value or []
        if any(has_surrogate(v) for v in values):
            raise InvalidInput(f"the {what} is not UTF-8 text: give it in UTF-8")


_OUTPUT_LOST = "a change the command made to the memory, if any, is saved"
"""What an output that could not be written leaves: true of a command that wrote (``add``:
its episode is stored) and of one that only read (``export``: nothing was done but the
output, which is lost)."""


class ClosedOutput(io.TextIOBase):
    """Standard output of a process started without one (`>&-`): a command does its work,
    and what it would print is an :class:`OSError` saying so (one line, exit 1), as a
    write to a closed descriptor is for ``echo``; not an AttributeError of None."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(
            errno.EBADF,
            f"standard output is closed (`>&-`), so nothing could be printed ({_OUTPUT_LOST}); "
            "send it to /dev/null to drop it",
        )

    def isatty(self) -> bool:
        return False


def _raw_arguments(argv: list[str]) -> list[bytes | None]:
    """The bytes each argument was given as (None where they cannot be known)."""
    if not argv:
        return []
    encoding = sys.getfilesystemencoding()
    if _is_utf8(encoding):  # only an argument holding bytes that are not UTF-8 differs
        return [os.fsencode(a) if _SURROGATE.search(a) else None for a in argv]
    try:  # Linux: the command line as the process was given it
        given = Path("/proc/self/cmdline").read_bytes().split(b"\0")[:-1]
    except OSError:
        given = []
    if len(given) >= len(argv):
        return list(given[-len(argv) :])
    raw: list[bytes | None] = []
    for a in argv:
        try:
            raw.append(a.encode(encoding, "surrogateescape"))
        except UnicodeEncodeError:
            raw.append(None)
    return raw


def _is_utf8(encoding: str | None) -> bool:
    return (encoding or "").lower().replace("-", "").replace("_", "") == "utf8"


class Terminated(SystemExit):
    """``SIGTERM`` in a command (a service manager's stop, ``kill``): a SystemExit, so it
    unwinds past ``except Exception`` as Ctrl-C does, exiting 128 + the signal (143). Its
    own type lets a command say what it kept, as it does for Ctrl-C: under a service
    manager the log is all that tells what happened."""


STOPS = (KeyboardInterrupt, Terminated)
"""What stops a command from outside: Ctrl-C and ``SIGTERM``."""


def stop_code(stop: BaseException) -> int:
    """The exit code of a command ``stop`` ended (one of :data:`STOPS`): 143 for
    ``SIGTERM``, 130 for Ctrl-C, as the shell counts a process either signal killed."""
    return 128 + (signal.SIGTERM if isinstance(stop, Terminated) else signal.SIGINT)


def _terminated(signum: int, frame: object) -> None:
    raise Terminated(128 + signum)


_HELD = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))


@contextmanager
def signals_held() -> Iterator[None]:
    """Hold Ctrl-C and ``SIGTERM`` off for the body; those that come are dropped: a signal
    that lands inside SQLAlchemy's close of a connection is logged there with its
    traceback, and the close it cut short is the one that checkpoints the log. A signal
    this process ignores stays ignored; in a thread other than the main one (which cannot
    set a handler) nothing is held."""

    def dropped(signum: int, frame: object) -> None:
        pass

    previous: dict[int, Any] = {}
    with contextlib.suppress(ValueError):  # ("signal only works in main thread of the main
        for signum in _HELD:  # interpreter")
            if callable(signal.getsignal(signum)):  # (not SIG_IGN: a job started with &)
                previous[signum] = signal.signal(signum, dropped)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


_FULL_WIDTH = str.maketrans("０１２３４５６７８９＋－．ｅＥ　", "0123456789+-.eE ")
_WHOLE = lazy_compile(r"[+-]?[0-9]+")
_DECIMAL = lazy_compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _folded(value: str) -> str:
    """A number as typed, in ASCII: a Japanese keyboard's full-width digits and signs
    (５, －１, ０．５) are read as 5, -1 and 0.5. Nothing else is (not ②, ², 1_0)."""
    return value.translate(_FULL_WIDTH).strip()


def whole(lo: int | None = None, hi: int | None = None) -> Callable[[str | int], int]:
    """A parser for a whole-number option or argument between ``lo`` and ``hi`` that also
    reads full-width digits (``-k ５``)."""

    def parse(value: str | int) -> int:
        if isinstance(value, int):  # a default
            return value
        text = _folded(value)
        if not _WHOLE.fullmatch(text):
            raise typer.BadParameter(f"{value!r} is not a whole number")
        n = int(text)
        _in_range(value, n, lo, hi)
        return n

    return parse


def choice(*values: str) -> Callable[[str], str]:
    """A parser for an option that takes one of ``values`` (for a ``Literal`` typer prints
    its validator's own words: "Value error, 'x' is not one of …")."""

    def parse(value: str) -> str:
        if value in values:
            return value
        raise typer.BadParameter(f"{value!r} is not one of {', '.join(values)}")

    return parse


def number(lo: float | None = None, hi: float | None = None) -> Callable[[str | float], float]:
    """A parser for a finite decimal option between ``lo`` and ``hi`` that also reads
    full-width digits (``０．５``)."""

    def parse(value: str | float) -> float:
        if isinstance(value, int | float):  # a default
            return float(value)
        text = _folded(value)
        if not _DECIMAL.fullmatch(text):
            raise typer.BadParameter(f"{value!r} is not a number")
        x = float(text)
        if not math.isfinite(x):
            raise typer.BadParameter(f"{value!r} is not a finite number")
        _in_range(value, x, lo, hi)
        return x

    return parse


def _in_range(value: str, x: float, lo: float | None, hi: float | None) -> None:
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        low = "" if lo is None else f"{lo:g} <= "
        high = "" if hi is None else f" <= {hi:g}"
        raise typer.BadParameter(f"{value} is not in the range {low}x{high}")


DbOpt = Annotated[  # a str: a Path would turn `--db ''` into the folder "."
    str | None,
    typer.Option(
        "--db",
        parser=given_path,
        help="Database file (default: the config's db, set before any [section]; else memengine.db).",
    ),
]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", help="Agent scope.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ConfigOpt = Annotated[  # a str: a Path would turn `--config ''` into the folder "."
    str | None,
    typer.Option(
        "--config",
        parser=given_path,
        help="TOML config file (default: memengine.toml).",
    ),
]

F = TypeVar("F", bound=Callable[..., Any])


def settings(
    config: str | None,
    db: str | None = None,
    agent: str | None = None,
    embedder: str | None = None,
) -> Config:
    """Read the configuration once, with CLI flags on top (``embedder``: the [embedder]
    name a flag chooses, read with the rest, so the endpoint keys it reads are its)."""
    overrides: dict[str, Any] = {}
    if db is not None:
        overrides["db"] = db
    if agent is not None:
        overrides["agent"] = agent
    if embedder is not None:
        overrides["embedder"] = {"name": embedder}
    return load_config(config, overrides=overrides)


@contextmanager
def open_memory(
    cfg: Config, *, create: bool = False, embeds: bool = True, turns: bool = False, **kwargs: Any
) -> Iterator[Any]:
    """Open the configured memory file for one command, and close it whole at its end: Ctrl-C
    or ``SIGTERM`` during the close is held off until it is done, then dropped (the command
    is stopping already, or its work is done).

    Only a command that runs a turn that may ask the LLM (``turns``) has the LLM chat
    client built in the background, with ``[llm]`` configured: another (``add``,
    ``import``, ``search``) would wait for it at exit, importing openai for nothing (~1 s);
    a feedback that asks a judge builds the client when it asks.

    A command that embeds nothing (``embeds`` False: show, stats, export,
    backup…) opens a file whatever embedder wrote it, so a file can be
    inspected, exported or backed up without that embedder's settings.

    Only commands that write (``create``) make a new file: a mistyped
    ``--db`` given to a reading command is an error, not an empty memory. A
    file this process cannot write is opened read-only (a command that
    writes then fails with :class:`.ReadOnlyDatabase`, having written nothing).
    """
    from ..memory import Memory

    mem = Memory.open(
        cfg.db,
        config=cfg,
        read_only=None,
        create=create,
        embeds=embeds,
        warm_llm=turns,
        **kwargs,
    )
    if (before := mem.store.upgraded_from) is not None:  # (one way: say it, once)
        err_console.print(
            f"upgraded {escape(str(mem.store.path))} from schema {before} to "
            f"{mem.store.schema_version()}: an older memengine cannot open it now"
        )
    try:
        yield mem
    finally:
        # the close runs whole (it checkpoints the log): a second Ctrl-C as an interrupted
        # command closes the file printed SQLAlchemy's traceback of the close it broke. A
        # signal held so is dropped: the command stops already, or its work is done and
        # its result (a sleep's, a delete's) is worth more than a bare "interrupted"
        with signals_held():
            mem.close()


_NAME_OPTIONS = {"agent": "--agent", "perspective": "--perspective"}
"""A command's parameters that name an agent or a perspective, by their flags: their values
are UTF-8 text, as a stored name is (:func:`guarded` refuses others as text is refused)."""


def guarded(func: F) -> F:
    """Turn memengine errors into a one-line message and exit code 1 (2 for usage). An
    ``--agent`` or ``--perspective`` given in bytes that are not UTF-8 is refused first, as
    text is ("the --agent is not UTF-8 text: give it in UTF-8"), not in pydantic's words."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            refuse_undecodable(**{flag: kwargs.get(key) for key, flag in _NAME_OPTIONS.items()})
            return func(*args, **kwargs)
        except MemEngineError as exc:
            err_console.print(
                f"[red]error:[/red] {escape(str(exc))}",
                highlight=False,
                soft_wrap=True,
                markup=True,
            )
            raise typer.Exit(1) from None
        except KeyboardInterrupt as stop:  # (an interrupted add's own words say what it kept)
            said = str(stop) if isinstance(stop, AddInterrupted) else "interrupted"
            err_console.print(escape(said), highlight=False, soft_wrap=True, markup=True)
            raise typer.Exit(130) from None
        except Terminated:  # (logs are all a service manager's stop leaves: say it, too)
            err_console.print("terminated")
            raise
        except OSError as exc:
            if reader_gone(exc):  # the reader of stdout went away (`| head`): stop quietly
                silence_stdout()
                raise typer.Exit(128 + 13) from None  # as one killed by SIGPIPE (`cat`, `grep`)
            said = str(exc)
            if exc.errno == errno.EBADF and exc.strerror:  # (ClosedOutput's own words)
                said = exc.strerror
            elif exc.errno in _WRITE_ERRNOS and exc.filename is None:  # the output's
                said = f"could not print the output: {exc.strerror}; it is lost ({_OUTPUT_LOST})"
                silence_stdout()
            err_console.print(
                f"[red]error:[/red] {escape(said)}",
                highlight=False,
                soft_wrap=True,
                markup=True,
            )
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def interrupted_compaction(done: str, stop: BaseException) -> NoReturn:
    """Stop a scrubbing delete interrupted (``stop``: Ctrl-C or ``SIGTERM``) after its delete
    was saved (``done`` says what it deleted), during the compaction that follows: exit 130
    (143), saying so."""
    err_console.print(
        f"interrupted after the delete was saved ({done}), while compacting the file: "
        "copies of the deleted text may remain in its free pages until "
        "`memengine optimize --scrub` (doctor reports it meanwhile)",
        highlight=False,
        soft_wrap=True,
    )
    raise typer.Exit(stop_code(stop))


def print_json(data: Any) -> None:
    """Print JSON to stdout (no rich markup); a time as ISO 8601, a number that is not finite
    (an uncapped ``max_weighted_total``) as null, which strict JSON readers take."""
    text = json.dumps(json_finite(data), ensure_ascii=False, indent=2, default=_jsonable)
    sys.stdout.write(json_escaped(text) + "\n")  # nothing in it a terminal acts on


def _jsonable(value: Any) -> str:
    return iso_text(value) if isinstance(value, datetime) else str(value)


@contextmanager
def progress_bar(
    description: str, *, enabled: bool = True, counted: bool = True
) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr; yields a ``(done, total)`` callback. Nothing is
    drawn when stderr is not a terminal (a log or a pipe gets only the messages). Every bar
    shows the time taken (counted work before its first count too: an import reading its
    file); counted work also its count and the time left."""
    if not enabled or not err_console.is_terminal:
        yield lambda done, total: None
        return
    columns: tuple[ProgressColumn, ...] = (
        (MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
        if counted
        else (TimeElapsedColumn(),)
    )
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        *columns,
        console=err_console,
        transient=True,
    ) as bar:
        # (a file's name may hold an escape sequence or rich markup: shown as text)
        task = bar.add_task(escape(shown(description).replace("\n", " ")), total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def note(text: str) -> None:
    """Print ``note: text`` on stderr."""
    err_console.print(f"note: {text}", highlight=False, soft_wrap=True)


SHOWN_AGENTS = 5
"""How many of the file's agents a warning names (a file may hold thousands)."""


def some_agents(names: Sequence[str], typed: str, limit: int = SHOWN_AGENTS) -> str:
    """Up to ``limit`` of ``names``, the closest to ``typed`` first and then in order, each
    quoted (``Smith, John`` is one name), and how many more there are (with the command
    that lists them all)."""
    close = difflib.get_close_matches(typed, names, n=limit)
    shown = (close + [n for n in sorted(names) if n not in close])[:limit]
    text = ", ".join(quoted_name(n) for n in shown) or "none yet"
    more = len(names) - len(shown)
    return f"{text} and {more:,} more; `memengine agent list`" if more else text


def warn_if_unknown(mem: Any, agent: str) -> None:
    """Say on stderr when the file knows no agent ``agent`` (a typo finds nothing)."""
    if not mem.has_agent(agent):
        known = some_agents([a.name for a in mem.agents()], agent)
        named = quoted_name(agent)  # (as the agents are shown, in quotes)
        err_console.print(
            f"[yellow]warning:[/yellow] no agent {escape(named)} in "
            f"{escape(str(mem.store.path))} (agents: {escape(known)}), so nothing is found",
            highlight=False,
            soft_wrap=True,
            markup=True,
        )
