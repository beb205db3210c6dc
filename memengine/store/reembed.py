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
goes on from there, provided the model behind that id still gives the
staged vectors' probe vector (``meta.reembed_probe``, the vector of
:data:`memengine.embed.probe.PROBE_TEXT`); a re-embed to another target, or
by a model changed behind the same id, starts the staging anew. A re-embed
that finds the staging taken over by another one started meanwhile (to
another target) stops with a :class:`.StoreError` rather than undo its work.
Deleting episodes drops their staged vectors in the same transaction.
An episode added, replaced or re-imported after its vector was staged is
embedded again in the swap (its digest no longer matches). The staging
table is created when a re-embed starts and dropped when it ends; it is
no part of the schema's migrations.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import StoreError
from . import meta

__all__ = [
    "TABLE",
    "claim",
    "clear",
    "digest",
    "drop_deleted",
    "prepare",
    "stage",
    "staged",
    "staged_count",
]

TABLE = "reembed_staging"
_TARGET = "reembed_target"
_PROBE = "reembed_probe"


def digest(text: str) -> bytes:
    """A short digest of the text a vector is made from."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()


SameModel = Callable[[npt.NDArray[np.float32], npt.NDArray[np.float32]], bool]
"""Whether two probe vectors of the same length come from one model (the embedder layer's
rule, :func:`memengine.embed.probe.same_model`, passed down)."""


def _exists(cur: Any) -> bool:
    return (
        cur.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)
        ).fetchone()
        is not None
    )


def prepare(cur: Any, target: str, probe: npt.NDArray[np.float32], same_model: SameModel) -> bool:
    """Make the staging table for ``target`` (``"<embedder id>:<dimension>"``), made by the
    model whose vector of the probe text is ``probe``; vectors staged for another target,
    or by another model behind the same id (``same_model`` of the staged probe and
    ``probe`` is false), are dropped. True when staged vectors are kept (inside the
    caller's write transaction)."""
    cur.execute(
        f"CREATE TABLE IF NOT EXISTS {TABLE} "
        "(id INTEGER PRIMARY KEY, digest BLOB NOT NULL, vector BLOB NOT NULL)"
    )
    if meta.get(cur, _TARGET) == target:
        kept = meta.text_vector(meta.get(cur, _PROBE))
        if kept is not None and kept.shape == probe.shape and same_model(kept, probe):
            return True
    cur.execute(f"DELETE FROM {TABLE}")
    meta.put(cur, **{_TARGET: target, _PROBE: meta.vector_text(probe)})
    return False


def claim(cur: Any, target: str) -> None:
    """Check that the staging is still ``target``'s (a :class:`.StoreError` when another
    re-embed started anew meanwhile; its staged vectors are left alone)."""
    now = meta.get(cur, _TARGET)
    if now != target or not _exists(cur):
        other = f"to {shown(now)}" if now else "that has finished"
        raise StoreError(
            f"another re-embed, {other}, took over the staged vectors while this one "
            f"to {shown(target)} ran: this one stops, and the file keeps what the other makes"
        )


def shown(target: str) -> str:
    """``"<id>:<dimension>"`` as words: the id (which often ends in the dimension)."""
    name, _, dims = target.rpartition(":")
    return name if name.endswith(f":{dims}") else f"{name} ({dims} dimensions)"


def drop_deleted(cur: Any, ids: Sequence[int] | None = None) -> int:
    """Drop the staged vectors of these deleted episodes (None: of every episode gone), so
    that nothing of them stays when they are scrubbed or their agent forgotten; inside the
    caller's write transaction."""
    if not _exists(cur):
        return 0
    if ids is None:
        sql = f"DELETE FROM {TABLE} WHERE id NOT IN (SELECT id FROM episodes)"
        return int(cur.execute(sql).rowcount)
    dropped = 0
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        marks = ",".join("?" * len(part))
        dropped += int(cur.execute(f"DELETE FROM {TABLE} WHERE id IN ({marks})", part).rowcount)
    return dropped


def staged_count(cur: Any) -> tuple[str, int] | None:
    """The target of a re-embed that stopped part way and how many vectors it staged, or
    None when there is none."""
    target = meta.get(cur, _TARGET)
    if target is None or not _exists(cur):
        return None
    return target, int(cur.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0])


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


def unstaged(cur: Any, limit: int) -> list[int]:
    """Up to ``limit`` ids of episodes with no staged vector (added since the re-embed
    listed them), ascending."""
    rows = cur.execute(
        f"SELECT id FROM episodes WHERE id NOT IN (SELECT id FROM {TABLE}) ORDER BY id LIMIT ?",
        (limit,),
    )
    return [int(r[0]) for r in rows]


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
    cur.execute("DELETE FROM meta WHERE key IN (?, ?)", (_TARGET, _PROBE))
