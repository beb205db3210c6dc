"""The ``memengine`` command: typer + rich over the :class:`~memengine.memory.Memory` facade.

Commands are grouped in modules by topic; each registers on the one app.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

# the import order is the order in which --help lists the commands
# isort: off
from . import core, search_cmds, file_cmds, life_cmds  # noqa: F401  (register commands)
from . import llm_cmds, eval_cmds, bench_cmds  # noqa: F401

# isort: on
from .. import _startup
from ._app import (
    app,
    exit_code,
    prepare_process,
    reader_gone,
    silence,
    silence_stdout,
    start_afresh,
)

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``memengine`` console script."""
    _startup.loaded()
    start_afresh()  # (a program may call it again: nothing of the last command stays)
    code: Any = 0
    try:
        sys.argv[1:] = prepare_process(sys.argv[1:])
        app()
    except KeyboardInterrupt:  # (before a command's own handling: parsing the arguments)
        code = 128 + 2
    except SystemExit as exc:
        code = exc.code
        if code == 1 and _pipe_closed_in_click():  # `memengine --help | head -1`, and
            silence_stdout()  # --version: quietly, as a command's own closed pipe (141)
            code = 128 + 13
    except OSError as exc:  # printing --help or --version (a command's own are caught),
        if not reader_gone(exc):  # or a usage error's message
            silence_stdout()
            _fail(f"cannot print: {exc.strerror or exc}")
        code = getattr(exc.__context__, "exit_code", 128 + 13)  # (2: a usage error's)
    try:  # what stdout and stderr still hold, written here where a failure is seen (at
        code = exit_code(code)  # the exit Python says "Exception ignored" and ends with 120)
    except OSError as exc:
        _fail(f"cannot print: {exc.strerror or exc}")
    sys.exit(code)


def _pipe_closed_in_click() -> bool:
    """Whether Click ended the command with 1 on a closed pipe (``--help`` and ``--version``
    print inside it): it catches the ``EPIPE`` itself and wraps standard output in its
    ``PacifyFlushWrapper``, which it does for nothing else."""
    return type(sys.stdout).__name__ == "PacifyFlushWrapper"


def _fail(message: str) -> NoReturn:
    """Say ``message`` as a one-line error on stderr (if there is one) and exit 1; a
    standard error whose reader is gone too is silenced (the exit's flush would fail)."""
    try:
        sys.stderr.write(f"error: {message}\n")
        sys.stderr.flush()
    except (OSError, AttributeError):  # (stderr closed too: None)
        silence(sys.stderr)
    sys.exit(1)
