"""The consistency check behind ``memengine doctor``: SQLite's page check, every episode
row read back, then every episode against its vector, its vector filter columns, the
in-memory vector index and the full-text index."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import StoreError
from ..models import Episode
from . import episodes as ep_rows
from .connect import Connections
from .salvage import readable_batches
from .vec0_chunks import held_slots, vector_blob
from .vector_index import VectorIndex
from .vector_repair import missing_vector_ids, orphan_vector_ids

__all__ = [
    "FTS_NOT_CHECKED",
    "ConsistencyReport",
    "bad_vectors",
    "check_consistency",
    "fts_integrity",
    "hidden_vectors",
    "unreadable_episodes",
]


FTS_NOT_CHECKED = "not checked: the file is open read-only"
"""The report's ``fts_integrity`` when FTS5's own check could not run: it is a write."""


@dataclass(frozen=True)
class ConsistencyReport:
    """What the consistency check found; ``ok`` when every index agrees with the episodes."""

    episodes: int
    vectors: int
    fts_rows: int
    missing_vectors: list[int] = field(default_factory=list)
    orphan_vectors: list[int] = field(default_factory=list)
    stale_vector_filters: list[int] = field(default_factory=list)
    fts_integrity: str = "ok"
    stale_vector_index: list[int] = field(default_factory=list)
    chunk_index: str = "ok"
    sqlite_check: str = "ok"
    index_unchecked: bool = False
    """The in-memory vector index was not checked: other threads' writes moved it past
    every snapshot the check read (a check at rest checks it)."""
    hidden_vectors: list[int] = field(default_factory=list)
    """Vectors ``vec0`` holds but its chunk marks as empty, or under another id: a
    search through ``vec0`` would not see them."""
    bad_vectors: list[int] = field(default_factory=list)
    """Vectors that hold a NaN, an infinity or only zeros (a byte changed in the file, or a
    zero vector an older version stored): no search ranks them by meaning, and ``vec0``'s
    ranks a zero one first for every query (``memengine reembed`` remakes them)."""
    unreadable: list[int] = field(default_factory=list)
    """Episodes whose rows do not read back (text that is not UTF-8, JSON or a time that
    does not parse): a byte changed inside a row passes SQLite's page check."""

    @property
    def ok(self) -> bool:
        """True when nothing is missing, orphaned or stale."""
        return not (
            self.missing_vectors
            or self.orphan_vectors
            or self.stale_vector_filters
            or self.stale_vector_index
            or self.fts_integrity not in ("ok", FTS_NOT_CHECKED)
            or self.chunk_index != "ok"
            or self.sqlite_check != "ok"
            or self.hidden_vectors
            or self.bad_vectors
            or self.unreadable
        )


def check_consistency(
    connections: Connections, vector_index: VectorIndex, *, read_only: bool
) -> ConsistencyReport:
    """Check that every episode has its vector with current filter columns and FTS rows,
    and that `vec0`'s chunk table agrees with its agent index (SQLite's integrity check)."""
    # SQLite's own check of every page, table and index (a damaged file fails here)
    sqlite_check = connections.check_pages()
    if sqlite_check != "ok":
        return ConsistencyReport(0, 0, 0, sqlite_check=sqlite_check)
    with connections.read() as cur:
        n_ep = cur.execute("SELECT count(*) FROM episodes").fetchone()[0]
        n_vec = cur.execute("SELECT count(*) FROM episode_vectors").fetchone()[0]
        n_fts = cur.execute("SELECT count(*) FROM episodes_fts_docsize").fetchone()[0]
        missing = missing_vector_ids(cur, 100)
        orphans = orphan_vector_ids(cur, 100)
        stale = [
            r[0]
            for r in cur.execute(
                "SELECT e.id FROM episodes e JOIN episode_vectors v ON v.episode_id = e.id "
                "WHERE v.agent != e.agent OR v.kind != e.kind OR v.status != e.status "
                "OR v.sensitivity != e.sensitivity OR v.occurred_ts != e.occurred_ts LIMIT 100"
            )
        ]
        hidden = hidden_vectors(cur)
        bad = bad_vectors(cur)
        unreadable = unreadable_episodes(cur, connections.module.Error)
        # SQLite's own check of vec0's chunk table against its agent index
        chunk_index = "; ".join(
            str(r[0]) for r in cur.execute("PRAGMA integrity_check(episode_vectors_chunks)")
        )
    stale_index = _stale_index(connections, vector_index)
    integrity = FTS_NOT_CHECKED if read_only else fts_integrity(connections)
    if n_fts != n_ep and integrity in ("ok", FTS_NOT_CHECKED):
        integrity = f"full-text index has {n_fts} rows for {n_ep} episodes"
    return ConsistencyReport(
        episodes=n_ep,
        vectors=n_vec,
        fts_rows=n_fts,
        missing_vectors=missing,
        orphan_vectors=orphans,
        stale_vector_filters=stale,
        fts_integrity=integrity,
        stale_vector_index=stale_index or [],
        bad_vectors=bad,
        index_unchecked=stale_index is None,
        chunk_index=chunk_index,
        hidden_vectors=hidden,
        unreadable=unreadable,
    )


