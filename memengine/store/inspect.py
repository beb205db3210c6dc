"""Looking inside the store for measurements: how many rows an FTS5 expression matches,
and which plan SQLite picks for the store's BM25 query. Read-only; used by the bench."""

from __future__ import annotations

from typing import Any

from .database import Store
from .filters import Filters

__all__ = ["bm25_plan", "match_count"]


def match_count(store: Store, expression: str, agent: str | None = None) -> int:
    """How many rows an FTS5 expression matches (in all agents, or one)."""
    with store.connections.read() as cur:
        if agent is None:
            sql = "SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?"
            return int(cur.execute(sql, [expression]).fetchone()[0])
        sql = (
            "SELECT count(*) FROM episodes_fts JOIN episodes e ON e.id = episodes_fts.rowid "
            "WHERE episodes_fts MATCH ? AND e.agent = ?"
        )
        return int(cur.execute(sql, [expression, agent]).fetchone()[0])


def bm25_plan(store: Store, expression: str, filters: Filters, k: int) -> dict[str, Any]:
    """The query plan SQLite picks for the store's BM25 query (top ``k``) under ``filters``.

    The SQL is captured as the store runs it (so it follows any change to
    the store), then explained. ``fts_first`` is False when SQLite walks the
    episodes index and evaluates the MATCH once per row in the window.
    """
    conn = store.connections.get().driver_connection
    captured: list[str] = []
    conn.set_trace_callback(captured.append)
    try:
        store.bm25(expression, k, filters)
    finally:
        conn.set_trace_callback(None)
    sql = next((s for s in captured if "MATCH" in s and "bm25" in s), "")
    if not sql:
        return {"fts_first": None, "plan": []}
    with store.connections.read() as cur:
        rows = cur.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
    plan = [str(r[-1]) for r in rows]
    first = next((p for p in plan if p.startswith(("SCAN", "SEARCH"))), "")
    return {"fts_first": "episodes_fts" in first, "plan": plan}
