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
few dozen point lookups per query. An agent's rows are a
:class:`~.vector_rows.AgentRows`; the scans are in :mod:`.vector_scan`.

The index stays in step with the file through ``vector_log``, a change log that triggers fill in the same
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
codes alone exceed ``budget_bytes`` the caller falls back to ``vec0``. The
budget counts every row the arrays have room for, not only the rows in use: an
agent's arrays grow by half its rows at a time (at least 16 rows), and not past
the room the budget leaves them unless the new rows need it.
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

from ..errors import StoreError
from . import vector_scan as scan
from .filters import Filters
from .vec0_chunks import STATUS, chunk_blobs, chunk_heads, chunk_rows, valid_rows
from .vector_rows import AgentRows, held_rows, row_bytes, same_vectors

__all__ = ["RESET", "VectorIndex", "log_reset", "prune_log"]

RESET = -1
"""The ``episode_id`` of a log entry that invalidates every cached agent (a re-embed)."""

_LOG_KEEP = 200_000
"""Log entries kept; an index further behind than this reloads instead of replaying."""


_CHECK_BLOCK = 4096
"""Rows compared at a time by :meth:`VectorIndex.stale_ids` (under the index's lock)."""


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
        self._agents: OrderedDict[str, AgentRows] = OrderedDict()
        self._too_big: set[str] = set()
        self._seq = 0
        self._grown = False  # held agents gained rows since the budget was last checked
        self._kinds: dict[str, int] = {}
        self._lock = threading.Lock()

    @staticmethod
    def row_bytes(dimension: int, *, floats: bool, codes: bool) -> int:
        """What the budget counts per row of room an agent's arrays have: the float32 vector
        and/or the prefilter codes (int8 copy, sign bits, scale), with the id, filter columns
        and tombstone (:func:`.vector_rows.row_bytes`)."""
        return row_bytes(dimension, floats=floats, codes=codes)

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

    def warm(self, cur: Any, name: str) -> str | None:
        """Load ``name`` now, in the caller's thread, whatever its size (a server can do this
        before its first turn), and say how it is searched then (see :meth:`mode`); None
        when ``cur``'s snapshot is older than the index (warm again in a new one)."""
        load = self._load
        if load is not None and load.name == name:
            load.done.wait()
        with self._lock:
            current = self._sync(cur)
            if self._load is not None and self._load.name == name:
                self._load = None  # read from a snapshot this one cannot take in: read again
            if name not in self._agents:
                self._asked[name] = max(self._asked.get(name, 0), self.load_after - 1)
                if not current:
                    return None
                self._agent(cur, name, inline=True)
        return self.mode(name)

    def forget(self, name: str) -> None:
        """Drop what this process holds of agent ``name`` now (a forgotten user's vectors),
        not at the next search; a load of it under way is stopped and not taken in."""
        with self._lock:
            self._agents.pop(name, None)
            self._too_big.discard(name)
            self._asked.pop(name, None)
            load = self._load
            if load is not None and load.name == name:
                load.stop.set()
                self._load = None

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
            current = self._sync(cur)
            agent = self._agent(cur, filters.agent, current=current)
            if agent is None:
                return None
            n, ids, vecs = agent.n, agent.ids, agent.vecs
            mask = agent.mask(filters, self._kinds)
            prefilter = not agent.floats or (bool(self.exact_max_rows) and n > self.exact_max_rows)
            if prefilter:
                agent.ensure_codes()
                codes = scan.Codes(agent.bits, agent.q8, agent.scale, agent.words, self.dimension)
        q = np.asarray(queries, dtype=np.float32).reshape(-1, self.dimension)
        q = scan.unit(q)
        if n == 0:
            return [[] for _ in range(len(q))]
        if prefilter:
            keep = self.prefilter_rows(n)
            if agent.floats:
                return scan.prefiltered(
                    ids, scan.held(vecs), codes, n, mask, q, k, keep, max(8 * k, 64)
                )
            stored = scan.stored(cur, ids, self.dimension)
            return scan.prefiltered(ids, stored, codes, n, mask, q, k, keep, max(2 * k, 16))
        return scan.exact(ids, vecs, n, mask, q, k)

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

    def stale_ids(self, cur: Any) -> list[int] | None:
        """Ids on which an in-memory agent disagrees with ``vec0`` in this snapshot (empty:
        in step); None when the index has moved past the snapshot (another thread's newer
        search synced it, before or during the check): the caller reads again.

        Each agent's rows are read through ``vec0`` and compared without the lock; under
        it only the held rows of a block are copied out (searches go on meanwhile)."""
        with self._lock:
            if not self._sync(cur):
                return None
            seq, names = self._seq, list(self._agents)
        bad: list[int] = []
        for name in names:
            stored = [self._encode(r) for r in self._agent_rows(cur, name)]
            with self._lock:
                agent = self._agents.get(name)
                if self._seq != seq:
                    return None
                if agent is None:  # let go meanwhile: nothing held to disagree
                    continue
                where = dict(agent.where)
            bad.extend(sorted(set(where) ^ {row[0] for row in stored}))
            common = [row for row in stored if row[0] in where]
            for start in range(0, len(common), _CHECK_BLOCK):
                block = common[start : start + _CHECK_BLOCK]
                units = scan.unit(np.stack([np.frombuffer(r[5], dtype=np.float32) for r in block]))
                pos = np.array([where[row[0]] for row in block], dtype=np.int64)
                with self._lock:
                    if self._seq != seq or self._agents.get(name) is not agent:
                        return None
                    held = held_rows(agent, pos)
                same = (
                    (held.kind == [row[1] for row in block])
                    & (held.sens == [row[2] for row in block])
                    & (held.status == [row[3] for row in block])
                    & (held.ts == [row[4] for row in block])
                    & same_vectors(held, np.arange(len(block)), units)
                )
                bad.extend(row[0] for row, ok in zip(block, same, strict=True) if not ok)
        return bad[:100]

    # -- keeping in step -----------------------------------------------------------------
    def _sync(self, cur: Any) -> bool:
        """Bring the held agents up to this search's snapshot, then take in a finished
        background load when it can be brought up to the same snapshot. False when the
        snapshot is older than the index (another thread's newer search synced it): an
        agent read from this snapshot would then miss rows the log has already passed."""
        row = cur.execute(  # two subqueries: each min/max is then one b-tree probe
            "SELECT (SELECT min(seq) FROM vector_log), (SELECT max(seq) FROM vector_log)"
        ).fetchone()
        lo, hi = (row[0] or 0), (row[1] or 0)
        self._replay(cur, lo, hi)
        if self._load is not None and self._load.done.is_set() and hi == self._seq:
            self._take_load(cur, lo, hi)
        return hi == self._seq

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
        held = self._held_bytes() if touched else 0
        for name, ids in touched.items():
            agent = self._agents.get(name)  # gone if an episode moved from another agent
            if agent is None:
                continue
            before = agent.held_bytes
            if self._apply(cur, name, agent, ids, others=held - before):
                held += agent.held_bytes - before
            else:
                del self._agents[name]  # a big batch: reload on next use
                held -= before
        if touched:  # held agents grew: the next use checks the budget (see _agent)
            self._grown = True

    def _apply(self, cur: Any, name: str, agent: AgentRows, ids: list[int], *, others: int) -> bool:
        """Bring these rows of ``agent`` in step with the snapshot of ``cur``, its arrays
        growing only into the room the budget leaves beside ``others`` (the bytes the other
        agents hold); False (nothing done) for a batch so big that reading the agent again
        is cheaper."""
        if len(ids) > max(2000, len(agent.where) // 10):
            return False
        for i in ids:
            agent.drop(i)
        moved = self._rows(cur, ids)  # (agent, encoded row) of the ids still stored
        agent.put([r[1:] for r in moved if r[0] == name], room=self._room(agent, others))
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
            mine = [int(e) for e, a in changes if a == name]
            if not self._apply(cur, name, agent, mine, others=self._held_bytes()):
                return
        need = agent.held_bytes
        if agent.floats and self._held_bytes() + need > self.budget_bytes:
            agent.drop_floats()  # the room was taken while it loaded: hold its codes
            need = agent.held_bytes
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
        agent: AgentRows,
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
                agent.write_vectors(pos, scan.unit(p.vecs))
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

    def _agent(
        self, cur: Any, name: str, *, inline: bool = False, current: bool = True
    ) -> AgentRows | None:
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
        at a time) while its searches go on in ``vec0``, unless ``inline``. A search whose
        snapshot is not ``current`` (older than the index) reads nothing to hold.
        """
        if not self.enabled or name in self._too_big:
            return None
        agent = self._agents.get(name)
        if agent is not None:
            self._agents.move_to_end(name)
            if self._grown:  # rows added since the loads: the budget holds in a long-lived
                self._grown = False  # process too; the least recent go first, this one
                self._make_room(0)  # last (grown past it alone: loaded again, compact)
                agent = self._agents.get(name)
            if agent is not None:
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
        if not current:
            return None  # read from this older snapshot, it would lack rows the log passed
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
        """Bytes the budget counts for the agents held (:attr:`.AgentRows.held_bytes`)."""
        return sum(a.held_bytes for a in self._agents.values())

    def _room(self, agent: AgentRows, others: int) -> int:
        """Rows ``agent``'s arrays may have in what the budget leaves beside ``others`` bytes
        (its arrays grow no further ahead of its rows than that)."""
        size = row_bytes(self.dimension, floats=agent.floats, codes=bool(len(agent.bits)))
        return max(0, self.budget_bytes - others) // size

    def _make_room(self, need: int) -> None:
        """Evict the agents used least recently until ``need`` more bytes fit the budget."""
        held = self._held_bytes()
        while self._agents and held + need > self.budget_bytes:
            held -= self._agents.popitem(last=False)[1].held_bytes

    def _read_agent(
        self,
        cur: Any,
        name: str,
        floats: bool,
        count: int,
        stop: threading.Event | None = None,
    ) -> AgentRows | None:
        """Read the agent's rows (its chunk blobs, or through ``vec0`` when their layout is
        not the expected one), with or without its floats, and the prefilter codes a search
        of it will need; None if ``stop`` was set."""
        agent = AgentRows(self.dimension, floats=floats)
        agent.vecs = np.empty((0, self.dimension), np.float32)
        if not self._read_chunks(cur, name, agent, count, stop):
            if stop is not None and stop.is_set():
                return None
            agent = AgentRows(self.dimension, floats=floats)  # unknown layout: via vec0
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
    agent: AgentRows | None = None
    seq: int = 0
    error: StoreError | None = None


def log_reset(cur: Any, *, above: int = 0) -> None:
    """Log a :data:`RESET` (inside the caller's write transaction): every process's index
    drops the agents it holds at its next search, after the vector table was made anew.

    ``above`` is the largest ``seq`` the log held before the caller deleted from its
    top: the reset is numbered past it, so no index that replayed up to it takes the
    reset (or what follows it) for an entry it has already seen.
    """
    cur.execute(
        "INSERT INTO vector_log (seq, episode_id, agent) "
        "VALUES (max(?, coalesce((SELECT max(seq) FROM vector_log), 0)) + 1, ?, '')",
        (above, RESET),
    )


def prune_log(cur: Any, keep: int = _LOG_KEEP) -> None:
    """Drop log entries older than the newest ``keep`` (inside the caller's write transaction)."""
    cur.execute(
        "DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", (keep,)
    )
