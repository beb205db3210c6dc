"""The vectors a re-embed has made so far, kept until it swaps them in.

A re-embed (:meth:`.Store.replace_embedder`) embeds every episode before
it replaces the vector table. The embedding is the long part (minutes for
a large file, longer through a remote model), so it runs outside the write
transaction: each batch's vectors are committed to a staging table,
``reembed_staging``, with a digest of the text they were made from. Only
the swap itself (drop the table, insert every staged vector, record the
new embedder) is one transaction, so other writers wait seconds, not
minutes, and readers see the old vectors until it commits.

A re-embed that stops part way (an error, Ctrl-C, a crash) leaves the file
searchable with its old vectors and keeps the staged ones: the next
re-embed to the same embedder and dimension (``meta.reembed_target``)
goes on from there. A re-embed to another one starts the staging anew.
An episode added, replaced or re-imported after its vector was staged is
embedded again in the swap (its digest no longer matches). The staging
table is created when a re-embed starts and dropped when it ends; it is
no part of the schema's migrations.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["TABLE", "clear", "digest", "prepare", "stage", "staged", "staged_count"]

TABLE = "reembed_staging"
_TARGET = "reembed_target"


def digest(text: str) -> bytes:
    """A short digest of the text a vector is made from."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def prepare(cur: Any, target: str) -> None:
    """Make the staging table for ``target`` (``"<embedder id>:<dimension>"``); vectors
    staged for another target are dropped (inside the caller's write transaction)."""
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {TABLE} "
        "(id INTEGER PRIMARY KEY, digest BLOB NOT NULL, vector BLOB NOT NULL)"
    )
    row = cur.execute("SELECT value FROM meta WHERE key = ?", (_TARGET,)).fetchone()
    if row is None or row[0] != target:
        cur.execute(f"DELETE FROM {TABLE}")
        cur.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (_TARGET, target),
        )


def staged_count(cur: Any) -> tuple[str, int] | None:
    """The target of a re-embed that stopped part way and how many vectors it staged, or
    None when there is none."""
    row = cur.execute("SELECT value FROM meta WHERE key = ?", (_TARGET,)).fetchone()
    exists = cur.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
    ).fetchone()
    if row is None or exists is None:
        return None
    return str(row[0]), int(cur.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])


def staged(cur: Any, ids: Sequence[int]) -> dict[int, tuple[bytes, bytes]]:
    """The staged ``(digest, vector bytes)`` of these ids (ids with none are absent)."""
    found: dict[int, tuple[bytes, bytes]] = {}
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        marks = ",".join("?" * len(part))
        for id_, dig, vec in cur.execute(
            f"SELECT id, digest, vector FROM {TABLE} WHERE id IN ({marks})", part
        ):
            found[int(id_)] = (bytes(dig), bytes(vec))
    return found


def stage(
    cur: Any, ids: Sequence[int], digests: Sequence[bytes], vectors: npt.NDArray[np.float32]
) -> None:
    """Keep one batch's vectors (inside the caller's write transaction)."""
    rows = [
        (id_, dig, np.ascontiguousarray(vec, dtype=np.float32).tobytes())
        for id_, dig, vec in zip(ids, digests, vectors, strict=True)
    ]
    cur.executemany(f"INSERT OR REPLACE INTO {TABLE} (id, digest, vector) VALUES (?, ?, ?)", rows)


def clear(cur: Any) -> None:
    """Drop the staging table and its target (the re-embed is done)."""
    cur.execute(f"DROP TABLE IF EXISTS {TABLE}")
    cur.execute("DELETE FROM meta WHERE key = ?", (_TARGET,))
