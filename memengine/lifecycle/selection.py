"""The cliff: how many of the ranked candidates are handed to the model.

- ``top_k``: the first ``k``, whatever their scores.
- ``threshold``: every candidate scoring at least ``threshold`` (at most ``max_results``).
- ``probabilistic``: the first ``k`` for sure, then each next one with
  probability = its score (in [0, 1]), drawn from a seeded generator, up
  to ``max_results`` in all. Memories just below the cliff still get a
  chance to be seen, and so to be used and reinforced.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

__all__ = ["Selection", "select"]

Selection = Literal["top_k", "threshold", "probabilistic"]


def select(
    scores: Sequence[float],
    *,
    mode: Selection,
    k: int,
    threshold: float,
    max_results: int,
    rng: np.random.Generator,
) -> list[int]:
    """Positions of the selected candidates; ``scores`` must be sorted best first."""
    n = len(scores)
    if mode == "top_k":
        return list(range(min(k, n)))
    if mode == "threshold":
        return [i for i in range(n) if scores[i] >= threshold][:max_results]
    chosen = list(range(min(k, n)))
    for i in range(len(chosen), n):
        if len(chosen) >= max_results:
            break
        if rng.random() < max(0.0, min(1.0, float(scores[i]))):
            chosen.append(i)
    return chosen
