"""Life-cycle commands: agent create/list, feedback, sleep, never-used, life, plot, simulate.

Parsing and printing only; the work is done by the facade and :mod:`memengine.lifecycle`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Annotated, Any, cast

import typer
from rich.markup import escape
from rich.table import Table

from ..arguments import agent_of_a_new_file
from ..clock import iso_text
from ..config import MAX_RATE
from ..errors import InvalidInput
from ..lifecycle import Judge, SleepInterrupted, SleepReport, SleepTerminated
from ..text import counted, preview, quoted_name, shell_word
from ._app import (
    STOPS,
    AgentOpt,
    ConfigOpt,
    DbOpt,
    JsonOpt,
    app,
    choice,
    console,
    err_console,
    given_path,
    guarded,
    interrupted_compaction,
    note,
    number,
    open_memory,
    print_json,
    print_table,
    progress_bar,
    refuse_undecodable,
    settings,
    shown,
    shown_name,
    stop_code,
    warn_if_unknown,
    whole,
    widest,
)

agent_app = typer.Typer(
    help="Create and list agents and their perspectives.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(agent_app, name="agent")
plot_app = typer.Typer(
    help="Plots (needs matplotlib: pip install matplotlib).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(plot_app, name="plot")


def _dump(obj: Any) -> Any:
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    return obj


@agent_app.command("create")
@guarded
def agent_create(
    name: Annotated[str, typer.Argument(help="The agent's name.")],
    perspective: Annotated[
        list[str] | None,
        typer.Option("--perspective", "-p", help="A perspective (e.g. コスト); repeat."),
    ] = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Create an agent, or add perspectives to an existing one."""
    refuse_undecodable(**{"agent name": name})  # (b\xe9: not "a NUL or a lone surrogate")
    cfg = settings(config, db)
    agent_of_a_new_file(cfg.db, name)  # (refused before the file is made)
    with open_memory(cfg, create=True, embeds=False) as mem:
        row = mem.create_agent(name, perspectives=perspective or [])
    if as_json:
        print_json(_dump(row))
    else:
        console.print(
            f"agent {shown_name(row.name)}: perspectives "
            f"{', '.join(map(quoted_name, row.perspectives)) or 'none'}",  # (one may hold ", ")
            highlight=False,
        )


