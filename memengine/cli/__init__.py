"""The ``memengine`` command: typer + rich over the :class:`~memengine.memory.Memory` facade.

Commands are grouped in modules by topic; each registers on the one app.
"""

from __future__ import annotations

from . import bench_cmds, core, eval_cmds, life_cmds, llm_cmds  # noqa: F401  (register commands)
from ._app import app

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the ``memengine`` console script."""
    app()
