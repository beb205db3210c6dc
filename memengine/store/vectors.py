"""The ``vec0`` vector table: creation for a dimension, writes, and filtered KNN."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..clock import ensure_aware
from ..errors import InvalidInput
from ..lazy_re import lazy_compile
from ..models import Episode, NewEpisode
from .filters import Filters
from .migrate import schema_sql

__all__ = [
    "CHUNK_SIZE",
    "MAX_K",
    "PARTITION_INDEX",
    "TIE_GROWTH",
    "TIE_MARGIN",
    "check_vectors",
    "chunk_size",
    "create_vector_table",
    "drop_vector_table",
    "ensure_partition_index",
    "filter_columns",
    "has_partition_index",
    "insert_vectors",
    "knn",
    "relayout_vector_table",
    "similarities",
]

MAX_K = 4096
"""The largest ``k`` a ``vec0`` KNN query takes."""

TIE_MARGIN = 4
"""Hits a ``vec0`` KNN asks for past its ``k``, to see whether the rows tied at the cut
(copies of one text) go on past it (:func:`knn`). Each costs about 0.4 ms at 100K rows
(a script, one agent of 512-d vectors: 82 ms at ``k`` 10, 90 ms at 30); a tie that goes on
costs another scan for each :data:`TIE_GROWTH` (at 100K rows of 256-d: 107 ms an ask of 14,
128 of 112, 137 of 896, 169 of 4,096, all on a loaded machine), so a tie past 896 rows
pays two scans more than a single jump to 4,096 would (four in all)."""

TIE_GROWTH = 8
"""How many times more hits each further ``vec0`` ask of a tie that goes on past the last
one asks for (:func:`knn`: 14, 112, 896, then 4,096 at ``k`` 10): a tie a few copies
long costs one small ask more, not the largest one."""

CHUNK_SIZE = 64
"""Rows per ``vec0`` chunk in a new vector table (``vec0``'s default is 1,024).

``vec0`` stores an agent's vectors in whole chunks, allocated full size when
the agent's first vector arrives: at 1,024 rows of 512 floats, every agent
took at least 2 MiB, and 1,000 agents of 20 episodes made a file 23.8 times
the size of the same episodes in one agent (``memengine bench``, agents
section). At 64 rows an agent's floor is 128 KiB; agents of 1,000 episodes
store as compactly as before, a ``vec0`` scan (the path of an agent's first
search in a process, or of one too big for the in-memory index) costs
10–20 % more, and loading an agent into the in-memory index costs less
(docs/benchmarks.md, session 19). 32 rows scanned 40 % slower still.
A file keeps the chunk size its vector table was made with;
:func:`relayout_vector_table` (``memengine optimize --vectors``) rewrites it."""

_CHUNK_OPTION = lazy_compile(r"chunk_size\s*=\s*(\d+)", re.IGNORECASE)
_VEC0_DEFAULT_CHUNK = 1024

PARTITION_INDEX = "episode_vectors_chunks_agent"
"""An index on ``vec0``'s chunk table by partition key (the agent).

``vec0`` finds the chunks of one partition with ``WHERE partition00 = ?`` on
a table it creates without an index on that column, so every scoped KNN
scans one row per chunk of *every* agent, each row holding the chunk's
8 KB rowid list. With 1,000 agents that is megabytes read per search; with
the index it is a lookup."""


def create_vector_table(cur: Any, dimension: int, chunk_size: int = CHUNK_SIZE) -> None:
    """Create the vector table and its triggers for ``dimension``, ``chunk_size`` rows to a
    chunk (inside the caller's transaction)."""
    from .migrate import _statements

    sql = schema_sql("vectors.sql").replace("{dimension}", str(dimension))
    for statement in _statements(sql.replace("{chunk_size}", str(chunk_size))):
        cur.execute(statement)
    ensure_partition_index(cur)


def chunk_size(cur: Any) -> int:
    """The rows per chunk of the file's vector table (``vec0``'s 1,024 when its definition
    names none)."""
    row = cur.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'episode_vectors'"
    ).fetchone()
    found = _CHUNK_OPTION.search(str(row[0])) if row is not None else None
    return int(found.group(1)) if found else _VEC0_DEFAULT_CHUNK


RELAYOUT_TABLE = "memengine_relayout_vectors"
"""Where :func:`relayout_vector_table` keeps the rows while it rewrites the table."""


def relayout_vector_table(
    cur: Any,
    dimension: int,
    size: int = CHUNK_SIZE,
    *,
    progress: Callable[[int, int], None] | None = None,
    batch: int = 2000,
) -> int:
    """Rewrite the vector table with ``size`` rows per chunk, copying every row as it is
    (vector and filter columns; nothing is re-embedded); return the rows copied.

    Runs inside the caller's write transaction: a failure part way leaves the
    old table in place. The rows go in agent by agent, so each agent's
    chunks fill in turn. The copy the rows wait in is a table of the file itself
    (:data:`RELAYOUT_TABLE`, dropped in the same transaction): the connections keep their
    temporary tables in memory, where it would take every vector at once.
    """
    cur.execute(f"DROP TABLE IF EXISTS main.{RELAYOUT_TABLE}")
    cur.execute(  # as stored (an ORDER BY here would sort every vector in memory)
        f"CREATE TABLE main.{RELAYOUT_TABLE} AS SELECT episode_id, agent, kind, sensitivity, "
        "status, occurred_ts, embedding FROM episode_vectors"
    )
    cur.execute(  # (its keys alone are sorted): read back in (agent, id) order, a page at a time
        f"CREATE INDEX main.{RELAYOUT_TABLE}_order ON {RELAYOUT_TABLE} (agent, episode_id)"
    )
    total = int(cur.execute(f"SELECT count(*) FROM main.{RELAYOUT_TABLE}").fetchone()[0])
    drop_vector_table(cur)
    create_vector_table(cur, dimension, size)
    done = 0
    last: tuple[str, int] = ("", -1)
    while True:
        part = cur.execute(
            "SELECT episode_id, agent, kind, sensitivity, status, occurred_ts, embedding "
            f"FROM main.{RELAYOUT_TABLE} WHERE (agent, episode_id) > (?, ?) "
            "ORDER BY agent, episode_id LIMIT ?",
            (*last, batch),
        ).fetchall()
        if not part:
            break
        last = (part[-1][1], int(part[-1][0]))
        cur.executemany(
            "INSERT INTO episode_vectors (episode_id, agent, kind, sensitivity, status, "
            "occurred_ts, embedding) VALUES (?, ?, ?, ?, ?, ?, ?)",
            part,
        )
        done += len(part)
        if progress:
            progress(done, total)
    cur.execute(f"DROP TABLE main.{RELAYOUT_TABLE}")
    return done


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


def check_vectors(
    embeddings: npt.NDArray[np.float32],
    dimension: int,
    ids: Sequence[int] | None = None,
    texts: Sequence[str] | None = None,
) -> None:
    """Refuse vectors that cannot be searched: another ``dimension``, NaN or infinite
    values, or no length (a zero vector has no cosine). The error names the first bad
    row: by its episode id when ``ids`` are given, else by the start of its text."""
    if embeddings.ndim != 2 or (len(embeddings) and embeddings.shape[1] != dimension):
        raise InvalidInput(
            f"vectors have shape {embeddings.shape}, the database expects {dimension} dimensions"
        )
    squares = np.einsum("ij,ij->i", embeddings, embeddings, dtype=np.float64)  # one pass
    bad = ~np.isfinite(squares) | (squares == 0)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        if ids is not None:
            what = f"episode {ids[row]}"
        elif texts is not None:
            what = f"the episode {texts[row][:40]!r}"
        else:
            what = f"row {row}"
        kind = "NaN or infinite values" if not np.isfinite(embeddings[row]).all() else "only zeros"
        raise InvalidInput(f"the vector of {what} holds {kind}: it cannot be searched")


def insert_vectors(
    cur: Any,
    ids: Sequence[int],
    rows: Sequence[tuple[str, str, int, str, int]],
    vectors: npt.NDArray[np.float32],
) -> None:
    """Insert one vector per id; ``rows`` holds (agent, kind, sensitivity, status, occurred_ts)."""
    block = np.ascontiguousarray(vectors, dtype=np.float32)  # (once: its rows are contiguous)
    cur.executemany(
        "INSERT INTO episode_vectors (episode_id, agent, kind, sensitivity, status, occurred_ts, "
        "embedding) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(i, *row, vec.tobytes()) for i, row, vec in zip(ids, rows, block, strict=True)],
    )


def knn(
    cur: Any, vector: npt.NDArray[np.float32], k: int, filters: Filters
) -> list[tuple[int, float]]:
    """The ``k`` nearest episodes to ``vector`` under ``filters``: (id, cosine distance),
    nearest first; hits of equal distance (the vectors of identical texts: a nightly "so
    tired") come the last stored first, and the ones kept at the cut are the last stored
    too, as the in-memory scan lists them (:func:`.vector_scan.top_k`): a process's first
    search, in ``vec0``, lists what its later ones list.

    ``vec0`` orders rows of equal distance its own way and keeps the first at
    its cut (older copies, the latest left out), so it is asked for
    :data:`TIE_MARGIN` more; when the rows at the ``k``-th distance fill those
    too, it is asked again for :data:`TIE_GROWTH` times as many, and so on up to
    :data:`MAX_K`, until a hit lies past that distance (a tie of a few dozen copies
    costs one small ask more, not one of 4,096). A query of no length (zero, NaN), tied
    with every row, is asked for :data:`MAX_K` at once. Past 4,096 rows at that one
    distance, which of them are kept is ``vec0``'s choice. Ties are equal
    distances: identical vectors give ``vec0`` the same float every time.
    """
    if k < 1:
        return []
    where, params = filters.sql()
    blob = np.ascontiguousarray(vector, dtype=np.float32).tobytes()
    length = float(np.linalg.norm(np.asarray(vector, dtype=np.float64)))
    # a query of no length (zero, NaN) has no cosine: every row is at one distance, 2.0
    ask = min(k + TIE_MARGIN, MAX_K) if 0 < length < math.inf else MAX_K
    hits = _knn(cur, blob, ask, where, params)
    while len(hits) == ask < MAX_K and hits[k - 1][1] == hits[-1][1]:  # the tie may go on
        ask = min(ask * TIE_GROWTH, MAX_K)
        hits = _knn(cur, blob, ask, where, params)
    hits.sort(key=lambda h: (h[1], -h[0]))
    return hits[:k]


def _knn(
    cur: Any, blob: bytes, k: int, where: str, params: Sequence[Any]
) -> list[tuple[int, float]]:
    """One ``vec0`` KNN query: the ``k`` nearest rows passing ``where``, in ``vec0``'s order."""
    rows = cur.execute(
        f"SELECT episode_id, distance FROM episode_vectors "
        f"WHERE embedding MATCH ? AND k = ? AND {where} ORDER BY distance",
        [blob, k, *params],
    ).fetchall()
    # a vector of no length has no cosine: vec0 says NULL, the farthest a cosine can be
    return [(int(r[0]), 2.0 if r[1] is None else float(r[1])) for r in rows]


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
        if row is not None and row[0] is not None:  # NULL: a zero vector of an older version
            out[i] = float(row[0])
    return out
