"""Search commands: search, retrieve, pack (and the options they share)."""

from __future__ import annotations

import sys
from datetime import datetime
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..arguments import labelled_message
from ..clock import in_zone
from ..text import preview
from ._app import (
    AgentOpt,
    ConfigOpt,
    DbOpt,
    JsonOpt,
    app,
    console,
    err_console,
    guarded,
    open_memory,
    print_json,
    refuse_undecodable,
    settings,
    shown,
    too_narrow,
    warn_if_unknown,
    whole,
)

RecentOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--recent",
        "-r",
        help="A recent message, oldest first; repeat. The user's unless it starts with a role "
        "and a colon (':' or '：'): 'partner:' or '相手：' (also 'assistant:', 'アシスタント：'), "
        "'user:' or 'ユーザー：', 'system:'.",
    ),
]


SensitivityOpt = Annotated[
    int | None,
    typer.Option(
        "--max-sensitivity",
        min=0,
        max=3,
        parser=whole(0, 3),
        help="Leave out episodes more sensitive than this (default: [retrieval] max_sensitivity).",
    ),
]

LimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit",
        "-k",
        min=1,
        max=100,
        parser=whole(1, 100),
        help="How many results at most (default: [retrieval] max_results); never more than "
        "[retrieval] max_candidates (40 unless set), the candidates a turn ranks.",
    ),
]

# llm phases: --llm/--no-llm (default: on when [llm] base_url is set)
LLMOpt = Annotated[
    bool | None,
    typer.Option("--llm/--no-llm", help="LLM expansion + rerank (default: on if [llm] is set)."),
]
PerspectiveOpt = Annotated[
    str | None,
    typer.Option(
        "--perspective",
        "-p",
        help="The task's perspective (one the agent declared, e.g. コスト): the turn's feedback "
        "reinforces the memories under it.",
    ),
]


def _retrieval_json(r: Any) -> dict[str, Any]:
    data: dict[str, Any] = r.model_dump(mode="json")
    return data


_MIN_TEXT = 10
"""The narrowest the results table's text column gets (narrower: lines, not a table)."""


def _zone_shown(now: datetime | None) -> str:
    """The zone the results' times are shown in (the retrieval's: ``time_zone``), by its IANA
    name, else as its clock names it ("UTC", "UTC+09:00"): ``show`` and ``export`` print the
    offset each memory was stored with, so a table's bare times say whose they are."""
    if now is None or now.tzinfo is None:
        return "UTC"
    return str(getattr(now.tzinfo, "key", None) or now.tzname() or "UTC")


def _print_results(r: Any) -> None:
    """The results as a table (the numbers never cut; the text folds), or in a terminal
    too narrow for one, two lines each: rank, id, time, relevance and score, then the text."""
    n = len(r.results)
    rows = []
    for item in r.results:
        ep = item.episode
        text = shown(ep.text).replace("\n", " ⏎ ")  # stripped before it is cut short
        rows.append(
            (
                str(item.rank),
                str(ep.id),
                f"{in_zone(ep.occurred_at, r.now.tzinfo if r.now else None):%Y-%m-%d %H:%M}",
                item.relevance,
                f"{item.score:.4f}",
                preview(text, 160),
            )
        )
    heads = ("#", "id", "when", "rel", "score")
    widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(heads)]
    needed = sum(w + 3 for w in widths) + _MIN_TEXT + 3 + 1  # (a cell's padding and border)
    title = f"{n} result{'' if n == 1 else 's'} (times in {_zone_shown(r.now)})"
    if too_narrow(needed):
        console.print(title, highlight=False)
        for rank, ep_id, when, relevance, score, text in rows:
            console.print(f"{rank}. id {ep_id} · {when} · {relevance} · {score}", highlight=False)
            console.print(f"   {text}", highlight=False)
        _print_status(r)
        return
    table = Table(show_lines=False, title=title)
    for name in heads:
        table.add_column(name, justify="left" if name in ("when", "rel") else "right", no_wrap=True)
    table.add_column("text", overflow="fold", min_width=_MIN_TEXT)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    _print_status(r)


def _print_status(r: Any) -> None:
    """What the search did, on stderr (stdout holds the results or the pack alone): the
    should-inject decision, the turn id a feedback names, the timings, the notes."""
    timings = ", ".join(f"{k} {v:.1f} ms" for k, v in r.timings_ms.items())
    turn = f" · turn {r.turn_id}" if r.turn_id is not None else ""
    err_console.print(
        f"[dim]inject: {r.should_inject}{turn} · {timings}[/dim]",
        highlight=False,
        soft_wrap=True,
        markup=True,
    )
    _print_degraded(r)


