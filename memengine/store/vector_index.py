"""An in-process mirror of each agent's vectors, for exact KNN at memory speed.

``vec0`` is the store of record; it scans its chunks at a few times the cost
of a numpy matrix product over the same vectors. :class:`VectorIndex` keeps,
per agent, a float32 matrix of unit vectors with the filter columns beside
it, and answers KNN for several queries with one matrix product. Up to
``exact_max_rows`` rows per agent the scan is exact; above, a sign-bit code
per vector picks the nearest few percent by Hamming distance, an int8 copy
of those rows shortlists the best few dozen, and the shortlist is rescored
exactly in float32 (recall@10 against the exact scan is measured by
``memengine bench``). An agent whose float32 matrix would not fit in the
room the other agents leave in ``budget_bytes`` is held *compact*: codes and
filter columns only (about 600 bytes a row at 512-d, against 2.6 KB), and
its shortlist is rescored with float32 vectors read from ``vec0`` by id, a
few dozen point lookups per query. The Hamming and int8 kernels are
SimSIMD's (compiled, SIMD); numpy does the rest. It stays in step with the
file through ``vector_log``, a change log that triggers fill in the same
transaction as every insert, delete and filter-column update of an episode
(schema 0004): before each search the index replays the log entries it has
not seen, so writes from this process and from others are visible at once. A
re-embed logs a reset. An agent is loaded at its second search in the
process (a one-shot command pays one ``vec0`` scan, not a load), straight
from ``vec0``'s chunk blobs; given a ``reader``, a big agent is loaded by a
background thread in its own read transaction while its searches go on in
``vec0``, and a later search takes it in after replaying the log entries
written since that transaction's snapshot. Agents used least recently are
evicted to make room for an agent's codes (never for its floats); when its
codes alone exceed ``budget_bytes`` the caller falls back to ``vec0``.
"""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import simsimd

from ..errors import StoreError
from .filters import Filters
from .vec0_chunks import STATUS, chunk_blobs, chunk_heads, chunk_rows, valid_rows

__all__ = ["RESET", "VectorIndex", "log_reset", "prune_log"]

RESET = -1
"""The ``episode_id`` of a log entry that invalidates every cached agent (a re-embed)."""

_LOG_KEEP = 200_000
"""Log entries kept; an index further behind than this reloads instead of replaying."""


