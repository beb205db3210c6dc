"""Strength and use of each memory: reinforcement, perspectives, archiving, the life rows read by sleep.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ...clock import ensure_aware
from ...models import Episode
from ..episodes import COLUMNS, held_ids, row_to_episode
from ._rows import IS_PRINCIPLE, chunks, iso, marks
from .sleeps import last_sleep

__all__ = [
    "LifeRow",
    "archive",
    "clear_decay_from",
    "count_candidates",
    "decay_baselines",
    "drop_learnings_of",
    "learnings",
    "life_rows",
    "never_used",
    "perspective_strengths",
    "principles",
    "recall_archived",
    "reinforce",
    "reinforce_perspective",
    "set_perspective_strengths",
    "set_strengths",
]


def count_candidates(cur: Any, ids: Sequence[int]) -> None:
    """Add one to ``candidate_count`` of each episode (it was retrieved as a candidate)."""
    for chunk in chunks(list(ids)):
        cur.execute(
            f"UPDATE episodes SET candidate_count = candidate_count + 1 "
            f"WHERE id IN ({marks(len(chunk))})",
            chunk,
        )


def recall_archived(
    cur: Any, ids: Sequence[int], *, strength: float, level_drop: int, now: datetime
) -> dict[int, tuple[float, int]]:
    """Return archived episodes among ``ids`` to active; map id → (new strength, new level).

    Their strength is set, not added to, so it holds from ``now`` (the store's clock), or
    from their agent's last sleep if that is later (a recall comes after it; a clock set
    back must not date it before): schema 8's ``decay_from``, so that the next sleep
    decays them for the turns or days since they came back, not since that sleep."""
    out: dict[int, tuple[float, int]] = {}
    agents: dict[str, list[int]] = {}
    for chunk in chunks(list(ids)):
        rows = cur.execute(
            f"UPDATE episodes SET status = 'active', strength = ?, "
            f"consolidation_level = max(0, consolidation_level - ?) "
            f"WHERE status = 'archived' AND id IN ({marks(len(chunk))}) "
            f"RETURNING id, strength, consolidation_level, agent",
            [strength, level_drop, *chunk],
        ).fetchall()
        out.update({int(r[0]): (float(r[1]), int(r[2])) for r in rows})
        for r in rows:
            agents.setdefault(r[3], []).append(int(r[0]))
    for agent, recalled in agents.items():
        last = last_sleep(cur, agent)
        held = now if last is None else max(now, last.slept_at, key=_ts)
        cur.executemany(
            "UPDATE episodes SET decay_from = ? WHERE id = ?", [(iso(held), i) for i in recalled]
        )
    return out


def _ts(moment: datetime) -> float:
    return ensure_aware(moment).timestamp()


def reinforce(
    cur: Any, ids: Sequence[int], *, now: datetime, strength_gain: float, impact: float
) -> None:
    """Mark episodes as used: access_count + 1, strength + gain, impact_score + impact, last_access."""
    for chunk in chunks(list(ids)):
        cur.execute(
            f"UPDATE episodes SET access_count = access_count + 1, strength = strength + ?, "
            f"impact_score = impact_score + ?, last_access = ? "
            f"WHERE id IN ({marks(len(chunk))})",
            [strength_gain, impact, iso(now), *chunk],
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
    for chunk in chunks(list(ids)):
        sql = (
            f"SELECT episode_id, perspective, strength FROM episode_perspectives "
            f"WHERE episode_id IN ({marks(len(chunk))})"
        )
        params: list[Any] = list(chunk)
        if perspective is not None:
            sql += " AND perspective = ?"
            params.append(perspective)
        for eid, name, strength in cur.execute(sql, params).fetchall():
            out.setdefault(int(eid), {})[name] = float(strength)
    return out


def drop_learnings_of(cur: Any, ids: Sequence[int], agent: str | None = None) -> int:
    """Remove the learnings these episodes (``agent``'s only, when given) hold, before they
    are deleted, from the other episodes a recorded turn used with them, under the same
    perspective: a feedback's learning is written on each memory its turn used ("User is
    still hurt about …"), so deleting one would leave it on the rest. A turn the file no
    longer keeps (past ``keep_turns``) names none. Returns how many episodes lost one."""
    held = held_ids(ids)  # (a larger id names no episode)
    notes: dict[str, dict[str, set[str]]] = {}  # agent -> perspective -> texts
    going: dict[str, list[int]] = {}  # agent -> its ids that hold learnings
    for chunk in chunks(held):
        sql = (
            "SELECT e.agent, p.episode_id, p.perspective, p.learnings FROM episode_perspectives p "
            "JOIN episodes e ON e.id = p.episode_id "
            f"WHERE p.episode_id IN ({marks(len(chunk))}) AND p.learnings != '[]'"
        )
        params: list[Any] = list(chunk)
        if agent is not None:
            sql += " AND e.agent = ?"
            params.append(agent)
        for owner, episode_id, name, held_notes in cur.execute(sql, params).fetchall():
            notes.setdefault(str(owner), {}).setdefault(str(name), set()).update(
                json.loads(held_notes)
            )
            going.setdefault(str(owner), []).append(int(episode_id))
    changed = 0
    for owner, gone in going.items():
        partners: set[int] = set()
        for chunk in chunks(gone):
            for (used,) in cur.execute(
                "SELECT used FROM turns WHERE agent = ? AND used IS NOT NULL AND EXISTS "
                f"(SELECT 1 FROM json_each(turns.used) WHERE value IN ({marks(len(chunk))}))",
                [owner, *chunk],
            ):
                partners.update(int(i) for i in json.loads(used))
        partners -= set(held)
        for chunk in chunks(sorted(partners)):
            rows = cur.execute(
                "SELECT episode_id, perspective, learnings FROM episode_perspectives "
                f"WHERE episode_id IN ({marks(len(chunk))}) AND learnings != '[]'",
                list(chunk),
            ).fetchall()
            for episode_id, name, notes_json in rows:
                texts = notes[owner].get(str(name), set())
                had = json.loads(notes_json)
                kept = [t for t in had if t not in texts]
                if len(kept) == len(had):
                    continue
                cur.execute(
                    "UPDATE episode_perspectives SET learnings = ? "
                    "WHERE episode_id = ? AND perspective = ?",
                    (json.dumps(kept, ensure_ascii=False), episode_id, name),
                )
                changed += 1
    return changed


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
    decay_from_ts: float | None = None  # when a strength of its own (an import's) held
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
            decay_from_ts=datetime.fromisoformat(r[9]).timestamp() if r[9] else None,
        )
        for r in cur.execute(
            "SELECT id, kind, tags, status, strength, consolidation_level, access_count, "
            "created_at, last_access, decay_from FROM episodes WHERE agent = ? ORDER BY id",
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


def decay_baselines(cur: Any, ids: Sequence[int]) -> dict[int, datetime]:
    """The moment each episode's strength holds for (what an export writes as
    ``decayed_at``): its ``decay_from`` while it has one (imported since its agent's last
    sleep), else the later of its creation and that sleep."""
    slept: dict[str, datetime | None] = {}
    out: dict[int, datetime] = {}
    for part in chunks(ids):
        rows = cur.execute(  # (read whole: the loop asks the cursor for sleeps)
            f"SELECT id, agent, created_at, decay_from FROM episodes WHERE id IN ({marks(len(part))})",
            part,
        ).fetchall()
        for id_, agent, created, decay_from in rows:
            if decay_from:
                out[int(id_)] = datetime.fromisoformat(decay_from)
                continue
            if agent not in slept:
                last = last_sleep(cur, agent)
                slept[agent] = None if last is None else last.slept_at
            moments = [datetime.fromisoformat(created), slept[agent]]
            out[int(id_)] = max(
                (m for m in moments if m is not None), key=lambda m: ensure_aware(m).timestamp()
            )
    return out


def clear_decay_from(cur: Any, ids: Sequence[int]) -> None:
    """Forget the moment these episodes' imported strengths held for (schema 8's
    ``decay_from``): a sleep has decayed them from it."""
    cur.executemany("UPDATE episodes SET decay_from = NULL WHERE id = ?", [(i,) for i in ids])


def set_perspective_strengths(cur: Any, rows: Sequence[tuple[float, int, str]]) -> None:
    """Write (strength, episode id, perspective) rows."""
    cur.executemany(
        "UPDATE episode_perspectives SET strength = ? WHERE episode_id = ? AND perspective = ?",
        list(rows),
    )


def archive(cur: Any, ids: Sequence[int]) -> None:
    """Set these episodes to archived (the vector filter trigger follows)."""
    for chunk in chunks(list(ids)):
        cur.execute(
            f"UPDATE episodes SET status = 'archived' WHERE id IN ({marks(len(chunk))})", chunk
        )


def never_used(cur: Any, agent: str, min_candidates: int) -> list[Episode]:
    """Episodes (not principles) retrieved more than ``min_candidates`` times but never used."""
    rows = cur.execute(
        f"SELECT {COLUMNS} FROM episodes WHERE agent = ? AND access_count = 0 "
        f"AND candidate_count > ? AND NOT {IS_PRINCIPLE} ORDER BY candidate_count DESC, id",
        (agent, min_candidates),
    ).fetchall()
    return [row_to_episode(r) for r in rows]


_PRINCIPLE_ROWS = f"(kind = 'principle' OR tags LIKE '%\"principle\"%') AND {IS_PRINCIPLE}"
"""An agent's principles, found through the partial index ``episodes_principles`` (whose
LIKE is blind to case) and then told apart exactly (:data:`IS_PRINCIPLE`)."""


def principles(cur: Any, agent: str) -> list[Episode]:
    """The agent's principles (kind principle, or tag principle in any case), oldest first:
    archived ones too (an earlier version's sleep archived a memory tagged ``Principle``;
    principles are outside the life cycle now, and :func:`reactivate_principles` makes them
    active at the agent's next sleep)."""
    # (tags are stored without outer spaces: the partial index episodes_principles, whose
    # LIKE is blind to case, finds every one; a tag an earlier version stored with spaces is
    # no principle here nor to the sleep)
    rows = cur.execute(
        f"SELECT {COLUMNS} FROM episodes WHERE agent = ? "
        f"AND {_PRINCIPLE_ROWS}",  # no ORDER BY: it would make SQLite scan by time instead
        (agent,),
    ).fetchall()
    found = [row_to_episode(r) for r in rows]
    return sorted(found, key=lambda e: (e.occurred_at, e.id))


def reactivate_principles(cur: Any, agent: str) -> int:
    """Make the agent's archived principles active (an earlier version's sleep archived
    memories tagged ``Principle``, which are principles now); return how many."""
    cur.execute(
        "UPDATE episodes SET status = 'active' WHERE agent = ? AND status = 'archived' "
        f"AND {_PRINCIPLE_ROWS}",
        (agent,),
    )
    return int(cur.rowcount)
