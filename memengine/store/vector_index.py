"""An in-process mirror of each agent's vectors, for exact KNN at memory speed.

``vec0`` is the store of record; it scans its chunks at a few times the
cost of a numpy matrix product over the same vectors. :class:`VectorIndex`
keeps, per agent, a float32 matrix of unit vectors with the filter columns
beside it, and answers KNN for several queries with one matrix product.
It is exact (recall 1.0 against a full scan) and stays in step with the
file through ``vector_log``, a change log that triggers fill in the same
transaction as every insert, delete and filter-column update of an episode
(schema 0004): before each search the index replays the log entries it has
not seen, so writes from this process and from others are visible at once.
A re-embed logs a reset. When an agent's vectors would not fit in
``budget_bytes`` the caller falls back to ``vec0``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .filters import Filters

__all__ = ["RESET", "VectorIndex"]

RESET = -1
"""The ``episode_id`` of a log entry that invalidates every cached agent (a re-embed)."""

_STATUS = {"active": 0, "archived": 1}
_LOG_KEEP = 200_000
"""Log entries kept; an index further behind than this reloads instead of replaying."""


@dataclass
class _Agent:
    """One agent's rows: vectors (unit length) and filter columns, with tombstones."""

    dimension: int
    n: int = 0
    ids: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    vecs: npt.NDArray[np.float32] = field(default_factory=lambda: np.empty((0, 0), np.float32))
    kind: npt.NDArray[np.int16] = field(default_factory=lambda: np.empty(0, np.int16))
    sens: npt.NDArray[np.int8] = field(default_factory=lambda: np.empty(0, np.int8))
    status: npt.NDArray[np.int8] = field(default_factory=lambda: np.empty(0, np.int8))
    ts: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    where: dict[int, int] = field(default_factory=dict)
    dead: int = 0

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (capacity, not only the rows in use)."""
        return int(self.vecs.nbytes + self.ids.nbytes * 3 + self.alive.nbytes * 3)

    def _grow(self, need: int) -> None:
        cap = len(self.ids)
        if self.n + need <= cap:
            return
        new = max(1024, 2 * cap, self.n + need)
        self.ids = _resized(self.ids, new)
        self.vecs = _resized(self.vecs.reshape(-1, self.dimension), new)
        self.kind = _resized(self.kind, new)
        self.sens = _resized(self.sens, new)
        self.status = _resized(self.status, new)
        self.ts = _resized(self.ts, new)
        self.alive = _resized(self.alive, new)

    def put(self, rows: Sequence[tuple[int, int, int, int, int, bytes]]) -> None:
        """Insert or replace rows of (id, kind code, sensitivity, status code, ts, vector blob)."""
        for row in rows:
            self.drop(row[0])
        self._grow(len(rows))
        if not rows:
            return
        lo, hi = self.n, self.n + len(rows)
        self.ids[lo:hi] = [r[0] for r in rows]
        self.kind[lo:hi] = [r[1] for r in rows]
        self.sens[lo:hi] = [r[2] for r in rows]
        self.status[lo:hi] = [r[3] for r in rows]
        self.ts[lo:hi] = [r[4] for r in rows]
        block = np.frombuffer(b"".join(r[5] for r in rows), dtype=np.float32)
        block = block.reshape(len(rows), self.dimension)
        norms = np.linalg.norm(block, axis=1, keepdims=True)
        self.vecs[lo:hi] = block / np.where(norms > 0, norms, 1.0)
        self.alive[lo:hi] = True
        for pos, row in enumerate(rows, start=lo):
            self.where[row[0]] = pos
        self.n = hi

    def drop(self, episode_id: int) -> None:
        """Forget one row (a tombstone until the next compaction)."""
        pos = self.where.pop(episode_id, None)
        if pos is not None:
            self.alive[pos] = False
            self.dead += 1

    def compact(self) -> None:
        """Squeeze out tombstones once they are a quarter of the rows."""
        if self.dead * 4 < max(self.n, 1):
            return
        keep = np.flatnonzero(self.alive[: self.n])
        for name in ("ids", "kind", "sens", "status", "ts", "alive"):
            setattr(self, name, getattr(self, name)[keep].copy())
        self.vecs = self.vecs[keep].copy()
        self.n, self.dead = len(keep), 0
        self.where = {int(i): p for p, i in enumerate(self.ids.tolist())}

    def mask(self, filters: Filters, kinds: dict[str, int]) -> npt.NDArray[np.bool_] | None:
        """Rows that pass ``filters`` (None when every live row does)."""
        n = self.n
        m = self.alive[:n].copy() if self.dead else None
        conds: list[npt.NDArray[np.bool_]] = []
        codes = [_STATUS[s] for s in filters.statuses if s in _STATUS]
        if set(codes) != {0, 1}:
            conds.append(np.isin(self.status[:n], codes))
        if filters.kinds is not None:
            conds.append(np.isin(self.kind[:n], [kinds.get(k, -1) for k in filters.kinds]))
        if filters.max_sensitivity < 3:
            conds.append(self.sens[:n] <= filters.max_sensitivity)
        if filters.since_ts is not None:
            conds.append(self.ts[:n] >= filters.since_ts)
        if filters.until_ts is not None:
            conds.append(self.ts[:n] <= filters.until_ts)
        for c in conds:
            m = c if m is None else m & c
        return m


def _resized(a: npt.NDArray[Any], n: int) -> npt.NDArray[Any]:
    out = np.zeros((n, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


class VectorIndex:
    """Per-agent float32 matrices mirrored from ``vec0``, kept current through ``vector_log``."""

    def __init__(self, dimension: int, budget_bytes: int) -> None:
        self.dimension = dimension
        self.budget_bytes = budget_bytes
        self._agents: OrderedDict[str, _Agent] = OrderedDict()
        self._too_big: set[str] = set()
        self._seq = 0
        self._kinds: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        """False when the budget is 0 (every search goes to ``vec0``)."""
        return self.budget_bytes > 0

    def loaded(self) -> dict[str, int]:
        """The agents held in memory, with their row counts."""
        with self._lock:
            return {a: len(m.where) for a, m in self._agents.items()}

    def clear(self) -> None:
        """Forget everything (the next search reloads)."""
        with self._lock:
            self._agents.clear()
            self._too_big.clear()

    def knn(
        self, cur: Any, queries: npt.NDArray[np.float32], k: int, filters: Filters
    ) -> list[list[tuple[int, float]]] | None:
        """Exact top ``k`` (id, cosine distance) per query row, or None to fall back to vec0."""
        with self._lock:
            self._sync(cur)
            agent = self._agent(cur, filters.agent)
            if agent is None:
                return None
            n, ids, vecs = agent.n, agent.ids, agent.vecs
            mask = agent.mask(filters, self._kinds)
        q = np.asarray(queries, dtype=np.float32).reshape(-1, self.dimension)
        norms = np.linalg.norm(q, axis=1, keepdims=True)
        q = (q / np.where(norms > 0, norms, 1.0)).astype(np.float32)
        if n == 0:
            return [[] for _ in range(len(q))]
        if mask is not None and mask.sum() < n // 4:  # few rows pass: score only those
            rows = np.flatnonzero(mask)
            scores = vecs[rows] @ q.T
            row_ids = ids[rows]
        else:
            scores = vecs[:n] @ q.T
            row_ids = ids[:n]
            if mask is not None:
                scores[~mask] = -np.inf
        out: list[list[tuple[int, float]]] = []
        for j in range(scores.shape[1]):
            col = scores[:, j]
            kk = min(k, len(col))
            if kk == 0:
                out.append([])
                continue
            top = np.argpartition(-col, kk - 1)[:kk]
            top = top[np.argsort(-col[top], kind="stable")]
            out.append([(int(row_ids[i]), float(1.0 - col[i])) for i in top if col[i] != -np.inf])
        return out

    def similarities(
        self, cur: Any, vector: npt.NDArray[np.float32], agent_name: str, ids: Sequence[int]
    ) -> dict[int, float] | None:
        """Exact cosine of ``vector`` to each of ``ids`` held for ``agent_name`` (None: not held)."""
        with self._lock:
            self._sync(cur)
            agent = self._agents.get(agent_name)
            if agent is None:
                return None
            pos = [(i, agent.where[i]) for i in ids if i in agent.where]
            rows = agent.vecs[[p for _, p in pos]] if pos else None
        if rows is None:
            return {}
        v = np.asarray(vector, dtype=np.float32)
        v = v / (float(np.linalg.norm(v)) or 1.0)
        sims = rows @ v
        return {i: float(s) for (i, _), s in zip(pos, sims, strict=True)}

    # -- keeping in step -----------------------------------------------------------------
    def _sync(self, cur: Any) -> None:
        """Replay the log entries written since the last search (or reload when too far behind)."""
        row = cur.execute(  # two subqueries: each min/max is then one b-tree probe
            "SELECT (SELECT min(seq) FROM vector_log), (SELECT max(seq) FROM vector_log)"
        ).fetchone()
        lo, hi = (row[0] or 0), (row[1] or 0)
        if hi == self._seq:
            return
        if not self._agents and not self._too_big:  # nothing held: nothing to replay
            self._seq = hi
            return
        if hi < self._seq or (lo > self._seq + 1 and self._seq):
            self._agents.clear()  # the log was pruned past us (or the file was replaced)
            self._too_big.clear()
            self._seq = hi
            return
        changes = cur.execute(
            "SELECT DISTINCT episode_id, agent FROM vector_log WHERE seq > ? AND seq <= ?",
            (self._seq, hi),
        ).fetchall()
        self._seq = hi
        if any(e == RESET for e, _ in changes):
            self._agents.clear()
            self._too_big.clear()
            return
        touched: dict[str, list[int]] = {}
        for episode_id, agent in changes:
            self._too_big.discard(agent)
            if agent in self._agents:
                touched.setdefault(agent, []).append(int(episode_id))
        for name, ids in touched.items():
            agent = self._agents[name]
            if len(ids) > max(2000, len(agent.where) // 10):
                del self._agents[name]  # a big batch: reload on next use
                continue
            for i in ids:
                agent.drop(i)
            moved = [r for r in self._rows(cur, ids) if r[0] is not None]
            mine = [r[1:] for r in moved if r[0] == name]
            agent.put(mine)
            for other in {r[0] for r in moved} - {name}:  # an episode moved to another agent
                self._agents.pop(other, None)
            agent.compact()

    def _rows(self, cur: Any, ids: Sequence[int]) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        for i in ids:  # point lookups: vec0 has no IN plan
            row = cur.execute(
                "SELECT agent, episode_id, kind, sensitivity, status, occurred_ts, embedding "
                "FROM episode_vectors WHERE episode_id = ?",
                (i,),
            ).fetchone()
            if row is not None:
                out.append((row[0], *self._encode(row[1:])))
        return out

    def _encode(self, row: Sequence[Any]) -> tuple[int, int, int, int, int, bytes]:
        kind = self._kinds.setdefault(str(row[1]), len(self._kinds))
        return (
            int(row[0]),
            kind,
            int(row[2]),
            _STATUS.get(str(row[3]), 2),
            int(row[4]),
            bytes(row[5]),
        )

    def _agent(self, cur: Any, name: str) -> _Agent | None:
        """The agent's matrix, loaded on first use; None when it does not fit the budget."""
        if not self.enabled or name in self._too_big:
            return None
        agent = self._agents.get(name)
        if agent is not None:
            self._agents.move_to_end(name)
            return agent
        count = cur.execute("SELECT count(*) FROM episodes WHERE agent = ?", (name,)).fetchone()[0]
        need = int(count) * (4 * self.dimension + 32)
        if need > self.budget_bytes:
            self._too_big.add(name)
            return None
        while self._agents and sum(a.nbytes for a in self._agents.values()) + need > (
            self.budget_bytes
        ):
            self._agents.popitem(last=False)
        agent = _Agent(self.dimension)
        agent.vecs = np.empty((0, self.dimension), np.float32)
        rows = cur.execute(
            "SELECT episode_id, kind, sensitivity, status, occurred_ts, embedding "
            "FROM episode_vectors WHERE agent = ?",
            (name,),
        ).fetchall()
        agent.put([self._encode(r) for r in rows])
        self._agents[name] = agent
        return agent


def prune_log(cur: Any, keep: int = _LOG_KEEP) -> None:
    """Drop log entries older than the newest ``keep`` (inside the caller's write transaction)."""
    cur.execute(
        "DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", (keep,)
    )
