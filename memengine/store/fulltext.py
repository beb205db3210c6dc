"""FTS5 search: safe query building from user text, and BM25 ranking under filters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .filters import Filters

__all__ = ["bm25", "match_expression", "quote_term"]


def quote_term(term: str) -> str:
    """One term as an FTS5 string literal: operators, quotes and symbols lose all meaning."""
    return '"' + term.replace('"', '""') + '"'


def match_expression(terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression that ORs the quoted terms, or None when there are none."""
    quoted = [quote_term(t) for t in terms if t.strip()]
    return " OR ".join(quoted) if quoted else None


def bm25(
    cur: Any, expression: str, k: int, filters: Filters, *, context_weight: float = 0.4
) -> list[tuple[int, float]]:
    """The ``k`` best BM25 matches of ``expression`` under ``filters``: (id, score), best first.

    The episode's own words weigh 1, its neighbours' words ``context_weight``.
    Scores are returned positive (FTS5's ``bm25()`` is negative, lower is better).
    """
    w = f"bm25(episodes_fts, 1.0, {float(context_weight)!r})"
    where, params = filters.sql("e.")
    rows = cur.execute(
        # CROSS JOIN keeps FTS5 in the outer loop: without it SQLite may scan the
        # agent's episodes and run the MATCH once per row (100× slower).
        f"SELECT e.id, -{w} AS score FROM episodes_fts "
        "CROSS JOIN episodes e ON e.id = episodes_fts.rowid "
        f"WHERE episodes_fts MATCH ? AND {where} ORDER BY {w} LIMIT ?",
        [expression, *params, k],
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]
