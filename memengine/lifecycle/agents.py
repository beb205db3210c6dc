"""Agents and their perspectives, and read-only views of the life of memories."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import NotFound
from ..models import Episode
from ..store import lifecycle as store_lc
from ..store.database import Store
from ..store.episodes import fetch_episodes
from ..store.lifecycle import AgentRow
from ..text import quoted_name

__all__ = [
    "AgentRow",
    "MemoryLife",
    "create_agent",
    "has_agent",
    "known_agent",
    "list_agents",
    "memory_life",
    "never_used",
    "principles",
]


@dataclass(frozen=True)
class MemoryLife:
    """One memory's life-cycle fields, with its strength and learnings per perspective."""

    episode: Episode
    strength_by_perspective: dict[str, float]
    learnings: dict[str, list[str]]


def create_agent(store: Store, name: str, perspectives: Sequence[str], now: datetime) -> AgentRow:
    """Create an agent, or add perspectives to an existing one. The names are checked by
    the caller (:func:`memengine.arguments.agent_name`); perspectives lose outer spaces."""
    clean = [p.strip() for p in perspectives]
    with store.connections.write() as cur:
        return store_lc.upsert_agent(cur, name, clean, now)


def has_agent(store: Store, name: str) -> bool:
    """Whether the file knows an agent called ``name`` (it wrote, or was created, there)."""
    with store.connections.read() as cur:
        return store_lc.get_agent(cur, name) is not None


def known_agent(cur: Any, name: str) -> None:
    """NotFound when the file knows no agent ``name``, for a call on all of an agent's
    memories (sleep, training, plot); the message names no other agent (a server may pass
    it on to a user)."""
    if store_lc.get_agent(cur, name) is None:
        raise NotFound(f"no agent named {quoted_name(name)}")


def list_agents(store: Store) -> list[AgentRow]:
    """Every agent with its perspectives."""
    with store.connections.read() as cur:
        return store_lc.list_agents(cur)


def never_used(store: Store, agent: str, min_candidates: int) -> list[Episode]:
    """Memories retrieved more than ``min_candidates`` times that were never used."""
    with store.connections.read() as cur:
        return store_lc.never_used(cur, agent, min_candidates)


def principles(store: Store, agent: str) -> list[Episode]:
    """The agent's principles, oldest first (one an earlier version archived too)."""
    with store.connections.read() as cur:
        return store_lc.principles(cur, agent)


def memory_life(store: Store, episode_id: int) -> MemoryLife:
    """The life-cycle view of one memory (NotFound if absent)."""
    with store.connections.read() as cur:
        found = fetch_episodes(cur, [episode_id])
        if episode_id not in found:
            raise NotFound(f"no episode with id {episode_id}")
        strengths = store_lc.perspective_strengths(cur, [episode_id]).get(episode_id, {})
        notes = store_lc.learnings(cur, episode_id)
    return MemoryLife(found[episode_id], strengths, notes)
