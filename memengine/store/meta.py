"""The ``meta`` table's key/value rows, and vectors kept there as text.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["bump", "embedder", "everything", "get", "put", "text_vector", "vector_text"]


def get(cur: Any, key: str) -> str | None:
    """The value of ``key``, or None."""
    row = cur.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def everything(cur: Any) -> dict[str, str]:
    """Every key and its value."""
    return {str(k): str(v) for k, v in cur.execute("SELECT key, value FROM meta")}


def embedder(cur: Any) -> tuple[str | None, int]:
    """The file's embedder id and dimension as recorded now (None and 0 before the first)."""
    rows = dict(
        cur.execute("SELECT key, value FROM meta WHERE key IN ('embedder_id', 'dimension')")
    )
    return rows.get("embedder_id"), int(rows.get("dimension") or 0)


def put(cur: Any, **values: str) -> None:
    """Set these keys (inserted or replaced)."""
    cur.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        list(values.items()),
    )


def drop(cur: Any, key: str, *, value: str | None = None) -> None:
    """Remove the key ``key`` (only while it holds ``value``, when given; nothing when
    absent)."""
    if value is None:
        cur.execute("DELETE FROM meta WHERE key = ?", (key,))
    else:
        cur.execute("DELETE FROM meta WHERE key = ? AND value = ?", (key, value))


def bump(cur: Any, key: str) -> None:
    """Add one to the counter ``key`` (0 when absent)."""
    cur.execute(
        "INSERT INTO meta (key, value) VALUES (?, '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (key,),
    )


def vector_text(vector: npt.ArrayLike) -> str:
    """A float32 vector as text (base64 of its bytes)."""
    return base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode("ascii")


def text_vector(text: str | None) -> npt.NDArray[np.float32] | None:
    """The vector :func:`vector_text` wrote, or None for text that is not one."""
    if not text:
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) % 4:
        return None
    return np.frombuffer(raw, dtype=np.float32).copy()