def unreadable_episodes(cur: Any, sqlite_error: type[Exception], limit: int = 100) -> list[int]:
    """The episodes (ids, the first ``limit``) whose rows do not read back as episodes, as
    an export or a search reads them (a salvage's batches: one that fails is split until
    the rows at fault are found)."""

    def fetch(ids: list[int]) -> tuple[list[Episode], list[int]]:
        try:
            found = ep_rows.fetch_episodes(cur, ids)
        except sqlite_error as exc:  # text that is no longer UTF-8: this row, as a salvage sees it
            raise StoreError(str(exc)) from exc
        return list(found.values()), [i for i in ids if i not in found]

    bad: list[int] = []
    ids = [int(r[0]) for r in cur.execute("SELECT id FROM episodes ORDER BY id").fetchall()]
    for _ in readable_batches(fetch, ids, bad):
        if len(bad) >= limit:
            break
    return bad[:limit]


def _stale_index(
    connections: Connections, vector_index: VectorIndex, tries: int = 5
) -> list[int] | None:
    """The in-memory index checked in a snapshot of its own, taken again while other
    threads' writes move the index past it (a busy server's check); None when every try
    was overtaken."""
    for _ in range(tries):
        with connections.read() as cur:
            stale = vector_index.stale_ids(cur)
        if stale is not None:
            return stale
    return None


def hidden_vectors(cur: Any, limit: int = 100) -> list[int]:
    """The vectors (episode ids) whose place in ``vec0``'s chunks does not hold them: the
    chunk's validity bit cleared, or its list of row ids naming another (``vec0``'s row
    index points there, so a lookup by id finds them, but a KNN scan of the chunk skips
    them)."""
    chunks = {
        int(cid): (bytes(valid), bytes(rowids))
        for cid, valid, rowids in cur.execute(
            "SELECT chunk_id, validity, rowids FROM episode_vectors_chunks"
        )
    }
    hidden: list[int] = []
    for rowid, chunk_id, offset in cur.execute(
        "SELECT rowid, chunk_id, chunk_offset FROM episode_vectors_rowids"
    ):
        valid, rowids = chunks.get(int(chunk_id), (b"", b""))
        at = int(offset)
        held = (
            at // 8 < len(valid)
            and valid[at // 8] >> (at % 8) & 1
            and rowids[8 * at : 8 * at + 8] == struct.pack("<q", int(rowid))
        )
        if not held:
            hidden.append(int(rowid))
            if len(hidden) >= limit:
                break
    return hidden


def bad_vectors(cur: Any, limit: int = 100) -> list[int]:
    """The vectors (episode ids) in ``vec0``'s chunks that hold a NaN, an infinity or only
    zeros: every vector stored now is checked finite and non-zero, so these were changed
    in the file since, or are a zero vector an older version stored (``vec0`` ranks one
    first for every query). One chunk's blob at a time."""
    bad: list[int] = []
    for chunk_id, valid, rowids in cur.execute(
        "SELECT chunk_id, validity, rowids FROM episode_vectors_chunks"
    ).fetchall():
        blob = vector_blob(cur, chunk_id)
        size = len(rowids) // 8
        if blob is None or not size or len(blob) % (4 * size):
            continue  # (a layout this check does not know: the chunk index check reports it)
        vecs = np.frombuffer(blob, dtype="<f4").reshape(size, -1)
        held = held_slots(valid, size)
        with np.errstate(invalid="ignore", over="ignore"):
            broken = ~np.isfinite(vecs).all(axis=1) | ~vecs.any(axis=1)
        ids = np.frombuffer(bytes(rowids), dtype="<i8")
        bad.extend(int(i) for i in ids[held & broken])
        if len(bad) >= limit:
            break
    return sorted(bad)[:limit]


def fts_integrity(connections: Connections) -> str:
    """FTS5's check of the full-text index against the episodes: "ok" or its error
    (SQLite's own words: a finding of the consistency check, not a damaged file).

    The check is an ``INSERT`` command to FTS5 and takes the write lock, so
    it waits its turn like any writer.
    """
    module = connections.module
    with connections.write() as cur:
        try:
            cur.execute(
                "INSERT INTO episodes_fts (episodes_fts, rank) VALUES ('integrity-check', 1)"
            )
        except module.DatabaseError as exc:
            return str(exc)
    return "ok"
