"""The sleep phase: levels, decay, archiving and capacity pruning, applied as one batch.

``run_sleep`` reads the agent's memories and writes every change inside a
single ``BEGIN IMMEDIATE`` transaction: a retrieval running at the same
time (WAL snapshot) sees the memories as they were before the sleep or as
they are after it, never half-way.

What "per task" means here (``[lifecycle] decay_clock``):

- ``tasks`` (default): a task is a recorded turn (one ``retrieve`` of the
  agent). A memory decays by ``per_task_factor(level) ** n`` where ``n``
  is the number of the agent's turns since the previous sleep that
  happened at or after the memory was created. An agent that is not used
  does not forget.
- ``days``: ``n = elapsed days × expected_tasks_per_day`` since the
  previous sleep (or since the memory was created, if later): memories
  fade with calendar time even when the agent is idle.

Steps, in order: (1) each active memory moves one level towards the level
its ``access_count`` earns, if the sleep's clock counts at least one task
for it (a sleep run again at once moves nothing; an explicit ``tasks``
always consolidates; levels never fall here, only deep recall lowers
them); (2) its strength and every perspective strength decay at the
new level's rate; (3) it is archived when its strength and every
perspective strength are below ``archive_threshold``; (4) while the
weighted total (weights 1, 2, 4, 8, 16, 32 by level, every memory of the
agent, archived ones included) exceeds ``max_weighted_total``, memories
are deleted, archived before active, then lowest level, lowest strength (its own or a
perspective's, the higher), oldest last access (or creation).
Principles (kind or tag ``principle``, any case, outer spaces ignored) are outside the
life cycle: they never decay, are never archived and never pruned (they still count).
"""

from __future__ import annotations

import bisect
import logging
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from ..clock import ensure_aware
from ..config import LifecycleConfig
from ..store import episodes as ep_rows
from ..store import lifecycle as store_lc
from ..store.database import Store
from ..text import counted, shown_name
from .agents import known_agent
from .strength import (
    MAX_LEVEL,
    capacity_weight,
    decay_factor,
    is_principle,
    next_level,
)

__all__ = [
    "MemoryState",
    "SleepPlan",
    "SleepReport",
    "counts_a_task",
    "plan_sleep",
    "run_sleep",
    "tasks_since",
]

log = logging.getLogger("memengine.lifecycle")


@dataclass
class MemoryState:
    """The life-cycle state of one memory, as the sleep plan sees it."""

    id: int
    strength: float
    level: int = 0
    access_count: int = 0
    status: str = "active"
    principle: bool = False
    created_ts: float = 0.0
    last_access_ts: float | None = None
    decay_from_ts: float | None = None  # when its stored strength held (import, recall)
    perspectives: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class SleepPlan:
    """What a sleep does: the states after it and the ids it archives and prunes."""

    states: list[MemoryState]
    promoted: int
    decayed: int
    archived: list[int]
    pruned: list[int]
    weighted_before: float
    weighted_after: float
    principles_weight: float = 0.0
    """The weight of the principles, which are never pruned (over the cap: nothing is)."""
    pruned_active: int = 0
    """How many of ``pruned`` were active (not archived) memories."""


class SleepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sleep's transaction, which was rolled back: nothing changed. A
    KeyboardInterrupt still (a program that stops on Ctrl-C stops), whose words say that the
    file is as it was, unlike an interrupt after the commit (the scorer's training)."""


class SleepTerminated(SystemExit):
    """A ``SystemExit`` during a sleep's transaction (``SIGTERM``'s, as the CLI and many
    servers turn it), which was rolled back: nothing changed. It exits with the same code;
    its type tells it from one after the commit, when the sleep is kept."""


@contextmanager
def _rolled_back_if_interrupted() -> Iterator[None]:
    """Around a sleep's transaction: Ctrl-C there, which rolls it back, becomes a
    :class:`SleepInterrupted` that says so, and a ``SystemExit`` a :class:`SleepTerminated`."""
    try:
        yield
    except KeyboardInterrupt as exc:
        raise SleepInterrupted("the sleep was rolled back, nothing changed") from exc
    except SystemExit as exc:
        raise SleepTerminated(exc.code) from exc


@dataclass(frozen=True)
class SleepReport:
    """What one sleep did to an agent's memories, and their state after it."""

    agent: str
    slept_at: datetime
    decay_clock: str
    tasks: float
    """The tasks the clock counted: the turns since the previous sleep, the calendar's since
    it (at the first sleep: since the earliest moment a memory decays from), or those given."""
    promoted: int
    decayed: int
    archived: int
    pruned: int
    active: int
    archived_total: int
    weighted_before: float
    weighted_total: float
    max_weighted_total: float
    level_counts: list[int]
    sleep_id: int
    duration_ms: float
    archived_ids: tuple[int, ...] = ()
    pruned_ids: tuple[int, ...] = ()
    scorer: dict[str, float] | None = None
    notes: tuple[str, ...] = ()
    """What the caller should know: a clock behind the last sleep, a clock that counts nothing."""

    def summary(self) -> str:
        """One line for logs and the CLI."""
        levels = " ".join(f"L{i}:{n}" for i, n in enumerate(self.level_counts))
        return (
            f"sleep {shown_name(self.agent)}: {self.tasks:g} task{'' if self.tasks == 1 else 's'} "
            f"({self.decay_clock}); "
            f"{self.decayed} decayed, {self.promoted} promoted, {self.archived} archived, "
            f"{self.pruned} pruned; {self.active} active, {self.archived_total} archived; "
            f"weighted {self.weighted_total:g}/{self.max_weighted_total:g}; {levels}"
        )


def tasks_since(created_ts: float, turn_ts: Sequence[float]) -> int:
    """How many of the (sorted) turn times are at or after ``created_ts``."""
    return len(turn_ts) - bisect.bisect_left(turn_ts, created_ts)


def counts_a_task(s: MemoryState, tasks: float) -> bool:
    """The default level gate of :func:`plan_sleep`: the sleep counts a whole task for ``s``."""
    return tasks >= 1.0


def _always(s: MemoryState, tasks: float) -> bool:
    """The level gate of a sleep whose caller says how many tasks passed: it moves levels."""
    return True


def _prune_order(s: MemoryState) -> tuple[bool, int, float, float, int]:
    """The capacity prune's order, what the sleep values least first: archived before
    active, then the lowest level, the lowest strength (its own or a perspective's, the
    higher, as archiving reads it), the oldest last access (or creation)."""
    strength = max([s.strength, *s.perspectives.values()])
    used = s.last_access_ts if s.last_access_ts is not None else s.created_ts
    return (s.status == "active", s.level, strength, used, s.id)


def plan_sleep(
    states: Sequence[MemoryState],
    tasks_of: Callable[[MemoryState], float],
    cfg: LifecycleConfig,
    *,
    moves: Callable[[MemoryState, float], bool] = counts_a_task,
) -> SleepPlan:
    """Compute a sleep without side effects (the same rules the engine and the simulation use).

    A memory moves a level only when ``moves(state, tasks)`` says this sleep may move it
    (by default: when it counts at least one task for it, so a sleep run again at once
    moves nothing)."""
    weighted_before = sum(capacity_weight(s.level, cfg) for s in states)
    after: list[MemoryState] = []
    promoted: list[int] = []
    decayed: list[int] = []
    archived: list[int] = []
    for old in states:
        s = replace(old, perspectives=dict(old.perspectives))
        after.append(s)
        if s.principle or s.status != "active":
            continue
        n = tasks_of(old)
        level = (
            next_level(s.level, s.access_count, cfg.level_thresholds) if moves(old, n) else s.level
        )
        if level > s.level:
            promoted.append(s.id)
        s.level = level
        factor = decay_factor(level, n, cfg)
        if factor < 1.0:
            decayed.append(s.id)
            s.strength *= factor
            s.perspectives = {k: v * factor for k, v in s.perspectives.items()}
        threshold = cfg.archive_threshold
        if s.strength < threshold and all(v < threshold for v in s.perspectives.values()):
            s.status = "archived"
            archived.append(s.id)
    weighted = sum(capacity_weight(s.level, cfg) for s in after)
    pruned: list[int] = []
    fixed = sum(capacity_weight(s.level, cfg) for s in after if s.principle)
    # (when the principles alone weigh more, deleting the rest would not get under it)
    if fixed <= cfg.max_weighted_total < weighted:
        order = sorted(
            (s for s in after if not s.principle),
            key=_prune_order,
        )
        for s in order:
            if weighted <= cfg.max_weighted_total:
                break
            pruned.append(s.id)
            weighted -= capacity_weight(s.level, cfg)
    gone = set(pruned)  # (a pruned memory is counted as pruned alone)
    pruned_active = sum(s.id in gone and s.status == "active" for s in after)
    return SleepPlan(
        states=[s for s in after if s.id not in gone],
        promoted=sum(i not in gone for i in promoted),
        decayed=sum(i not in gone for i in decayed),
        archived=[i for i in archived if i not in gone],
        pruned=pruned,
        weighted_before=weighted_before,
        weighted_after=weighted,
        principles_weight=fixed,
        pruned_active=pruned_active,
    )


def _start(s: MemoryState) -> float:
    """When ``s`` began to count tasks: its creation, or the moment its stored strength
    held if later (schema version 8: an import's strength already counts the decay before
    it; a recalled memory's was set when it came back, so the turns before do not count;
    until the next sleep, which clears it, that moment holds even when the file slept
    after it)."""
    return s.created_ts if s.decay_from_ts is None else max(s.created_ts, s.decay_from_ts)


def _created(s: MemoryState, now_ts: float, prev_ts: float | None) -> float:
    """:func:`_start`; for such a time after this sleep: this sleep when it is less than
    :data:`AHEAD_NOTED_S` ahead (an add committed while the sleep waited for the file: it
    is new), else (an import, another machine's clock) the previous sleep, so that it
    decays with the others instead of never (before the first sleep, this one: it is not
    known which of the turns before came after it)."""
    start = _start(s)
    if start <= now_ts:
        return start
    if start < now_ts + AHEAD_NOTED_S or prev_ts is None:
        return math.nextafter(now_ts, math.inf)  # (no turn of this sleep's moment counts)
    return prev_ts


def _own_moment(s: MemoryState, now_ts: float) -> bool:
    """``s`` counts from its own moment (an import's ``decay_from``), which is not after this
    sleep (one after it counts as any memory dated ahead: :func:`_created`)."""
    return s.decay_from_ts is not None and _start(s) <= now_ts


AHEAD_NOTED_S = 3600
"""How far after the sleep's clock a memory must be dated to count as from another clock
(and be noted): an hour (an add committed while the sleep waited for the file is seconds
ahead, and new)."""


def _ahead(states: Sequence[MemoryState], now_ts: float, prev_ts: float | None) -> str:
    """A note for the memories dated an hour or more after the sleep's clock ("" when none is)."""
    ahead = sum(
        _start(s) >= now_ts + AHEAD_NOTED_S
        for s in states
        if s.status == "active" and not s.principle
    )
    if not ahead:
        return ""
    since = "the previous sleep" if prev_ts is not None else "this sleep (the agent's first)"
    return (
        f"{ahead:,} of the memories are dated an hour or more after this sleep's clock (an "
        f"import, or another machine's clock): they decay from {since}"
    )


def _state(row: store_lc.LifeRow) -> MemoryState:
    return MemoryState(
        id=row.id,
        strength=row.strength,
        level=row.level,
        access_count=row.access_count,
        status=row.status,
        principle=is_principle(row.kind, row.tags),
        created_ts=row.created_ts,
        last_access_ts=row.last_access_ts,
        decay_from_ts=row.decay_from_ts,
        perspectives=dict(row.perspectives),
    )


def run_sleep(
    store: Store,
    agent: str,
    cfg: LifecycleConfig,
    now: datetime,
    *,
    tasks: float | None = None,
) -> SleepReport:
    """Apply one sleep to ``agent``'s memories in a single transaction and record it.

    ``tasks`` overrides the decay clock: every active memory decays by that
    many tasks. Ctrl-C during the transaction raises :class:`SleepInterrupted`.
    """
    t0 = time.perf_counter()
    now = ensure_aware(now)
    notes: list[str] = []
    with _rolled_back_if_interrupted(), store.connections.write() as cur:
        known_agent(cur, agent)
        prev = store_lc.last_sleep(cur, agent)
        if prev is not None and now < prev.slept_at:
            # a clock set back, or a sleep that waited behind another: time does not run
            # backwards here, or the next sleep would count the same days again
            notes.append(
                f"the clock ({now.isoformat()}) is before the last sleep "
                f"({prev.slept_at.isoformat()}): the sleep is dated at the last one"
            )
            now = prev.slept_at
        now_ts = now.timestamp()
        after_turn = prev.last_turn if prev else 0
        turns = store_lc.turn_times(cur, agent, after_turn)
        last_turn = turns[-1][0] if turns else after_turn
        revived = store_lc.reactivate_principles(cur, agent)  # (before the rows are read)
        if revived:
            notes.append(
                f"{revived:,} archived principle{'s' if revived != 1 else ''} (archived by "
                "an earlier version's sleep) made active: principles are outside the life cycle"
            )
        states = [_state(r) for r in store_lc.life_rows(cur, agent)]
        prev_ts = prev.slept_at.timestamp() if prev else None

        moves: Callable[[MemoryState, float], bool]  # may this sleep move its level
        if tasks is not None:
            clock, total_tasks = "explicit", float(tasks)

            def tasks_of(s: MemoryState) -> float:
                return float(tasks)

            moves = _always  # the caller says tasks passed

        elif cfg.decay_clock == "days":
            clock = "days"
            task_s = 86400 / cfg.expected_tasks_per_day  # one task's share of the calendar

            def since(s: MemoryState) -> float:
                start = _created(s, now_ts, prev_ts)
                if s.decay_from_ts is None:  # (one imported since: its own moment holds)
                    start = max(start, prev_ts if prev_ts is not None else -math.inf)
                return start

            # the calendar since the previous sleep; at the first, since the earliest moment
            # a memory decays from (an import's, not its years-old created_at)
            start_ts = (
                prev_ts
                if prev_ts is not None
                else min(
                    (since(s) for s in states if s.status == "active" and not s.principle),
                    default=now_ts,
                )
            )
            total_tasks = max(0.0, now_ts - start_ts) / task_s

            def tasks_of(s: MemoryState) -> float:
                return max(0.0, now_ts - since(s)) / task_s

            def crosses_a_boundary(s: MemoryState, tasks: float) -> bool:
                # a level per task boundary of the calendar crossed since the last sleep:
                # sleeps an hour apart, each under one task, still consolidate
                return math.floor(now_ts / task_s) > math.floor(since(s) / task_s)

            moves = crosses_a_boundary

        else:
            turn_ts = sorted(ts for _, ts in turns)
            clock, total_tasks = "tasks", float(len(turn_ts))
            if not cfg.record_turns:
                # (which turns came before the switch and which a retrieve(record=True)
                # recorded after it is not known: the note names both)
                notes.append(
                    "record_turns is off, so the tasks clock counts no new turn and nothing "
                    "decays (only a retrieve(record=True) records one): set [lifecycle] "
                    'decay_clock = "days", or pass tasks'
                    if not turn_ts
                    else f"record_turns is off: only the {counted(len(turn_ts), 'turn')} recorded "
                    "before it was switched off or by retrieve(record=True) "
                    f"{'is' if len(turn_ts) == 1 else 'are'} counted, not "
                    'the other retrievals (set [lifecycle] decay_clock = "days", or pass tasks)'
                )

            # a memory imported (or recalled) with the moment its strength held (decay_from)
            # counts the turns from that moment, also those before this agent's previous
            # sleep (an import's may be earlier; a recall's is not); one
            # whose moment is after this sleep's clock counts the turns since the previous
            # sleep, as any memory dated ahead (its moment has no turn after it to read)
            held = [_start(s) for s in states if _own_moment(s, now_ts)]
            held_ts = (
                [ts for _, ts in store_lc.turn_times(cur, agent, 0, from_ts=min(held))]
                if held and prev is not None
                else turn_ts
            )

            def tasks_of(s: MemoryState) -> float:
                if s.decay_from_ts is None and prev_ts is not None and _start(s) <= prev_ts:
                    # it was there at the previous sleep: every turn since counts, whatever
                    # their times say (a clock set back after it dates them before it)
                    return float(len(turn_ts))
                times = held_ts if _own_moment(s, now_ts) else turn_ts
                return float(tasks_since(_created(s, now_ts, prev_ts), times))

            moves = counts_a_task

        if tasks is None and (ahead := _ahead(states, now_ts, prev_ts)):
            notes.append(ahead)
        plan = plan_sleep(states, tasks_of, cfg, moves=moves)
        before = {s.id: s for s in states}
        # an imported or recalled memory's own moment (decay_from) has served: from now on
        # it decays from this sleep, as the others do
        store_lc.clear_decay_from(cur, [s.id for s in states if s.decay_from_ts is not None])
        store_lc.set_strengths(
            cur,
            [
                (s.strength, s.level, s.id)
                for s in plan.states
                if (s.strength, s.level) != (before[s.id].strength, before[s.id].level)
            ],
        )
        store_lc.set_perspective_strengths(
            cur,
            [
                (v, s.id, name)
                for s in plan.states
                for name, v in s.perspectives.items()
                if v != before[s.id].perspectives.get(name)
            ],
        )
        store_lc.archive(cur, plan.archived)
        if plan.principles_weight > cfg.max_weighted_total:
            notes.append(
                f"the principles alone weigh {plan.principles_weight:g}, over max_weighted_total "
                f"{cfg.max_weighted_total:g}: nothing was pruned (deleting every other memory "
                "would not get under it); raise it, or delete principles"
            )
        if plan.pruned:
            ep_rows.delete_and_relink(cur, plan.pruned, agent, store.neighbour_gap_s)
        if plan.pruned_active:
            notes.append(
                f"{plan.pruned_active:,} active "
                f"{'memory' if plan.pruned_active == 1 else 'memories'} (not archived) "
                f"{'was' if plan.pruned_active == 1 else 'were'} deleted to keep the weighted total under max_weighted_total "
                f"{cfg.max_weighted_total:g}: raise it ([lifecycle] max_weighted_total; inf: "
                "no cap) to keep all of an agent's history"
            )

        active = [s for s in plan.states if s.status == "active"]
        strengths = np.asarray([s.strength for s in active], dtype=float)
        quantiles = np.quantile(strengths, [0.1, 0.5, 0.9]) if len(strengths) else np.zeros(3)
        level_counts = [0] * (MAX_LEVEL + 1)
        for s in active:
            level_counts[s.level] += 1
        row = store_lc.SleepRow(
            id=0,
            agent=agent,
            slept_at=now,
            last_turn=last_turn,
            tasks=total_tasks,
            decay_clock=clock,
            promoted=plan.promoted,
            decayed=plan.decayed,
            archived=len(plan.archived),
            pruned=len(plan.pruned),
            active=len(active),
            archived_total=len(plan.states) - len(active),
            weighted_total=plan.weighted_after,
            level_counts=level_counts,
            strength_mean=float(strengths.mean()) if len(strengths) else 0.0,
            strength_p10=float(quantiles[0]),
            strength_p50=float(quantiles[1]),
            strength_p90=float(quantiles[2]),
        )
        sleep_id = store_lc.insert_sleep(cur, row)
        if cfg.history_sleeps > 0:
            store_lc.insert_history(cur, sleep_id, [(s.id, s.strength, s.level) for s in active])
            store_lc.delete_sleep_history(cur, agent, cfg.history_sleeps)
        store_lc.trim_turns(cur, agent, cfg.keep_turns)
    report = SleepReport(
        agent=agent,
        slept_at=now,
        decay_clock=clock,
        tasks=total_tasks,
        promoted=plan.promoted,
        decayed=plan.decayed,
        archived=len(plan.archived),
        pruned=len(plan.pruned),
        active=row.active,
        archived_total=row.archived_total,
        weighted_before=plan.weighted_before,
        weighted_total=plan.weighted_after,
        max_weighted_total=cfg.max_weighted_total,
        level_counts=level_counts,
        sleep_id=sleep_id,
        duration_ms=round((time.perf_counter() - t0) * 1000, 3),
        archived_ids=tuple(plan.archived),
        pruned_ids=tuple(plan.pruned),
        notes=tuple(notes),
    )
    log.info(report.summary())
    return report
