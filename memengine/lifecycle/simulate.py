"""A dry run of the life cycle: a handful of memories used on fixed schedules over N tasks.

It uses the engine's own rules (:func:`~memengine.lifecycle.sleep.plan_sleep`
and :mod:`.strength`) without a database: every task, memories whose
schedule says so are used (``access_count + 1``, ``strength + 0.1``);
after every ``expected_tasks_per_day`` tasks the agent sleeps.

The worked example (defaults, 10 tasks a day): a level-0 memory keeps
0.95 of its strength per day (0.95 ** (1/10) ≈ 0.99488 per task), so one
that is never used falls from 1.0 below the archive threshold of 0.1 after
about 45 days (0.95 ** 45 ≈ 0.099), and read-only material starting at
0.5 after about 32 days; a memory used every few tasks climbs the levels
and keeps growing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..config import LifecycleConfig
from ..errors import InvalidInput
from .sleep import MemoryState, plan_sleep
from .strength import MAX_LEVEL, per_task_factor

__all__ = ["DEFAULT_MEMORIES", "SimMemory", "SimResult", "format_table", "simulate"]


@dataclass(frozen=True)
class SimMemory:
    """A simulated memory: its name, how often it is used (every N tasks; None = never).

    Its strength starts at ``strength``, or as the engine starts one: at ``[lifecycle]
    read_only_strength`` for ``read_only`` material (kind ``education``), else at
    ``initial_strength``."""

    name: str
    every: int | None
    strength: float | None = None
    principle: bool = False
    read_only: bool = False

    def start(self, cfg: LifecycleConfig) -> float:
        """The strength this memory starts at under ``cfg``."""
        if self.strength is not None:
            return self.strength
        return cfg.read_only_strength if self.read_only else cfg.initial_strength


DEFAULT_MEMORIES: tuple[SimMemory, ...] = (
    SimMemory("used every 3 tasks", 3),
    SimMemory("used every 10 tasks", 10),
    SimMemory("used every 70 tasks", 70),
    SimMemory("never used", None),
    SimMemory("read only (education), never used", None, read_only=True),
    SimMemory("principle", None, principle=True),
)


@dataclass
class SimResult:
    """Strengths at checkpoints (task numbers) and the final state of each memory."""

    tasks: int
    tasks_per_day: float
    checkpoints: list[int]
    days: list[float]
    """The day each checkpoint ends (the last one: the days the run lasted)."""
    strengths: dict[str, list[float]] = field(default_factory=dict)
    final: dict[str, MemoryState] = field(default_factory=dict)
    archived_at: dict[str, int] = field(default_factory=dict)
    """The task number of the sleep that archived each archived memory."""
    archived_day: dict[str, float] = field(default_factory=dict)
    """The day that sleep ended."""


DAYS = (1, 7, 14, 30, 45, 60, 90, 180, 365)
"""The days whose end is a checkpoint of the table (those within the run)."""


def _day_ends(tasks: int, per_day: float) -> list[int]:
    """The task numbers after which a day ends: ⌊k × per_day⌋ for k = 1, 2, …"""
    ends: list[int] = []
    k = 1
    while (end := math.floor(k * per_day + 1e-9)) <= tasks:
        ends.append(end)
        k += 1
    return ends


def _constant(n: float) -> Callable[[MemoryState], float]:
    return lambda _state: float(n)


def simulate(
    cfg: LifecycleConfig,
    *,
    tasks: int,
    memories: Sequence[SimMemory] = DEFAULT_MEMORIES,
) -> SimResult:
    """Run ``tasks`` tasks with a sleep at the end of every day (a day: the tasks up to
    ⌊k × expected_tasks_per_day⌋, so with 2.5 a day, days of 2 and 3 tasks in turn); each
    sleep decays by one day, the last one by the tasks of the day begun."""
    per_day = cfg.expected_tasks_per_day
    if per_day < 1:
        raise InvalidInput(
            f"the simulation sleeps once a day after at least one task: expected_tasks_per_day "
            f"is {per_day:g}, give 1 or more (--tasks-per-day)"
        )
    states = {
        m.name: MemoryState(id=i, strength=m.start(cfg), principle=m.principle)
        for i, m in enumerate(memories, start=1)
    }
    day_of = {end: float(k) for k, end in enumerate(_day_ends(tasks, per_day), start=1)}
    last_day = round(tasks / per_day, 1)
    marks = {end: day for end, day in day_of.items() if day in DAYS and end < tasks}
    marks[tasks] = last_day
    result = SimResult(tasks, per_day, list(marks), list(marks.values()))
    result.strengths = {m.name: [] for m in memories}
    last_sleep = 0
    for t in range(1, tasks + 1):
        for m in memories:
            s = states[m.name]
            if m.every and t % m.every == 0 and s.status == "active":
                s.access_count += 1
                s.strength += cfg.use_strength_gain
        if t in day_of or t == tasks:
            passed = per_day if t in day_of else (t - last_sleep)
            day = day_of.get(t, last_day)
            plan = plan_sleep(list(states.values()), _constant(passed), cfg)
            by_id = {s.id: s for s in plan.states}
            for m in memories:
                new = by_id[states[m.name].id]
                if new.status == "archived" and states[m.name].status == "active":
                    result.archived_at[m.name] = t
                    result.archived_day[m.name] = day
                states[m.name] = new
            last_sleep = t
        if t in marks:
            for m in memories:
                result.strengths[m.name].append(states[m.name].strength)
    result.final = states
    return result


def format_table(result: SimResult, cfg: LifecycleConfig) -> str:
    """The simulation as plain text: decay rates, then one row per memory."""
    per_day = result.tasks_per_day
    lines = [
        f"{result.tasks} tasks, {per_day:g} tasks a day, a sleep after each day",
        "decay (strength kept) per level:",
        *(
            f"  level {lvl}: {cfg.daily_retention[lvl]:.3f} a day = "
            f"{per_task_factor(lvl, cfg):.5f} a task"
            for lvl in range(MAX_LEVEL + 1)
        ),
        "",
    ]
    heads = [f"day {d:g}" for d in result.days]
    name_w = max(len(n) for n in result.final) + 2
    header = "memory".ljust(name_w) + "uses".rjust(6)
    header += "".join(h.rjust(10) for h in heads) + "level".rjust(7) + "  status"
    lines.append(header)
    lines.append("-" * len(header) + "-" * 10)
    for name, state in result.final.items():
        row = name.ljust(name_w) + str(state.access_count).rjust(6)
        row += "".join(f"{v:10.3f}" for v in result.strengths[name])
        status = state.status
        if name in result.archived_at:
            status += f" (day {result.archived_day[name]:g})"
        row += str(state.level).rjust(7) + "  " + status
        lines.append(row)
    return "\n".join(lines)
