"""Sleep phases and the strength history they record: the ``sleeps`` and ``strength_history`` tables.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...clock import ensure_aware
from ._rows import chunks, iso, marks

__all__ = [
    "SleepRow",
    "delete_sleep_history",
    "history_series",
    "insert_history",
    "insert_sleep",
    "last_sleep",
    "sleep_series",
]


@dataclass(frozen=True)
class SleepRow:
    """One recorded sleep (the state of its agent right after it)."""

    id: int
    agent: str
    slept_at: datetime
    last_turn: int
    tasks: float
    decay_clock: str
    promoted: int
    decayed: int
    archived: int
    pruned: int
    active: int
    archived_total: int
    weighted_total: float
    level_counts: list[int]
    strength_mean: float
    strength_p10: float
    strength_p50: float
    strength_p90: float


_SLEEP_COLUMNS = (
    "id, agent, slept_at, last_turn, tasks, decay_clock, promoted, decayed, archived, pruned, "
    "active, archived_total, weighted_total, level_counts, strength_mean, strength_p10, "
    "strength_p50, strength_p90"
)


def _sleep(r: Sequence[Any]) -> SleepRow:
    return SleepRow(
        int(r[0]), r[1], datetime.fromisoformat(r[2]), int(r[3]), float(r[4]), r[5],
        int(r[6]), int(r[7]), int(r[8]), int(r[9]), int(r[10]), int(r[11]), float(r[12]),
        json.loads(r[13]), float(r[14]), float(r[15]), float(r[16]), float(r[17]),
    )  # fmt: skip


def last_sleep(cur: Any, agent: str) -> SleepRow | None:
    """The agent's most recent sleep, or None."""
    row = cur.execute(
        f"SELECT {_SLEEP_COLUMNS} FROM sleeps WHERE agent = ? ORDER BY id DESC LIMIT 1", (agent,)
    ).fetchone()
    return _sleep(row) if row else None


def insert_sleep(cur: Any, row: SleepRow) -> int:
    """Record a sleep (``row.id`` is ignored); return its id."""
    cur.execute(
        "INSERT INTO sleeps (agent, slept_at, slept_ts, last_turn, tasks, decay_clock, promoted, "
        "decayed, archived, pruned, active, archived_total, weighted_total, level_counts, "
        "strength_mean, strength_p10, strength_p50, strength_p90) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            row.agent, iso(row.slept_at), ensure_aware(row.slept_at).timestamp(), row.last_turn,
            row.tasks, row.decay_clock, row.promoted, row.decayed, row.archived, row.pruned,
            row.active, row.archived_total, row.weighted_total, json.dumps(row.level_counts),
            row.strength_mean, row.strength_p10, row.strength_p50, row.strength_p90,
        ),
    )  # fmt: skip
    return int(cur.lastrowid)


def insert_history(cur: Any, sleep_id: int, rows: Sequence[tuple[int, float, int]]) -> None:
    """Snapshot (episode id, strength, level) rows for one sleep."""
    cur.executemany(
        "INSERT INTO strength_history (sleep_id, episode_id, strength, level) VALUES (?, ?, ?, ?)",
        [(sleep_id, eid, s, lvl) for eid, s, lvl in rows],
    )


def delete_sleep_history(cur: Any, agent: str, keep: int) -> None:
    """Drop per-episode snapshots of all but the agent's last ``keep`` sleeps."""
    cur.execute(
        "DELETE FROM strength_history WHERE sleep_id IN (SELECT id FROM sleeps WHERE agent = ? "
        "ORDER BY id DESC LIMIT -1 OFFSET ?)",
        (agent, keep),
    )


def sleep_series(cur: Any, agent: str) -> list[SleepRow]:
    """Every sleep of the agent, oldest first."""
    rows = cur.execute(
        f"SELECT {_SLEEP_COLUMNS} FROM sleeps WHERE agent = ? ORDER BY id", (agent,)
    ).fetchall()
    return [_sleep(r) for r in rows]


def history_series(
    cur: Any, agent: str, *, max_episodes: int
) -> dict[int, list[tuple[datetime, float]]]:
    """Strength after each sleep of the ``max_episodes`` most accessed episodes still snapshotted."""
    chosen = [
        int(r[0])
        for r in cur.execute(
            "SELECT h.episode_id FROM strength_history h JOIN sleeps s ON s.id = h.sleep_id "
            "LEFT JOIN episodes e ON e.id = h.episode_id WHERE s.agent = ? "
            "GROUP BY h.episode_id ORDER BY max(coalesce(e.access_count, 0)) DESC, "
            "h.episode_id LIMIT ?",
            (agent, max_episodes),
        ).fetchall()
    ]
    out: dict[int, list[tuple[datetime, float]]] = {i: [] for i in chosen}
    for chunk in chunks(chosen):
        for eid, slept_at, strength in cur.execute(
            f"SELECT h.episode_id, s.slept_at, h.strength FROM strength_history h "
            f"JOIN sleeps s ON s.id = h.sleep_id WHERE h.episode_id IN ({marks(len(chunk))}) "
            f"AND s.agent = ? ORDER BY s.id",
            [*chunk, agent],
        ).fetchall():
            out[int(eid)].append((datetime.fromisoformat(slept_at), float(strength)))
    return out


# -- the learned scorer -----------------------------------------------------------------------
