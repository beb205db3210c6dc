"""Reading an agent's rows straight from ``vec0``'s shadow tables (sqlite-vec 0.1.x layout).

A chunk of ``vec0`` holds its vectors as one blob, and each filter column as
one blob too (8 bytes per integer, a 16-byte inline view per text), so an
agent is read with a few blob lookups per chunk instead of a row-by-row scan.
Every decoder returns None when a blob is not in the layout it knows; the
caller then reads through ``vec0`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "STATUS",
    "Chunk",
    "chunk_blobs",
    "chunk_heads",
    "chunk_rows",
    "held_slots",
    "valid_rows",
    "vector_blob",
]

STATUS = {"active": 0, "archived": 1}
"""The small integer code of each episode status the index tells apart (others: 2)."""

_BLOBS = [
    f"SELECT {col} FROM episode_vectors_{table} WHERE rowid = ?"
    for table, col in (
        ("vector_chunks00", "vectors"),
        ("metadatachunks00", "data"),  # kind
        ("metadatachunks01", "data"),  # sensitivity
        ("metadatachunks02", "data"),  # status
        ("metadatachunks03", "data"),  # occurred_ts
    )
]
"""One blob of a vec0 chunk each, looked up by the chunk's id (a join would scan these
tables: their key column has no type affinity, so SQLite cannot use its index there)."""


@dataclass(frozen=True)
class Chunk:
    """The valid rows of one vec0 chunk: ids, raw vectors and filter columns.

    ``kind`` holds indexes into ``kinds`` (the distinct kind names of the chunk).
    """

    ids: npt.NDArray[np.int64]
    vecs: npt.NDArray[np.float32]
    kinds: list[str]
    kind: npt.NDArray[np.intp]
    sens: npt.NDArray[np.int64]
    status: npt.NDArray[np.int8]
    ts: npt.NDArray[np.int64]


_TEXT_VIEW = np.dtype([("len", "<i4"), ("data", "S12")])
"""vec0's inline view of a TEXT metadata value: its length and first 12 bytes."""


def _texts(
    blob: bytes, size: int, keep: npt.NDArray[np.bool_]
) -> tuple[list[str], npt.NDArray[np.intp]] | None:
    """Decode the ``keep`` rows of a TEXT metadata chunk: the distinct values and each
    row's index into them; None when a value is longer than the inline view (vec0
    keeps those elsewhere) or the blob's size is off."""
    if len(blob) != size * _TEXT_VIEW.itemsize:
        return None
    view = np.frombuffer(blob, dtype=_TEXT_VIEW)[keep]
    if ((view["len"] > 12) | (view["len"] < 0)).any():
        return None
    uniq, index = np.unique(view, return_inverse=True)  # distinct (length, bytes) pairs
    # numpy drops trailing NUL bytes; the stored length says how many the value has
    texts = [
        bytes(u["data"]).ljust(12, b"\0")[: int(u["len"])].decode("utf-8", "replace") for u in uniq
    ]
    return texts, index.reshape(-1)


def _ints(blob: bytes, size: int) -> npt.NDArray[np.int64] | None:
    """Decode an INTEGER metadata chunk (8 bytes per row), or None if the size is off."""
    if len(blob) != size * 8:
        return None
    return np.frombuffer(blob, dtype="<i8")


def held_slots(validity: bytes, size: int) -> npt.NDArray[np.bool_]:
    """Which of a vec0 chunk's ``size`` row slots are in use (its validity bits, one per
    slot; a slot past the bits is not)."""
    bits = np.unpackbits(np.frombuffer(bytes(validity), dtype=np.uint8), bitorder="little")
    held = np.zeros(size, dtype=bool)
    held[: min(size, bits.size)] = bits[:size].astype(bool)
    return held


def valid_rows(validity: bytes, rowids: bytes) -> int:
    """How many rows of a vec0 chunk are in use (its validity bits, one per row slot)."""
    return int(np.count_nonzero(held_slots(validity, len(rowids) // 8)))


def chunk_rows(row: Sequence[Any], dimension: int) -> Chunk | None:
    """The valid rows of one vec0 chunk read as (validity, rowids, vectors, kind,
    sensitivity, status, occurred_ts) blobs; None when a blob is not in the expected layout."""
    validity, rowids, vectors, kind_blob, sens_blob, status_blob, ts_blob = row
    ids = np.frombuffer(rowids, dtype="<i8")
    size = len(ids)
    if len(vectors) != size * dimension * 4 or len(validity) * 8 < size:
        return None
    keep = held_slots(validity, size)
    vecs = np.frombuffer(vectors, dtype="<f4").reshape(size, dimension)
    kinds = _texts(kind_blob, size, keep)
    statuses = _texts(status_blob, size, keep)
    sens = _ints(sens_blob, size)
    ts = _ints(ts_blob, size)
    if kinds is None or statuses is None or sens is None or ts is None:
        return None
    codes = [STATUS.get(s) for s in statuses[0]]
    if None in codes:
        return None  # a status this index has no code for
    status = np.asarray(codes, np.int8)[statuses[1]]
    if keep.all():  # read-only views on the blobs: copied once, into the matrix
        return Chunk(ids, vecs, kinds[0], kinds[1], sens, status, ts)
    return Chunk(ids[keep], vecs[keep], kinds[0], kinds[1], sens[keep], status, ts[keep])


def chunk_heads(cur: Any, agent: str) -> list[tuple[int, bytes, bytes]]:
    """The agent's chunks: (chunk id, validity bits, row ids blob) each."""
    rows: list[tuple[int, bytes, bytes]] = cur.execute(
        "SELECT chunk_id, validity, rowids FROM episode_vectors_chunks WHERE partition00 = ?",
        (agent,),
    ).fetchall()
    return rows


def vector_blob(cur: Any, chunk_id: int) -> bytes | None:
    """One chunk's vectors blob, or None when the chunk has none."""
    row = cur.execute(_BLOBS[0], (chunk_id,)).fetchone()
    return None if row is None else bytes(row[0])


def chunk_blobs(cur: Any, chunk_id: int) -> list[bytes]:
    """One chunk's vectors, kind, sensitivity, status and time blobs (TypeError: one is missing)."""
    return [cur.execute(sql, (chunk_id,)).fetchone()[0] for sql in _BLOBS]
