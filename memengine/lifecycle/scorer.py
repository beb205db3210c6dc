"""The learned ranking scorer: a 2-layer network (3 → 16 → 1, ReLU, sigmoid) in numpy.

It reads the features no feedback changes (:data:`~.features.LEARNED`: similarity, tag
overlap, principle) and is trained with binary cross-entropy on the candidates of answered
turns (label 1 = the memory was used), samples of failed tasks weighted by
``failure_weight`` (0.5) and those of one memory capped (:func:`memory_weights`), with
full-batch Adam from a seeded initialisation: the same samples and seed give the same
weights. Inputs are standardised with the training mean and deviation, stored with the
weights.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InvalidInput
from .features import FEATURES, LEARNED

__all__ = ["HIDDEN", "Scorer", "auc", "memory_weights", "sample_weights", "train"]

HIDDEN = 16
Array = npt.NDArray[np.float64]


def _sigmoid(z: Array) -> Array:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -40.0, 40.0))))


@dataclass(frozen=True)
class Scorer:
    """Trained weights: ``sigmoid(relu(((x - mean) / std) @ w1 + b1) @ w2 + b2)`` over the
    named ``features``; ``used_memories``: how many memories its used samples came from."""

    w1: Array
    b1: Array
    w2: Array
    b2: float
    mean: Array
    std: Array
    features: tuple[str, ...] = LEARNED
    used_memories: int = 0

    def predict(self, x: npt.ArrayLike) -> Array:
        """Scores in (0, 1) for rows of its features (shape ``(n, len(features))``)."""
        arr = np.asarray(x, dtype=np.float64).reshape(-1, len(self.mean))
        h = np.maximum(0.0, ((arr - self.mean) / self.std) @ self.w1 + self.b1)
        return _sigmoid(h @ self.w2 + self.b2)

    def to_json(self) -> dict[str, Any]:
        """The weights as a JSON-ready dict."""
        return {
            "features": list(self.features),
            "used_memories": self.used_memories,
            "w1": self.w1.tolist(),
            "b1": self.b1.tolist(),
            "w2": self.w2.tolist(),
            "b2": float(self.b2),
            "mean": self.mean.tolist(),
            "std": self.std.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scorer:
        """Rebuild a scorer from :meth:`to_json` output (one saved before the features were
        named read the nine of :data:`~.features.FEATURES`)."""
        return cls(
            w1=np.asarray(data["w1"], dtype=np.float64),
            b1=np.asarray(data["b1"], dtype=np.float64),
            w2=np.asarray(data["w2"], dtype=np.float64),
            b2=float(data["b2"]),
            mean=np.asarray(data["mean"], dtype=np.float64),
            std=np.asarray(data["std"], dtype=np.float64),
            features=tuple(str(f) for f in data.get("features", FEATURES)),
            used_memories=int(data.get("used_memories", 0)),
        )


def sample_weights(outcomes: Sequence[str], failure_weight: float) -> Array:
    """1.0 per sample, ``failure_weight`` for samples of a failed task."""
    return np.asarray([failure_weight if o == "failure" else 1.0 for o in outcomes], dtype=float)


def memory_weights(ids: Sequence[int], labels: Sequence[int]) -> Array:
    """A factor per sample that caps what one memory's samples of a label weigh together
    at what the median memory's of that label do: a memory used in 30 turns (the same
    question asked daily) teaches as much as one used in two, not the whole scorer."""
    counts = Counter(zip(ids, labels, strict=True))
    cap = {
        label: float(np.median([n for (_, lab), n in counts.items() if lab == label]))
        for label in {lab for _, lab in counts}
    }
    return np.asarray(
        [min(1.0, cap[lab] / counts[(i, lab)]) for i, lab in zip(ids, labels, strict=True)],
        dtype=float,
    )


def train(
    x: npt.ArrayLike,
    y: npt.ArrayLike,
    weights: npt.ArrayLike | None = None,
    *,
    seed: int = 0,
    epochs: int = 600,
    learning_rate: float = 0.02,
    l2: float = 1e-4,
    features: Sequence[str] = LEARNED,
    used_memories: int = 0,
) -> Scorer:
    """Fit the scorer to rows ``x`` of the named ``features`` and labels ``y`` (0/1) with
    full-batch Adam (``used_memories`` is kept with it: see :class:`Scorer`)."""
    xa = np.asarray(x, dtype=np.float64).reshape(-1, len(features))
    ya = np.asarray(y, dtype=np.float64).reshape(-1)
    if len(xa) != len(ya) or len(xa) == 0:
        raise InvalidInput("training needs as many labels as feature rows, and at least one")
    wa = np.ones_like(ya) if weights is None else np.asarray(weights, dtype=np.float64)
    if wa.shape != ya.shape or not np.all(np.isfinite(wa)) or (wa < 0).any() or wa.sum() <= 0:
        raise InvalidInput("training needs one finite weight ≥ 0 per label, not all of them 0")
    wa = wa / wa.sum()
    mean = xa.mean(axis=0)
    std = xa.std(axis=0)
    std[std < 1e-6] = 1.0
    xs = (xa - mean) / std

    rng = np.random.default_rng(seed)
    n_in = len(features)
    params = {
        "w1": rng.normal(0.0, np.sqrt(2.0 / n_in), (n_in, HIDDEN)),
        "b1": np.zeros(HIDDEN),
        "w2": rng.normal(0.0, np.sqrt(1.0 / HIDDEN), HIDDEN),
        "b2": np.zeros(1),
    }
    prior = float(np.clip((wa * ya).sum(), 1e-3, 1 - 1e-3))
    params["b2"][0] = np.log(prior / (1 - prior))
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    for step in range(1, epochs + 1):
        pre = xs @ params["w1"] + params["b1"]
        h = np.maximum(0.0, pre)
        p = _sigmoid(h @ params["w2"] + params["b2"][0])
        dz = wa * (p - ya)
        grads = {
            "w2": h.T @ dz + l2 * params["w2"],
            "b2": np.array([dz.sum()]),
        }
        dh = np.outer(dz, params["w2"]) * (pre > 0)
        grads["w1"] = xs.T @ dh + l2 * params["w1"]
        grads["b1"] = dh.sum(axis=0)
        for k, g in grads.items():
            m[k] = beta1 * m[k] + (1 - beta1) * g
            v[k] = beta2 * v[k] + (1 - beta2) * g * g
            m_hat = m[k] / (1 - beta1**step)
            v_hat = v[k] / (1 - beta2**step)
            params[k] = params[k] - learning_rate * m_hat / (np.sqrt(v_hat) + eps)
    return Scorer(
        w1=params["w1"],
        b1=params["b1"],
        w2=params["w2"],
        b2=float(params["b2"][0]),
        mean=mean,
        std=std,
        features=tuple(features),
        used_memories=used_memories,
    )


def auc(
    scores: npt.ArrayLike, labels: npt.ArrayLike, weights: npt.ArrayLike | None = None
) -> float:
    """Area under the ROC curve (ties count half), each sample counting by its ``weights``
    (default 1); 0.5 when one class weighs nothing. A training's is weighted as it was
    trained: unweighted, the unused samples of the memories offered in every turn (capped
    by :func:`memory_weights`) would decide it."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    lab = np.asarray(labels).astype(bool).reshape(-1)
    w = np.ones_like(s) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    if not len(s) == len(lab) == len(w):
        raise InvalidInput("an AUC needs one label and one weight per score")
    pos_w, neg_w = float(w[lab].sum()), float(w[~lab].sum())
    if pos_w <= 0 or neg_w <= 0:
        return 0.5
    values, inverse = np.unique(s, return_inverse=True)
    pos_at = np.bincount(inverse, weights=np.where(lab, w, 0.0), minlength=len(values))
    neg_at = np.bincount(inverse, weights=np.where(lab, 0.0, w), minlength=len(values))
    below = np.cumsum(neg_at) - neg_at  # the unused weight scored lower than each value
    return float((pos_at * (below + 0.5 * neg_at)).sum() / (pos_w * neg_w))
