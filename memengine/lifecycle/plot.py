"""``memengine plot strength``: strength over time and the level distribution, from sleep records.

Needs the optional extra ``plot`` (matplotlib): ``pip install matplotlib``, or ``pip install -e
".[plot]"`` in a checkout.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InvalidInput
from ..store import lifecycle as store_lc
from ..store.database import Store
from ..store.maintenance import refuse_own_files
from ..text import quoted_name, shell_word
from .agents import known_agent
from .strength import MAX_LEVEL

__all__ = ["PLOT_EXTRA_HINT", "plot_strength"]

PLOT_EXTRA_HINT = "matplotlib is not installed; install it (the plot extra): pip install matplotlib"


def _pyplot() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ConfigError(PLOT_EXTRA_HINT) from exc
    return plt


def plot_strength(
    store: Store,
    agent: str,
    out: str | os.PathLike[str],
    *,
    max_lines: int = 12,
    archive_threshold: float = 0.1,
) -> Path:
    """Draw the agent's strength over its sleeps and its level distribution into ``out`` (a
    PNG, SVG or PDF file by its extension, replaced if it exists); return its path.

    The top panel shows, on a log scale, the most used memories' strengths,
    the mean and the 10–90 % band, with the archive threshold; the bottom
    one the active memories per level and the archived count. NotFound for an agent the
    file does not know; InvalidInput (saying what to run) for one that never slept.
    """
    path = _plot_path(store.path, Path(out))
    with store.connections.read() as cur:
        known_agent(cur, agent)
        sleeps = store_lc.sleep_series(cur, agent)
        lines = store_lc.history_series(cur, agent, max_episodes=max_lines)
    if not sleeps:
        raise InvalidInput(
            f"agent {quoted_name(agent)} has not slept yet: run "
            f"`memengine sleep --agent {shell_word(agent)}` first"
        )
    plt = _pyplot()
    times = [s.slept_at for s in sleeps]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    for episode_id, series in lines.items():
        if series:
            xs, ys = zip(*series, strict=True)
            top.plot(xs, ys, linewidth=0.8, alpha=0.6, label=f"#{episode_id}")
    top.plot(times, [s.strength_mean for s in sleeps], color="black", linewidth=2, label="mean")
    top.fill_between(
        times,
        [s.strength_p10 for s in sleeps],
        [s.strength_p90 for s in sleeps],
        color="grey",
        alpha=0.2,
        label="p10–p90",
    )
    top.axhline(archive_threshold, color="red", linestyle=":", linewidth=1, label="archive below")
    top.set_yscale("log")
    top.set_ylabel("strength (log)")
    top.set_title(f"memengine · agent {agent}: strength after each sleep")
    top.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    counts = [[s.level_counts[lvl] for s in sleeps] for lvl in range(MAX_LEVEL + 1)]
    bottom.stackplot(times, counts, labels=[f"level {lvl}" for lvl in range(MAX_LEVEL + 1)])
    bottom.plot(
        times, [s.archived_total for s in sleeps], color="black", linestyle="--", label="archived"
    )
    bottom.set_ylabel("memories")
    bottom.set_xlabel("sleep time")
    bottom.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.autofmt_xdate()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


PLOT_FORMATS = (".png", ".svg", ".pdf")
"""The kinds of file a plot is written as, by the name's extension."""


def _plot_path(database: Path, path: Path) -> Path:
    """``path`` checked before anything is drawn: named with one of :data:`PLOT_FORMATS`,
    not a folder, a device or a pipe, and none of the database's own files under any name
    (a symbolic link to it): InvalidInput otherwise. A plot replaces an earlier one."""
    if not str(path).strip():
        raise InvalidInput("a plot needs a file's path, not an empty one")
    if path.suffix.lower() not in PLOT_FORMATS:
        raise InvalidInput(
            f"{path}: name the plot's file with one of {', '.join(PLOT_FORMATS)} "
            "(the extension says what is written)"
        )
    refuse_own_files(database, path, "write the plot")
    if path.is_dir() or (path.exists() and not path.is_file()):
        raise InvalidInput(f"{path} is not a regular file: give the plot's file name")
    if not path.parent.is_dir():
        raise InvalidInput(f"folder {path.parent} does not exist")
    return path
