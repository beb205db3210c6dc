"""The nine ranking features of a candidate memory, each in [0, 1], and the linear score.

==================== =====================================================================
feature              value
==================== =====================================================================
similarity           cosine similarity of query and memory, clipped to [0, 1]
strength             ``s / (s + 1)`` of the memory's strength
perspective_strength ``p / (p + 1)`` of its strength under the task's perspective (0 if none)
use_ratio            ``access_count / candidate_count`` (used vs merely retrieved), ≤ 1
recency              ``0.5 ** (days since last access / half-life)``; never used: since created
impact               ``i / (i + 2)`` of the accumulated impact score
tag_overlap          share of the memory's tags whose words all occur in the query
principle            1 for a principle (kind or tag), else 0
perspective_match    1 when the memory has been used under the task's perspective, or is tagged
                     with it, else 0
==================== =====================================================================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ..config import LifecycleConfig
from ..models import Episode
from ..text import query_terms
from .strength import is_principle, recency, squash

__all__ = ["FEATURES", "LEARNED", "TaskContext", "features", "learned_columns", "linear_score"]

FEATURES = (
    "similarity",
    "strength",
    "perspective_strength",
    "use_ratio",
    "recency",
    "impact",
    "tag_overlap",
    "principle",
    "perspective_match",
)
IMPACT_SCALE = 2.0

LEARNED = ("similarity", "tag_overlap", "principle")
"""The features the learned scorer reads: those no feedback changes. The others (strength,
use ratio, recency of the last use, impact, the perspective's) are what earlier turns'
labels made of a memory: fitted, they teach "used before, used again", and a memory never
used scores nothing whatever its similarity (:mod:`.ranking` adds strength and recency by
the linear formula instead)."""
_LEARNED_AT = [FEATURES.index(name) for name in LEARNED]


@dataclass(frozen=True)
class TaskContext:
    """What a task contributes to the features: the time, the query's terms, its perspective."""

    now: datetime
    terms: frozenset[str]
    perspective: str | None = None

    @classmethod
    def of(cls, query: str, now: datetime, perspective: str | None = None) -> TaskContext:
        """The context of a task with this query text."""
        return cls(now, frozenset(query_terms(query)), perspective)


def _tag_overlap(tags: Sequence[str], terms: frozenset[str]) -> float:
    tags = [t for t in tags if t.strip().lower() != "principle"]
    if not tags or not terms:
        return 0.0
    hits = 0
    for tag in tags:
        words = query_terms(tag)
        if words and all(w in terms for w in words):
            hits += 1
    return hits / len(tags)


def features(
    ep: Episode,
    similarity: float,
    perspective_strength: float | None,
    ctx: TaskContext,
    cfg: LifecycleConfig,
) -> list[float]:
    """The nine features of ``ep`` for a task, in :data:`FEATURES` order.

    ``perspective_strength`` is the memory's strength under the task's
    perspective, or None when it has never been used under it.
    """
    principle = is_principle(ep.kind.value, ep.tags)
    tagged = ctx.perspective is not None and ctx.perspective in ep.tags
    return [
        max(0.0, min(1.0, similarity)),
        squash(ep.strength),
        squash(perspective_strength or 0.0),
        min(1.0, ep.access_count / max(ep.candidate_count, 1)),
        recency(ep.last_access or ep.created_at, ctx.now, cfg.recency_half_life_days),
        squash(ep.impact_score, IMPACT_SCALE),
        _tag_overlap(ep.tags, ctx.terms),
        1.0 if principle else 0.0,
        1.0 if (perspective_strength is not None or tagged) else 0.0,
    ]


def learned_columns(rows: Sequence[Sequence[float]]) -> list[list[float]]:
    """The :data:`LEARNED` features of rows of the nine (:data:`FEATURES` order)."""
    return [[float(row[i]) for i in _LEARNED_AT] for row in rows]


def linear_score(
    f: Sequence[float], weights: Sequence[float], relevance: float | None = None
) -> float:
    """``w0·similarity + w1·strength + w2·recency`` divided by the sum of the weights (in [0, 1]);
    ``relevance`` (the learned scorer's estimate) in place of the similarity when given."""
    w_sim, w_str, w_rec = weights
    total = w_sim + w_str + w_rec
    if total <= 0:
        return 0.0
    first = f[0] if relevance is None else relevance
    return (w_sim * first + w_str * f[1] + w_rec * f[4]) / total
