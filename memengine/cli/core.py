"""Store commands: init, add, import, search, retrieve, pack, show, delete, stats, export,
backup, reembed, optimize, doctor."""

from __future__ import annotations

import dataclasses
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..arguments import ROLES
from ..errors import ConfigError, InvalidInput
from ..transfer import salvage_file
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
    progress_bar,
    settings,
)

RecentOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--recent",
        "-r",
        help="A recent message, oldest first; repeat. Prefix 'partner:' for the partner's lines.",
    ),
]


SensitivityOpt = Annotated[
    int | None,
    typer.Option(
        "--max-sensitivity",
        min=0,
        max=3,
        help="Leave out episodes more sensitive than this (default: [retrieval] max_sensitivity).",
    ),
]

# llm phases: --llm/--no-llm (default: on when [llm] base_url is set)
LLMOpt = Annotated[
    bool | None,
    typer.Option("--llm/--no-llm", help="LLM expansion + rerank (default: on if [llm] is set)."),
]


def _when(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(f"not an ISO 8601 time: {value!r}") from exc


def _episodes(n: int) -> str:
    """``"1 episode"``, ``"2 episodes"``."""
    return f"{n} episode{'' if n == 1 else 's'}"


def _json_object(value: str, option: str) -> dict[str, Any]:
    """The JSON object given to ``option`` (an :class:`.InvalidInput` for anything else)."""
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise InvalidInput(f"{option} is not JSON ({exc}): {value[:80]!r}") from exc
    if not isinstance(parsed, dict):
        raise InvalidInput(f"{option} must be a JSON object ({{...}}), not {type(parsed).__name__}")
    return parsed


def _recent(values: list[str] | None) -> list[dict[str, str]]:
    out = []
    for v in values or []:
        role, sep, text = v.partition(":")
        if sep and role.strip().lower() in ROLES:
            out.append({"role": role.strip().lower(), "text": text.strip()})
        else:
            out.append({"role": "user", "text": v})
    return out


def _retrieval_json(r: Any) -> dict[str, Any]:
    return r.model_dump(mode="json")


def _print_results(r: Any) -> None:
    n = len(r.results)
    table = Table(show_lines=False, title=f"{n} result{'' if n == 1 else 's'}")
    table.add_column("#", justify="right")
    table.add_column("id", justify="right")
    table.add_column("when")
    table.add_column("rel")
    table.add_column("score", justify="right")
    table.add_column("text", overflow="fold")
    for item in r.results:
        ep = item.episode
        text = ep.text.replace("\n", " ⏎ ")
        table.add_row(
            str(item.rank),
            str(ep.id),
            f"{ep.occurred_at:%Y-%m-%d %H:%M}",
            item.relevance,
            f"{item.score:.4f}",
            text[:160] + ("…" if len(text) > 160 else ""),
        )
    console.print(table)
    timings = ", ".join(f"{k} {v:.1f} ms" for k, v in r.timings_ms.items())
    console.print(f"[dim]inject: {r.should_inject} · {timings}[/dim]", highlight=False, markup=True)
    for d in r.degraded:
        console.print(f"[yellow]degraded:[/yellow] {escape(d)}", highlight=False, markup=True)


@app.command()
@guarded
def init(db: DbOpt = None, config: ConfigOpt = None) -> None:
    """Create (or migrate) a memory file."""
    cfg = settings(config, db)
    with open_memory(cfg, create=True) as mem:
        console.print(
            f"ready: {mem.store.path} (schema {mem.store.schema_version()}, "
            f"embedder {mem.store.embedder_id})"
            + (", read-only: this process cannot write it" if mem.read_only else ""),
            highlight=False,
        )


@app.command()
@guarded
def add(
    text: Annotated[str, typer.Argument(help="The user's words, or the content for other kinds.")],
    reply: Annotated[str | None, typer.Option("--reply", help="The partner's reply.")] = None,
    kind: Annotated[str, typer.Option("--kind", help="exchange, fact, principle, …")] = "exchange",
    at: Annotated[str | None, typer.Option("--at", help="When it happened (ISO 8601).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag; repeat.")] = None,
    sensitivity: Annotated[int, typer.Option("--sensitivity", min=0, max=3)] = 0,
    importance: Annotated[float, typer.Option("--importance", min=0.0, max=1.0)] = 0.5,
    metadata: Annotated[
        str | None,
        typer.Option(
            "--metadata", help='A JSON object stored with it, e.g. \'{"source": "sms"}\'.'
        ),
    ] = None,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Store one episode."""
    if reply is not None and kind != "exchange":
        raise InvalidInput(f"--reply belongs to --kind exchange; a {kind} has only its text")
    extra = _json_object(metadata, "--metadata") if metadata is not None else None
    cfg = settings(config, db, agent)
    with open_memory(cfg, create=True) as mem:
        common: dict[str, Any] = dict(
            occurred_at=_when(at),
            tags=tag or (),
            sensitivity=sensitivity,
            importance=importance,
            metadata=extra,
        )
        if kind == "exchange":
            new_id = mem.add_exchange(text, reply, **common)
        else:
            new_id = mem.add(text, kind=kind, **common)
    if as_json:
        print_json({"id": new_id})
    else:
        console.print(f"added episode {new_id}")


@app.command("import")
@guarded
def import_(
    path: Annotated[Path, typer.Argument(help="JSONL export, LoCoMo JSON or memsets JSON.")],
    per_conversation: Annotated[
        bool,
        typer.Option(
            "--agent-per-conversation",
            help="One agent per conversation of a LoCoMo or memsets file: <agent>/<id>.",
        ),
    ] = False,
    new_ids: Annotated[
        bool,
        typer.Option(
            "--new-ids", help="JSONL: give the episodes new ids (import into a used file)."
        ),
    ] = False,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import episodes from a file (format detected)."""
    from ..importers import read_file

    cfg = settings(config, db, agent)
    # read and checked before the file is opened: a malformed one creates nothing
    read = read_file(path, agent=agent, default_agent=cfg.agent, per_conversation=per_conversation)
    with (
        open_memory(cfg, create=True) as mem,
        progress_bar(f"importing {path.name}", enabled=not as_json) as bar,
    ):
        ids = mem.add_imported(read, keep_ids=not new_ids, progress=bar)
    fmt = read.format
    if as_json:
        print_json({"format": fmt, "imported": len(ids)})
    else:
        console.print(f"imported {_episodes(len(ids))} ({fmt})")


def _warn_if_unknown(mem: Any, agent: str) -> None:
    """Say on stderr when the file knows no agent ``agent`` (a typo finds nothing)."""
    if not mem.has_agent(agent):
        known = ", ".join(a.name for a in mem.agents()) or "none yet"
        err_console.print(
            f"[yellow]warning:[/yellow] no agent {escape(repr(agent))} in "
            f"{escape(str(mem.store.path))} (agents: {escape(known)}); nothing of it to find",
            highlight=False,
            soft_wrap=True,
            markup=True,
        )


def _retrieve(
    text: str,
    recent: list[str] | None,
    db: Path | None,
    agent: str | None,
    config: Path | None,
    limit: int | None,
    deep: bool = False,
    llm: bool | None = None,  # llm phases
    record: bool | None = None,
    max_sensitivity: int | None = None,
    with_pack: bool = False,
) -> tuple[Any, Any]:
    """Retrieve in one opened memory; the pack too when it is asked for (``pack``)."""
    cfg = settings(config, db, agent)
    with open_memory(cfg) as mem:
        _warn_if_unknown(mem, cfg.agent)
        r = mem.retrieve(
            text,
            recent=_recent(recent),
            limit=limit,
            deep=deep,
            llm=llm,
            record=record,
            max_sensitivity=max_sensitivity,
        )
        pack = mem.pack(r, query=text) if with_pack else None
    return r, pack


@app.command()
@guarded
def search(
    text: Annotated[str, typer.Argument(help="What to search for.")],
    limit: Annotated[int | None, typer.Option("--limit", "-k", min=1, max=100)] = None,
    max_sensitivity: SensitivityOpt = None,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Hybrid search for a text, without conversation context; it records no turn."""
    r, _ = _retrieve(
        text,
        None,
        db,
        agent,
        config,
        limit,
        llm=False,
        record=False,
        max_sensitivity=max_sensitivity,
    )
    print_json(_retrieval_json(r)) if as_json else _print_results(r)


@app.command()
@guarded
def retrieve(
    text: Annotated[str, typer.Argument(help="The user's new message.")],
    recent: RecentOpt = None,
    limit: Annotated[int | None, typer.Option("--limit", "-k", min=1, max=100)] = None,
    deep: Annotated[bool, typer.Option("--deep", help="Also search archived memories.")] = False,
    llm: LLMOpt = None,  # llm phases
    max_sensitivity: SensitivityOpt = None,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Retrieve the past episodes that matter for a new message."""
    r, _ = _retrieve(
        text, recent, db, agent, config, limit, deep, llm=llm, max_sensitivity=max_sensitivity
    )
    print_json(_retrieval_json(r)) if as_json else _print_results(r)


@app.command()
@guarded
def pack(
    text: Annotated[str, typer.Argument(help="The user's new message.")],
    recent: RecentOpt = None,
    llm: LLMOpt = None,  # llm phases
    max_sensitivity: SensitivityOpt = None,
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
    )
    if as_json:
        print_json({"pack": p.model_dump(mode="json"), "retrieval": _retrieval_json(r)})
        return
    for d in r.degraded:  # e.g. the LLM phases fell back to the fast path
        err_console.print(
            f"[yellow]degraded:[/yellow] {escape(d)}", highlight=False, soft_wrap=True, markup=True
        )
    if p.injected:
        sys.stdout.write(p.text + "\n")
    else:
        console.print("[dim](nothing relevant: the pack is empty)[/dim]", markup=True)


@app.command()
@guarded
def show(
    episode_id: Annotated[int, typer.Argument(help="Episode id.")],
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one episode."""
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        ep = mem.get(episode_id)
    if as_json:
        print_json(ep.model_dump(mode="json"))
        return
    table = Table(show_header=False)
    for key, value in ep.model_dump(mode="json").items():
        if value not in (None, [], {}, ""):
            table.add_row(key, str(value))
    console.print(table)


@app.command()
@guarded
def delete(
    ids: Annotated[list[int], typer.Argument(help="Episode ids to delete.")],
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete episodes by id (only the given agent's when --agent is set). Exits 1 when an
    id was not deleted (absent, or another agent's), after deleting the others."""
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        deleted = mem.delete(ids, agent=agent)
    missing = sorted(set(ids) - set(deleted))
    if as_json:
        print_json({"deleted": deleted, "not_deleted": missing})
    else:
        console.print(f"deleted {len(deleted)} of {len(set(ids))}")
        if missing:
            err_console.print(
                f"[yellow]not deleted (absent or another agent's):[/yellow] {missing}",
                soft_wrap=True,
                markup=True,
            )
    if missing:
        raise typer.Exit(1)


@app.command()
@guarded
def stats(
    never: Annotated[
        bool,
        typer.Option("--never-used", help="List memories retrieved > 50 times but never used."),
    ] = False,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Counts per agent and kind, file size, embedder (or, with --never-used, the never-used list)."""
    if never:
        from .life_cmds import never_used

        never_used(min_candidates=None, db=db, agent=agent, config=config, as_json=as_json)
        return
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        data = mem.stats(agent=agent)
        if agent is not None:
            _warn_if_unknown(mem, agent)
    if as_json:
        print_json(data)
        return
    table = Table(title=f"{cfg.db}: {data['episodes']} episodes, {data['bytes'] / 2**20:.1f} MiB")
    table.add_column("agent")
    table.add_column("active", justify="right")
    table.add_column("archived", justify="right")
    for name, counts in data["agents"].items():
        table.add_row(name, str(counts.get("active", 0)), str(counts.get("archived", 0)))
    console.print(table)
    console.print(
        "kinds: "
        + (", ".join(f"{k} {n}" for k, n in data["kinds"].items()) or "none")
        + f"  ·  embedder: {data['embedder']}  ·  "
        f"full-text segments: {data['fulltext_segments']}  ·  "
        f"vector chunk: {data['vector_chunk_size']} rows",
        highlight=False,
    )


@app.command()
@guarded
def export(
    out: Annotated[Path | None, typer.Option("--out", "-o", help="File (default: stdout).")] = None,
    salvage: Annotated[
        bool,
        typer.Option(
            "--salvage", help="A damaged file: write every episode that still reads, name the rest."
        ),
    ] = False,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Export episodes as JSONL (ids, times and metadata preserved)."""
    cfg = settings(config, db)
    target = sys.stdout if out is None else out
    if salvage:  # without opening it as a memory: its settings may be what is damaged
        report = salvage_file(cfg.db, target, agent=agent)
        n = report.episodes
    else:
        with open_memory(cfg, embeds=False) as mem:
            n = mem.export(target, agent=agent)
    where = "" if out is None else f" to {out}"
    if salvage and not report.complete:
        lost = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in report.unreadable)
        err_console.print(
            f"salvaged {_episodes(n)}{where}; the rows of ids {lost} could not be "
            "read (some of those ids may have been deleted before)"
        )
        raise typer.Exit(1)
    if out is not None:
        console.print(f"exported {_episodes(n)}{where}")
    elif salvage:
        err_console.print(f"salvaged {_episodes(n)}: every row read")


@app.command()
@guarded
def backup(
    dest: Annotated[Path, typer.Argument(help="The copy to write (a new file).")],
    db: DbOpt = None,
    config: ConfigOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Replace DEST if it exists.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Copy the whole memory file to DEST (everything, consistent while in use)."""
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        report = mem.backup(dest, overwrite=force)
    if as_json:
        print_json({**dataclasses.asdict(report), "path": str(report.path)})
    else:
        console.print(
            f"backed up {report.episodes} episodes to {report.path} "
            f"({report.bytes / 2**20:.1f} MiB, {report.seconds:.2f} s)",
            highlight=False,
        )


@app.command()
@guarded
def reembed(db: DbOpt = None, config: ConfigOpt = None) -> None:
    """Re-embed every episode with the configured embedder."""
    cfg = settings(config, db)
    with open_memory(cfg, allow_embedder_change=True) as mem, progress_bar("re-embedding") as bar:
        n = mem.reembed(progress=bar)
    console.print(f"re-embedded {n} episodes with {cfg.embedder.name}")


@app.command()
@guarded
def optimize(
    vectors: Annotated[
        bool,
        typer.Option(
            "--vectors",
            help="Also rewrite a vector table of an older layout (another chunk size; "
            "see stats) in the current one (one transaction; nothing is re-embedded), "
            "then compact the file after a rewrite or when a quarter of it is free.",
        ),
    ] = False,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Merge the full-text index into one segment (after bulk loads; imports do it)."""
    cfg = settings(config, db)
    with (
        open_memory(cfg, embeds=False) as mem,
        progress_bar("rewriting vectors", enabled=vectors and not as_json) as bar,
    ):
        report = mem.optimize(vectors=vectors, progress=bar)
    if as_json:
        print_json(dataclasses.asdict(report))
        return
    if vectors:
        compacted = "; file compacted" if report.vacuumed else ""
        if report.vectors_rewritten and not report.vacuumed:
            compacted = "; file not compacted (it was busy): run this again later"
        console.print(
            f"vectors: {report.vectors_rewritten} rewritten, "
            f"{report.vector_chunk_size} rows per chunk{compacted}",
            highlight=False,
        )
    console.print(
        f"file: {report.bytes_before / 2**20:.1f} MiB -> {report.bytes_after / 2**20:.1f} MiB",
        highlight=False,
    )
    console.print(
        f"full-text segments: {report.segments_before} -> {report.segments_after} "
        f"({report.steps} steps, {report.seconds:.2f} s); WAL "
        + ("truncated" if report.wal_truncated else "not truncated (another reader is open)")
    )


@app.command()
@guarded
def doctor(
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check the driver, extensions, the configuration, the file's consistency and the LLM
    endpoint (when one is configured)."""
    from ..diagnostics import diagnose

    try:
        report = diagnose(settings(config, db))
    except ConfigError as exc:  # still report the driver and the extensions
        report = diagnose(None, config_error=str(exc))
    if as_json:
        print_json(report)
    else:
        for name, (ok, detail) in report["checks"].items():
            mark = "[green]ok[/green]" if ok else "[red]FAIL[/red]"
            console.print(f"{mark}  {name}: {escape(detail)}", highlight=False, markup=True)
    if not all(ok for ok, _ in report["checks"].values()):
        raise typer.Exit(1)
