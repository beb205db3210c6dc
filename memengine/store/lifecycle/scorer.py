"""Learned ranking scorers: the ``scorers`` table.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ._rows import iso

__all__ = ["load_scorer", "save_scorer"]


def save_scorer(
    cur: Any,
    agent: str,
    *,
    weights: dict[str, Any],
    now: datetime,
    samples: int,
    last_turn: int,
    auc: float | None,
) -> None:
    """Store (or replace) the agent's learned scorer."""
    cur.execute(
        "INSERT INTO scorers (agent, weights, trained_at, samples, last_turn, auc) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent) DO UPDATE SET weights = excluded.weights, "
        "trained_at = excluded.trained_at, samples = excluded.samples, "
        "last_turn = excluded.last_turn, auc = excluded.auc",
        (agent, json.dumps(weights), iso(now), samples, last_turn, auc),
    )


def load_scorer(cur: Any, agent: str) -> tuple[dict[str, Any], int, int, float | None] | None:
    """The agent's scorer as (weights, samples, last turn, auc), or None."""
    row = cur.execute(
        "SELECT weights, samples, last_turn, auc FROM scorers WHERE agent = ?", (agent,)
    ).fetchone()
    if row is None:
        return None
    return json.loads(row[0]), int(row[1]), int(row[2]), row[3]


# -- queries ----------------------------------------------------------------------------------