def _print_degraded(r: Any) -> None:
    for d in r.degraded:  # e.g. the LLM phases fell back to the fast path
        err_console.print(
            f"[yellow]degraded:[/yellow] {escape(d)}", highlight=False, soft_wrap=True, markup=True
        )


def _retrieve(
    text: str,
    recent: list[str] | None,
    db: str | None,
    agent: str | None,
    config: str | None,
    limit: int | None,
    deep: bool = False,
    llm: bool | None = None,  # llm phases
    record: bool | None = None,
    max_sensitivity: int | None = None,
    with_pack: bool = False,
    perspective: str | None = None,  # lifecycle
) -> tuple[Any, Any]:
    """Retrieve in one opened memory; the pack too when it is asked for (``pack``)."""
    refuse_undecodable(
        text=text, **{f"--recent message {i + 1}": v for i, v in enumerate(recent or [])}
    )
    cfg = settings(config, db, agent)
    with open_memory(cfg, turns=llm is not False) as mem:  # (search: llm=False)
        warn_if_unknown(mem, cfg.agent)
        mem.load_embedder()  # before the turn's clock starts (its deadline is 2 s)
        if llm is not False:  # (a search asks no LLM)
            mem.load_llm_client(turn=True)  # (which covers the wait for the client too)
        r = mem.retrieve(
            text,
            recent=[labelled_message(v) for v in recent or []],
            limit=limit,
            deep=deep,
            llm=llm,
            record=record,
            max_sensitivity=max_sensitivity,
            perspective=perspective,
        )
        pack = mem.pack(r, query=text) if with_pack else None
    return r, pack


@app.command()
@guarded
def search(
    text: Annotated[
        str, typer.Argument(help="What to search for; one that starts with - goes after --.")
    ],
    limit: LimitOpt = None,
    max_sensitivity: SensitivityOpt = None,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid search for a text, without conversation context; it records no turn, and a
    memory that says the text is found first (no repeat set aside)."""
    refuse_undecodable(text=text)
    cfg = settings(config, db, agent)
    with open_memory(cfg, turns=False) as mem:
        warn_if_unknown(mem, cfg.agent)
        mem.load_embedder()  # before the search's clock starts (as a turn's)
        r = mem.search(text, limit=limit, max_sensitivity=max_sensitivity)
    print_json(_retrieval_json(r)) if as_json else _print_results(r)


@app.command()
@guarded
def retrieve(
    text: Annotated[
        str, typer.Argument(help="The user's new message; one that starts with - goes after --.")
    ],
    recent: RecentOpt = None,
    limit: LimitOpt = None,
    deep: Annotated[bool, typer.Option("--deep", help="Also search archived memories.")] = False,
    llm: LLMOpt = None,  # llm phases
    max_sensitivity: SensitivityOpt = None,
    perspective: PerspectiveOpt = None,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Retrieve the past episodes that matter for a new message."""
    r, _ = _retrieve(
        text,
        recent,
        db,
        agent,
        config,
        limit,
        deep,
        llm=llm,
        max_sensitivity=max_sensitivity,
        perspective=perspective,
    )
    print_json(_retrieval_json(r)) if as_json else _print_results(r)


@app.command()
@guarded
def pack(
    text: Annotated[
        str, typer.Argument(help="The user's new message; one that starts with - goes after --.")
    ],
    recent: RecentOpt = None,
    llm: LLMOpt = None,  # llm phases
    max_sensitivity: SensitivityOpt = None,
    perspective: PerspectiveOpt = None,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Retrieve and print the MemoryPack for a new message."""
    r, p = _retrieve(
        text,
        recent,
        db,
        agent,
        config,
        None,
        llm=llm,
        max_sensitivity=max_sensitivity,
        with_pack=True,
        perspective=perspective,
    )
    if as_json:
        print_json({"pack": p.model_dump(mode="json"), "retrieval": _retrieval_json(r)})
        return
    _print_status(r)
    if p.injected:  # as it goes into a prompt; to a terminal, without control characters
        sys.stdout.write((shown(p.text) if console.is_terminal else p.text) + "\n")
    if p.note:  # (to stderr: `$(memengine pack …)` puts nothing else in a prompt)
        err_console.print(f"({p.note})", style="dim", markup=False, highlight=False)
