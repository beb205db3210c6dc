"""Pure arithmetic of strength: levels, per-task decay factors, reinforcement by use and impact.

Nothing here touches the database; :mod:`.sleep`, :mod:`.feedback` and
:mod:`.simulate` all use these functions, so the simulation and the engine
follow the same rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime

from ..config import LifecycleConfig

__all__ = [
    "MAX_LEVEL",
    "capacity_weight",
    "decay_factor",
    "impact_of",
    "is_principle",
    "level_for",
    "next_level",
    "per_task_factor",
    "recency",
    "squash",
]

MAX_LEVEL = 5


def level_for(access_count: int, thresholds: Sequence[int]) -> int:
    """The consolidation level that ``access_count`` uses earn: the highest threshold reached."""
    level = 0
    for i, threshold in enumerate(thresholds):
        if access_count >= threshold:
            level = i
    return min(level, MAX_LEVEL)


def next_level(current: int, access_count: int, thresholds: Sequence[int]) -> int:
    """The level after one sleep: one step towards :func:`level_for`, never down.

    Consolidation takes a sleep per level; only deep recall lowers a level.
    """
    target = level_for(access_count, thresholds)
    return min(current + 1, target) if target > current else current


def per_task_factor(level: int, cfg: LifecycleConfig) -> float:
    """The strength multiplier of one task at ``level``: ``daily ** (1 / expected_tasks_per_day)``."""
    daily = cfg.daily_retention[max(0, min(level, MAX_LEVEL))]
    return float(daily ** (1.0 / cfg.expected_tasks_per_day))


def decay_factor(level: int, tasks: float, cfg: LifecycleConfig) -> float:
    """The multiplier for ``tasks`` tasks at ``level`` (1.0 for no task)."""
    if tasks <= 0:
        return 1.0
    return float(per_task_factor(level, cfg) ** tasks)


def capacity_weight(level: int, cfg: LifecycleConfig) -> float:
    """How much one memory at ``level`` counts towards the capacity limit."""
    return float(cfg.capacity_weights[max(0, min(level, MAX_LEVEL))])


def impact_of(
    cfg: LifecycleConfig, *, helpful: bool, task_success: bool | None, prevented_error: bool
) -> float:
    """The impact score a feedback adds to each used memory."""
    impact = 0.0
    if helpful:
        impact += cfg.impact_helpful
    if task_success:
        impact += cfg.impact_task_success
    if prevented_error:
        impact += cfg.impact_prevented_error
    return impact


def is_principle(kind: str, tags: Sequence[str]) -> bool:
    """True for a principle (kind ``principle``, or a tag ``principle`` in any case: the rule
    SQL reads as ``store.lifecycle._rows.IS_PRINCIPLE``; tags are stored without outer
    spaces): outside the life cycle."""
    return kind == "principle" or any(t.lower() == "principle" for t in tags)


def squash(value: float, scale: float = 1.0) -> float:
    """Map a non-negative value to [0, 1): ``v / (v + scale)`` (0 for negatives)."""
    if value <= 0:
        return 0.0
    return value / (value + scale)


def recency(last: datetime | None, now: datetime, half_life_days: float) -> float:
    """Exponential recency in (0, 1]: 1 when ``last`` is now, 0.5 after one half-life; 0 for None."""
    if last is None:
        return 0.0
    days = max(0.0, (now - last).total_seconds() / 86400)
    return math.exp(-math.log(2) * days / half_life_days)
