"""Document frequencies of full-text terms, cached, for dropping terms found in most episodes.

A term in more than half of the rows has an idf of 0 in FTS5's BM25: it
cannot change the ranking, but matching it means reading and scoring
nearly every row. :class:`TermStats` counts a term's rows with the same
tokenizer as the search (so stemming agrees) and caches the count until the
index's row count changes (below 10K rows) or moves by a tenth (above).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from .fulltext import quote_term

__all__ = ["TermStats", "fts_row_count"]


def fts_row_count(cur: Any) -> int:
    """Rows in the full-text index, read from FTS5's averages record (no scan)."""
    row = cur.execute("SELECT block FROM episodes_fts_data WHERE id = 1").fetchone()
    if row is None or not row[0]:
        return 0
    value = 0
    for byte in bytes(row[0])[:9]:  # SQLite varint, big-endian 7-bit groups
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value


class TermStats:
    """A thread-safe cache of term document frequencies."""

    def __init__(self, max_entries: int = 50_000, min_rows: int = 2_000, cap: int = 5_001) -> None:
        self.max_entries = max_entries
        self.min_rows = min_rows
        self.cap = cap
        self._df: dict[tuple[str, int | None], int] = {}  # (term, limit) -> rows, up to limit
        self._agents: dict[str, tuple[float, int]] = {}
        self._rows = 0
        self._lock = threading.Lock()

    def counts(
        self, cur: Any, terms: Sequence[str], rows: int | None = None
    ) -> tuple[int, dict[str, int]]:
        """The index's row count and each term's row count (cached; counted up to ``cap``).

        A count of ``cap`` means "at least ``cap``": a term that common is
        over any posting budget below it, and its idf is near its floor.
        ``rows`` is the index's row count when the caller has read it.
        """
        rows = fts_row_count(cur) if rows is None else rows
        self._refresh(rows)
        wanted = list(dict.fromkeys(t for t in terms if t.strip()))
        return rows, {t: self._rows_holding(cur, t, self.cap) for t in wanted}

    def _refresh(self, rows: int) -> None:
        """Forget the counts once the index has changed (any change below 10K rows, a tenth above)."""
        with self._lock:
            if rows != self._rows and (rows < 10_000 or abs(rows - self._rows) > self._rows / 10):
                self._df.clear()
                self._rows = rows

    def _rows_holding(self, cur: Any, term: str, limit: int | None) -> int:
        """Rows holding ``term``, counted up to ``limit`` (None: all; FTS5 stops reading there)."""
        key = (term, limit)
        with self._lock:
            if key in self._df:
                return self._df[key]
        match = "{search_text context_text} : " + quote_term(term)
        if limit is None:
            hit = cur.execute(
                "SELECT count(*) FROM episodes_fts WHERE episodes_fts MATCH ?", (match,)
            ).fetchone()
        else:
            hit = cur.execute(
                "SELECT count(*) FROM (SELECT 1 FROM episodes_fts WHERE episodes_fts MATCH ? "
                "LIMIT ?)",
                (match, limit),
            ).fetchone()
        with self._lock:
            if len(self._df) >= self.max_entries:
                self._df.clear()
            self._df[key] = int(hit[0])
        return int(hit[0])

    def _rank_above_cap(self, cur: Any, terms: Sequence[str], term: str) -> int:
        """A count of ``term`` high enough to order ``terms`` (all at the cap): 10×, 100× … the cap.

        Counting stops at the first cap where some term of ``terms`` stays
        under it, so the rarest is found without reading the whole doclist
        of a term found nearly everywhere.
        """
        limit = self.cap * 10
        while limit < 10**9:
            counts = {t: self._rows_holding(cur, t, limit) for t in terms}
            if min(counts.values()) < limit:
                return counts[term]
            limit *= 10
        return self._rows_holding(cur, term, None)

    def frequent(
        self,
        cur: Any,
        terms: Sequence[str],
        max_share: float,
        budget: int | None = None,
        rows: int | None = None,
    ) -> set[str]:
        """The terms to leave out of a search: too frequent, or over the posting budget.

        A term found in more than ``max_share`` of the rows goes (its idf is
        0). Then, while the remaining terms' row counts add up to more than
        ``budget``, the most frequent one goes (the lowest idf, so the least
        weight in the ranking). The rarest term always stays. Below
        ``min_rows`` rows nothing is left out: the search is fast anyway.
        """
        if (max_share >= 1.0 and budget is None) or not terms:
            return set()
        rows = fts_row_count(cur) if rows is None else rows
        if rows < self.min_rows:  # small indexes are fast anyway: keep every term
            return set()
        rows, df = self.counts(cur, terms, rows)
        if not df:
            return set()
        keep = sorted(df, key=lambda t: df[t])  # rarest first
        if df[keep[0]] >= self.cap:  # every count hit the cap: find the rarest above it
            capped = tuple(keep)  # (a list is empty while it is being sorted)
            keep.sort(key=lambda t: self._rank_above_cap(cur, capped, t))
        rarest = keep[0]
        keep = [t for t in keep if df[t] <= max_share * rows or t == rarest]
        if budget is None:
            if max_share * rows >= self.cap:  # capped counts: count exactly
                keep = [
                    t
                    for t in keep
                    if df[t] < self.cap
                    or t == rarest
                    or self._rows_holding(cur, t, None) <= max_share * rows
                ]
            return set(df) - set(keep)

        def rows_of(t: str) -> int:  # a count at the cap is "more than the budget"
            return df[t] if df[t] < self.cap else max(self.cap, budget + 1)

        total = sum(rows_of(t) for t in keep)
        while len(keep) > 1 and total > budget:
            total -= rows_of(keep.pop())
        return set(df) - set(keep)

    def agent_share(self, cur: Any, agent: str, rows: int | None = None) -> float:
        """The share of all episodes that belong to ``agent`` (cached like the frequencies)."""
        rows = fts_row_count(cur) if rows is None else rows
        with self._lock:
            hit = self._agents.get(agent)
            if hit is not None and abs(rows - hit[1]) <= hit[1] / 10:
                return hit[0]
        n = cur.execute("SELECT count(*) FROM episodes WHERE agent = ?", (agent,)).fetchone()[0]
        share = int(n) / rows if rows else 1.0
        with self._lock:
            if len(self._agents) > self.max_entries:
                self._agents.clear()
            self._agents[agent] = (share, rows)
        return share
