"""Document frequencies of full-text terms, cached, for dropping terms found in most episodes.

A term in more than half of the rows has an idf of 0 in FTS5's BM25: it
cannot change the ranking, but matching it means reading and scoring
nearly every row. :class:`TermStats` counts a term's rows with the same
tokenizer and expression as the search (so stemming agrees, and 41500 counts the
rows of 41,500 too: :func:`.fulltext.term_expression`) and caches the count until the
index's row count changes (below 10K rows) or moves by a tenth (above); a count
below the cap goes on from the rows stored since it was taken, so a word that
was absent is found once it is stored.
Counting stops at ``cap`` rows: FTS5 reads a doclist in rowid order, so
how far into the index those first rows reach tells how common the term
is (a term found in every tenth row fills the cap a tenth of the way in),
and the rest of the doclist is never read.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from . import meta
from .fulltext import term_expression

__all__ = ["ERASURES", "TermStats", "fts_row_count"]

ERASURES = "erasures"
"""The ``meta`` key counting deletions and forgotten agents: each process's cached term
counts are dropped when it moves."""


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


def _top_id(cur: Any) -> int:
    """The largest episode id (one b-tree probe): counts taken below it are current."""
    return int(cur.execute("SELECT coalesce(max(id), 0) FROM episodes").fetchone()[0])


class TermStats:
    """A thread-safe cache of term document frequencies."""

    def __init__(self, max_entries: int = 50_000, min_rows: int = 2_000, cap: int = 500) -> None:
        self.max_entries = max_entries
        self.min_rows = min_rows
        self.cap = cap
        # (term, limit) -> (rows, rowid of the last row read, largest episode id when
        # counted); counted up to limit
        self._df: dict[tuple[str, int | None], tuple[int, int, int]] = {}
        self._pending: dict[tuple[str, int | None], threading.Event] = {}
        self._agents: dict[str, tuple[float, int]] = {}
        self._rows = 0
        self._erasures: str | None = None  # the file's count of deletions (meta ERASURES)
        self._ids = (0, 0)  # the smallest and largest rowid when the counts were taken
        self._lock = threading.Lock()

    def counts(
        self, cur: Any, terms: Sequence[str], rows: int | None = None
    ) -> tuple[int, dict[str, int]]:
        """The index's row count and each term's row count (cached).

        Up to ``cap`` rows a count is exact; past it, it is estimated from
        how far into the index (by rowid) the first ``cap`` rows reach.
        ``rows`` is the index's row count when the caller has read it.
        """
        rows = fts_row_count(cur) if rows is None else rows
        self._refresh(cur, rows)
        top = _top_id(cur)
        wanted = list(dict.fromkeys(t for t in terms if t.strip()))
        return rows, {t: self._estimate(cur, t, rows, top) for t in wanted}

    def forget(self) -> None:
        """Drop every count and agent share held (their keys are users' words and agents'
        names), as after a forgotten agent or a scrubbed delete; they are counted again."""
        with self._lock:
            self._df.clear()
            self._agents.clear()
            self._rows = 0
            self._erasures = None

    def _refresh(self, cur: Any, rows: int) -> None:
        """Forget the counts once the index has changed (any change below 10K rows, a tenth
        above), and after any deletion by any process (a count must not tell that a
        deleted or forgotten episode's word was in the file)."""
        erasures = meta.get(cur, ERASURES)
        with self._lock:
            same = erasures == self._erasures
            if same and (
                rows == self._rows or (rows >= 10_000 and abs(rows - self._rows) <= self._rows / 10)
            ):
                return
        ids = cur.execute(
            "SELECT (SELECT min(id) FROM episodes), (SELECT max(id) FROM episodes)"
        ).fetchone()
        with self._lock:
            self._df.clear()
            if not same:
                self._agents.clear()
            self._rows = rows
            self._erasures = erasures
            self._ids = (int(ids[0] or 0), int(ids[1] or 0))

    def _estimate(self, cur: Any, term: str, rows: int, top: int) -> int:
        """The rows holding ``term``: exact below ``cap``, else scaled from where the cap was hit."""
        n, last = self._rows_holding(cur, term, self.cap, top)
        if n < self.cap:
            return n
        lo, hi = self._ids
        share = (last - lo + 1) / max(hi - lo + 1, 1)  # of the index read to fill the cap
        return max(n, min(rows, round(n / max(share, 1e-9))))

    def _rows_holding(self, cur: Any, term: str, limit: int | None, top: int) -> tuple[int, int]:
        """Rows holding ``term`` counted up to ``limit`` (None: all), and the last rowid read.

        FTS5 reads a doclist in rowid order and stops at ``limit``. A term
        counted by another thread at the same moment is waited for, not
        counted twice. A count below ``limit`` taken before episodes past it were
        stored (``top``, the largest episode id now) goes on from there: the rows
        added since are counted and added to it (a word first seen in a turn's
        question, then stored, is not taken as absent until a tenth more are stored).
        """
        key = (term, limit)
        while True:
            with self._lock:
                hit = self._df.get(key)
                if hit is not None and (hit[2] >= top or (limit is not None and hit[0] >= limit)):
                    return hit[0], hit[1]
                pending = self._pending.get(key)
                if pending is None:
                    self._pending[key] = threading.Event()
                    break
            pending.wait()
        try:
            match = "{search_text context_text} : (" + term_expression(term) + ")"
            n, last, since = (0, 0, 0) if hit is None else hit
            left = -1 if limit is None else limit - n
            more = cur.execute(
                "SELECT count(*), coalesce(max(r), 0) FROM (SELECT rowid AS r FROM episodes_fts "
                "WHERE episodes_fts MATCH ? AND rowid > ? LIMIT ?)",
                (match, since, left),
            ).fetchone()
            found = (n + int(more[0]), max(last, int(more[1])), top)
            with self._lock:
                if len(self._df) >= self.max_entries:
                    self._df.clear()
                self._df[key] = found
            return found[0], found[1]
        finally:
            with self._lock:
                self._pending.pop(key).set()

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
        Counts past the cap are estimates (:meth:`counts`), so no doclist
        is read past the cap.
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
        rarest = keep[0]
        keep = [t for t in keep if df[t] <= max_share * rows or t == rarest]
        if budget is None:
            top = _top_id(cur)
            if max_share * rows >= self.cap:  # estimated counts: count exactly
                keep = [
                    t
                    for t in keep
                    if df[t] < self.cap
                    or t == rarest
                    or self._rows_holding(cur, t, None, top)[0] <= max_share * rows
                ]
            return set(df) - set(keep)
        total = sum(df[t] for t in keep)
        while len(keep) > 1 and total > budget:
            total -= df[keep.pop()]
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
