"""All SQL of the life cycle: agents and perspectives, turns, reinforcement, sleep, scorer, history.

Every function takes a cursor and runs inside the caller's transaction
(``store.connections.read()`` or ``.write()``); the orchestration lives in
:mod:`memengine.lifecycle`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..clock import ensure_aware
from ..models import Episode
from .episodes import COLUMNS, row_to_episode

__all__ = [
    "AgentRow",
    "LifeRow",
    "SleepRow",
    "TurnRow",
    "archive",
    "close_turn",
    "count_candidates",
    "delete_sleep_history",
    "get_agent",
    "get_turn",
    "history_series",
    "insert_history",
    "insert_sleep",
    "insert_turn",
    "last_sleep",
    "learnings",
    "life_rows",
    "list_agents",
    "load_scorer",
    "never_used",
    "perspective_strengths",
    "principles",
    "recall_archived",
    "reinforce",
    "reinforce_perspective",
    "save_scorer",
    "set_perspective_strengths",
    "set_strengths",
    "sleep_series",
    "training_samples",
    "trim_turns",
    "turn_times",
    "upsert_agent",
]

_CHUNK = 500
_IS_PRINCIPLE = (
    "(kind = 'principle' OR EXISTS (SELECT 1 FROM json_each(episodes.tags) "
    "WHERE json_each.value = 'principle'))"
)


def _iso(moment: datetime) -> str:
    return ensure_aware(moment).isoformat()


def _chunks(ids: Sequence[int]) -> Iterable[list[int]]:
    for start in range(0, len(ids), _CHUNK):
        yield list(ids[start : start + _CHUNK])


def _marks(n: int) -> str:
    return ",".join("?" * n)


# -- agents -------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentRow:
    """An agent and the perspectives declared for it."""

    name: str
    created_at: datetime
    perspectives: tuple[str, ...] = ()


def _agent(row: Sequence[Any]) -> AgentRow:
    return AgentRow(row[0], datetime.fromisoformat(row[1]), tuple(json.loads(row[2])))


def get_agent(cur: Any, name: str) -> AgentRow | None:
    """The agent called ``name``, or None."""
    row = cur.execute(
        "SELECT name, created_at, perspectives FROM agents WHERE name = ?", (name,)
    ).fetchone()
    return _agent(row) if row else None


def list_agents(cur: Any) -> list[AgentRow]:
    """Every agent, by name."""
    rows = cur.execute("SELECT name, created_at, perspectives FROM agents ORDER BY name")
    return [_agent(r) for r in rows.fetchall()]


def upsert_agent(cur: Any, name: str, perspectives: Sequence[str], now: datetime) -> AgentRow:
    """Create the agent or add perspectives to it (existing ones are kept, in order)."""
    cur.execute("INSERT OR IGNORE INTO agents (name, created_at) VALUES (?, ?)", (name, _iso(now)))
    current = get_agent(cur, name)
    assert current is not None
    merged = list(current.perspectives)
    merged.extend(p for p in perspectives if p not in merged)
    cur.execute(
        "UPDATE agents SET perspectives = ? WHERE name = ?",
        (json.dumps(merged, ensure_ascii=False), name),
    )
    return AgentRow(current.name, current.created_at, tuple(merged))


# -- turns ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnRow:
    """One recorded retrieval and, once given, its feedback."""

    id: int
    agent: str
    created_at: datetime
    query: str
    perspective: str | None
    ranking: str
    candidates: list[tuple[int, list[float]]]
    used: list[int] | None
    outcome: str | None
    impact: float


def insert_turn(
    cur: Any,
    *,
    agent: str,
    now: datetime,
    query: str,
    perspective: str | None,
    ranking: str,
    candidates: Sequence[tuple[int, Sequence[float]]],
) -> int:
    """Record a retrieval with the features of each returned candidate; return the turn id."""
    cur.execute("INSERT OR IGNORE INTO agents (name, created_at) VALUES (?, ?)", (agent, _iso(now)))
    payload = [{"id": i, "f": [round(float(x), 6) for x in f]} for i, f in candidates]
    cur.execute(
        "INSERT INTO turns (agent, created_at, created_ts, query, perspective, ranking, "
        "candidates) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            agent,
            _iso(now),
            ensure_aware(now).timestamp(),
            query,
            perspective,
            ranking,
            json.dumps(payload),
        ),
    )
    return int(cur.lastrowid)


def agent_episode_ids(cur: Any, agent: str) -> list[int]:
    """Every episode id of ``agent``."""
    return [int(r[0]) for r in cur.execute("SELECT id FROM episodes WHERE agent = ?", (agent,))]


def drop_agent(cur: Any, agent: str) -> int:
    """Delete the agent's row, and with it (foreign keys) its turns, sleeps, strength history
    and learned scorer; return how many turns went. Its episodes must be gone already."""
    turns = int(cur.execute("SELECT count(*) FROM turns WHERE agent = ?", (agent,)).fetchone()[0])
    cur.execute("DELETE FROM agents WHERE name = ?", (agent,))
    return turns


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


def get_turn(cur: Any, turn_id: int) -> TurnRow | None:
    """The turn with this id, or None."""
    row = cur.execute(
        "SELECT id, agent, created_at, query, perspective, ranking, candidates, used, outcome, "
        "impact FROM turns WHERE id = ?",
        (turn_id,),
    ).fetchone()
    if row is None:
        return None
    cands = [(int(c["id"]), [float(x) for x in c["f"]]) for c in json.loads(row[6])]
    return TurnRow(
        id=row[0],
        agent=row[1],
        created_at=datetime.fromisoformat(row[2]),
        query=row[3],
        perspective=row[4],
        ranking=row[5],
        candidates=cands,
        used=json.loads(row[7]) if row[7] is not None else None,
        outcome=row[8],
        impact=row[9],
    )


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
        (json.dumps(sorted(set(used))), outcome, impact, method, _iso(now), turn_id),
    )


def turn_times(cur: Any, agent: str, after_turn: int) -> list[tuple[int, float]]:
    """(id, unix time) of the agent's turns after ``after_turn``, in order."""
    rows = cur.execute(
        "SELECT id, created_ts FROM turns WHERE agent = ? AND id > ? ORDER BY id",
        (agent, after_turn),
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


def count_candidates(cur: Any, ids: Sequence[int]) -> None:
    """Add one to ``candidate_count`` of each episode (it was retrieved as a candidate)."""
    for chunk in _chunks(list(ids)):
        cur.execute(
            f"UPDATE episodes SET candidate_count = candidate_count + 1 "
            f"WHERE id IN ({_marks(len(chunk))})",
            chunk,
        )


def recall_archived(
    cur: Any, ids: Sequence[int], *, strength: float, level_drop: int
) -> dict[int, tuple[float, int]]:
    """Return archived episodes among ``ids`` to active; map id → (new strength, new level)."""
    out: dict[int, tuple[float, int]] = {}
    for chunk in _chunks(list(ids)):
        rows = cur.execute(
            f"UPDATE episodes SET status = 'active', strength = ?, "
            f"consolidation_level = max(0, consolidation_level - ?) "
            f"WHERE status = 'archived' AND id IN ({_marks(len(chunk))}) "
            f"RETURNING id, strength, consolidation_level",
            [strength, level_drop, *chunk],
        ).fetchall()
        out.update({int(r[0]): (float(r[1]), int(r[2])) for r in rows})
    return out


def reinforce(
    cur: Any, ids: Sequence[int], *, now: datetime, strength_gain: float, impact: float
) -> None:
    """Mark episodes as used: access_count + 1, strength + gain, impact_score + impact, last_access."""
    for chunk in _chunks(list(ids)):
        cur.execute(
            f"UPDATE episodes SET access_count = access_count + 1, strength = strength + ?, "
            f"impact_score = impact_score + ?, last_access = ? "
            f"WHERE id IN ({_marks(len(chunk))})",
            [strength_gain, impact, _iso(now), *chunk],
        )


def reinforce_perspective(
    cur: Any, ids: Sequence[int], perspective: str, gain: float, learning: str | None
) -> None:
    """Add ``gain`` to each episode's strength under ``perspective`` and append a learning."""
    for episode_id in ids:
        row = cur.execute(
            "SELECT strength, learnings FROM episode_perspectives "
            "WHERE episode_id = ? AND perspective = ?",
            (episode_id, perspective),
        ).fetchone()
        notes: list[str] = json.loads(row[1]) if row else []
        if learning:
            notes.append(learning)
        cur.execute(
            "INSERT INTO episode_perspectives (episode_id, perspective, strength, learnings) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (episode_id, perspective) DO UPDATE SET "
            "strength = excluded.strength, learnings = excluded.learnings",
            (
                episode_id,
                perspective,
                (row[0] if row else 0.0) + gain,
                json.dumps(notes, ensure_ascii=False),
            ),
        )


def perspective_strengths(
    cur: Any, ids: Sequence[int], perspective: str | None = None
) -> dict[int, dict[str, float]]:
    """Each episode's strength per perspective (only ``perspective`` when given)."""
    out: dict[int, dict[str, float]] = {}
    for chunk in _chunks(list(ids)):
        sql = (
            f"SELECT episode_id, perspective, strength FROM episode_perspectives "
            f"WHERE episode_id IN ({_marks(len(chunk))})"
        )
        params: list[Any] = list(chunk)
        if perspective is not None:
            sql += " AND perspective = ?"
            params.append(perspective)
        for eid, name, strength in cur.execute(sql, params).fetchall():
            out.setdefault(int(eid), {})[name] = float(strength)
    return out


def learnings(cur: Any, episode_id: int) -> dict[str, list[str]]:
    """The learnings of one episode, per perspective."""
    rows = cur.execute(
        "SELECT perspective, learnings FROM episode_perspectives WHERE episode_id = ? "
        "ORDER BY perspective",
        (episode_id,),
    ).fetchall()
    return {name: json.loads(notes) for name, notes in rows}


# -- sleep ----------------------------------------------------------------------------------


@dataclass
class LifeRow:
    """The life-cycle columns of one episode, as the sleep phase reads them."""

    id: int
    kind: str
    tags: tuple[str, ...]
    status: str
    strength: float
    level: int
    access_count: int
    created_ts: float
    last_access_ts: float | None
    perspectives: dict[str, float] = field(default_factory=dict)


def life_rows(cur: Any, agent: str) -> list[LifeRow]:
    """Every episode of ``agent`` with its life-cycle columns and perspective strengths."""
    rows = [
        LifeRow(
            id=int(r[0]),
            kind=r[1],
            tags=tuple(json.loads(r[2])),
            status=r[3],
            strength=float(r[4]),
            level=int(r[5]),
            access_count=int(r[6]),
            created_ts=datetime.fromisoformat(r[7]).timestamp(),
            last_access_ts=datetime.fromisoformat(r[8]).timestamp() if r[8] else None,
        )
        for r in cur.execute(
            "SELECT id, kind, tags, status, strength, consolidation_level, access_count, "
            "created_at, last_access FROM episodes WHERE agent = ? ORDER BY id",
            (agent,),
        ).fetchall()
    ]
    by_id = {r.id: r for r in rows}
    for eid, name, strength in cur.execute(
        "SELECT p.episode_id, p.perspective, p.strength FROM episode_perspectives p "
        "JOIN episodes e ON e.id = p.episode_id WHERE e.agent = ?",
        (agent,),
    ).fetchall():
        by_id[int(eid)].perspectives[name] = float(strength)
    return rows


def set_strengths(cur: Any, rows: Sequence[tuple[float, int, int]]) -> None:
    """Write (strength, level, id) rows."""
    cur.executemany(
        "UPDATE episodes SET strength = ?, consolidation_level = ? WHERE id = ?", list(rows)
    )


def set_perspective_strengths(cur: Any, rows: Sequence[tuple[float, int, str]]) -> None:
    """Write (strength, episode id, perspective) rows."""
    cur.executemany(
        "UPDATE episode_perspectives SET strength = ? WHERE episode_id = ? AND perspective = ?",
        list(rows),
    )


def archive(cur: Any, ids: Sequence[int]) -> None:
    """Set these episodes to archived (the vector filter trigger follows)."""
    for chunk in _chunks(list(ids)):
        cur.execute(
            f"UPDATE episodes SET status = 'archived' WHERE id IN ({_marks(len(chunk))})", chunk
        )


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
            row.agent, _iso(row.slept_at), ensure_aware(row.slept_at).timestamp(), row.last_turn,
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
    for chunk in _chunks(chosen):
        for eid, slept_at, strength in cur.execute(
            f"SELECT h.episode_id, s.slept_at, h.strength FROM strength_history h "
            f"JOIN sleeps s ON s.id = h.sleep_id WHERE h.episode_id IN ({_marks(len(chunk))}) "
            f"AND s.agent = ? ORDER BY s.id",
            [*chunk, agent],
        ).fetchall():
            out[int(eid)].append((datetime.fromisoformat(slept_at), float(strength)))
    return out


# -- the learned scorer -----------------------------------------------------------------------


def training_samples(
    cur: Any, agent: str, max_samples: int
) -> tuple[list[list[float]], list[int], list[str], int]:
    """Features, labels (1 = used), outcomes and the last turn id of the latest answered turns.

    Whole turns are taken, newest first, until ``max_samples`` candidates are collected;
    the samples come back oldest first.
    """
    turns: list[tuple[int, str, str, str | None]] = []
    count = 0
    for row in cur.execute(
        "SELECT id, candidates, used, outcome FROM turns WHERE agent = ? AND used IS NOT NULL "
        "ORDER BY id DESC",
        (agent,),
    ):
        if count >= max_samples:
            break
        turns.append(row)
        count += len(json.loads(row[1]))
    features: list[list[float]] = []
    labels: list[int] = []
    outcomes: list[str] = []
    for _turn_id, candidates, used, outcome in reversed(turns):
        used_ids = set(json.loads(used))
        for cand in json.loads(candidates):
            features.append([float(x) for x in cand["f"]])
            labels.append(1 if cand["id"] in used_ids else 0)
            outcomes.append(outcome or "")
    return features, labels, outcomes, int(turns[0][0]) if turns else 0


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
        (agent, json.dumps(weights), _iso(now), samples, last_turn, auc),
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


def never_used(cur: Any, agent: str, min_candidates: int) -> list[Episode]:
    """Episodes (not principles) retrieved more than ``min_candidates`` times but never used."""
    rows = cur.execute(
        f"SELECT {COLUMNS} FROM episodes WHERE agent = ? AND access_count = 0 "
        f"AND candidate_count > ? AND NOT {_IS_PRINCIPLE} ORDER BY candidate_count DESC, id",
        (agent, min_candidates),
    ).fetchall()
    return [row_to_episode(r) for r in rows]


def principles(cur: Any, agent: str) -> list[Episode]:
    """The agent's active principles (kind principle or tag principle), oldest first."""
    rows = cur.execute(
        f"SELECT {COLUMNS} FROM episodes WHERE agent = ? AND status = 'active' "
        f"AND (kind = 'principle' OR tags LIKE '%\"principle\"%') "  # the partial index
        f"AND {_IS_PRINCIPLE}",  # no ORDER BY: it would make SQLite scan by time instead
        (agent,),
    ).fetchall()
    found = [row_to_episode(r) for r in rows]
    return sorted(found, key=lambda e: (e.occurred_at, e.id))