@agent_app.command("forget")
@guarded
def agent_forget(
    name: Annotated[str, typer.Argument(help="The agent to delete, with everything of it.")],
    yes: Annotated[
        bool, typer.Option("--yes", help="Confirm: this cannot be undone (backups keep theirs).")
    ] = False,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete an agent and everything of it: episodes, turns, sleeps,
    learned scorer; the freed pages are overwritten."""
    refuse_undecodable(**{"agent name": name})
    if not yes:
        raise InvalidInput(
            f"agent forget deletes {quoted_name(name)} and all its memories for good: add --yes "
            "to do it"
        )
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        try:
            with progress_bar("forgetting and compacting", enabled=not as_json, counted=False):
                report = mem.forget_agent(name)
        except STOPS as stop:  # during the compaction the forget is saved: say so
            if not mem.has_agent(name):
                interrupted_compaction(f"agent {shown_name(name)} is forgotten", stop)
            raise
    if as_json:
        print_json(dataclasses.asdict(report))
    else:
        left = [
            *([] if report.vacuumed else [f"the file was not compacted ({report.not_compacted})"]),
            *(
                []
                if report.wal_truncated
                else [
                    "its write-ahead log was not emptied (another process reads the file, "
                    "or the disk was full)"
                ]
            ),
        ]
        console.print(
            f"forgot agent {shown_name(report.agent)}: {counted(report.episodes, 'episode')} and "
            f"{counted(report.turns, 'turn')} deleted"
            + "".join(f"; but {x}" for x in left)
            + (
                f", so the file and its log may still hold copies of them: run `memengine "
                f"optimize --scrub --db {shell_word(str(cfg.db))}` once the other processes "
                "have closed it"
                if left
                else ""
            ),
            highlight=False,
        )
    if not (report.vacuumed and report.wal_truncated):
        raise typer.Exit(1)  # (the forget is saved; the scrub is not done)


@agent_app.command("list")
@guarded
def agent_list(db: DbOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """List agents and their perspectives."""
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        rows = mem.agents()
    if as_json:
        print_json([_dump(r) for r in rows])
        return
    table = Table(title=counted(len(rows), "agent"))
    table.add_column("agent")
    table.add_column("created")
    names = [quoted_name(p) for r in rows for p in r.perspectives]  # (one may hold ", ")
    table.add_column("perspectives", overflow="fold", min_width=widest(names))  # (wraps at ", ")
    for r in rows:
        table.add_row(  # (a name may hold a line break or an escape sequence)
            shown_name(r.name),
            f"{cfg.in_zone(r.created_at):%Y-%m-%d %H:%M}",  # (`time_zone`'s, as a search's)
            ", ".join(map(quoted_name, r.perspectives)),
        )
    print_table(table)  # (names are typed back: never cut; too narrow for them, lines)


@app.command()
@guarded
def feedback(
    turn_id: Annotated[
        int, typer.Argument(parser=whole(), help="The turn id a retrieval returned.")
    ],
    used: Annotated[
        list[int] | None,
        typer.Option("--used", "-u", parser=whole(), help="Id of a memory that was used; repeat."),
    ] = None,
    none_used: Annotated[
        bool, typer.Option("--none-used", help="None of the turn's memories was used.")
    ] = False,
    answer: Annotated[
        str | None,
        typer.Option("--answer", help="The final answer: used memories are found in it."),
    ] = None,
    helpful: Annotated[bool, typer.Option("--helpful", help="The memories helped (+2.0).")] = False,
    success: Annotated[
        bool | None,
        typer.Option("--success/--failure", help="The task succeeded (+1.5) or failed."),
    ] = None,
    prevented_error: Annotated[
        bool, typer.Option("--prevented-error", help="The memories prevented an error (+2.0).")
    ] = False,
    perspective: Annotated[
        str | None, typer.Option("--perspective", "-p", help="The task's perspective.")
    ] = None,
    learning: Annotated[
        str | None, typer.Option("--learning", help="What was learnt (kept per perspective).")
    ] = None,
    judge: Annotated[
        str,
        typer.Option(
            "--judge",
            parser=choice("auto", "match", "llm"),
            metavar="[auto|match|llm]",
            help="How to find used memories in --answer.",
        ),
    ] = "auto",
    db: DbOpt = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            "-a",
            help="The turn must be this agent's, else not found (default: the configured one).",
        ),
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Tell which memories of a turn were used, and how much they helped (a turn takes one
    feedback: say --used, --none-used, --answer or how the task went)."""
    if none_used and used:
        raise typer.BadParameter("either --used or --none-used", param_hint="--none-used")
    refuse_undecodable(**{"--answer": answer, "--learning": learning})
    cfg = settings(config, db)
    with open_memory(cfg) as mem:  # (no turn: the judge's client alone, when it asks one)
        if answer and judge != "match":  # (a new process: the import is no part of the wait)
            mem.load_llm_client()
        result = mem.feedback(
            turn_id,
            [] if none_used else used,
            # the scope given as an agent (the library's hint names Python's keywords)
            agent=cfg.agent_scope(agent),
            answer=answer,
            helpful=helpful,
            task_success=success,
            prevented_error=prevented_error,
            perspective=perspective,
            learning=learning,
            judge=cast(Judge, judge),
        )
    if as_json:
        print_json(_dump(result))
        return
    console.print(
        f"turn {result.turn_id}: {len(result.used)} used ({result.method}), "
        f"impact {result.impact:g}, outcome {result.outcome or '-'}",
        highlight=False,
    )
    for episode_id, why in result.reasons.items():
        console.print(f"  #{episode_id}: {why}", highlight=False)
    for d in result.degraded:  # on stderr, as a turn's are
        err_console.print(
            f"[yellow]degraded:[/yellow] {escape(d)}", highlight=False, soft_wrap=True, markup=True
        )


@app.command()
@guarded
def sleep(
    tasks: Annotated[
        float | None,
        typer.Option(
            "--tasks",
            min=0,
            parser=number(0),
            help="Decay by this many tasks (default: the decay clock).",
        ),
    ] = None,
    no_train: Annotated[
        bool, typer.Option("--no-train", help="Do not retrain the learned scorer.")
    ] = False,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the sleep phase: levels, decay, archiving and capacity pruning in one transaction."""
    cfg = settings(config, db, agent)
    with open_memory(cfg, embeds=False) as mem:
        try:
            with progress_bar("sleeping", enabled=not as_json, counted=False):
                report = mem.sleep(tasks=tasks, train=False)
        except SleepInterrupted as exc:  # in the transaction: say that it was rolled back
            err_console.print(f"interrupted: {exc}", highlight=False)
            raise typer.Exit(130) from None
        except SleepTerminated as stop:  # SIGTERM in the transaction, rolled back as Ctrl-C's
            # is (one after the commit is no SleepTerminated: "terminated", the sleep kept)
            err_console.print("interrupted: the sleep was rolled back, nothing changed")
            raise typer.Exit(stop.code if isinstance(stop.code, int) else 1) from None
        try:
            if not no_train:
                report = mem.train_after_sleep(report)
        except STOPS as stop:  # the sleep is committed: say so, not a bare "interrupted"
            _show_sleep(report, as_json)
            err_console.print("interrupted while retraining the scorer: the sleep above is kept")
            raise typer.Exit(stop_code(stop)) from None
    _show_sleep(report, as_json)


def _show_sleep(report: SleepReport, as_json: bool) -> None:
    """Print what a sleep did (as JSON with ``as_json``)."""
    if as_json:
        print_json(_dump(report))
        return
    console.print(report.summary(), highlight=False)
    if report.scorer:
        console.print(
            f"scorer retrained on {report.scorer['samples']:g} samples "
            f"(training AUC {report.scorer['auc']:.3f})",
            highlight=False,
        )
    for text in report.notes:
        note(text)


@app.command("train-scorer")
@guarded
def train_scorer(
    db: DbOpt = None, agent: AgentOpt = None, config: ConfigOpt = None, as_json: JsonOpt = False
) -> None:
    """Train the agent's learned ranking scorer from its answered turns."""
    cfg = settings(config, db, agent)
    with open_memory(cfg, embeds=False) as mem:
        info = mem.train_scorer()  # (NotFound for an agent the file does not know)
        why = mem.scorer_declined() if info is None else None
    why = why or "the file changed while it trained (a re-embed, or the agent forgotten)"
    needed = cfg.lifecycle.learned_scorer_min_samples
    if as_json:  # (an object either way: "trained" says which)
        untrained = {
            "trained": False,
            "samples_needed": needed,
            "used_memories_needed": cfg.lifecycle.learned_scorer_min_used_memories,
            "reason": f"not trained: {why}",
        }
        print_json(untrained if info is None else {"trained": True, **_dump(info)})
    elif info is None:
        console.print(f"not trained: {why}", highlight=False)
    else:
        console.print(
            f"trained on {info.samples} samples ({info.positives} used, of "
            f"{info.used_memories:,} memor{'y' if info.used_memories == 1 else 'ies'}), "
            f"training AUC {info.auc:.3f}",
            highlight=False,
        )


@app.command("never-used")
@guarded
def never_used(
    min_candidates: Annotated[
        int | None,
        typer.Option(
            "--min-candidates",
            min=0,
            parser=whole(0),
            help="Retrieved more than N times (default: [lifecycle] never_used_min_candidates, 50).",
        ),
    ] = None,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List memories that are often retrieved but never used (candidate_count above never_used_min_candidates, access 0)."""
    cfg = settings(config, db, agent)
    with open_memory(cfg, embeds=False) as mem:
        warn_if_unknown(mem, cfg.agent)
        rows = mem.never_used(min_candidates=min_candidates)
    if as_json:
        print_json([r.model_dump(mode="json") for r in rows])
        return
    table = Table(title=f"{len(rows)} memories retrieved often but never used")
    table.add_column("id", justify="right")
    table.add_column("candidates", justify="right")
    table.add_column("strength", justify="right")
    # an archived memory is listed too: its status (the JSON's) is a column then, and only
    # then, so a list of active ones keeps its text the room it had on a narrow terminal
    archived = any(ep.status != "active" for ep in rows)
    if archived:
        table.add_column("status")
    table.add_column("text", overflow="fold")
    for ep in rows:
        text = shown(ep.text).replace("\n", " ⏎ ")  # stripped before it is cut short
        status = [ep.status] if archived else []
        table.add_row(
            str(ep.id), str(ep.candidate_count), f"{ep.strength:.3f}", *status, preview(text, 120)
        )
    print_table(table)


@app.command()
@guarded
def life(
    episode_id: Annotated[int, typer.Argument(parser=whole(), help="Episode id.")],
    agent: AgentOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one memory's life: strength (per perspective), counts, level, status, learnings
    (only the agent's memory that --agent or the configuration names, as show)."""
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        view = mem.life_of(episode_id, agent=cfg.agent_scope(agent))
    ep = view.episode
    data = {
        "id": ep.id,
        "agent": ep.agent,
        "status": ep.status,
        "strength": ep.strength,
        "strength_by_perspective": view.strength_by_perspective,
        "access_count": ep.access_count,
        "candidate_count": ep.candidate_count,
        "last_access": iso_text(ep.last_access) if ep.last_access else None,
        "impact_score": ep.impact_score,
        "consolidation_level": ep.consolidation_level,
        "learnings": view.learnings,
    }
    if as_json:
        print_json(data)
        return
    table = Table(show_header=False, title=preview(shown(ep.text).replace("\n", " ⏎ "), 80))
    rows = [
        (key, value if isinstance(value, str) else json.dumps(_rounded(value), ensure_ascii=False))
        for key, value in data.items()
    ]
    rows = [(key, shown_name(text) if key == "agent" else text) for key, text in rows]
    # a learning (a list, a map) folds; a name, a number, a time (the rest) is kept whole
    whole_values = (text for key, text in rows if not isinstance(data[key], list | dict))
    table.add_column("field")
    table.add_column("value", overflow="fold", min_width=widest(whole_values))
    for key, text in rows:
        table.add_row(key, text)
    print_table(table)


def _rounded(value: Any) -> Any:
    """``value`` with its floats (a strength, an impact) rounded to 3 places for the table,
    which showed 0.09944025698709066; the JSON keeps them exact."""
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


@plot_app.command("strength")
@guarded
def plot_strength(
    out: Annotated[
        str,
        typer.Option(
            "--out",
            "-o",
            parser=given_path,
            help="File to write: .png, .svg or .pdf.",
        ),
    ] = "strength.png",
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Plot strength over time and the level distribution, from the agent's sleeps."""
    cfg = settings(config, db, agent)
    with open_memory(cfg, embeds=False) as mem:
        path = mem.plot_strength(out)
    console.print(f"wrote {path}", highlight=False)


@app.command()
@guarded
def simulate(
    tasks: Annotated[
        int,
        typer.Option(
            "--tasks",
            "-n",
            min=1,
            max=100_000,
            parser=whole(1, 100_000),
            help="How many tasks to simulate.",
        ),
    ] = 600,
    tasks_per_day: Annotated[
        float | None,
        typer.Option(
            "--tasks-per-day",
            min=1,
            max=MAX_RATE,
            # (bounded as [lifecycle] expected_tasks_per_day is: the copy it goes into is
            # not checked again)
            parser=number(1, MAX_RATE),
            help="Expected tasks per day (default: [lifecycle] expected_tasks_per_day).",
        ),
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Simulate a handful of memories over N tasks and print their strengths (no database)."""
    from ..lifecycle.simulate import format_table
    from ..lifecycle.simulate import simulate as run

    cfg = settings(config)
    life_cfg = cfg.lifecycle
    if tasks_per_day is not None:
        life_cfg = life_cfg.model_copy(update={"expected_tasks_per_day": tasks_per_day})
    result = run(life_cfg, tasks=tasks)
    if as_json:
        print_json(
            {
                "tasks": result.tasks,
                "checkpoints": result.checkpoints,
                "strengths": result.strengths,
                "final": {k: dataclasses.asdict(v) for k, v in result.final.items()},
                "archived_at": result.archived_at,
            }
        )
        return
    sys.stdout.write(format_table(result, life_cfg) + "\n")
