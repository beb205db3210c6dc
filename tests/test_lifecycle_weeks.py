"""Weeks of use with an injected clock: reinforcement, decay, archiving, pruning, recall."""

from __future__ import annotations

from pathlib import Path

import pytest

from memengine import Config, FixedClock, Memory, NotFound
from memengine.config import LifecycleConfig
from memengine.lifecycle.strength import next_level

from .helpers import HashEmbedder

TASKS_PER_DAY = 10


def test_eight_weeks_of_use(mem: Memory, clock: FixedClock) -> None:
    used = mem.add("The harbour crane inspection checklist has twelve steps", kind="fact",
                   tags=["crane"])  # fmt: skip
    never = mem.add("The office plant needs water on Fridays", kind="observation")
    fillers = [mem.add(f"harbour shipment {i} arrived on schedule", kind="observation")
               for i in range(8)]  # fmt: skip
    levels: list[int] = []
    archived_day = None
    for day in range(1, 57):
        for task in range(TASKS_PER_DAY):
            r = mem.retrieve("harbour crane inspection", limit=4)
            assert r.turn_id is not None
            if task % 3 == 0:  # the checklist is used every few tasks
                assert used in [e.id for e in r.episodes]
                mem.feedback(r.turn_id, [used], task_success=True)
            else:
                mem.feedback(r.turn_id, [])
            clock.advance(minutes=30)
        clock.advance(hours=19)
        report = mem.sleep(train=False)
        assert report.tasks == TASKS_PER_DAY and report.decay_clock == "tasks"
        levels.append(mem.get(used).consolidation_level)
        if archived_day is None and mem.get(never).status == "archived":
            archived_day = day
            assert never in report.archived_ids
    checklist = mem.get(used)
    assert checklist.status == "active"
    assert checklist.access_count == 56 * 4
    expected, level = [], 0
    for day in range(1, 57):  # access 4 a day; at most one level up per sleep
        level = next_level(level, 4 * day, mem.config.lifecycle.level_thresholds)
        expected.append(level)
    assert levels == expected and levels[:5] == [0, 1, 1, 2, 2] and levels[-1] == 5
    assert checklist.strength > 5
    assert archived_day == 45  # 0.95 a day at level 0: below 0.1 after 45 days
    plant = mem.get(never)
    assert plant.access_count == 0 and plant.strength < 0.1
    assert plant.candidate_count == 0  # never even retrieved: it just faded
    assert all(mem.get(i).status == "archived" for i in fillers)  # retrieved, never used

    # the archived memory is out of normal retrieval, and comes back through deep recall
    assert never not in [e.id for e in mem.retrieve("office plant water").episodes]
    deep = mem.retrieve("office plant water", deep=True)
    assert never in [e.id for e in deep.episodes]
    back = mem.get(never)
    assert (back.status, back.strength, back.consolidation_level) == ("active", 0.5, 0)
    assert never in [e.id for e in mem.retrieve("office plant water").episodes]


def test_capacity_pruning_keeps_the_total_under_the_limit(db_path: Path, clock: FixedClock) -> None:
    cfg = Config(lifecycle=LifecycleConfig(max_weighted_total=10))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as m:
        rule = m.add("Always confirm orders in writing", kind="principle")
        ids = []
        for i in range(11):
            clock.advance(hours=1)
            ids.append(m.add(f"supplier note {i} on pallet counts", kind="fact"))
        favourites = ids[:4]  # the oldest notes, but used
        for _ in range(5):
            r = m.retrieve("supplier pallet note", limit=11)
            m.feedback(r.turn_id, [i for i in favourites if i in [e.id for e in r.episodes]])
        assert all(m.get(i).access_count == 5 for i in favourites)
        report = m.sleep(train=False)
        # 12 memories at level 0; after promotion: principle 1 + 4 favourites × 2 + 7 notes = 16
        assert report.weighted_before == 12 and report.weighted_total <= 10
        assert report.pruned == 6
        assert report.pruned_ids == tuple(ids[4:10])  # level 0 first, oldest first
        survivors = {e.id for batch in m.store.iter_episodes() for e in batch}
        assert survivors == {rule, *favourites, ids[10]}
        assert all(m.get(i).consolidation_level == 1 for i in favourites)
        with pytest.raises(NotFound):
            m.get(ids[4])
        assert m.check().ok  # vectors and full text followed the deletes


def test_decay_clock_days_fades_an_idle_agent(db_path: Path, clock: FixedClock) -> None:
    cfg = Config(lifecycle=LifecycleConfig(decay_clock="days"))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as m:
        ep = m.add("a quiet fact", kind="fact")
        clock.advance(days=10)
        report = m.sleep()
        assert report.decay_clock == "days" and report.tasks == pytest.approx(100)
        assert m.get(ep).strength == pytest.approx(0.95**10)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        clock.advance(days=10)
        report = m.sleep()  # the default clock counts tasks: an idle agent does not forget
        assert report.tasks == 0 and report.decayed == 0
        assert m.get(ep).strength == pytest.approx(0.95**10)


def test_sleep_history_and_unknown_agent(mem: Memory, clock: FixedClock) -> None:
    with pytest.raises(NotFound):
        mem.sleep("nobody")
    mem.add("a fact to remember", kind="fact")
    for _ in range(3):
        mem.retrieve("fact")
        clock.advance(days=1)
        mem.sleep()
    with mem.store.connections.read() as cur:
        sleeps = cur.execute("SELECT count(*) FROM sleeps").fetchone()[0]
        rows = cur.execute("SELECT count(*) FROM strength_history").fetchone()[0]
    assert (sleeps, rows) == (3, 3)


def test_old_turns_are_trimmed_at_sleep(db_path: Path, clock: FixedClock) -> None:
    cfg = Config(lifecycle=LifecycleConfig(keep_turns=2, history_sleeps=0))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as m:
        m.add("a fact to remember", kind="fact")
        turns = [m.retrieve("fact").turn_id for _ in range(5)]
        assert m.sleep().tasks == 5
        with m.store.connections.read() as cur:
            left = [r[0] for r in cur.execute("SELECT id FROM turns ORDER BY id")]
            history = cur.execute("SELECT count(*) FROM strength_history").fetchone()[0]
        assert left == turns[-2:] and history == 0
        with pytest.raises(NotFound):
            m.feedback(turns[0], [])
        m.retrieve("fact")
        assert m.sleep().tasks == 1  # counting continues from the last sleep's turn
