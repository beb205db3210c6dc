"""The life cycle on a real memory file: weeks of tasks, feedback and nightly sleeps.

    .venv/bin/python examples/lifecycle.py [TASKS]     # (the venv `make demo` makes)

A purchasing agent with two perspectives (コスト = cost, 納期 = delivery)
works 10 tasks a day on a simulated clock. The bulk-discount note is used
every 3rd task (cost), the lead-time note every 10th (delivery); a note
about the office plant and a brochure (read-only material) are never used;
a principle is always packed. Every evening the agent sleeps. The table
shows each memory's strength after some days, then its final level and
status; the never-used notes end archived, and deep recall brings one back.
Compare with ``memengine simulate`` (the same rules without a database).
"""

from __future__ import annotations

import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from memengine import FixedClock, Memory, Retrieval

TASKS_PER_DAY = 10


def _turn(r: Retrieval) -> int:
    """The turn ``r`` recorded (a writable memory records every retrieval's turn)."""
    if r.turn_id is None:
        raise SystemExit("this memory records no turns: feedback needs one")
    return r.turn_id


def main(tasks: int = 450) -> None:
    """Run ``tasks`` tasks and print the strength table."""
    clock = FixedClock(datetime(2026, 4, 1, 9, 0, tzinfo=timezone.utc))
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory.open(Path(tmp) / "buyer.db", clock=clock) as mem,
    ):
        mem.create_agent("default", perspectives=["コスト", "納期"])
        notes = {
            "bulk discount (cost, every 3rd task)": mem.add(
                "Acme sells steel 20% cheaper for bulk orders over 10 tonnes",
                kind="fact",
                tags=["acme", "steel"],
            ),
            "lead time (delivery, every 10th task)": mem.add(
                "Steel ordered from Acme takes three weeks to arrive", kind="fact"
            ),
            "office plant (never used)": mem.add(
                "The office plant needs water on Fridays", kind="observation"
            ),
            "brochure (read only, never used)": mem.add(
                "A brochure about aluminium alloys for boat hulls", kind="education"
            ),
            "principle": mem.add("Always confirm prices in writing", kind="principle"),
        }
        bulk = notes["bulk discount (cost, every 3rd task)"]
        lead = notes["lead time (delivery, every 10th task)"]
        checkpoints = [
            d * TASKS_PER_DAY for d in (1, 7, 14, 30, 45, 60) if d * TASKS_PER_DAY < tasks
        ]
        checkpoints.append(tasks)
        history: dict[str, list[float]] = {name: [] for name in notes}
        for t in range(1, tasks + 1):
            if t % 3 == 0:
                r = mem.retrieve("how much does Acme steel cost in bulk?", perspective="コスト")
                used = [bulk] if bulk in [e.id for e in r.episodes] else []
                mem.feedback(_turn(r), used, task_success=True)
            elif t % 10 == 0:
                r = mem.retrieve("when will the Acme steel arrive?", perspective="納期")
                used = [lead] if lead in [e.id for e in r.episodes] else []
                mem.feedback(_turn(r), used, task_success=True)
            else:
                r = mem.retrieve("any news from the suppliers?")
                mem.feedback(_turn(r), [])
            clock.advance(minutes=45)
            if t % TASKS_PER_DAY == 0 or t == tasks:
                clock.advance(hours=15)
                mem.sleep()  # (it also trains the learned scorer once there are samples)
                day = -(-t // TASKS_PER_DAY)
                if day % 5 == 0 or t == tasks:  # progress: a run takes tens of seconds
                    print(f"day {day} of {-(-tasks // TASKS_PER_DAY)}", file=sys.stderr)
            if t in checkpoints:
                for name, episode_id in notes.items():
                    history[name].append(mem.get(episode_id).strength)

        width = max(len(n) for n in notes) + 2
        heads = "".join(f"{'day ' + format(c / TASKS_PER_DAY, 'g'):>10}" for c in checkpoints)
        print(f"{tasks} tasks, {TASKS_PER_DAY} a day, a sleep every evening\n")
        print("memory".ljust(width) + "uses".rjust(6) + heads + "level".rjust(7) + "  status")
        for name, episode_id in notes.items():
            life = mem.life_of(episode_id)
            ep = life.episode
            row = name.ljust(width) + str(ep.access_count).rjust(6)
            row += "".join(f"{v:10.3f}" for v in history[name])
            row += str(ep.consolidation_level).rjust(7) + "  " + ep.status
            if life.strength_by_perspective:
                row += "  " + ", ".join(
                    f"{k} {v:.2f}" for k, v in life.strength_by_perspective.items()
                )
            print(row)
        plant = notes["office plant (never used)"]
        if mem.get(plant).status == "archived":
            r = mem.retrieve("does the office plant need water?", deep=True)
            back = mem.get(plant)
            assert plant in [e.id for e in r.episodes]
            print(
                f"\ndeep recall: the office plant note is {back.status} again, strength "
                f"{back.strength}, level {back.consolidation_level}"
            )


if __name__ == "__main__":
    arg = sys.argv[1] if len(sys.argv) > 1 else "450"
    if not (arg.isascii() and arg.isdecimal()) or int(arg) < 1:
        sys.exit(f"usage: python examples/lifecycle.py [TASKS]: a whole number ≥ 1, not {arg!r}")
    main(int(arg))
