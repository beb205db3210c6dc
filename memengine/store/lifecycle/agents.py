"""Agents and their perspectives: the ``agents`` table.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ._rows import iso

__all__ = [
    "AgentRow",
    "agent_episode_ids",
    "drop_agent",
    "get_agent",
    "list_agents",
    "upsert_agent",
]


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
    """Create the agent or add perspectives to it (existing ones are kept, in order; one
    that is an existing one in Unicode NFKC, ｺｽﾄ for コスト, is that one, as a retrieval
    names it)."""
    cur.execute("INSERT OR IGNORE INTO agents (name, created_at) VALUES (?, ?)", (name, iso(now)))
    current = get_agent(cur, name)
    assert current is not None
    merged = list(current.perspectives)
    seen = {unicodedata.normalize("NFKC", p) for p in merged}
    for p in perspectives:
        key = unicodedata.normalize("NFKC", p)
        if key not in seen:
            merged.append(p)
            seen.add(key)
    cur.execute(
        "UPDATE agents SET perspectives = ? WHERE name = ?",
        (json.dumps(merged, ensure_ascii=False), name),
    )
    return AgentRow(current.name, current.created_at, tuple(merged))


# -- turns ----------------------------------------------------------------------------------


def agent_episode_ids(cur: Any, agent: str) -> list[int]:
    """Every episode id of ``agent``."""
    return [int(r[0]) for r in cur.execute("SELECT id FROM episodes WHERE agent = ?", (agent,))]


def drop_agent(cur: Any, agent: str) -> int:
    """Delete the agent's row, and with it (foreign keys) its turns, sleeps, strength history
    and learned scorer; return how many turns went. Its episodes must be gone already."""
    turns = int(cur.execute("SELECT count(*) FROM turns WHERE agent = ?", (agent,)).fetchone()[0])
    cur.execute("DELETE FROM agents WHERE name = ?", (agent,))
    return turns