@dataclass
class _Agent:
    """One agent's rows: vectors (unit length) and filter columns, with tombstones."""

    dimension: int
    floats: bool = True
    """Whether the float32 vectors are held (False: a compact agent, codes only)."""
    n: int = 0
    ids: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    vecs: npt.NDArray[np.float32] = field(default_factory=lambda: np.empty((0, 0), np.float32))
    kind: npt.NDArray[np.int16] = field(default_factory=lambda: np.empty(0, np.int16))
    sens: npt.NDArray[np.int8] = field(default_factory=lambda: np.empty(0, np.int8))
    status: npt.NDArray[np.int8] = field(default_factory=lambda: np.empty(0, np.int8))
    ts: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    bits: npt.NDArray[np.uint64] = field(default_factory=lambda: np.empty((0, 0), np.uint64))
    q8: npt.NDArray[np.int8] = field(default_factory=lambda: np.empty((0, 0), np.int8))
    scale: npt.NDArray[np.float32] = field(default_factory=lambda: np.empty(0, np.float32))
    where: dict[int, int] = field(default_factory=dict)
    dead: int = 0
    nonactive: int = 0
    """Live rows whose status is not active (0: a status filter of "active" passes every row)."""
    ts_lo: int = 2**62
    ts_hi: int = -(2**62)
    """Bounds of the live rows' times (a time filter outside them passes every row)."""
    coded: int = 0
    """Rows ``0:coded`` have current prefilter codes (computed when an agent first needs them)."""

    @property
    def words(self) -> int:
        """64-bit words per sign-bit code (the prefilter's copy of a vector)."""
        return (self.dimension + 63) // 64

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (capacity, not only the rows in use)."""
        return int(
            self.vecs.nbytes
            + self.bits.nbytes
            + self.q8.nbytes
            + self.scale.nbytes
            + self.ids.nbytes * 3
            + self.alive.nbytes * 3
        )

    def ensure_codes(self) -> None:
        """Give every row its sign-bit and int8 codes (the prefilter's copies), computing only
        the rows that lack them; agents searched exactly never pay for them."""
        if not self.floats:  # a compact agent's codes are written with its rows
            return
        cap = len(self.ids)
        if len(self.bits) != cap:  # first use, or the rows grew since
            self._resize_codes(cap)
        if self.coded < self.n:
            lo, hi = self.coded, self.n
            self.bits[lo:hi] = _sign_bits(self.vecs[lo:hi], self.words)
            self.q8[lo:hi], self.scale[lo:hi] = _int8(self.vecs[lo:hi])
            self.coded = hi

    def _resize_codes(self, cap: int) -> None:
        """New code arrays of ``cap`` rows holding the current ones (zeros after them)."""
        self.bits = _resized(self.bits.reshape(-1, self.words), cap)
        self.q8 = _resized(self.q8.reshape(-1, self.dimension), cap)
        self.scale = _resized(self.scale, cap)

    def drop_floats(self) -> None:
        """Hold this agent compact from now on: compute any missing codes, free the floats."""
        self.ensure_codes()
        self.floats = False
        self.vecs = np.empty((0, self.dimension), np.float32)

    def reserve(self, n: int) -> None:
        """Allocate room for exactly ``n`` rows in an empty agent (uninitialised memory)."""
        self.ids = np.empty(n, np.int64)
        if self.floats:
            self.vecs = np.empty((n, self.dimension), np.float32)
        else:
            self.bits = np.empty((n, self.words), np.uint64)
            self.q8 = np.empty((n, self.dimension), np.int8)
            self.scale = np.empty(n, np.float32)
        self.kind = np.empty(n, np.int16)
        self.sens = np.empty(n, np.int8)
        self.status = np.empty(n, np.int8)
        self.ts = np.empty(n, np.int64)
        self.alive = np.zeros(n, np.bool_)

    def _grow(self, need: int) -> None:
        cap = len(self.ids)
        if self.n + need <= cap:
            return
        new = max(1024, 2 * cap, self.n + need)
        self.ids = _resized(self.ids, new)
        if self.floats:
            self.vecs = _resized(self.vecs.reshape(-1, self.dimension), new)
        else:
            self._resize_codes(new)
        self.kind = _resized(self.kind, new)
        self.sens = _resized(self.sens, new)
        self.status = _resized(self.status, new)
        self.ts = _resized(self.ts, new)
        self.alive = _resized(self.alive, new)

    def put(self, rows: Sequence[tuple[int, int, int, int, int, bytes]]) -> None:
        """Insert or replace rows of (id, kind code, sensitivity, status code, ts, vector blob)."""
        if not rows:
            return
        block = np.frombuffer(b"".join(r[5] for r in rows), dtype=np.float32)
        cols = [np.asarray([r[j] for r in rows], dtype=np.int64) for j in range(5)]
        self.put_arrays(cols[0], cols[1], cols[2], cols[3], cols[4], block)

    def put_arrays(
        self,
        ids: npt.NDArray[np.int64],
        kind: npt.NDArray[np.int64],
        sens: npt.NDArray[np.int64],
        status: npt.NDArray[np.int64],
        ts: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
    ) -> None:
        """Insert or replace rows given as columns (vectors: n × dimension, any norm)."""
        m = len(ids)
        for i in ids.tolist():
            if i in self.where:
                self.drop(i)
        self._grow(m)
        lo, hi = self.n, self.n + m
        self.ids[lo:hi] = ids
        self.kind[lo:hi] = kind
        self.sens[lo:hi] = sens
        self.status[lo:hi] = status
        self.ts[lo:hi] = ts
        self.write_vectors(lo, _unit(vectors.reshape(m, self.dimension)))
        self.alive[lo:hi] = True
        self.where.update(zip(ids.tolist(), range(lo, hi), strict=True))
        self.n = hi
        self._widen(status, ts)

    def write_vectors(self, lo: int, unit: npt.NDArray[np.float32]) -> None:
        """Store rows ``lo:lo+len(unit)`` of unit vectors: as floats, or as codes when compact."""
        hi = lo + len(unit)
        if self.floats:
            self.vecs[lo:hi] = unit
        else:
            self.bits[lo:hi] = _sign_bits(unit, self.words)
            self.q8[lo:hi], self.scale[lo:hi] = _int8(unit)
            self.coded = hi

    def _widen(self, status: npt.NDArray[Any], ts: npt.NDArray[np.int64]) -> None:
        """Count new rows into ``nonactive`` and the time bounds."""
        if len(ts):
            self.nonactive += int(np.count_nonzero(status != 0))
            self.ts_lo = min(self.ts_lo, int(ts.min()))
            self.ts_hi = max(self.ts_hi, int(ts.max()))

    def drop(self, episode_id: int) -> None:
        """Forget one row (a tombstone until the next compaction)."""
        pos = self.where.pop(episode_id, None)
        if pos is not None:
            self.alive[pos] = False
            self.dead += 1
            self.nonactive -= int(self.status[pos] != 0)

    def compact(self) -> None:
        """Squeeze out tombstones once they are a quarter of the rows."""
        if self.dead * 4 < max(self.n, 1):
            return
        keep = np.flatnonzero(self.alive[: self.n])
        coded = int(np.count_nonzero(self.alive[: self.coded]))  # rows keep their order
        names = ["ids", "kind", "sens", "status", "ts", "alive"]
        if self.floats:
            names.append("vecs")
        if len(self.bits):
            names += ["bits", "q8", "scale"]
        for name in names:  # new arrays: a search holding the old ones stays consistent
            setattr(self, name, getattr(self, name)[keep].copy())
        self.n, self.dead, self.coded = len(keep), 0, coded
        self.where = {int(i): p for p, i in enumerate(self.ids.tolist())}

    def mask(self, filters: Filters, kinds: dict[str, int]) -> npt.NDArray[np.bool_] | None:
        """Rows that pass ``filters`` (None when every live row does)."""
        n = self.n
        m = self.alive[:n].copy() if self.dead else None
        conds: list[npt.NDArray[np.bool_]] = []
        codes = [STATUS[s] for s in filters.statuses if s in STATUS]
        if codes == [0]:
            if self.nonactive:  # else every live row is active
                conds.append(self.status[:n] == 0)
        elif set(codes) != {0, 1}:
            conds.append(np.isin(self.status[:n], codes))
        if filters.kinds is not None:
            conds.append(np.isin(self.kind[:n], [kinds.get(k, -1) for k in filters.kinds]))
        if filters.max_sensitivity < 3:
            conds.append(self.sens[:n] <= filters.max_sensitivity)
        if filters.since_ts is not None and filters.since_ts > self.ts_lo:
            conds.append(self.ts[:n] >= filters.since_ts)
        if filters.until_ts is not None and filters.until_ts < self.ts_hi:
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

    def __init__(
        self,
        dimension: int,
        budget_bytes: int,
        *,
        load_after: int = 2,
        exact_max_rows: int = 20_000,
        reader: Callable[[], AbstractContextManager[Any]] | None = None,
        background_rows: int = 5_000,
    ) -> None:
        self.dimension = dimension
        self.budget_bytes = budget_bytes
        self.exact_max_rows = exact_max_rows
        self.load_after = load_after
        self.background_rows = background_rows
        """Agents of at least this many rows are loaded by a background thread (with a ``reader``)."""
        self._reader = reader
        self._load: _Load | None = None
        self._loads: queue.SimpleQueue[_Load | None] = queue.SimpleQueue()
        self._loader: threading.Thread | None = None
        self._failed: set[str] = set()
        self._kinds_lock = threading.Lock()
        self._asked: dict[str, int] = {}
        self._agents: OrderedDict[str, _Agent] = OrderedDict()
        self._too_big: set[str] = set()
        self._seq = 0
        self._kinds: dict[str, int] = {}
        self._lock = threading.Lock()

    @staticmethod
    def row_bytes(dimension: int, *, floats: bool, codes: bool) -> int:
        """What the budget counts per held row: the float32 vector and/or the prefilter codes
        (int8 copy, sign bits, scale), with the id, filter columns and tombstone."""
        size = 32
        if floats:
            size += 4 * dimension
        if codes:
            size += dimension + dimension // 8 + 4
        return size

    @staticmethod
    def prefilter_rows(n: int) -> int:
        """Rows kept by the sign-bit prefilter for rescoring: 4 % of them, at least 4,000."""
        return max(4_000, n // 25)

    @property
    def enabled(self) -> bool:
        """False when the budget is 0 (every search goes to ``vec0``)."""
        return self.budget_bytes > 0

    def loaded(self) -> dict[str, int]:
        """The agents held in memory, with their row counts."""
        with self._lock:
            return {a: len(m.where) for a, m in self._agents.items()}

    def mode(self, agent: str) -> str:
        """How ``agent`` is searched now: ``"float32"`` (its vectors held), ``"codes"``
        (held compact: codes in memory, floats read from ``vec0``) or ``"vec0"`` (not held)."""
        with self._lock:
            held = self._agents.get(agent)
        if held is None:
            return "vec0"
        return "float32" if held.floats else "codes"

    @property
    def loading(self) -> str | None:
        """The agent being loaded in the background now (None: no load in flight)."""
        load = self._load
        return load.name if load is not None and not load.done.is_set() else None

    def wait_loaded(self, timeout: float | None = None) -> bool:
        """Wait until the background load in flight (if any) has read its agent; False if
        ``timeout`` seconds passed first. The agent is taken in at the next search."""
        load = self._load
        return True if load is None else load.done.wait(timeout)

    def warm(self, cur: Any, name: str) -> str:
        """Load ``name`` now, in the caller's thread, whatever its size (a server can do this
        before its first turn), and say how it is searched then (see :meth:`mode`)."""
        load = self._load
        if load is not None and load.name == name:
            load.done.wait()
        with self._lock:
            self._sync(cur)
            if self._load is not None and self._load.name == name:
                self._load = None  # read from a snapshot this one cannot take in: read again
            if name not in self._agents:
                self._asked[name] = max(self._asked.get(name, 0), self.load_after - 1)
                self._agent(cur, name, inline=True)
        return self.mode(name)

    def close(self, timeout: float = 30.0) -> None:
        """Stop the background loader (a load in flight stops at its next chunk) and wait for
        its thread, at most ``timeout`` seconds."""
        load, loader = self._load, self._loader
        if load is not None:
            load.stop.set()
        if loader is not None:
            self._loads.put(None)
            loader.join(timeout)
            self._loader = None

    def knn(
        self, cur: Any, queries: npt.NDArray[np.float32], k: int, filters: Filters
    ) -> list[list[tuple[int, float]]] | None:
        """Top ``k`` (id, cosine distance) per query row, or None to fall back to vec0.

        Exact up to ``exact_max_rows`` rows; above (and for a compact agent, at any
        size), sign-bit prefilter, int8 shortlist and exact float32 rescoring.
        """
        with self._lock:
            self._sync(cur)
            agent = self._agent(cur, filters.agent)
            if agent is None:
                return None
            n, ids, vecs = agent.n, agent.ids, agent.vecs
            mask = agent.mask(filters, self._kinds)
            prefilter = not agent.floats or (bool(self.exact_max_rows) and n > self.exact_max_rows)
            if prefilter:
                agent.ensure_codes()
                codes = _Codes(agent.bits, agent.q8, agent.scale, agent.words, self.dimension)
        q = np.asarray(queries, dtype=np.float32).reshape(-1, self.dimension)
        q = _unit(q)
        if n == 0:
            return [[] for _ in range(len(q))]
        if prefilter:
            keep = self.prefilter_rows(n)
            if agent.floats:
                return _prefiltered(ids, _held(vecs), codes, n, mask, q, k, keep, max(8 * k, 64))
            stored = _stored(cur, ids, self.dimension)
            return _prefiltered(ids, stored, codes, n, mask, q, k, keep, max(2 * k, 16))
        if mask is not None and mask.sum() < n // 4:  # few rows pass: score only those
            rows = np.flatnonzero(mask)
            scores = _scores(np.take(vecs, rows, axis=0), q)
            row_ids = ids[rows]
        else:
            scores = _scores(vecs[:n], q)
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
            if agent is None or not agent.floats:  # a compact agent: vec0 has the floats
                return None
            pos = [(i, agent.where[i]) for i in ids if i in agent.where]
            rows = agent.vecs[[p for _, p in pos]] if pos else None
        if rows is None:
            return {}
        v = np.asarray(vector, dtype=np.float32)
        v = v / (float(np.linalg.norm(v)) or 1.0)
        sims = rows @ v
        return {i: float(s) for (i, _), s in zip(pos, sims, strict=True)}

    def stale_ids(self, cur: Any) -> list[int]:
        """Ids on which an in-memory agent disagrees with ``vec0`` after a sync (empty: in step)."""
        with self._lock:
            self._sync(cur)
            held = {name: dict(agent.where) for name, agent in self._agents.items()}
            snapshot = {name: agent for name, agent in self._agents.items()}
        bad: list[int] = []
        for name, where in held.items():
            agent = snapshot[name]
            stored = {int(r[0]): r for r in self._agent_rows(cur, name)}
            bad.extend(sorted(set(where) ^ set(stored)))
            for i in set(where) & set(stored):
                row = self._encode(stored[i])
                pos = where[i]
                vec = np.frombuffer(row[5], dtype=np.float32)
                vec = vec / (float(np.linalg.norm(vec)) or 1.0)
                same = (
                    int(agent.kind[pos]) == row[1]
                    and int(agent.sens[pos]) == row[2]
                    and int(agent.status[pos]) == row[3]
                    and int(agent.ts[pos]) == row[4]
                    and _same_vector(agent, pos, vec)
                )
                if not same:
                    bad.append(i)
        return bad[:100]

    # -- keeping in step -----------------------------------------------------------------
    def _sync(self, cur: Any) -> None:
        """Bring the held agents up to this search's snapshot, then take in a finished
        background load when it can be brought up to the same snapshot."""
        row = cur.execute(  # two subqueries: each min/max is then one b-tree probe
            "SELECT (SELECT min(seq) FROM vector_log), (SELECT max(seq) FROM vector_log)"
        ).fetchone()
        lo, hi = (row[0] or 0), (row[1] or 0)
        self._replay(cur, lo, hi)
        if self._load is not None and self._load.done.is_set() and hi == self._seq:
            self._take_load(cur, lo, hi)

    def _replay(self, cur: Any, lo: int, hi: int) -> None:
        """Replay the log entries up to ``hi`` not seen yet (or drop every agent when the
        log was pruned past them)."""
        if hi <= self._seq:
            # hi < seq: this search's snapshot began before another thread's newer one
            # synced the index; the index is newer than the snapshot, and stays
            return
        if not self._agents and not self._too_big:  # nothing held: nothing to replay
            self._seq = hi
            return
        if lo > self._seq + 1 and self._seq:
            self._agents.clear()  # the log was pruned past us
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
            if not self._apply(cur, name, self._agents[name], ids):
                del self._agents[name]  # a big batch: reload on next use

    def _apply(self, cur: Any, name: str, agent: _Agent, ids: list[int]) -> bool:
        """Bring these rows of ``agent`` in step with the snapshot of ``cur``; False (nothing
        done) for a batch so big that reading the agent again is cheaper."""
        if len(ids) > max(2000, len(agent.where) // 10):
            return False
        for i in ids:
            agent.drop(i)
        moved = self._rows(cur, ids)  # (agent, encoded row) of the ids still stored
        agent.put([r[1:] for r in moved if r[0] == name])
        for other in {r[0] for r in moved} - {name}:  # an episode moved to another agent
            self._agents.pop(other, None)
        agent.compact()
        return True

    def _take_load(self, cur: Any, lo: int, hi: int) -> None:
        """Take in the finished background load: replay the log entries its snapshot had not
        seen, then make room for it. A failed load makes the next search load inline (where
        the error reaches the caller); a load the log cannot bring up to date is dropped
        (the next search starts another)."""
        load = self._load
        assert load is not None
        if load.agent is not None and load.seq > hi:
            return  # read from a newer snapshot than this search's: a later search takes it
        self._load = None
        agent, name = load.agent, load.name
        if agent is None:
            if load.error is not None:
                self._failed.add(name)
            return
        if name in self._agents or name in self._too_big:
            return
        if load.seq < hi:
            if lo > load.seq + 1:
                return  # the log was pruned past the load's snapshot
            changes = cur.execute(
                "SELECT DISTINCT episode_id, agent FROM vector_log WHERE seq > ? AND seq <= ?",
                (load.seq, hi),
            ).fetchall()
            if any(e == RESET for e, _ in changes):
                return
            if not self._apply(cur, name, agent, [int(e) for e, a in changes if a == name]):
                return
        need = self._need(len(agent.where), floats=agent.floats)
        if agent.floats and self._held_bytes() + need > self.budget_bytes:
            agent.drop_floats()  # the room was taken while it loaded: hold its codes
            need = self._need(len(agent.where), floats=False)
        if need > self.budget_bytes:
            self._too_big.add(name)
            return
        self._make_room(need)
        self._agents[name] = agent

    @staticmethod
    def _agent_rows(cur: Any, name: str) -> Any:
        """The agent's rows read through ``vec0``: (id, kind, sensitivity, status, ts, vector)."""
        return cur.execute(
            "SELECT episode_id, kind, sensitivity, status, occurred_ts, embedding "
            "FROM episode_vectors WHERE agent = ?",
            (name,),
        )

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

    def _kind(self, name: Any) -> int:
        """The small integer code of an episode kind (assigned on first sight)."""
        with self._kinds_lock:  # the loader thread assigns codes too
            return self._kinds.setdefault(str(name), len(self._kinds))

    def _encode(self, row: Sequence[Any]) -> tuple[int, int, int, int, int, bytes]:
        return (
            int(row[0]),
            self._kind(row[1]),
            int(row[2]),
            STATUS.get(str(row[3]), 2),
            int(row[4]),
            bytes(row[5]),
        )

    def _read_chunks(
        self,
        cur: Any,
        name: str,
        agent: _Agent,
        expected: int,
        stop: threading.Event | None = None,
    ) -> bool:
        """Read the agent's rows straight from vec0's shadow tables (sqlite-vec 0.1.x layout).

        A whole chunk of vectors is one blob, and so is each filter column
        of a chunk (8 bytes per integer, a 16-byte view per text), so an
        agent is a few blob reads rather than a row-by-row scan, and the
        episodes table is not touched. Returns False when the layout is not
        the expected one (blob sizes, a text longer than its inline view, an
        unknown status) or the rows found are not the ``expected`` count;
        the caller then reads through ``vec0``. A set ``stop`` ends it at the next chunk
        (returning False).
        """
        error = (cur.connection.DatabaseError, TypeError)  # TypeError: a blob row is missing
        try:
            heads = chunk_heads(cur, name)
        except error:
            return False
        n = sum(valid_rows(validity, rowids) for _, validity, rowids in heads)
        if n != expected:
            return False
        agent.reserve(n)
        pos = 0
        for chunk_id, validity, rowids in heads:  # one chunk's blobs in memory at a time
            if stop is not None and stop.is_set():
                return False
            try:
                blobs = chunk_blobs(cur, chunk_id)
            except error:
                return False
            p = chunk_rows((validity, rowids, *blobs), self.dimension)
            if p is None or pos + len(p.ids) > n:
                return False
            m = len(p.ids)
            sl = slice(pos, pos + m)
            if agent.floats:  # straight into the matrix
                norms = np.linalg.norm(p.vecs, axis=1, keepdims=True)
                np.divide(p.vecs, np.where(norms > 0, norms, 1.0), out=agent.vecs[sl])
            else:
                agent.write_vectors(pos, _unit(p.vecs))
            agent.ids[sl] = p.ids
            codes = np.asarray([self._kind(k) for k in p.kinds], np.int16)
            agent.kind[sl] = codes[p.kind]
            agent.sens[sl] = p.sens
            agent.status[sl] = p.status
            agent.ts[sl] = p.ts
            pos += m
        if pos != n:
            return False
        agent.alive[:n] = True
        agent.where = dict(zip(agent.ids[:n].tolist(), range(n), strict=True))
        if len(agent.where) != n:  # an id twice: not a layout this reader knows
            return False
        agent.n = n
        agent._widen(agent.status[:n], agent.ts[:n])
        return True

    def _agent(self, cur: Any, name: str, *, inline: bool = False) -> _Agent | None:
        """The agent's rows, loaded at its ``load_after``-th search; None until then, while a
        background thread loads it, or if too big.

        Its float32 vectors are held when they fit in the room the other agents
        leave; otherwise it is held compact (codes only), and the agents used
        least recently are evicted to make room for the codes. An agent whose
        codes alone exceed the budget is searched in ``vec0``. A one-shot
        process pays one ``vec0`` scan, not a load. (Loading at the
        first search was measured: for a 1,000-row agent, the load and a search
        in memory took 4.5 ms against 2.7 ms for a ``vec0`` scan plus the ``vec0``
        lookups of the candidates' cosines.) With a ``reader``, an agent of at
        least ``background_rows`` rows is read by a background thread (one agent
        at a time) while its searches go on in ``vec0``, unless ``inline``.
        """
        if not self.enabled or name in self._too_big:
            return None
        agent = self._agents.get(name)
        if agent is not None:
            self._agents.move_to_end(name)
            return agent
        self._asked[name] = self._asked.get(name, 0) + 1
        if self._asked[name] < self.load_after:
            return None
        if self._load is not None and self._load.name == name:
            return None  # being loaded
        count = int(
            cur.execute("SELECT count(*) FROM episodes WHERE agent = ?", (name,)).fetchone()[0]
        )
        codes = self._need(count, floats=False)
        if codes > self.budget_bytes:
            self._too_big.add(name)
            return None
        # floats only into free room: evicting other agents to make room for this one's
        # floats would have them reloaded in turn; codes evict the least recently used
        floats = self._need(count, floats=True)
        floats_held = self._held_bytes() + floats <= self.budget_bytes
        background = self._reader is not None and count >= self.background_rows
        if background and not inline and name not in self._failed:
            if self._load is None:  # one at a time: the others wait for a later search
                self._start_load(name, floats_held)
            return None
        self._make_room(floats if floats_held else codes)
        agent = self._read_agent(cur, name, floats_held, count)
        assert agent is not None  # no stop event: the read runs to its end
        self._failed.discard(name)
        self._agents[name] = agent
        return agent

    def _big(self, count: int) -> bool:
        """Whether an agent of ``count`` rows is searched through the prefilter codes."""
        return bool(self.exact_max_rows) and count > self.exact_max_rows

    def _need(self, count: int, *, floats: bool) -> int:
        """Budget bytes for ``count`` rows: with floats (and codes if searched through them),
        or compact (codes only)."""
        codes = not floats or self._big(count)
        return count * self.row_bytes(self.dimension, floats=floats, codes=codes)

    def _held_bytes(self) -> int:
        return sum(a.nbytes for a in self._agents.values())

    def _make_room(self, need: int) -> None:
        """Evict the agents used least recently until ``need`` more bytes fit the budget."""
        held = self._held_bytes()
        while self._agents and held + need > self.budget_bytes:
            held -= self._agents.popitem(last=False)[1].nbytes

    def _read_agent(
        self,
        cur: Any,
        name: str,
        floats: bool,
        count: int,
        stop: threading.Event | None = None,
    ) -> _Agent | None:
        """Read the agent's rows (its chunk blobs, or through ``vec0`` when their layout is
        not the expected one), with or without its floats, and the prefilter codes a search
        of it will need; None if ``stop`` was set."""
        agent = _Agent(self.dimension, floats=floats)
        agent.vecs = np.empty((0, self.dimension), np.float32)
        if not self._read_chunks(cur, name, agent, count, stop):
            if stop is not None and stop.is_set():
                return None
            agent = _Agent(self.dimension, floats=floats)  # unknown layout: via vec0
            agent.vecs = np.empty((0, self.dimension), np.float32)
            agent.put([self._encode(r) for r in self._agent_rows(cur, name)])
        if self._big(agent.n):
            agent.ensure_codes()  # here, so that a loader thread computes them too
        return agent

    # -- loading in the background -------------------------------------------------------
    def _start_load(self, name: str, floats: bool) -> None:
        """Hand ``name`` to the loader thread (started on first use)."""
        assert self._reader is not None
        self._load = _Load(name, floats)
        if self._loader is None or not self._loader.is_alive():  # first use, or it died
            self._loader = threading.Thread(
                target=self._loader_main, name="memengine-vector-loader", daemon=True
            )
            self._loader.start()
        self._loads.put(self._load)

    def _loader_main(self) -> None:
        """The loader thread: read each agent handed to it in its own read transaction, with
        the log position that snapshot had, until :meth:`close`."""
        assert self._reader is not None
        while (load := self._loads.get()) is not None:
            try:
                with self._reader() as cur:
                    seq = cur.execute("SELECT max(seq) FROM vector_log").fetchone()[0] or 0
                    count = int(
                        cur.execute(
                            "SELECT count(*) FROM episodes WHERE agent = ?", (load.name,)
                        ).fetchone()[0]
                    )
                    load.agent = self._read_agent(cur, load.name, load.floats, count, load.stop)
                    load.seq = seq
            except StoreError as exc:  # kept: the next search loads inline and raises it
                load.error = exc
            finally:
                load.done.set()


