"""Life-aware ranking (opt-in) and the training of each agent's learned scorer.

Stage 1 keeps the candidates whose similarity to the query reaches
``similarity_threshold``; Stage 2 orders them by the linear formula
(:func:`~memengine.lifecycle.features.linear_score`) until the agent has
``learned_scorer_min_samples`` labelled samples and a trained scorer, then
by the learned scorer (:mod:`.scorer`). The selection rule
(:mod:`.selection`) then decides where the cliff is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from ..config import LifecycleConfig
from ..errors import DamagedDatabase
from ..store import lifecycle as store_lc
from ..store.database import Store
from ..text import quoted_name
from .agents import known_agent
from .features import linear_score
from .scorer import Scorer, auc, sample_weights, train

__all__ = ["ScorerInfo", "life_scores", "load_agent_scorer", "train_agent_scorer"]


@dataclass(frozen=True)
class ScorerInfo:
    """A trained scorer: how many samples (and used ones) it saw, its training AUC."""

    agent: str
    samples: int
    positives: int
    auc: float
    trained_at: datetime
    last_turn: int


def load_agent_scorer(store: Store, agent: str, cfg: LifecycleConfig) -> Scorer | None:
    """The agent's learned scorer when it was trained on enough samples, else None."""
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
    return scorer


def life_scores(
    feats: Sequence[Sequence[float]], scorer: Scorer | None, cfg: LifecycleConfig
) -> list[float]:
    """Stage-2 scores in [0, 1]: the learned scorer when given, else the linear formula."""
    if not feats:
        return []
    if scorer is not None:
        return [float(s) for s in scorer.predict(np.asarray(feats, dtype=float))]
    return [linear_score(f, cfg.linear_weights) for f in feats]


def train_agent_scorer(
    store: Store, agent: str, cfg: LifecycleConfig, now: datetime, *, force: bool = False
) -> ScorerInfo | None:
    """Train and save the agent's scorer from its answered turns; None when not (yet) possible
    (NotFound for an agent the file does not know).

    It learns from the latest ``scorer_max_samples`` candidates. Nothing happens with fewer than ``learned_scorer_min_samples`` samples,
    with only one class of labels among the samples that weigh something (with
    ``failure_weight`` 0 those of failed tasks weigh nothing), or (unless ``force``)
    when no feedback was given since the last training.
    """
    with store.connections.read() as cur:
        known_agent(cur, agent)
        x, y, outcomes, last, first = store_lc.training_samples(cur, agent, cfg.scorer_max_samples)
        try:
            existing = store_lc.load_scorer(cur, agent)
        except DamagedDatabase:  # a row that no longer reads: trained anew, over it
            existing = None
        late = existing is not None and store_lc.feedback_since_training(cur, agent, first)
        mark = store_lc.samples_after(cur)
    weights = sample_weights(outcomes, cfg.failure_weight)
    weighed = {yi for yi, w in zip(y, weights, strict=True) if w > 0}
    if len(x) < cfg.learned_scorer_min_samples or len(weighed) < 2:
        return None
    unchanged = existing is not None and existing[2] >= last and existing[1] == len(x)
    if not force and unchanged and not late:
        return None
    scorer = train(
        x,
        y,
        weights,
        seed=cfg.scorer_seed,
        epochs=cfg.scorer_epochs,
        learning_rate=cfg.scorer_learning_rate,
    )
    train_auc = auc(scorer.predict(x), y)
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
    return ScorerInfo(agent, len(x), int(sum(y)), train_auc, now, last)
