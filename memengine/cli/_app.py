"""The typer application, its shared options and error handling. No memory logic lives here."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from ..config import Config, load_config
from ..errors import MemEngineError

__all__ = [
    "AgentOpt",
    "ConfigOpt",
    "DbOpt",
    "JsonOpt",
    "app",
    "console",
    "err_console",
    "guarded",
    "open_memory",
    "print_json",
    "progress_bar",
    "settings",
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


# markup off: user text ("[/]", "[bold]") is printed as written; styled lines opt in
console = Console(markup=False)
err_console = Console(stderr=True, markup=False)

DbOpt = Annotated[
    Path | None, typer.Option("--db", help="Database file (default: [db] in config, memengine.db).")
]
AgentOpt = Annotated[str | None, typer.Option("--agent", "-a", help="Agent scope.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="TOML config file (default: memengine.toml).")
]

F = TypeVar("F", bound=Callable[..., Any])


def settings(config: Path | None, db: Path | None = None, agent: str | None = None) -> Config:
    """Read the configuration once, with CLI flags on top."""
    overrides: dict[str, Any] = {}
    if db is not None:
        overrides["db"] = str(db)
    if agent is not None:
        overrides["agent"] = agent
    return load_config(config, overrides=overrides)


@contextmanager
def open_memory(
    cfg: Config, *, create: bool = False, embeds: bool = True, **kwargs: Any
) -> Iterator[Any]:
    """Open the configured memory file for one command.

    A command that embeds nothing (``embeds`` False: show, stats, export,
    backup…) opens a file whatever embedder wrote it, so a file can be
    inspected, exported or backed up without that embedder's settings.

    Only commands that write (``create``) make a new file: a mistyped
    ``--db`` given to a reading command is an error, not an empty memory. A
    file this process cannot write is opened read-only (a command that
    writes then fails with :class:`.ReadOnlyDatabase`, having written nothing).
    """
    from ..memory import Memory

    if not embeds:
        kwargs.setdefault("allow_embedder_change", True)
    with Memory.open(cfg.db, config=cfg, read_only=None, create=create, **kwargs) as mem:
        yield mem


def guarded(func: F) -> F:
    """Turn memengine errors into a one-line message and exit code 1 (2 for usage)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except MemEngineError as exc:
            err_console.print(
                f"[red]error:[/red] {escape(str(exc))}",
                highlight=False,
                soft_wrap=True,
                markup=True,
            )
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err_console.print("interrupted")
            raise typer.Exit(130) from None
        except BrokenPipeError:  # the reader of stdout went away (`| head`): stop quietly
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # so that the exit's flush does not fail too
            raise typer.Exit(1) from None
        except OSError as exc:
            err_console.print(
                f"[red]error:[/red] {escape(str(exc))}",
                highlight=False,
                soft_wrap=True,
                markup=True,
            )
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def print_json(data: Any) -> None:
    """Print JSON to stdout (no rich markup); a time as ISO 8601, a number that is not finite
    (an uncapped ``max_weighted_total``) as null, which strict JSON readers take."""
    text = json.dumps(_finite(data), ensure_ascii=False, indent=2, default=_jsonable)
    sys.stdout.write(text + "\n")


def _finite(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def _jsonable(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


@contextmanager
def progress_bar(description: str, *, enabled: bool = True) -> Iterator[Callable[[int, int], None]]:
    """A rich progress bar on stderr; yields a ``(done, total)`` callback."""
    if not enabled:
        yield lambda done, total: None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    ) as bar:
        task = bar.add_task(description, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def episodes_word(n: int) -> str:
    """``"1 episode"``, ``"2 episodes"``."""
    return f"{n} episode{'' if n == 1 else 's'}"


def warn_if_unknown(mem: Any, agent: str) -> None:
    """Say on stderr when the file knows no agent ``agent`` (a typo finds nothing)."""
    if not mem.has_agent(agent):
        known = ", ".join(a.name for a in mem.agents()) or "none yet"
        err_console.print(
            f"[yellow]warning:[/yellow] no agent {escape(repr(agent))} in "
            f"{escape(str(mem.store.path))} (agents: {escape(known)}); nothing of it to find",
            highlight=False,
            soft_wrap=True,
            markup=True,
        )
