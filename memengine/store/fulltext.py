"""FTS5 search: safe query building from user text, and BM25 ranking under filters."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..lazy_re import lazy_compile
from ..text import thousands
from .filters import Filters

__all__ = [
    "agent_token",
    "bm25",
    "match_expression",
    "own_matches",
    "quote_term",
    "scoped",
    "term_expression",
]

_PLAIN_NUMBER = lazy_compile(r"[1-9][0-9]{3,}")
"""A number of four digits or more, written without separators (41500)."""


def quote_term(term: str) -> str:
    """One term as an FTS5 string literal: operators, quotes and symbols lose all meaning."""
    return '"' + term.replace('"', '""') + '"'


def term_expression(term: str) -> str:
    """One term as an FTS5 expression: :func:`quote_term`, and for a number of four digits
    or more, also the phrase of its thousands groups (41500 finds "41,500", which the
    tokenizer stores as two words, 41 and 500)."""
    quoted = quote_term(term)
    if not _PLAIN_NUMBER.fullmatch(term):
        return quoted
    return f"({quoted} OR {quote_term(' '.join(thousands(term)))})"


def match_expression(terms: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression that ORs the terms (each :func:`term_expression`), or None
    when there are none."""
    quoted = [term_expression(t) for t in terms if t.strip()]
    return " OR ".join(quoted) if quoted else None


def agent_token(agent: str) -> str:
    """The one-token form of an agent name stored in the ``agent_key`` column (schema 0004)."""
    return "a" + agent.encode("utf-8").hex()


def scoped(expression: str, agent: str) -> str:
    """``expression`` restricted to the text columns and to ``agent``'s rows.

    The agent's token in ``agent_key`` narrows the match inside FTS5, so a
    scoped search never reads other agents' matches; the SQL filter on
    ``episodes.agent`` stays the exact check.
    """
    return f'agent_key : "{agent_token(agent)}" AND {{search_text context_text}} : ({expression})'


def bm25(
    cur: Any,
    expression: str,
    k: int,
    filters: Filters,
    *,
    context_weight: float = 0.4,
    scope: bool = True,
) -> list[tuple[int, float]]:
    """The ``k`` best BM25 matches of ``expression`` under ``filters``: (id, score), best first.

    The episode's own words weigh 1, its neighbours' words ``context_weight``.
    Scores are returned positive (FTS5's ``bm25()`` is negative, lower is
    better). ``scope`` puts the agent inside the match (worth it when the
    agent holds a minority of the rows). FTS5 ranks first, alone; only the
    best ``4 k`` rows are then checked against the filters, so the episodes
    table is read for a few rows rather than for every match. When too few
    pass, the search runs again with the filters joined in. Equal scores (the same words
    told again) come the last stored first.
    """
    w = f"bm25(episodes_fts, 1.0, {float(context_weight)!r}, 0.0)"
    match = (
        scoped(expression, filters.agent)
        if scope
        else f"{{search_text context_text}} : ({expression})"
    )
    where, params = filters.sql("e.")
    depth = 4 * k
    ranked = cur.execute(
        f"SELECT rowid, -{w} AS score FROM episodes_fts WHERE episodes_fts MATCH ? "
        "ORDER BY score DESC, rowid DESC LIMIT ?",
        [match, depth],
    ).fetchall()
    if not ranked:
        return []
    marks = ",".join("?" * len(ranked))
    passing = {
        r[0]
        for r in cur.execute(
            # NOT INDEXED: look the ids up by primary key, never scan the agent's index
            f"SELECT e.id FROM episodes e NOT INDEXED WHERE e.id IN ({marks}) AND {where}",
            [r[0] for r in ranked] + params,
        )
    }
    if len(passing) >= k or len(ranked) < depth:
        return [(int(i), float(sc)) for i, sc in ranked if i in passing][:k]
    rows = cur.execute(
        # CROSS JOIN keeps FTS5 in the outer loop: without it SQLite may scan the
        # agent's episodes and run the MATCH once per row (100× slower).
        f"SELECT e.id, -{w} AS score FROM episodes_fts "
        "CROSS JOIN episodes e ON e.id = episodes_fts.rowid "
        f"WHERE episodes_fts MATCH ? AND {where} ORDER BY score DESC, e.id DESC LIMIT ?",
        [match, *params, k],
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]


def own_matches(cur: Any, expression: str, ids: Sequence[int]) -> set[int]:
    """The ids among ``ids`` whose own words match ``expression``, not only the words of
    their neighbours (the ``context_text`` column BM25 also reads): one lookup per id."""
    if not ids:
        return set()
    marks = ",".join("?" * len(ids))
    return {
        int(r[0])
        for r in cur.execute(
            f"SELECT rowid FROM episodes_fts WHERE episodes_fts MATCH ? AND rowid IN ({marks})",
            [f"search_text : ({expression})", *ids],
        )
    }
