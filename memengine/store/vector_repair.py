"""Mending the vector table where it lost step with the episodes: an episode without its
vector (a search by meaning never finds it) and a vector of no episode.

A re-embed would mend both, but it embeds every episode (minutes at 100K); these
helpers list only the rows at fault, so the file's own embedder remakes just those.
The writes log each id in ``vector_log`` as the episodes' triggers do for an add or a
delete: the vector table has no triggers of its own, and every process's in-memory
index learns of a change only from that log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..models import Episode
from .vectors import filter_columns, insert_vectors

__all__ = ["drop_orphans", "insert_missing", "missing_vector_ids", "orphan_vector_ids"]


def missing_vector_ids(cur: Any, limit: int = -1) -> list[int]:
    """The episodes (ids, ascending) that have no vector, the first ``limit`` of them (all:
    -1; the consistency check's ``missing_vectors`` reads a hundred)."""
    return _ids(
        cur,
        "SELECT e.id FROM episodes e LEFT JOIN episode_vectors v "
        "ON v.episode_id = e.id WHERE v.episode_id IS NULL ORDER BY e.id LIMIT ?",
        limit,
    )


def orphan_vector_ids(cur: Any, limit: int = -1) -> list[int]:
    """The vectors (episode ids, ascending) whose episode is gone, the first ``limit`` of
    them (all: -1; the consistency check's ``orphan_vectors`` reads a hundred)."""
    return _ids(
        cur,
        "SELECT v.episode_id FROM episode_vectors v LEFT JOIN episodes e "
        "ON e.id = v.episode_id WHERE e.id IS NULL ORDER BY v.episode_id LIMIT ?",
        limit,
    )


def _ids(cur: Any, sql: str, limit: int) -> list[int]:
    """The ids the one-column query ``sql`` selects, its ``LIMIT`` ``limit``."""
    return [int(r[0]) for r in cur.execute(sql, (limit,))]


def insert_missing(
    cur: Any, episodes: Sequence[Episode], embeddings: npt.NDArray[np.float32]
) -> None:
    """Store the vectors of ``episodes`` (which have none) with their filter columns, and
    log them (inside the caller's write transaction)."""
    insert_vectors(cur, [e.id for e in episodes], [filter_columns(e) for e in episodes], embeddings)
    _log(cur, [(e.id, e.agent) for e in episodes])


def drop_orphans(cur: Any, ids: Sequence[int]) -> int:
    """Delete the vectors of ``ids`` (of no episode) and log them under the agent each was
    stored for (inside the caller's write transaction); return how many went."""
    gone: list[tuple[int, str]] = []
    for i in ids:  # point lookups and deletes by key: vec0 has no IN plan
        row = cur.execute("SELECT agent FROM episode_vectors WHERE episode_id = ?", (i,)).fetchone()
        if row is not None:
            cur.execute("DELETE FROM episode_vectors WHERE episode_id = ?", (i,))
            gone.append((i, str(row[0])))
    _log(cur, gone)
    return len(gone)


def _log(cur: Any, rows: Sequence[tuple[int, str]]) -> None:
    """Tell every process's vector index that these (episode id, agent) vectors changed."""
    cur.executemany("INSERT INTO vector_log (episode_id, agent) VALUES (?, ?)", rows)
