"""The pure rules of the life cycle: levels, decay, sleep plans, capacity, selection, features."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from pydantic import ValidationError

from memengine.config import LifecycleConfig, load_config
from memengine.errors import ConfigError, InvalidInput
from memengine.lifecycle.features import FEATURES, TaskContext, features, linear_score
from memengine.lifecycle.selection import select
from memengine.lifecycle.simulate import format_table, simulate
from memengine.lifecycle.sleep import MemoryState, plan_sleep, tasks_since
from memengine.lifecycle.strength import (
    decay_factor,
    impact_of,
    level_for,
    next_level,
    per_task_factor,
    recency,
)
from memengine.models import Episode, EpisodeKind

CFG = LifecycleConfig()
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


def test_levels_follow_the_access_thresholds() -> None:
    thresholds = CFG.level_thresholds
    assert [level_for(n, thresholds) for n in (0, 4, 5, 14, 15, 30, 59, 60, 100, 10_000)] == [
        0, 0, 1, 1, 2, 3, 3, 4, 5, 5,
    ]  # fmt: skip
    # one step per sleep, never down
    assert next_level(0, 100, thresholds) == 1
    assert next_level(3, 0, thresholds) == 3


def test_per_task_factor_is_the_daily_target_spread_over_expected_tasks() -> None:
    for level, daily in enumerate(CFG.daily_retention):
        factor = per_task_factor(level, CFG)
        assert factor**CFG.expected_tasks_per_day == pytest.approx(daily)
    assert per_task_factor(0, CFG) == pytest.approx(0.99488, abs=1e-5)
    assert decay_factor(0, 0, CFG) == 1.0
    twenty = LifecycleConfig(expected_tasks_per_day=20)
    assert per_task_factor(0, twenty) ** 20 == pytest.approx(0.95)


def test_impact_constants() -> None:
    assert impact_of(CFG, helpful=True, task_success=True, prevented_error=True) == 5.5
    assert impact_of(CFG, helpful=False, task_success=False, prevented_error=False) == 0.0


def test_bad_per_level_lists_are_config_errors() -> None:
    bad = [
        ({"daily_retention": [0.9, 0.9]}, "daily_retention needs 6 values"),
        ({"capacity_weights": [1.0]}, "capacity_weights needs 6 values"),
        ({"level_thresholds": [0, 5, 3, 30, 60, 100]}, "ascending"),
        ({"level_thresholds": [-5, 5, 15, 30, 60, 100]}, "from 0 or more"),
        ({"daily_retention": [-0.5, 0.97, 0.98, 0.99, 0.995, 0.998]}, r"in \(0, 1\]"),
    ]
    for lifecycle, message in bad:  # read from a file or the environment: ConfigError
        with pytest.raises(ConfigError, match=f"invalid setting lifecycle.\\w+ .*: .*{message}"):
            load_config(environ={}, overrides={"lifecycle": lifecycle})
        with pytest.raises(ValidationError, match=message):  # built by hand: pydantic's
            LifecycleConfig(**lifecycle)
    cfg = LifecycleConfig()
    with pytest.raises(ValidationError, match="ascending"):  # assigned: checked too
        cfg.level_thresholds = [0, 5, 3, 30, 60, 100]


def _day(states: list[MemoryState], cfg: LifecycleConfig = CFG) -> list[MemoryState]:
    return plan_sleep(states, lambda s: cfg.expected_tasks_per_day, cfg).states


def test_an_unused_memory_loses_five_percent_a_day_and_is_archived_after_45_days() -> None:
    states = [MemoryState(id=1, strength=1.0), MemoryState(id=2, strength=0.5)]
    archived_on: dict[int, int] = {}
    for day in range(1, 61):
        states = _day(states)
        if day == 1:
            assert states[0].strength == pytest.approx(0.95)
        for s in states:
            if s.status == "archived":
                archived_on.setdefault(s.id, day)
    assert archived_on == {1: 45, 2: 32}
    assert states[0].strength == pytest.approx(0.95**45)  # archived memories stop decaying


def test_a_perspective_strength_keeps_a_memory_active() -> None:
    states = [MemoryState(id=1, strength=0.05, perspectives={"cost": 0.5})]
    after = _day(states)[0]
    assert after.status == "active"
    assert after.perspectives["cost"] == pytest.approx(0.5 * 0.95)
    assert _day([MemoryState(id=1, strength=0.05, perspectives={"cost": 0.05})])[0].status == (
        "archived"
    )


def test_principles_never_decay_archive_or_prune() -> None:
    cfg = LifecycleConfig(max_weighted_total=1)
    states = [
        MemoryState(id=1, strength=0.01, principle=True),
        MemoryState(id=2, strength=1.0),
    ]
    plan = plan_sleep(states, lambda s: 1000, cfg)
    assert plan.pruned == [2]
    assert [(s.id, s.strength, s.status) for s in plan.states] == [(1, 0.01, "active")]


def test_capacity_pruning_lowest_level_first_then_oldest_access() -> None:
    cfg = LifecycleConfig(max_weighted_total=20)
    states = [
        MemoryState(id=1, strength=1, level=2, access_count=15, last_access_ts=100),  # weight 4
        MemoryState(id=2, strength=1, level=0, last_access_ts=50),  # 1
        MemoryState(id=3, strength=1, level=0, last_access_ts=10),  # 1, oldest level 0
        MemoryState(id=4, strength=1, level=1, access_count=5, last_access_ts=5),  # 2
        MemoryState(id=5, strength=1, level=3, access_count=30, last_access_ts=1),  # 8
        MemoryState(id=6, strength=1, level=0, created_ts=30),  # 1, never used: created 30
        MemoryState(id=7, strength=1, level=1, access_count=5, last_access_ts=500),  # 2
        MemoryState(id=8, strength=1, level=2, access_count=15, last_access_ts=7),  # 4
    ]
    plan = plan_sleep(states, lambda s: 0, cfg)
    assert plan.weighted_before == 23
    assert plan.pruned == [3, 6, 2]
    assert plan.weighted_after == 20 <= cfg.max_weighted_total


def test_tasks_since_counts_turns_at_or_after_creation() -> None:
    turns = [10.0, 20.0, 30.0, 40.0]
    assert tasks_since(0.0, turns) == 4
    assert tasks_since(20.0, turns) == 3
    assert tasks_since(41.0, turns) == 0


def test_selection_modes() -> None:
    scores = [0.9, 0.8, 0.6, 0.55, 0.4, 0.1]
    rng = np.random.default_rng(0)
    assert select(scores, mode="top_k", k=3, threshold=0.5, max_results=10, rng=rng) == [0, 1, 2]
    assert select(scores, mode="threshold", k=3, threshold=0.5, max_results=10, rng=rng) == [
        0, 1, 2, 3,
    ]  # fmt: skip
    assert select(scores, mode="threshold", k=3, threshold=0.5, max_results=2, rng=rng) == [0, 1]
    runs = [
        select(scores, mode="probabilistic", k=2, threshold=0, max_results=6,
               rng=np.random.default_rng(seed))
        for seed in range(400)
    ]  # fmt: skip
    assert all(r[:2] == [0, 1] for r in runs)
    share = np.mean([2 in r for r in runs])
    assert 0.5 < share < 0.7  # chosen with probability = its score (0.6)
    again = select(scores, mode="probabilistic", k=2, threshold=0, max_results=6,
                   rng=np.random.default_rng(7))  # fmt: skip
    assert again == select(scores, mode="probabilistic", k=2, threshold=0, max_results=6,
                           rng=np.random.default_rng(7))  # fmt: skip


def _episode(**kw: object) -> Episode:
    base: dict[str, object] = dict(
        id=1, agent="a", kind=EpisodeKind.fact, content="Acme steel price", occurred_at=NOW,
        created_at=NOW - timedelta(days=60),
    )  # fmt: skip
    base.update(kw)
    return Episode(**base)  # type: ignore[arg-type]


def test_features_are_nine_values_in_unit_range() -> None:
    ep = _episode(
        strength=1.0, access_count=3, candidate_count=6, last_access=NOW - timedelta(days=30),
        impact_score=2.0, tags=("acme", "principle", "cost"),
    )  # fmt: skip
    ctx = TaskContext.of("what does acme charge", NOW, "cost")
    f = features(ep, 0.8, 0.3, ctx, CFG)
    assert len(f) == len(FEATURES) == 9
    named = dict(zip(FEATURES, f, strict=True))
    assert named["similarity"] == 0.8
    assert named["strength"] == 0.5
    assert named["perspective_strength"] == pytest.approx(0.3 / 1.3)
    assert named["use_ratio"] == 0.5
    assert named["recency"] == pytest.approx(0.5)
    assert named["impact"] == 0.5
    assert named["tag_overlap"] == 0.5  # acme yes, cost no (principle is not counted)
    assert named["principle"] == 1.0
    assert named["perspective_match"] == 1.0
    plain = features(_episode(), 1.7, None, TaskContext.of("x", NOW), CFG)
    assert plain[0] == 1.0 and plain[2] == 0.0 and plain[8] == 0.0
    assert plain[4] == pytest.approx(recency(NOW - timedelta(days=60), NOW, 30.0))
    assert all(0.0 <= v <= 1.0 for v in f + plain)
    assert linear_score(f, CFG.linear_weights) == pytest.approx(0.4 * 0.8 + 0.4 * 0.5 + 0.2 * 0.5)


def test_simulation_matches_the_worked_example() -> None:
    result = simulate(CFG, tasks=600)
    assert result.checkpoints[0] == 10
    never = result.strengths["never used"]
    assert never[0] == pytest.approx(0.95)  # one day, level 0: 5 % lost
    assert result.archived_at["never used"] == 450  # day 45
    assert result.archived_at["read only (education), never used"] == 320  # day 32
    busy = result.final["used every 3 tasks"]
    assert busy.status == "active" and busy.level == 5 and busy.strength > 10
    assert result.final["principle"].strength == 1.0
    table = format_table(result, CFG)
    print("\n" + table)
    assert "level 0: 0.950 a day = 0.99488 a task" in table
    assert math.isclose(0.95**45, 0.0994, abs_tol=1e-3)


def test_a_simulation_with_a_fractional_number_of_tasks_a_day() -> None:
    """Days of 2 and 3 tasks in turn for 2.5 a day; each sleep decays one day."""
    cfg = CFG.model_copy(update={"expected_tasks_per_day": 2.5})
    result = simulate(cfg, tasks=600)
    assert result.checkpoints[:2] == [2, 17] and result.days[:2] == [1.0, 7.0]
    assert result.strengths["never used"][0] == pytest.approx(0.95)
    assert result.archived_day["never used"] == 45.0
    table = format_table(result, cfg)
    assert table.startswith("600 tasks, 2.5 tasks a day") and "archived (day 45)" in table


def test_a_simulation_needs_at_least_one_task_a_day() -> None:
    with pytest.raises(InvalidInput, match="at least one task"):
        simulate(CFG.model_copy(update={"expected_tasks_per_day": 0.5}), tasks=10)
