"""Life-aware ranking (opt-in) and the training of each agent's learned scorer.

Stage 1 keeps the candidates whose similarity to the query reaches
``similarity_threshold``; Stage 2 orders them by the linear formula
(:func:`~memengine.lifecycle.features.linear_score`: similarity, strength, recency)
until the agent has a trained scorer (``learned_scorer_min_samples`` labelled samples,
the used ones of ``learned_scorer_min_used_memories`` memories), then by the same formula
with the learned scorer's estimate (:mod:`.scorer`, from the features no feedback changes)
in place of the similarity. The selection rule (:mod:`.selection`) then decides where
the cliff is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from ..config import LifecycleConfig
from ..errors import DamagedDatabase
from ..store import lifecycle as store_lc
from ..store.database import Store
from ..text import quoted_name
from .agents import known_agent
from .features import LEARNED, learned_columns, linear_score
from .scorer import Scorer, auc, memory_weights, sample_weights, train

__all__ = [
    "ScorerInfo",
    "life_scores",
    "load_agent_scorer",
    "scorer_declined",
    "train_agent_scorer",
]


@dataclass(frozen=True)
class ScorerInfo:
    """A trained scorer: how many samples (and used ones, of how many memories) it saw, its
    training AUC (its samples weighted as it learned them: :func:`~.scorer.auc`)."""

    agent: str
    samples: int
    positives: int
    auc: float
    trained_at: datetime
    last_turn: int
    used_memories: int = 0


def load_agent_scorer(store: Store, agent: str, cfg: LifecycleConfig) -> Scorer | None:
    """The agent's learned scorer when it was trained on enough samples, used ones of
    enough memories among them, else None (also for one of an earlier version, which read
    all nine features: the linear formula ranks until a training replaces it)."""
    with store.connections.read() as cur:
        found = store_lc.load_scorer(cur, agent)  # (DamagedDatabase: not JSON)
    if found is None or found[1] < cfg.learned_scorer_min_samples:
        return None
    try:
        scorer = Scorer.from_json(found[0])
        scorer.predict(np.zeros((1, len(scorer.mean)), dtype=float))  # (its shapes agree)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise DamagedDatabase(
            f"the learned scorer of agent {quoted_name(agent)} no longer reads ({type(exc).__name__}: "
            f"{str(exc)[:80]}): `memengine train-scorer --agent …` trains it again"
        ) from exc
    if scorer.features != LEARNED or scorer.used_memories < cfg.learned_scorer_min_used_memories:
        return None
    return scorer


def life_scores(
    feats: Sequence[Sequence[float]], scorer: Scorer | None, cfg: LifecycleConfig
) -> list[float]:
    """Stage-2 scores in [0, 1]: the linear formula, with the learned scorer's estimate in
    place of the similarity when a scorer is given (strength and recency count as before
    it was trained: they are left out of what it learns)."""
    if not feats:
        return []
    if scorer is not None:
        learned = scorer.predict(np.asarray(learned_columns(feats), dtype=float))
        return [
            linear_score(f, cfg.linear_weights, float(p))
            for f, p in zip(feats, learned, strict=True)
        ]
    return [linear_score(f, cfg.linear_weights) for f in feats]


def _declined(
    samples: store_lc.Samples, weights: npt.NDArray[np.float64], cfg: LifecycleConfig
) -> str | None:
    """Why a scorer is not trained from ``samples`` (weighing ``weights``), or None."""
    needed = cfg.learned_scorer_min_samples
    if len(samples.features) < needed:
        return (
            f"not enough labelled samples yet ({len(samples.features):,} of the {needed:,} "
            "needed, with used and unused candidates among them)"
        )
    weighed = {y for y, w in zip(samples.labels, weights, strict=True) if w > 0}
    if len(weighed) < 2:
        return "its samples that weigh something are all used or all unused"
    used = _used_memories(samples, weights)
    least = cfg.learned_scorer_min_used_memories
    if len(used) < least:
        shown = ", ".join(map(str, sorted(used)[:5])) + (", …" if len(used) > 5 else "")
        return (
            f"its used samples are all of {len(used)} memor{'y' if len(used) == 1 else 'ies'} "
            f"([{shown}]); it needs used ones of {least} ([lifecycle] "
            "learned_scorer_min_used_memories): fitted to fewer, it learns which memories "
            "were used, not what makes a memory useful"
        )
    return None


def _used_memories(samples: store_lc.Samples, weights: npt.NDArray[np.float64]) -> set[int]:
    """The memories of the used samples that weigh something."""
    rows = zip(samples.ids, samples.labels, weights, strict=True)
    return {i for i, y, w in rows if y and w > 0}


def scorer_declined(store: Store, agent: str, cfg: LifecycleConfig) -> str | None:
    """Why a training of the agent's scorer would decline now (too few samples, one label
    only, the used ones of too few memories), or None when it would train (NotFound for
    an agent the file does not know)."""
    with store.connections.read() as cur:
        known_agent(cur, agent)
        samples = store_lc.training_samples(cur, agent, cfg.scorer_max_samples)
    return _declined(samples, sample_weights(samples.outcomes, cfg.failure_weight), cfg)


def train_agent_scorer(
    store: Store, agent: str, cfg: LifecycleConfig, now: datetime, *, force: bool = False
) -> ScorerInfo | None:
    """Train and save the agent's scorer from its answered turns; None when not (yet) possible
    (NotFound for an agent the file does not know).

    It learns from the latest ``scorer_max_samples`` candidates, the samples of one memory
    capped (:func:`~.scorer.memory_weights`). Nothing happens with fewer than
    ``learned_scorer_min_samples`` samples, with only one class of labels among the
    samples that weigh something (with ``failure_weight`` 0 those of failed tasks weigh
    nothing), when the used ones are of fewer than ``learned_scorer_min_used_memories``
    memories (:func:`scorer_declined` says which), or (unless ``force``) when no feedback
    was given since the last training.
    """
    with store.connections.read() as cur:
        known_agent(cur, agent)
        samples = store_lc.training_samples(cur, agent, cfg.scorer_max_samples)
        try:
            existing = store_lc.load_scorer(cur, agent)
        except DamagedDatabase:  # a row that no longer reads: trained anew, over it
            existing = None
        first = samples.first
        late = existing is not None and store_lc.feedback_since_training(cur, agent, first)
        mark = store_lc.samples_after(cur)
    x, y, last = samples.features, samples.labels, samples.last
    weights = sample_weights(samples.outcomes, cfg.failure_weight)
    if _declined(samples, weights, cfg) is not None:
        return None
    unchanged = (
        existing is not None
        and existing[2] >= last
        and existing[1] == len(x)
        and existing[0].get("features") == list(LEARNED)  # (not an earlier version's)
    )
    if not force and unchanged and not late:
        return None
    used = _used_memories(samples, weights)
    inputs = learned_columns(x)
    weighed = weights * memory_weights(samples.ids, y)
    scorer = train(
        inputs,
        y,
        weighed,
        seed=cfg.scorer_seed,
        epochs=cfg.scorer_epochs,
        learning_rate=cfg.scorer_learning_rate,
        used_memories=len(used),
    )
    train_auc = auc(scorer.predict(inputs), y, weighed)  # (by the weights it learned by)
    with store.connections.write() as cur:
        if store_lc.samples_after(cur) != mark:  # re-embedded meanwhile: old cosines
            return None
        if not store_lc.has_turns_up_to(cur, agent, last):  # forgotten while it trained (and
            return None  # made again since, maybe, by an add): nothing is kept
        store_lc.save_scorer(
            cur,
            agent,
            weights=scorer.to_json(),
            now=now,
            samples=len(x),
            last_turn=last,
            auc=train_auc,
        )
    return ScorerInfo(agent, len(x), int(sum(y)), train_auc, now, last, len(used))
