"""The ``meta`` table's key/value rows, and vectors kept there as text.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

import base64
import binascii
from typing import Any

import numpy as np
import numpy.typing as npt

from .connect import damaged_error, file_of

__all__ = ["bump", "embedder", "everything", "get", "put", "text_vector", "vector_text"]


def _sound(rows: list[Any], cur: Any) -> list[Any]:
    """The meta rows as read, refused when one holds a NULL, which memengine never writes:
    a damaged page can read so (through a memory-mapped file, cells past the page's end
    read as NULLs, not as "malformed"), and taken as text it said "records no embedder".
    ``cur`` names the file in the error."""
    if any(value is None for row in rows for value in row):
        raise damaged_error(
            "the settings (meta) table reads keys or values that are NULL", file_of(cur)
        )
    return rows


def get(cur: Any, key: str) -> str | None:
    """The value of ``key``, or None."""
    rows = _sound(cur.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall(), cur)
    return str(rows[0][0]) if rows else None


def everything(cur: Any) -> dict[str, str]:
    """Every key and its value."""
    return {
        str(k): str(v)
        for k, v in _sound(cur.execute("SELECT key, value FROM meta").fetchall(), cur)
    }


def embedder(cur: Any) -> tuple[str | None, int]:
    """The file's embedder id and dimension as recorded now (None and 0 before the first)."""
    rows = dict(
        _sound(
            cur.execute(
                "SELECT key, value FROM meta WHERE key IN ('embedder_id', 'dimension')"
            ).fetchall(),
            cur,
        )
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
