"""A Ctrl-C while the ``memengine`` command is still loading (``import memengine`` takes a
few tenths of a second) ends it as the command ends an interrupt later: exit 130, no
traceback. Imported first by the package, and only standard modules, so it is in place
before the slow imports (importing it sets the quiet handler); a program that imports
memengine is left as it is."""

from __future__ import annotations

import os
import signal
import sys
from types import FrameType

__all__ = ["command_started", "loaded", "quiet_while_loading"]


def command_started(argv: list[str], orig_argv: list[str]) -> bool:
    """Whether this process is the ``memengine`` command: its console script
    (``…/bin/memengine``, ``memengine.exe``) or ``python -m memengine``, as ``argv`` and
    the interpreter's own ``orig_argv`` say (``sys.argv[0]`` is ``-m`` while ``-m`` loads
    the package); not a program or a test that imports it (``python app.py``)."""
    script = os.path.basename(argv[0]) if argv else ""
    if os.path.splitext(script)[0] == "memengine":
        return True
    if argv[:1] == ["-m"] and "-m" in orig_argv:
        at = orig_argv.index("-m")
        return orig_argv[at + 1 : at + 2] == ["memengine"]
    return False


def _interrupted(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C while loading: nothing was done yet, so end at once (130, as the shell counts
    a process SIGINT ended), without the traceback of the import it interrupted."""
    raise SystemExit(128 + signal.SIGINT)


def quiet_while_loading() -> None:
    """In the ``memengine`` command, end quietly on Ctrl-C until the command restores
    Python's own handler (:func:`memengine.cli.main`); a SIGINT that is ignored (a job
    started with ``&`` by a script) stays ignored."""
    if not command_started(sys.argv, getattr(sys, "orig_argv", [])):
        return
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _interrupted)


def loaded() -> None:
    """Give Ctrl-C back to Python's handler (a KeyboardInterrupt a command turns into its
    "interrupted" and exit 130) once the command is loaded, where the quiet one was set."""
    if signal.getsignal(signal.SIGINT) is _interrupted:
        signal.signal(signal.SIGINT, signal.default_int_handler)


quiet_while_loading()
