"""Index maintenance after bulk writes: merge the full-text index into one segment.

FTS5 writes a new segment for every statement that adds rows and merges
them in the background only part of the way (``automerge``): a file built
by many batches keeps a dozen or more segments, and every term lookup
then reads each of them (one b-tree probe per segment, cold or warm).
``optimize`` merges them all into one. It rewrites the whole full-text
index, so it belongs after a bulk load (``Memory.add_many`` of many
episodes runs it), not after each turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

__all__ = ["OptimizeReport", "fts_segments", "merge_fulltext"]


@dataclass(frozen=True)
class OptimizeReport:
    """What :meth:`Store.optimize` did: full-text segments before and after, and its seconds."""

    segments_before: int
    segments_after: int
    seconds: float


def fts_segments(cur: Any) -> int:
    """The number of segments in the full-text index (a term lookup probes each one)."""
    return int(cur.execute("SELECT count(DISTINCT segid) FROM episodes_fts_idx").fetchone()[0])


def merge_fulltext(cur: Any) -> OptimizeReport:
    """Merge every full-text segment into one (inside the caller's write transaction)."""
    t0 = time.perf_counter()
    before = fts_segments(cur)
    if before > 1:
        cur.execute("INSERT INTO episodes_fts (episodes_fts) VALUES ('optimize')")
    after = fts_segments(cur)
    return OptimizeReport(before, after, round(time.perf_counter() - t0, 3))
