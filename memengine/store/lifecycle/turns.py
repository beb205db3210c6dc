"""Retrieval turns: the ``turns`` table, and the training samples drawn from it.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

import json
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from ...clock import ensure_aware
from ..ids import highest_id_given
from ._rows import iso
from .scorer import samples_after

__all__ = [
    "Samples",
    "TurnRow",
    "clear_turn_texts",
    "close_turn",
    "get_turn",
    "has_turns_up_to",
    "insert_turn",
    "named_by_records",
    "training_samples",
    "trim_turns",
    "turn_times",
]


@dataclass(frozen=True)
class TurnRow:
    """One recorded retrieval and, once given, its feedback."""

    id: int
    agent: str
    created_at: datetime
    perspective: str | None
    ranking: str
    candidates: list[tuple[int, list[float]]]
    used: list[int] | None
    outcome: str | None
    impact: float
    offered: frozenset[int] | None = None
    """The candidates offered to the reply (those a pack shows); None for a turn recorded
    before offers were (every candidate may have been shown)."""


def insert_turn(
    cur: Any,
    *,
    agent: str,
    now: datetime,
    recorded: datetime,
    perspective: str | None,
    ranking: str,
    candidates: Sequence[tuple[int, Sequence[float]]],
    offered: Collection[int] = (),
) -> int | None:
    """Record a retrieval with the features of each returned candidate; return the turn id,
    or None when the file no longer knows ``agent`` (forgotten while the turn ran: its
    message is not written, nor is the agent made again).

    ``now`` is the moment of the message (``created_at``); ``recorded`` the store's clock,
    which also dates the episodes: the sleep's tasks clock counts a turn for the memories
    created before it by that time (``created_ts``), so that a caller's own message times
    (a replay, a slow client clock) neither skip turns nor count them twice. The turn's
    text is not recorded (its ``query`` column stays empty): it quotes the recent
    conversation, which a delete must be able to remove. ``offered`` are the candidates
    offered to the reply (the relevant ones of a turn that injects: what a pack shows)."""
    if cur.execute("SELECT 1 FROM agents WHERE name = ?", (agent,)).fetchone() is None:
        return None
    shown = set(offered)
    payload = [
        {"id": i, "f": [round(float(x), 6) for x in f], "o": int(i in shown)} for i, f in candidates
    ]
    cur.execute(
        "INSERT INTO turns (id, agent, created_at, created_ts, perspective, ranking, "
        "candidates) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            highest_id_given(cur, "turns") + 1,  # never an id a deleted turn had (schema 7)
            agent,
            iso(now),
            ensure_aware(recorded).timestamp(),
            perspective,
            ranking,
            json.dumps(payload),
        ),
    )
    return int(cur.lastrowid)


def named_by_records(cur: Any, ids: Sequence[int]) -> list[int]:
    """Which of ``ids`` a recorded turn names among its candidates, or a sleep's strength
    history holds (ascending): records of an episode that may be deleted since."""
    if not ids:
        return []
    rows = cur.execute(
        "WITH wanted(id) AS (SELECT value FROM json_each(?)) "
        "SELECT json_extract(c.value, '$.id') AS id "
        "FROM turns, json_each(turns.candidates) AS c "
        "WHERE json_extract(c.value, '$.id') IN wanted "
        "UNION SELECT episode_id FROM strength_history WHERE episode_id IN wanted ORDER BY id",
        (json.dumps(sorted(set(ids))),),
    ).fetchall()
    return [int(r[0]) for r in rows]


def has_turns_up_to(cur: Any, agent: str, turn_id: int) -> bool:
    """Whether ``agent`` still has a turn numbered ``turn_id`` or below: none once it was
    forgotten, even when it was made again since (turn ids are never given out twice)."""
    row = cur.execute(
        "SELECT 1 FROM turns WHERE agent = ? AND id <= ? LIMIT 1", (agent, turn_id)
    ).fetchone()
    return row is not None


def get_turn(cur: Any, turn_id: int) -> TurnRow | None:
    """The turn with this id, or None."""
    row = cur.execute(
        "SELECT id, agent, created_at, perspective, ranking, candidates, used, outcome, "
        "impact FROM turns WHERE id = ?",
        (turn_id,),
    ).fetchone()
    if row is None:
        return None
    records = json.loads(row[5])
    cands = [(int(c["id"]), [float(x) for x in c["f"]]) for c in records]
    offered = (
        frozenset(int(c["id"]) for c in records if c["o"])
        if all("o" in c for c in records)
        else None
    )
    return TurnRow(
        id=row[0],
        agent=row[1],
        created_at=datetime.fromisoformat(row[2]),
        perspective=row[3],
        ranking=row[4],
        candidates=cands,
        used=json.loads(row[6]) if row[6] is not None else None,
        outcome=row[7],
        impact=row[8],
        offered=offered,
    )


def clear_turn_texts(cur: Any) -> int:
    """Empty the text that turns recorded by older versions kept (it quoted the recent
    conversation, deleted episodes' words too); return how many turns held some."""
    cur.execute("UPDATE turns SET query = '' WHERE query != ''")
    return int(cur.rowcount)


def close_turn(
    cur: Any,
    turn_id: int,
    *,
    used: Sequence[int],
    outcome: str | None,
    impact: float,
    method: str,
    now: datetime,
) -> None:
    """Store a turn's feedback: which candidates were used, the outcome and the impact."""
    cur.execute(
        "UPDATE turns SET used = ?, outcome = ?, impact = ?, method = ?, feedback_at = ? "
        "WHERE id = ?",
        (json.dumps(sorted(set(used))), outcome, impact, method, iso(now), turn_id),
    )


def turn_times(
    cur: Any, agent: str, after_turn: int, *, from_ts: float = -math.inf
) -> list[tuple[int, float]]:
    """(id, unix time) of the agent's turns after ``after_turn`` recorded at or after
    ``from_ts``, in order."""
    rows = cur.execute(
        "SELECT id, created_ts FROM turns WHERE agent = ? AND id > ? AND created_ts >= ? "
        "ORDER BY id",
        (agent, after_turn, from_ts),
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def trim_turns(cur: Any, agent: str, keep: int) -> int:
    """Delete all but the agent's latest ``keep`` turns; return how many were deleted."""
    cur.execute(
        "DELETE FROM turns WHERE agent = ? AND id <= (SELECT id FROM turns WHERE agent = ? "
        "ORDER BY id DESC LIMIT 1 OFFSET ?)",
        (agent, agent, keep),
    )
    return int(cur.rowcount)


# -- counting and reinforcement -------------------------------------------------------------


class Samples(NamedTuple):
    """What a scorer learns from: one row per candidate of the answered turns taken."""

    features: list[list[float]]
    labels: list[int]
    """1 = used."""
    outcomes: list[str]
    last: int
    """The newest turn taken (0: none)."""
    first: int
    """The oldest turn taken (0: none): feedback on a turn older than it changes nothing."""
    ids: list[int]
    """The memory of each row (whose samples :func:`~memengine.lifecycle.scorer.memory_weights`
    caps, and whose used ones are counted)."""


def _labelled(records: list[dict[str, Any]], method: str) -> list[dict[str, Any]]:
    """The candidate records of a turn its feedback labels: every one when memories were
    named (``explicit``), else those offered to the reply (all, for a turn recorded before
    offers were kept)."""
    if "explicit" in method.split("+") or not all("o" in c for c in records):
        return records
    return [c for c in records if c["o"]]


def training_samples(cur: Any, agent: str, max_samples: int) -> Samples:
    """Features, labels (1 = used), outcomes, the newest and oldest turn ids and the
    memories of the latest answered turns.

    Whole turns are taken, newest first, until ``max_samples`` candidates are collected;
    the samples come back oldest first. A turn whose use was judged from the answer (not
    named) gives only the candidates it offered the reply: the others could not be used,
    so they say nothing of whether they would have been (turns recorded before offers were
    kept give every candidate); one given an outcome alone gives none. Turns recorded before the file was re-embedded are left out
    (their cosines are another embedder's: :func:`.retire_scorers`).
    """
    turns: list[tuple[int, list[dict[str, Any]], str, str | None]] = []
    count = 0
    for turn_id, candidates, used, outcome, method in cur.execute(
        "SELECT id, candidates, used, outcome, method FROM turns WHERE agent = ? "
        "AND used IS NOT NULL AND id > ? ORDER BY id DESC",
        (agent, samples_after(cur)),
    ):
        if count >= max_samples:
            break
        if method == "none":  # an outcome alone: which memories were used was not said
            continue
        records = _labelled(json.loads(candidates), method or "")
        turns.append((turn_id, records, used, outcome))
        count += len(records)
    features: list[list[float]] = []
    labels: list[int] = []
    outcomes: list[str] = []
    ids: list[int] = []
    for _turn_id, records, used, outcome in reversed(turns):
        used_ids = set(json.loads(used))
        for cand in records:
            features.append([float(x) for x in cand["f"]])
            labels.append(1 if cand["id"] in used_ids else 0)
            outcomes.append(outcome or "")
            ids.append(int(cand["id"]))
    return Samples(
        features,
        labels,
        outcomes,
        int(turns[0][0]) if turns else 0,
        int(turns[-1][0]) if turns else 0,
        ids,
    )
