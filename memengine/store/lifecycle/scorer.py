"""Learned ranking scorers: the ``scorers`` table.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from ...errors import DamagedDatabase
from .. import meta
from ..ids import highest_id_given
from ._rows import iso

__all__ = [
    "SAMPLES_AFTER",
    "feedback_since_training",
    "load_scorer",
    "retire_scorers",
    "samples_after",
    "save_scorer",
]

SAMPLES_AFTER = "scorer_samples_after_turn"
"""The meta key of the last turn whose features were read with an older embedder."""


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
    try:
        weights = json.loads(row[0])
    except (ValueError, TypeError, RecursionError) as exc:
        raise DamagedDatabase(
            f"the learned scorer of agent {agent!r} is not JSON ({type(exc).__name__})"
        ) from exc
    if not isinstance(weights, dict):
        raise DamagedDatabase(f"the learned scorer of agent {agent!r} is not a JSON object")
    return weights, int(row[1]), int(row[2]), row[3]


def feedback_since_training(cur: Any, agent: str, first_turn: int) -> bool:
    """Whether a turn of the agent from ``first_turn`` on got its feedback after its scorer
    was trained (also a late one, on a turn older than the newest the scorer learned
    from; one older than ``first_turn``, the oldest a training takes, changes nothing)."""
    row = cur.execute(
        "SELECT EXISTS (SELECT 1 FROM turns t JOIN scorers s ON s.agent = t.agent "
        "WHERE t.agent = ? AND t.id >= ? AND t.feedback_at IS NOT NULL "
        "AND julianday(t.feedback_at) > julianday(s.trained_at))",
        (agent, first_turn),
    ).fetchone()
    return bool(row[0])


# -- queries ----------------------------------------------------------------------------------


def retire_scorers(cur: Any) -> int:
    """Drop every agent's scorer and leave the turns recorded so far out of training: their
    features hold cosines of the embedder the file had (called by a re-embed's swap)."""
    meta.put(cur, **{SAMPLES_AFTER: str(highest_id_given(cur, "turns"))})
    return int(cur.execute("DELETE FROM scorers").rowcount)


def samples_after(cur: Any) -> int:
    """The turns up to this id were recorded with another embedder (0: none were)."""
    return int(meta.get(cur, SAMPLES_AFTER) or 0)
