"""The sleep's choices: which memories capacity pruning deletes first,
which tags make a principle, what its notes say and how many tasks its report counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memengine import Config, FixedClock, Memory
from memengine.config import LifecycleConfig
from memengine.lifecycle.sleep import MemoryState, plan_sleep

from .helpers import HashEmbedder


def test_capacity_keeps_a_used_strong_memory_over_never_used_weak_ones(
    db_path: Path, clock: FixedClock
) -> None:
    cfg = Config(lifecycle=LifecycleConfig(max_weighted_total=5))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        mem.create_agent("a")
        strong = mem.add("zebra savanna strong note", kind="fact", agent="a")
        for _ in range(4):
            clock.advance(seconds=10)
            turn = mem.retrieve("zebra savanna strong", agent="a").turn_id
            assert turn is not None
            mem.feedback(turn, [strong], helpful=True)
        clock.advance(days=1)
        weak = [mem.add(f"other topic {i} giraffe", kind="fact", agent="a") for i in range(5)]
        report = mem.sleep("a", train=False)
        assert mem.get(strong).consolidation_level == 0  # still level 0, but used and strong
        assert report.pruned == 1 and report.pruned_ids[0] in weak
        assert strong not in report.pruned_ids


def test_capacity_prunes_archived_before_active_then_by_strength() -> None:
    cfg = LifecycleConfig(max_weighted_total=3)
    states = [
        MemoryState(id=1, strength=5.0, created_ts=1),  # oldest, but strong
        MemoryState(id=2, strength=0.05, status="archived", created_ts=50),
        MemoryState(id=3, strength=0.5, created_ts=60),
        MemoryState(id=4, strength=0.2, perspectives={"cost": 3.0}, created_ts=70),
        MemoryState(id=5, strength=0.08, status="archived", created_ts=40),
        MemoryState(id=6, strength=1.0, level=1, created_ts=0),  # weight 2
    ]
    plan = plan_sleep(states, lambda s: 0, cfg)
    # the two archived first (weaker first), then the weakest active ones of level 0 (a
    # strong perspective counts: 4 outlives 3); 1, the oldest, is strong and stays
    assert plan.pruned == [2, 5, 3, 4]
    assert plan.weighted_after == 3


PRINCIPLE_TAGS = ["principle", "Principle", "PRINCIPLE", " principle ", "\tprinciple\n"]
OTHER_TAGS = ["principles", "no principle", "prin ciple", "principle-ish"]


def test_a_principle_tag_in_any_case_with_outer_spaces_is_a_principle(
    db_path: Path, clock: FixedClock
) -> None:
    days = Config(lifecycle=LifecycleConfig(decay_clock="days", max_weighted_total=5))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=days) as mem:
        mem.create_agent("a")
        rules = [
            mem.add(f"rule {i}: check invoices", kind="fact", agent="a", tags=[t])
            for i, t in enumerate(PRINCIPLE_TAGS)
        ]
        others = [
            mem.add(f"note {i}: invoices", kind="fact", agent="a", tags=[t])
            for i, t in enumerate(OTHER_TAGS)
        ]
        assert sorted(p.id for p in mem.principles("a")) == rules
        clock.advance(days=60)
        report = mem.sleep("a", train=False)
        # the rules weigh 5 (the cap): every other memory is pruned, no rule decays
        assert sorted(report.pruned_ids) == others
        for i in rules:
            assert (mem.get(i).strength, mem.get(i).status) == (1.0, "active")
        assert sorted(p.id for p in mem.principles("a")) == rules


def test_the_python_and_sql_principle_rules_agree(mem: Memory) -> None:
    from memengine.lifecycle.strength import is_principle
    from memengine.store.lifecycle._rows import IS_PRINCIPLE

    ids = {t: mem.add("a rule", kind="fact", tags=[t]) for t in PRINCIPLE_TAGS + OTHER_TAGS}
    ids["x"] = mem.add("an old rule", kind="fact")
    with mem.store.connections.read() as cur:
        found = {int(r[0]) for r in cur.execute(f"SELECT id FROM episodes WHERE {IS_PRINCIPLE}")}
    for tag, i in ids.items():
        stored = mem.get(i).tags  # (without outer spaces)
        assert (i in found) == is_principle("fact", stored) == (tag in PRINCIPLE_TAGS), tag
    with mem.store.connections.write() as cur:  # as an earlier version stored a tag
        cur.execute("UPDATE episodes SET tags = ? WHERE id = ?", ('[" principle "]', ids["x"]))
    with mem.store.connections.read() as cur:
        found = {int(r[0]) for r in cur.execute(f"SELECT id FROM episodes WHERE {IS_PRINCIPLE}")}
    assert ids["x"] not in found and not is_principle("fact", mem.get(ids["x"]).tags)
    assert ids["x"] not in {p.id for p in mem.principles()}  # the pack and the sleep agree


def test_the_note_of_a_sleep_without_record_turns_counts_explicitly_recorded_turns(
    db_path: Path, clock: FixedClock
) -> None:
    """Turns recorded by retrieve(record=True) count: the note must not say no later one will."""
    cfg = Config(lifecycle=LifecycleConfig(record_turns=False))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        mem.create_agent("a")
        fact = mem.add("zebra savanna note", kind="fact", agent="a")
        for _ in range(4):
            mem.retrieve("zebra", agent="a")  # not recorded
            assert mem.retrieve("zebra", agent="a", record=True).turn_id is not None
        first = mem.sleep("a", train=False)
        assert first.tasks == 4 and mem.get(fact).strength < 1.0
        [note] = first.notes
        assert "or by retrieve(record=True)" in note and "no later one" not in note
        mem.retrieve("zebra", agent="a", record=True)
        assert mem.sleep("a", train=False).tasks == 1  # a later one is counted too


def test_a_first_days_sleep_after_importing_an_old_memory_reports_the_days_applied(
    db_path: Path, clock: FixedClock, tmp_path: Path
) -> None:
    """Not the years since the memory's created_at: it decays from its import."""
    line = {
        "id": 1, "agent": "a", "kind": "fact", "content": "zebra note savanna",
        "occurred_at": "2020-06-01T12:00:00Z", "created_at": "2020-06-01T12:00:00Z",
        "strength": 1.0, "status": "active",
    }  # fmt: skip
    dump = tmp_path / "old.jsonl"
    dump.write_text(json.dumps(line) + "\n", encoding="utf-8")
    days = Config(lifecycle=LifecycleConfig(decay_clock="days", expected_tasks_per_day=10))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=days) as mem:
        mem.create_agent("a")
        [old] = mem.import_(dump)
        clock.advance(days=1)
        report = mem.sleep("a", train=False)
        assert mem.get(old).strength == pytest.approx(0.95)  # one day at level 0
        assert report.tasks == pytest.approx(10)  # one day of 10 tasks, not 2,192 days


def test_a_memory_from_before_a_clock_set_back_decays_with_the_turns_after_it(
    db_path: Path,
) -> None:
    """A process whose clock ran a month ahead stored X and slept; the next process, its
    clock set right, records turns dated before X: they still count for X."""
    from datetime import datetime, timedelta, timezone

    t0 = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
    ahead = FixedClock(t0 + timedelta(days=30))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=ahead) as mem:
        x = mem.add("supplier X is cheapest for bolts", kind="fact")
        for i in range(10):
            mem.retrieve(f"hello {i}")
        mem.sleep()
        after_first = mem.get(x).strength
    with Memory.open(db_path, embedder=HashEmbedder(), clock=FixedClock(t0)) as mem:
        for i in range(100):
            mem.retrieve(f"again {i}")
        report = mem.sleep()
        assert report.decayed >= 1
        assert mem.get(x).strength < after_first * 0.7
