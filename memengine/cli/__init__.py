"""The ``memengine`` command: typer + rich over the :class:`~memengine.memory.Memory` facade.

Commands are grouped in modules by topic; each registers on the one app.
"""

from __future__ import annotations

import sys

# the import order is the order in which --help lists the commands
# isort: off
from . import core, search_cmds, file_cmds, life_cmds  # noqa: F401  (register commands)
from . import llm_cmds, eval_cmds, bench_cmds  # noqa: F401

# isort: on
from ._app import app, prepare_process

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``memengine`` console script."""
    sys.argv[1:] = prepare_process(sys.argv[1:])
    app()
