"""A Ctrl-C while the ``memengine`` command is still loading (``import memengine`` takes a
few tenths of a second) ends it as the command ends an interrupt later: exit 130, no
traceback. Imported first by the package, and only standard modules, so it is in place
before the slow imports (importing it sets the quiet handler); a program that imports
memengine is left as it is, one named ``memengine`` too (``bin/memengine``, a launcher)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
from types import FrameType

__all__ = ["command_started", "loaded", "quiet_while_loading"]

_ENTRY = re.compile(r"^from memengine\.cli import main\s*$", re.MULTILINE)
"""The line by which the console script an installer writes (pip, uv, pipx) starts the
command; a program of the same name that imports memengine has none."""


def command_started(argv: list[str], orig_argv: list[str], main_source: str = "") -> bool:
    """Whether this process is the ``memengine`` command: its console script
    (``…/bin/memengine``, ``memengine.exe``, whose source ``main_source`` starts
    ``memengine.cli``'s ``main``) or ``python -m memengine`` (``-mmemengine`` too), as
    ``argv`` and the interpreter's own ``orig_argv`` say (``sys.argv[0]`` is ``-m`` while
    ``-m`` loads the package); not a program or a test that imports it (``python app.py``,
    a user's own script named ``memengine``)."""
    if _named_memengine(argv):
        return _ENTRY.search(main_source) is not None
    if argv[:1] != ["-m"]:
        return False
    for at, arg in enumerate(orig_argv[1:], start=1):
        if arg == "-m":
            return orig_argv[at + 1 : at + 2] == ["memengine"]
        if arg.startswith("-m"):
            return arg == "-mmemengine"
    return False


def _named_memengine(argv: list[str]) -> bool:
    """Whether the program Python runs is named ``memengine`` (``…/bin/memengine``,
    ``memengine.exe``): the command's console script, or a program of that name."""
    script = os.path.basename(argv[0]) if argv else ""
    return os.path.splitext(script)[0] == "memengine"


def _main_source() -> str:
    """The source of the program Python runs (``__main__``), as its loader gives it (a
    console script's file, or the ``__main__.py`` inside a Windows launcher); ``""`` when
    there is none to read (an interactive session, a frozen program)."""
    main = sys.modules.get("__main__")
    loader = getattr(main, "__loader__", None)
    try:
        return loader.get_source("__main__") or "" if loader is not None else ""
    except (ImportError, OSError, AttributeError, TypeError):
        return ""


_came: list[int] = []
"""The Ctrl-C that came while loading, if one did (:func:`loaded` ends the command for one
whose exit was lost)."""


def _interrupted(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while loading: nothing was done yet, so end at once (130, as the shell counts
    a process SIGINT ended), without the traceback of the import it interrupted. It is
    noted too: an exception a signal's handler raises while Python compiles a module (one
    loaded from its source: no cached bytecode, ``PYTHONDONTWRITEBYTECODE``) can be lost
    there, and the command then ran to its end as if no Ctrl-C had come (about one in four
    at 0.05–0.07 s after the start, here)."""
    _came.append(signum)
    raise SystemExit(128 + signal.SIGINT)


def quiet_while_loading() -> None:
    """In the ``memengine`` command, end quietly on Ctrl-C until the command restores
    Python's own handler (:func:`memengine.cli.main`); a SIGINT that is ignored (a job
    started with ``&`` by a script) stays ignored, and an import from a thread other than
    the main one (which cannot set a handler) changes nothing."""
    source = _main_source() if _named_memengine(sys.argv) else ""  # (read only then)
    if not command_started(sys.argv, getattr(sys, "orig_argv", []), source):
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        with contextlib.suppress(ValueError):  # ("signal only works in main thread of the
            signal.signal(signal.SIGINT, _interrupted)  # main interpreter")


def loaded() -> None:
    """Give Ctrl-C back to Python's handler (a KeyboardInterrupt a command turns into its
    "interrupted" and exit 130) once the command is loaded, where the quiet one was set;
    end the command (130) if a Ctrl-C came while loading whose exit was lost."""
    if signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if _came:
        _came.clear()  # (told once: a program that calls the command again starts afresh)
        raise SystemExit(128 + signal.SIGINT)


quiet_while_loading()
