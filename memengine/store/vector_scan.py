"""The vector scan's kernels: unit rows, the sign-bit and int8 prefilter codes, and the
top-k searches over them (exact in float32, or prefiltered and rescored).

The Hamming and int8 kernels are SimSIMD's (compiled, SIMD); numpy does the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import simsimd

__all__ = [
    "BLOCK",
    "Codes",
    "Floats",
    "exact",
    "hamming",
    "held",
    "int8_codes",
    "nearest_rows",
    "prefiltered",
    "scores",
    "sign_bits",
    "stored",
    "top_k",
    "unit",
]


def unit(vecs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Rows scaled to unit length (a zero row stays zero), as float32."""
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return (vecs / np.where(norms > 0, norms, 1.0)).astype(np.float32, copy=False)


def sign_bits(vecs: npt.NDArray[np.float32], words: int) -> npt.NDArray[np.uint64]:
    """One bit per dimension (positive or not), packed into ``words`` 64-bit words per row."""
    packed = np.packbits(vecs > 0, axis=1)
    out = np.zeros((len(vecs), words * 8), np.uint8)
    out[:, : packed.shape[1]] = packed
    return out.view(np.uint64)


def int8_codes(
    vecs: npt.NDArray[np.float32],
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    """Each row as int8 codes and a scale (row ≈ codes × scale), the largest entry at ±127."""
    top = np.abs(vecs).max(axis=1) if len(vecs) else np.empty(0, np.float32)
    scale = (np.where(top > 0, top, 1.0) / 127.0).astype(np.float32)
    return np.rint(vecs / scale[:, None]).astype(np.int8), scale


def hamming(bits: npt.NDArray[np.uint64], codes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint16]:
    """Hamming distances, queries × rows, of each code in ``codes`` to every row of ``bits``."""
    found = simsimd.cdist(
        np.ascontiguousarray(codes).view(np.uint8),
        np.ascontiguousarray(bits).view(np.uint8),
        metric="hamming",
        dtype="bin8",
        out_dtype="float32",
    )
    return np.asarray(found).astype(np.uint16)  # whole numbers up to the dimension


def nearest_rows(dist: npt.NDArray[np.uint16], keep: int, limit: int) -> npt.NDArray[np.intp]:
    """Rows (ascending) whose distance is at most the ``keep``-th smallest; never over ``limit``.

    A counting pass over the small integer distances instead of a partial
    sort; every row tied at the cut is kept, so the choice does not depend on
    the order of the rows.
    """
    cum = np.cumsum(np.bincount(dist, minlength=limit + 1))
    cut = min(int(np.searchsorted(cum, keep)), limit)
    return np.flatnonzero(dist <= cut)


@dataclass(frozen=True)
class Codes:
    """An agent's prefilter codes as they were when a search started (its arrays are never
    resized in place, so a search keeps a consistent view while writes go on)."""

    bits: npt.NDArray[np.uint64]
    q8: npt.NDArray[np.int8]
    scale: npt.NDArray[np.float32]
    words: int
    dimension: int


Floats = Callable[[npt.NDArray[np.intp]], tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]]
"""Rows' float32 unit vectors by row position: the rows found (in order) and their vectors."""


def held(vecs: npt.NDArray[np.float32]) -> Floats:
    """Floats from the agent's matrix in memory."""
    return lambda rows: (rows, np.take(vecs, rows, axis=0))


def stored(cur: Any, ids: npt.NDArray[np.int64], dimension: int) -> Floats:
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
        return np.asarray(found, np.intp), unit(vecs)

    return read


def prefiltered(
    ids: npt.NDArray[np.int64],
    floats: Floats,
    codes: Codes,
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
    dist = hamming(codes.bits[:n], sign_bits(q, codes.words))
    if mask is not None:
        dist[:, ~mask] = far
    q8, _ = int8_codes(q)
    out: list[list[tuple[int, float]]] = []
    for j in range(len(q)):
        rows = nearest_rows(dist[j], keep, codes.dimension)
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
        out.append(top_k(ids[short], vecs @ q[j], k))
    return out


def exact(
    ids: npt.NDArray[np.int64],
    vecs: npt.NDArray[np.float32],
    n: int,
    mask: npt.NDArray[np.bool_] | None,
    q: npt.NDArray[np.float32],
    k: int,
) -> list[list[tuple[int, float]]]:
    """Top ``k`` per query by an exact scan of the first ``n`` rows that pass ``mask``."""
    if mask is not None and mask.sum() < n // 4:  # few rows pass: score only those
        rows = np.flatnonzero(mask)
        found = scores(np.take(vecs, rows, axis=0), q)
        row_ids = ids[rows]
    else:
        found = scores(vecs[:n], q)
        row_ids = ids[:n]
        if mask is not None:
            found[~mask] = -np.inf
    return [top_k(row_ids, found[:, j], k) for j in range(found.shape[1])]


def top_k(
    row_ids: npt.NDArray[np.int64], cosines: npt.NDArray[np.float32], k: int
) -> list[tuple[int, float]]:
    """The ``k`` best rows as (id, cosine distance), best first; rows masked out (-inf) never.
    Rows of equal cosine (the vectors of identical texts: a nightly "so tired") come the
    last stored first (highest id first: the latest telling is the one a "when did I last…"
    asks for), and the ones kept at the cut are the last stored too, whatever ``k``: a
    deeper exact scan lists the same first hits, and so does ``vec0`` (:func:`.vectors.knn`)
    (a prefiltered search's shortlists choose among ties before this sees them)."""
    kk = min(k, len(cosines))
    if kk == 0:
        return []
    top = np.argpartition(-cosines, kk - 1)[:kk]
    if kk < len(cosines):
        last = cosines[top].min()
        above = top[cosines[top] > last]
        tied = np.flatnonzero(cosines == last)
        if len(tied) > kk - len(above):  # more rows tie at the cut than it keeps
            tied = tied[np.argsort(-row_ids[tied], kind="stable")]
            top = np.concatenate([above, tied[: kk - len(above)]])
    top = top[np.lexsort((-row_ids[top], -cosines[top]))]
    return [(int(row_ids[i]), float(1.0 - cosines[i])) for i in top if cosines[i] != -np.inf]


BLOCK = 1024
"""Rows per block when scoring several queries (the block stays in cache for all of them)."""


def scores(vecs: npt.NDArray[np.float32], q: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Cosine scores, rows × queries: one matrix-vector product for one query; for several,
    products over blocks of rows (a skinny matrix product over the whole matrix is
    compute-bound in BLAS: about 3× one query for 4 queries, against 2× in blocks)."""
    if len(q) == 1:
        single: npt.NDArray[np.float32] = (vecs @ q[0])[:, None]
        return single
    qt = np.ascontiguousarray(q.T)
    if len(vecs) <= BLOCK:
        return vecs @ qt
    return np.concatenate([vecs[s : s + BLOCK] @ qt for s in range(0, len(vecs), BLOCK)])
