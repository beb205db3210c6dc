"""A memory brought back from the archive (deep recall, late feedback) has its strength set
anew, so its next sleep decays it from the moment it came back, not for the turns or days
it spent archived; a gain on an active memory adds to a strength that decays as before."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from memengine import Config, FixedClock, Memory
from memengine.config import LifecycleConfig

from .helpers import HashEmbedder

DAYS = Config(lifecycle=LifecycleConfig(decay_clock="days", expected_tasks_per_day=1))
"""The days clock at one task a day: a level-0 memory keeps ``daily_retention[0]`` a day."""


def _per_turn(m: Memory, level: int = 0) -> float:
    """What a memory of ``level`` keeps per turn of the tasks clock, worked out by hand."""
    lc = m.config.lifecycle
    return float(lc.daily_retention[level] ** (1 / lc.expected_tasks_per_day))


def _turns(m: Memory, clock: FixedClock, n: int) -> None:
    for _ in range(n):
        m.retrieve("weather forecast for tomorrow")
        clock.advance(minutes=5)


def test_deep_recall_decays_from_the_turn_it_came_back(mem: Memory, clock: FixedClock) -> None:
    plant = mem.add("office plant water fridays", kind="fact")
    mem.sleep(tasks=500, train=False)
    assert mem.get(plant).status == "archived"
    _turns(mem, clock, 99)  # turns while it was archived: they are not its to count
    deep = mem.retrieve("office plant water", deep=True)  # the 100th turn
    assert plant in [e.id for e in deep.episodes] and mem.get(plant).strength == 0.5
    fact = mem.add("a fact stored at the moment of the recall", kind="fact")
    clock.advance(minutes=5)
    _turns(mem, clock, 4)
    report = mem.sleep(train=False)
    assert report.tasks == 104
    per_turn = _per_turn(mem)
    # the recall's own turn and the 4 after it, as for the fact stored at that moment
    assert mem.get(fact).strength == pytest.approx(per_turn**5)
    assert mem.get(plant).strength == pytest.approx(0.5 * per_turn**5)
    _turns(mem, clock, 3)
    mem.sleep(train=False)  # from then on it decays from the sleep, as the others do
    assert mem.get(plant).strength == pytest.approx(0.5 * per_turn**8)


def test_deep_recall_with_the_days_clock_decays_from_the_day_it_came_back(
    db_path: Path, clock: FixedClock
) -> None:
    start = clock.now
    level0 = DAYS.lifecycle.daily_retention[0]
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=DAYS) as m:
        plant = m.add("office plant water fridays", kind="fact")
        m.sleep(tasks=500, train=False)
        clock.set(start + timedelta(days=10))
        m.retrieve("office plant water", deep=True)
        assert m.get(plant).status == "active"
        clock.set(start + timedelta(days=12))
        m.sleep(train=False)
        assert m.get(plant).strength == pytest.approx(0.5 * level0**2)  # not 0.5 × level0**12


def test_an_export_after_a_recall_says_when_its_strength_was_set(
    tmp_path: Path, clock: FixedClock
) -> None:
    """``decayed_at`` of a recalled memory is the recall: the file it moves to decays it
    from then, as the file it came from would have."""
    start = clock.now
    level0 = DAYS.lifecycle.daily_retention[0]
    dump = tmp_path / "dump.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=HashEmbedder(), clock=clock, config=DAYS) as a:
        a.add("office plant water fridays", kind="fact")
        a.sleep(tasks=500, train=False)
        recalled_at = start + timedelta(days=10)
        clock.set(recalled_at)
        a.retrieve("office plant water", deep=True)
        clock.set(start + timedelta(days=11))
        a.export(dump)
    line = json.loads(dump.read_text().splitlines()[0])
    assert (line["strength"], line["status"]) == (0.5, "active")
    assert line["decayed_at"].startswith(recalled_at.isoformat()[:19])
    with Memory.open(tmp_path / "b.db", embedder=HashEmbedder(), clock=clock, config=DAYS) as b:
        (moved,) = b.import_(dump, keep_ids=False)
        clock.set(start + timedelta(days=12))
        b.sleep(train=False)
        assert b.get(moved).strength == pytest.approx(0.5 * level0**2)


def test_a_recall_under_a_clock_set_back_holds_from_the_last_sleep(
    tmp_path: Path, clock: FixedClock
) -> None:
    """A recall comes after the sleep that archived the memory: a clock set back (an NTP
    step, a restored VM) does not date its strength before that sleep."""
    start = clock.now
    slept = start + timedelta(days=10)
    dump = tmp_path / "dump.jsonl"
    with Memory.open(tmp_path / "a.db", embedder=HashEmbedder(), clock=clock) as a:
        a.add("office plant water fridays", kind="fact")
        clock.set(slept)
        a.sleep(tasks=500, train=False)
    clock.set(start + timedelta(days=5))  # (a later process: its store clock starts there)
    with Memory.open(tmp_path / "a.db", embedder=HashEmbedder(), clock=clock) as a:
        a.retrieve("office plant water", deep=True)
        a.export(dump)
    line = json.loads(dump.read_text().splitlines()[0])
    assert line["status"] == "active"
    assert line["decayed_at"].startswith(slept.isoformat()[:19])


def test_late_feedback_revives_from_now_and_a_gain_keeps_the_decay_start(
    mem: Memory, clock: FixedClock
) -> None:
    """Feedback on a memory a sleep archived after the turn sets its strength (recall, then
    the gain) and it decays from then; the gain on a memory still active adds to a strength
    that decays for every turn since the last sleep, as an unused one does."""
    plant = mem.add("office plant water fridays", kind="fact")
    turn = mem.retrieve("office plant water").turn_id
    assert turn is not None
    mem.sleep(tasks=500, train=False)
    assert mem.get(plant).status == "archived"
    clock.advance(minutes=5)
    kept = mem.add("the office plant is a monstera", kind="fact")
    other = mem.retrieve("office plant monstera").turn_id
    assert other is not None
    clock.advance(minutes=5)
    _turns(mem, clock, 29)  # 30 turns since the sleep, before the feedback
    gain = mem.config.lifecycle.use_strength_gain
    mem.feedback(turn, [plant])
    mem.feedback(other, [kept])
    assert mem.get(plant).strength == pytest.approx(0.5 + gain)
    assert mem.get(kept).strength == pytest.approx(1.0 + gain)
    _turns(mem, clock, 6)
    mem.sleep(train=False)
    revived, used = mem.get(plant), mem.get(kept)
    assert revived.status == used.status == "active"
    # the 6 turns since the feedback revived it; the used one every turn since it was added
    assert revived.strength == pytest.approx(
        (0.5 + gain) * _per_turn(mem, revived.consolidation_level) ** 6
    )
    assert used.strength == pytest.approx(
        (1.0 + gain) * _per_turn(mem, used.consolidation_level) ** 36
    )
