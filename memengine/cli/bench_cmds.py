"""The ``bench`` command: parse the options, run the benchmark, print the tables."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from ._app import (
    app,
    check_output,
    console,
    err_console,
    given_file,
    guarded,
    shown_with_json,
    whole,
    wide_console,
)


@app.command()
@guarded
def bench(
    quick: Annotated[
        bool, typer.Option("--quick", help="Tiny sizes (seconds; used by the smoke test).")
    ] = False,
    huge: Annotated[
        bool, typer.Option("--huge", help="Also measure latency at 1M episodes in one agent.")
    ] = False,
    only: Annotated[
        str | None,
        typer.Option(
            "--only",
            help="Comma-separated sections: ingest, latency, vector, bm25, agents, cold, "
            "concurrency.",
        ),
    ] = None,
    agents: Annotated[
        int | None,
        typer.Option("--agents", min=1, parser=whole(1), help="Agents in the many-agents file."),
    ] = None,
    per_agent: Annotated[
        int | None,
        typer.Option("--per-agent", min=1, parser=whole(1), help="Episodes per agent there."),
    ] = None,
    json_path: Annotated[
        Path | None,
        typer.Option(
            "--json",
            parser=given_file,
            help="Write every number to this JSON file.",
        ),
    ] = None,
    workdir: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            parser=given_file,
            help="Folder for the benchmark files (default: a temporary one).",
        ),
    ] = None,
    keep: Annotated[bool, typer.Option("--keep", help="Keep the benchmark files.")] = False,
    seed: Annotated[
        int,
        typer.Option("--seed", min=0, parser=whole(0), help="Seed of the synthetic data."),
    ] = 7,
    no_progress: Annotated[
        bool, typer.Option("--no-progress", help="No progress display on stderr.")
    ] = False,
    llm_latency: Annotated[
        bool,
        typer.Option(
            "--llm-latency",
            help="Instead: full LLM turns against a scripted LLM with per-call delays.",
        ),
    ] = False,
    llm_delays: Annotated[
        str, typer.Option("--llm-delays", help="With --llm-latency: delays in ms.")
    ] = "300,600,1200",
    llm_turns: Annotated[
        int,
        typer.Option(
            "--llm-turns", min=1, parser=whole(1), help="With --llm-latency: turns per delay."
        ),
    ] = 20,
) -> None:
    """Measure ingest, retrieval latency, the vector and BM25 stages, many agents, cold start
    and concurrency on synthetic data (defaults take a few minutes)."""
    check_output(json_path)
    if llm_latency:
        from .llm_cmds import bench_llm, delays_ms

        delays_ms(llm_delays, "--llm-delays")  # checked under its own name
        bench_llm(delays=llm_delays, turns=llm_turns, json_path=json_path, config=None)
        return
    from ..errors import EvaluationError
    from ..evaluation.bench import BenchConfig, BenchResult, cold, run_bench
    from ..evaluation.runner import check_result_path
    from .bench_report import print_report

    check_result_path(json_path, command="memengine bench", is_result=BenchResult.is_result)

    sections = None if only is None else [s.strip() for s in only.split(",") if s.strip()]
    cfg = BenchConfig.make(
        quick=quick,
        huge=huge,
        only=sections,
        agents=agents,
        per_agent=per_agent,
        workdir=workdir,
        keep=keep,
        seed=seed,
    )

    if no_progress or not err_console.is_terminal:  # a log or a pipe gets no bar
        result = run_bench(cfg)
    else:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err_console,
            transient=True,
        ) as bar:
            tasks: dict[str, TaskID] = {}

            def update(phase: str, done: int, total: int) -> None:
                if phase not in tasks:
                    for other in tasks.values():
                        bar.update(other, visible=False)
                    tasks[phase] = bar.add_task(phase, total=total or None)
                bar.update(tasks[phase], completed=done, total=total or None)

            result = run_bench(cfg, update)
    data = result.to_json()
    # the tables are wide: when printing to a file or a pipe, do not squeeze them to 80 columns
    out = console if console.is_terminal else wide_console()
    shown_with_json(json_path, data, lambda: print_report(data, out))  # NaN as null
    if json_path is not None:
        console.print(f"wrote {json_path}", highlight=False)
    failed = cold.failures(data["sections"].get("cold", {}))
    if failed:
        raise EvaluationError(f"cold start: {', '.join(failed)} failed (see the table)")
