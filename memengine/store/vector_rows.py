"""One agent's rows as the in-memory vector index holds them: unit vectors (or only their
prefilter codes, for a compact agent), the filter columns beside them, and tombstones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from .filters import Filters
from .vec0_chunks import STATUS
from .vector_scan import int8_codes, sign_bits, unit

__all__ = ["MIN_ROWS", "AgentRows", "held_rows", "resized", "row_bytes", "same_vectors"]

MIN_ROWS = 16
"""The fewest rows an agent's arrays make room for when they grow (a 1-row agent that
gains a row: 33 KB at 512-d)."""


def row_bytes(dimension: int, *, floats: bool, codes: bool) -> int:
    """Bytes the index's budget counts per row of room: the float32 vector and/or the
    prefilter codes (int8 copy, sign bits, scale), with the id, filter columns and
    tombstone."""
    size = 32
    if floats:
        size += 4 * dimension
    if codes:
        size += dimension + dimension // 8 + 4
    return size


@dataclass
class AgentRows:
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
    def held_bytes(self) -> int:
        """Bytes the index's budget counts for this agent: every row its arrays have room
        for (the spare room past the last row and the dropped rows until the next compaction
        take memory as the live rows do), at :func:`row_bytes` each, the codes counted once
        made."""
        codes = bool(len(self.bits))
        return len(self.ids) * row_bytes(self.dimension, floats=self.floats, codes=codes)

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
            self.bits[lo:hi] = sign_bits(self.vecs[lo:hi], self.words)
            self.q8[lo:hi], self.scale[lo:hi] = int8_codes(self.vecs[lo:hi])
            self.coded = hi

    def _resize_codes(self, cap: int) -> None:
        """New code arrays of ``cap`` rows holding the current ones (zeros after them)."""
        self.bits = resized(self.bits.reshape(-1, self.words), cap)
        self.q8 = resized(self.q8.reshape(-1, self.dimension), cap)
        self.scale = resized(self.scale, cap)

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

    def _grow(self, need: int, room: int | None = None) -> None:
        """Make room for ``need`` more rows: half as many again as the rows held (at least
        :data:`MIN_ROWS`), so that appends stay amortised O(1) while a small agent keeps
        small arrays (a floor of 1,024 rows once gave every held agent 2 MB at 512-d);
        never past ``room`` rows (what the index's budget leaves this agent) unless the new
        rows themselves need more."""
        cap = len(self.ids)
        if self.n + need <= cap:
            return
        ahead = max(self.n + self.n // 2, MIN_ROWS)
        new = max(self.n + need, ahead if room is None else min(ahead, room))
        self.ids = resized(self.ids, new)
        if self.floats:
            self.vecs = resized(self.vecs.reshape(-1, self.dimension), new)
        else:
            self._resize_codes(new)
        self.kind = resized(self.kind, new)
        self.sens = resized(self.sens, new)
        self.status = resized(self.status, new)
        self.ts = resized(self.ts, new)
        self.alive = resized(self.alive, new)

    def put(
        self, rows: Sequence[tuple[int, int, int, int, int, bytes]], *, room: int | None = None
    ) -> None:
        """Insert or replace rows of (id, kind code, sensitivity, status code, ts, vector
        blob); the arrays grow to at most ``room`` rows when these fit (see :meth:`_grow`)."""
        if not rows:
            return
        block = np.frombuffer(b"".join(r[5] for r in rows), dtype=np.float32)
        cols = [np.asarray([r[j] for r in rows], dtype=np.int64) for j in range(5)]
        self.put_arrays(cols[0], cols[1], cols[2], cols[3], cols[4], block, room=room)

    def put_arrays(
        self,
        ids: npt.NDArray[np.int64],
        kind: npt.NDArray[np.int64],
        sens: npt.NDArray[np.int64],
        status: npt.NDArray[np.int64],
        ts: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
        *,
        room: int | None = None,
    ) -> None:
        """Insert or replace rows given as columns (vectors: n × dimension, any norm), in
        arrays of at most ``room`` rows when they fit."""
        m = len(ids)
        for i in ids.tolist():
            if i in self.where:
                self.drop(i)
        self._grow(m, room)
        lo, hi = self.n, self.n + m
        self.ids[lo:hi] = ids
        self.kind[lo:hi] = kind
        self.sens[lo:hi] = sens
        self.status[lo:hi] = status
        self.ts[lo:hi] = ts
        self.write_vectors(lo, unit(vectors.reshape(m, self.dimension)))
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
            self.bits[lo:hi] = sign_bits(unit, self.words)
            self.q8[lo:hi], self.scale[lo:hi] = int8_codes(unit)
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


def resized(a: npt.NDArray[Any], n: int) -> npt.NDArray[Any]:
    """A copy of ``a`` with ``n`` rows: its rows first, zeros after (``n`` ≥ ``len(a)``)."""
    out = np.zeros((n, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out


def held_rows(agent: AgentRows, pos: npt.NDArray[np.int64]) -> AgentRows:
    """A copy of the rows at ``pos`` of ``agent`` (their vectors or codes and filter
    columns), to compare outside the index's lock."""
    rows = AgentRows(agent.dimension, floats=agent.floats)
    if agent.floats:
        rows.vecs = agent.vecs[pos]
    else:
        rows.bits, rows.q8, rows.scale = agent.bits[pos], agent.q8[pos], agent.scale[pos]
    rows.kind, rows.sens = agent.kind[pos], agent.sens[pos]
    rows.status, rows.ts = agent.status[pos], agent.ts[pos]
    return rows


def same_vectors(
    agent: AgentRows, pos: npt.NDArray[np.int64], units: npt.NDArray[np.float32]
) -> npt.NDArray[np.bool_]:
    """For each row at ``pos``, whether it holds that row of ``units``: its floats, or a
    compact agent's codes (:func:`same_vector` for many rows at once)."""
    if agent.floats:
        held = agent.vecs[pos]
        return np.asarray(
            (np.abs(held - units) <= 1e-6 + 1e-5 * np.abs(units)).all(axis=1), dtype=np.bool_
        )
    q8, scale = int8_codes(units)
    return np.asarray(
        (agent.bits[pos] == sign_bits(units, agent.words)).all(axis=1)
        & (np.abs(agent.q8[pos].astype(np.int16) - q8).max(axis=1) <= 1)
        & np.isclose(agent.scale[pos], scale, rtol=1e-5),
        dtype=np.bool_,
    )
