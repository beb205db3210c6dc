"""Pure ranking metrics for evidence retrieval: Recall@k, All@k, NDCG@k, MRR, precision.

A *ranking* is the sequence of evidence ids of the retrieved episodes, best
first; an entry may be ``None`` (an episode that is nobody's evidence, such
as a padding episode). *relevant* is the set of the question's evidence ids
(never empty: questions without evidence are not scored). Relevance is
binary, and an id that appears twice in a ranking counts once, at its best
rank. Everything here is pure and has no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from ..errors import InvalidInput

__all__ = [
    "RANKING_METRICS",
    "all_at_k",
    "first_hit_rank",
    "mean",
    "mean_by_group",
    "mrr",
    "ndcg_at_k",
    "precision",
    "recall_at_k",
    "score_ranking",
]

Id = Hashable | None
K = TypeVar("K", bound=Hashable)

RANKING_METRICS: tuple[str, ...] = ("R@1", "R@5", "R@10", "All@5", "All@10", "NDCG@10", "MRR")
"""The names :func:`score_ranking` returns, in table order."""


def _check(relevant: Collection[Hashable], k: int | None = None) -> None:
    if not relevant:
        raise InvalidInput("a question needs at least one relevant id to be scored")
    if k is not None and k < 1:
        raise InvalidInput(f"k must be at least 1, not {k}")


def _hits(ranking: Sequence[Id], relevant: Collection[Hashable], k: int | None) -> set[Hashable]:
    top = ranking if k is None else ranking[:k]
    return {x for x in top if x is not None and x in relevant}


def recall_at_k(ranking: Sequence[Id], relevant: Collection[Hashable], k: int) -> float:
    """The fraction of the relevant ids found in the top ``k`` of the ranking."""
    _check(relevant, k)
    return len(_hits(ranking, relevant, k)) / len(set(relevant))


def all_at_k(ranking: Sequence[Id], relevant: Collection[Hashable], k: int) -> float:
    """1.0 when every relevant id is in the top ``k`` of the ranking, else 0.0."""
    _check(relevant, k)
    return 1.0 if len(_hits(ranking, relevant, k)) == len(set(relevant)) else 0.0


def ndcg_at_k(ranking: Sequence[Id], relevant: Collection[Hashable], k: int) -> float:
    """Binary-relevance NDCG@k: DCG = Σ 1/log2(rank+1) over relevant hits, over the ideal DCG."""
    _check(relevant, k)
    seen: set[Hashable] = set()
    dcg = 0.0
    for position, doc in enumerate(ranking[:k]):
        if doc is not None and doc in relevant and doc not in seen:
            seen.add(doc)
            dcg += 1.0 / math.log2(position + 2)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(set(relevant)), k)))
    return dcg / ideal


def first_hit_rank(ranking: Sequence[Id], relevant: Collection[Hashable]) -> int | None:
    """The 1-based rank of the first relevant id in the ranking, or None when there is none."""
    for position, doc in enumerate(ranking):
        if doc is not None and doc in relevant:
            return position + 1
    return None


def mrr(ranking: Sequence[Id], relevant: Collection[Hashable]) -> float:
    """The reciprocal rank of the first relevant id (0.0 when none is retrieved)."""
    _check(relevant)
    rank = first_hit_rank(ranking, relevant)
    return 0.0 if rank is None else 1.0 / rank


def precision(selected: Sequence[Id], relevant: Collection[Hashable]) -> float | None:
    """The fraction of ``selected`` entries that are relevant; None when nothing was selected."""
    if not selected:
        return None
    return sum(1 for x in selected if x is not None and x in relevant) / len(selected)


def score_ranking(ranking: Sequence[Id], relevant: Collection[Hashable]) -> dict[str, float]:
    """Every metric of :data:`RANKING_METRICS` for one question."""
    return {
        "R@1": recall_at_k(ranking, relevant, 1),
        "R@5": recall_at_k(ranking, relevant, 5),
        "R@10": recall_at_k(ranking, relevant, 10),
        "All@5": all_at_k(ranking, relevant, 5),
        "All@10": all_at_k(ranking, relevant, 10),
        "NDCG@10": ndcg_at_k(ranking, relevant, 10),
        "MRR": mrr(ranking, relevant),
    }


def mean(values: Iterable[float]) -> float | None:
    """The arithmetic mean, or None for no values."""
    items = list(values)
    return sum(items) / len(items) if items else None


def mean_by_group(
    rows: Iterable[tuple[K, Mapping[str, float]]],
) -> dict[K, dict[str, float]]:
    """Average per-question metric dicts by group key; each group also gets ``n``.

    Groups keep the order in which they first appear; a metric missing from
    some rows of a group is averaged over the rows that have it.
    """
    sums: dict[K, dict[str, float]] = {}
    counts: dict[K, dict[str, int]] = {}
    sizes: dict[K, int] = {}
    for key, metrics in rows:
        group = sums.setdefault(key, {})
        count = counts.setdefault(key, {})
        sizes[key] = sizes.get(key, 0) + 1
        for name, value in metrics.items():
            group[name] = group.get(name, 0.0) + value
            count[name] = count.get(name, 0) + 1
    out: dict[K, dict[str, float]] = {}
    for key, group in sums.items():
        averaged = {name: total / counts[key][name] for name, total in group.items()}
        out[key] = {"n": float(sizes[key]), **averaged}
    return out