@dataclass
class _Load:
    """One agent read by the loader thread: the rows read, the log position of the snapshot
    they were read from, or the error that stopped it."""

    name: str
    floats: bool
    done: threading.Event = field(default_factory=threading.Event)
    stop: threading.Event = field(default_factory=threading.Event)
    agent: _Agent | None = None
    seq: int = 0
    error: StoreError | None = None


def _unit(vecs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (a zero row stays zero), as float32."""
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return (vecs / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)


def _sign_bits(vecs: npt.NDArray[np.float32], words: int) -> npt.NDArray[np.uint64]:
    """One bit per dimension (positive or not), packed into ``words`` 64-bit words per row."""
    packed = np.packbits(vecs > 0, axis=1)
    out = np.zeros((len(vecs), words * 8), np.uint8)
    out[:, : packed.shape[1]] = packed
    return out.view(np.uint64)


def _int8(vecs: npt.NDArray[np.float32]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Each row as int8 codes and a scale (row ≈ codes × scale), the largest entry at ±127."""
    top = np.abs(vecs).max(axis=1) if len(vecs) else np.empty(0, np.float32)
    scale = (np.where(top > 0, top, 1.0) / 127.0).astype(np.float32)
    return np.rint(vecs / scale[:, None]).astype(np.int8), scale


def _hamming(bits: npt.NDArray[np.uint64], codes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
    """Hamming distances, queries × rows, of each code in ``codes`` to every row of ``bits``."""
    found = simsimd.cdist(
        np.ascontiguousarray(codes).view(np.uint8),
        np.ascontiguousarray(bits).view(np.uint8),
        metric="hamming",
        dtype="bin8",
        out_dtype="float32",
    )
    return np.asarray(found).astype(np.uint16)  # whole numbers up to the dimension


def _nearest_rows(dist: npt.NDArray[np.uint16], keep: int, limit: int) -> npt.NDArray[np.intp]:
    """Rows (ascending) whose distance is at most the ``keep``-th smallest; never over ``limit``.

    A counting pass over the small integer distances instead of a partial
    sort; every row tied at the cut is kept, so the choice does not depend on
    the order of the rows.
    """
    cum = np.cumsum(np.bincount(dist, minlength=limit + 1))
    cut = min(int(np.searchsorted(cum, keep)), limit)
    return np.flatnonzero(dist <= cut)


@dataclass(frozen=True)
class _Codes:
    """An agent's prefilter codes as they were when a search started (its arrays are never
    resized in place, so a search keeps a consistent view while writes go on)."""

    bits: npt.NDArray[np.uint64]
    q8: npt.NDArray[np.int8]
    scale: npt.NDArray[np.float32]
    words: int
    dimension: int


_Floats = Callable[[npt.NDArray[np.intp]], tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]]
"""Rows' float32 unit vectors by row position: the rows found (in order) and their vectors."""


def _held(vecs: npt.NDArray[np.float32]) -> _Floats:
    """Floats from the agent's matrix in memory."""
    return lambda rows: (rows, np.take(vecs, rows, axis=0))


def _stored(cur: Any, ids: npt.NDArray[np.int64], dimension: int) -> _Floats:
    """Floats of a compact agent, read from ``vec0`` by id: each row once per search (the
    queries of a turn share most of their shortlists); a row not found is left out."""
    seen: dict[int, npt.NDArray[np.float32] | None] = {}

    def read(rows: npt.NDArray[np.intp]) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        for r in rows.tolist():
            if r not in seen:  # point lookups by primary key: vec0 has no IN plan
                row = cur.execute(
                    "SELECT embedding FROM episode_vectors WHERE episode_id = ?", (int(ids[r]),)
                ).fetchone()
                seen[r] = None if row is None else np.frombuffer(row[0], dtype=np.float32)
        found = [r for r in rows.tolist() if seen[r] is not None]
        vecs = np.empty((len(found), dimension), np.float32)
        for j, r in enumerate(found):
            vecs[j] = seen[r]
        return np.asarray(found, np.intp), _unit(vecs)

    return read


def _same_vector(agent: _Agent, pos: int, unit: npt.NDArray[np.float32]) -> bool:
    """Whether the row at ``pos`` holds ``unit``: its floats, or a compact agent's codes."""
    if agent.floats:
        return bool(np.allclose(agent.vecs[pos], unit, atol=1e-6))
    q8, scale = _int8(unit[None, :])
    return bool(
        (agent.bits[pos] == _sign_bits(unit[None, :], agent.words)[0]).all()
        and np.abs(agent.q8[pos].astype(np.int16) - q8[0]).max() <= 1
        and np.isclose(agent.scale[pos], scale[0], rtol=1e-5)
    )


def _prefiltered(
    ids: npt.NDArray[np.int64],
    floats: _Floats,
    codes: _Codes,
    n: int,
    mask: npt.NDArray[np.bool_] | None,
    q: npt.NDArray[np.float32],
    k: int,
    keep: int,
    rescore: int,
) -> list[list[tuple[int, float]]]:
    """Top ``k`` per query: sign bits keep ``keep`` rows, int8 shortlists, float32 decides.

    1. One pass over ``n × dimension / 8`` bytes of sign bits (Hamming
       distance, every query at once) keeps the ``keep`` nearest rows.
    2. Their int8 copies (a quarter of the floats' bytes) are scored, and
       the best ``rescore`` go on.
    3. Those are rescored exactly with their float32 vectors from ``floats``.

    Recall against the exact scan is measured by ``memengine bench``.
    """
    far = codes.dimension + 1
    dist = _hamming(codes.bits[:n], _sign_bits(q, codes.words))
    if mask is not None:
        dist[:, ~mask] = far
    q8, _ = _int8(q)
    out: list[list[tuple[int, float]]] = []
    for j in range(len(q)):
        rows = _nearest_rows(dist[j], keep, codes.dimension)
        if not len(rows):
            out.append([])
            continue
        # np.take gathers rows at about twice the speed of fancy indexing here
        shortlist = np.take(codes.q8, rows, axis=0)
        approx = np.asarray(simsimd.cdist(q8[j : j + 1], shortlist, metric="dot"))[0]
        approx *= np.take(codes.scale, rows)
        m = min(len(rows), rescore)
        short = rows[np.argpartition(-approx, m - 1)[:m]] if m < len(rows) else rows
        short, vecs = floats(short)
        exact = vecs @ q[j]
        kk = min(k, len(short))
        if kk == 0:
            out.append([])
            continue
        top = np.argpartition(-exact, kk - 1)[:kk]
        top = top[np.argsort(-exact[top], kind="stable")]
        out.append([(int(ids[short[i]]), float(1.0 - exact[i])) for i in top])
    return out


_BLOCK = 1024
"""Rows per block when scoring several queries (the block stays in cache for all of them)."""


def _scores(vecs: npt.NDArray[np.float32], q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Cosine scores, rows × queries: one matrix-vector product for one query; for several,
    products over blocks of rows (a skinny matrix product over the whole matrix is
    compute-bound in BLAS: about 3× one query for 4 queries, against 2× in blocks)."""
    if len(q) == 1:
        return (vecs @ q[0])[:, None]
    qt = np.ascontiguousarray(q.T)
    if len(vecs) <= _BLOCK:
        return vecs @ qt
    return np.concatenate([vecs[s : s + _BLOCK] @ qt for s in range(0, len(vecs), _BLOCK)])


def log_reset(cur: Any) -> None:
    """Log a :data:`RESET` (inside the caller's write transaction): every process's index
    drops the agents it holds at its next search, after the vector table was made anew."""
    cur.execute("INSERT INTO vector_log (episode_id, agent) VALUES (?, '')", (RESET,))


def prune_log(cur: Any, keep: int = _LOG_KEEP) -> None:
    """Drop log entries older than the newest ``keep`` (inside the caller's write transaction)."""
    cur.execute(
        "DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", (keep,)
    )
