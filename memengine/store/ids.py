"""Ids that are never given out twice: episodes (schema 6) and turns (schema 7).

Each table numbers new rows above the largest id it holds and the largest
id ever deleted from its top, which a trigger keeps in ``meta`` on every
delete (see migrations 6 and 7; 9 lifts a mark an earlier release of 6
seeded too low).
"""

from __future__ import annotations

from typing import Any, Literal

from . import meta

__all__ = ["MAX_KEPT_ID", "highest_id_given", "reserve_ids"]

MAX_KEPT_ID = 2**53 - 1
"""The largest episode id: one an import keeps, or one given out (the largest integer
every JSON reader holds exactly, so an export can always be imported again)."""

_MARKS = {"episodes": "episode_id_high", "turns": "turn_id_high"}


def highest_id_given(cur: Any, table: Literal["episodes", "turns"]) -> int:
    """The largest id ``table`` has ever given out: stored now, or deleted from its top."""
    row = cur.execute(
        f"SELECT max(coalesce((SELECT max(id) FROM {table}), 0), "
        "coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0))",
        (_MARKS[table],),
    ).fetchone()
    return int(row[0])


def reserve_ids(cur: Any, highest: int) -> None:
    """Number the episodes added from now on above ``highest`` (inside the caller's write
    transaction): ids an import keeps, written in later batches, are then not given to
    another writer's episode meanwhile."""
    if highest > highest_id_given(cur, "episodes"):
        meta.put(cur, **{_MARKS["episodes"]: str(highest)})
