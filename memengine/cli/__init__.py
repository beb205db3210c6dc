"""The ``memengine`` command: typer + rich over the :class:`~memengine.memory.Memory` facade.

Commands are grouped in modules by topic; each registers on the one app.
"""

from __future__ import annotations

import contextlib
import sys
from typing import NoReturn

# the import order is the order in which --help lists the commands
# isort: off
from . import core, search_cmds, file_cmds, life_cmds  # noqa: F401  (register commands)
from . import llm_cmds, eval_cmds, bench_cmds  # noqa: F401

# isort: on
from .. import _startup
from ._app import app, prepare_process, reader_gone, silence_stdout

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``memengine`` console script."""
    _startup.loaded()
    try:
        sys.argv[1:] = prepare_process(sys.argv[1:])
        try:
            app()
        finally:  # what stdout still holds, written here where a failure is seen (at the
            sys.stdout.flush()  # exit Python says "Exception ignored" and ends with 120)
    except KeyboardInterrupt:  # (before a command's own handling: parsing the arguments)
        sys.exit(128 + 2)
    except SystemExit as exc:
        if exc.code == 1 and _pipe_closed_in_click():  # `memengine --help | head -1`, and
            silence_stdout()  # --version: quietly, as a command's own closed pipe (141)
            sys.exit(128 + 13)
        raise
    except OSError as exc:  # printing --help or --version (a command's own are caught)
        silence_stdout()
        if reader_gone(exc):  # (what stdout held at the exit: the same)
            sys.exit(128 + 13)
        _fail(f"cannot print: {exc.strerror or exc}")


def _pipe_closed_in_click() -> bool:
    """Whether Click ended the command with 1 on a closed pipe (``--help`` and ``--version``
    print inside it): it catches the ``EPIPE`` itself and wraps standard output in its
    ``PacifyFlushWrapper``, which it does for nothing else."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"


def _fail(message: str) -> NoReturn:
    """Say ``message`` as a one-line error on stderr (if there is one) and exit 1."""
    with contextlib.suppress(OSError, AttributeError):  # (stderr closed too: None)
        sys.stderr.write(f"error: {message}\n")
        sys.stderr.flush()
    sys.exit(1)
