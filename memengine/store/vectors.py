"""The ``vec0`` vector table: creation for a dimension, writes, and filtered KNN."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..clock import ensure_aware
from ..models import Episode, NewEpisode
from .filters import Filters
from .migrate import schema_sql

__all__ = [
    "PARTITION_INDEX",
    "create_vector_table",
    "drop_vector_table",
    "ensure_partition_index",
    "filter_columns",
    "has_partition_index",
    "insert_vectors",
    "knn",
    "similarities",
]

PARTITION_INDEX = "episode_vectors_chunks_agent"
"""An index on ``vec0``'s chunk table by partition key (the agent).

``vec0`` finds the chunks of one partition with ``WHERE partition00 = ?`` on
a table it creates without an index on that column, so every scoped KNN
scans one row per chunk of *every* agent, each row holding the chunk's
8 KB rowid list. With 1,000 agents that is megabytes read per search; with
the index it is a lookup."""


def create_vector_table(cur: Any, dimension: int) -> None:
    """Create the vector table and its triggers for ``dimension`` (inside the caller's transaction)."""
    from .migrate import _statements

    for statement in _statements(schema_sql("vectors.sql").replace("{dimension}", str(dimension))):
        cur.execute(statement)
    ensure_partition_index(cur)


def has_partition_index(cur: Any) -> bool:
    """Whether :data:`PARTITION_INDEX` exists."""
    row = cur.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (PARTITION_INDEX,)
    ).fetchone()
    return row is not None


def ensure_partition_index(cur: Any) -> bool:
    """Create :data:`PARTITION_INDEX` when it is missing (inside the caller's write
    transaction); True when created.

    Only the chunk table layout of the ``vec0`` versions this was measured with
    (a ``partition00`` column) gets it; any other layout is left as it is.
    """
    if has_partition_index(cur):
        return False
    columns = {str(r[1]) for r in cur.execute("PRAGMA table_info(episode_vectors_chunks)")}
    if "partition00" not in columns:
        return False
    cur.execute(f"CREATE INDEX {PARTITION_INDEX} ON episode_vectors_chunks (partition00)")
    return True


def drop_vector_table(cur: Any) -> None:
    """Drop the vector table and its triggers (before a re-embed with another dimension)."""
    cur.execute("DROP TRIGGER IF EXISTS episode_vectors_filters")
    cur.execute("DROP TRIGGER IF EXISTS episode_vectors_delete")
    cur.execute("DROP TABLE IF EXISTS episode_vectors")


def filter_columns(episode: NewEpisode | Episode) -> tuple[str, str, int, str, int]:
    """The columns ``vec0`` keeps beside an episode's vector: agent, kind, sensitivity,
    status and the occurrence time (epoch seconds)."""
    occurred = int(ensure_aware(episode.occurred_at).timestamp())
    return (episode.agent, episode.kind.value, episode.sensitivity, episode.status, occurred)


def insert_vectors(
    cur: Any,
    ids: Sequence[int],
    rows: Sequence[tuple[str, str, int, str, int]],
    vectors: npt.NDArray[np.float32],
) -> None:
    """Insert one vector per id; ``rows`` holds (agent, kind, sensitivity, status, occurred_ts)."""
    cur.executemany(
        "INSERT INTO episode_vectors (episode_id, agent, kind, sensitivity, status, occurred_ts, "
        "embedding) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (i, *row, np.ascontiguousarray(vec, dtype=np.float32).tobytes())
            for i, row, vec in zip(ids, rows, vectors, strict=True)
        ],
    )


def knn(
    cur: Any, vector: npt.NDArray[np.float32], k: int, filters: Filters
) -> list[tuple[int, float]]:
    """The ``k`` nearest episodes to ``vector`` under ``filters``: (id, cosine distance), nearest first."""
    where, params = filters.sql()
    rows = cur.execute(
        f"SELECT episode_id, distance FROM episode_vectors "
        f"WHERE embedding MATCH ? AND k = ? AND {where} ORDER BY distance",
        [np.ascontiguousarray(vector, dtype=np.float32).tobytes(), k, *params],
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def similarities(cur: Any, vector: npt.NDArray[np.float32], ids: Sequence[int]) -> dict[int, float]:
    """Exact cosine similarity of ``vector`` to each stored episode in ``ids``."""
    blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
    out: dict[int, float] = {}
    for i in ids:  # point lookups by primary key: vec0 has no IN plan
        row = cur.execute(
            "SELECT 1 - vec_distance_cosine(embedding, ?) FROM episode_vectors "
            "WHERE episode_id = ?",
            (blob, i),
        ).fetchone()
        if row is not None:
            out[i] = float(row[0])
    return out
