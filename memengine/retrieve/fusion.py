"""Pure ranking functions: Reciprocal Rank Fusion and friends. No I/O, easy to test."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Fused", "RankedList", "rrf"]


@dataclass(frozen=True)
class RankedList:
    """One ranked list from one search: ids best first, with the raw score of each."""

    name: str
    ids: Sequence[int]
    scores: Sequence[float] = ()
    weight: float = 1.0


@dataclass
class Fused:
    """One fused candidate: its fused score and the rank it had in each list (1-based)."""

    id: int
    score: float = 0.0
    ranks: dict[str, int] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)


def rrf(lists: Sequence[RankedList], *, k: float = 10.0, limit: int | None = None) -> list[Fused]:
    """Weighted Reciprocal Rank Fusion: ``score(d) = Σ w_l / (k + rank_l(d))``.

    Ties keep the order of first appearance. ``limit`` caps the output.
    """
    fused: dict[int, Fused] = {}
    for lst in lists:
        for position, doc in enumerate(lst.ids):
            rank = position + 1
            entry = fused.get(doc)
            if entry is None:
                entry = fused[doc] = Fused(id=doc)
            entry.score += lst.weight / (k + rank)
            if lst.name not in entry.ranks or rank < entry.ranks[lst.name]:
                entry.ranks[lst.name] = rank
                if position < len(lst.scores):
                    entry.raw[lst.name] = float(lst.scores[position])
    ranked = sorted(fused.values(), key=lambda f: -f.score)
    return ranked[:limit] if limit is not None else ranked


def best_per_id(
    pairs: Sequence[tuple[int, float]], *, higher_is_better: bool
) -> Mapping[int, float]:
    """Keep the best score of each id among (id, score) pairs."""
    out: dict[int, float] = {}
    for doc, score in pairs:
        old = out.get(doc)
        if old is None or (score > old if higher_is_better else score < old):
            out[doc] = score
    return out
