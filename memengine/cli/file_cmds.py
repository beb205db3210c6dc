"""Whole-file commands: export (and salvage), backup, reembed, optimize, doctor."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ..errors import ConfigError, InvalidInput, MemEngineError, ReadOnlyDatabase
from ..importers import names_a_folder
from ..text import counted, shown_name
from ..transfer import is_stream, salvage_file
from ._app import (
    ConfigOpt,
    DbOpt,
    JsonOpt,
    app,
    console,
    err_console,
    given_path,
    guarded,
    note,
    open_memory,
    print_json,
    progress_bar,
    settings,
    warn_if_unknown,
)


@app.command()
@guarded
def export(
    out_arg: Annotated[
        str | None,
        typer.Option("--out", "-o", parser=given_path, help="File (default, or -: stdout)."),
    ] = None,
    salvage: Annotated[
        bool,
        typer.Option(
            "--salvage", help="A damaged file: write every episode that still reads, name the rest."
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace --out if it exists.")] = False,
    db: DbOpt = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            "-a",
            help="Only this agent's episodes (default: the agent memengine.toml or "
            "MEMENGINE_AGENT names; when neither does, every agent's).",
        ),
    ] = None,
    all_agents: Annotated[
        bool,
        typer.Option("--all-agents", help="Every agent's episodes, whatever agent is configured."),
    ] = False,
    config: ConfigOpt = None,
) -> None:
    """Export episodes as JSONL (ids, times and metadata preserved). A file is written
    whole or not at all. Like search, it keeps to the agent the configuration names
    (agent = "user-42" in memengine.toml, or MEMENGINE_AGENT); --all-agents exports the
    whole file."""
    if agent is not None and all_agents:
        raise typer.BadParameter("either --agent or --all-agents", param_hint="--all-agents")
    cfg = settings(config, db)
    agent = cfg.agent_scope(agent, all_agents=all_agents)  # as Memory.export reads it
    if out_arg is not None and not out_arg.strip():  # (as a Path, "" is the folder ".")
        raise InvalidInput("--out needs a file's path, not an empty one")
    if out_arg not in (None, "-") and names_a_folder(out_arg):  # (as a Path, "d/" is "d")
        raise InvalidInput(f"{out_arg} is a folder: give the export's file name")
    out = None if out_arg is None or out_arg == "-" else Path(out_arg)
    stream = out is not None and is_stream(out)  # /dev/stdout, >(gzip …): written in place
    if out is not None and not stream and out.is_file() and not force:
        raise InvalidInput(f"{out} exists: export to a new file, or replace it with --force")
    target = sys.stdout if out is None else out
    if salvage:  # without opening it as a memory: its settings may be what is damaged
        report = salvage_file(cfg.db, target, agent=agent, overwrite=True)
        n = report.episodes
    else:
        with open_memory(cfg, embeds=False) as mem:
            if agent is not None:
                warn_if_unknown(mem, agent)
            n = mem.export(  # (--force: checked above)
                target, agent=agent, all_agents=agent is None, overwrite=True
            )
    if out is None:  # all of it written before a summary says so (a closed pipe: 141)
        sys.stdout.flush()
    where = "" if out is None else f" to {out}"
    scope = "" if agent is None else f" of agent {shown_name(agent)}"
    if salvage and not report.complete:
        lost = ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in report.unreadable)
        one = len(report.unreadable) == 1 and report.unreadable[0][0] == report.unreadable[0][1]
        rows = f"the row of id {lost}" if one else f"the rows of ids {lost}"
        maybe = "it may have been deleted before" if one else "some may have been deleted before"
        err_console.print(
            f"salvaged {counted(n, 'episode')}{scope}{where}; {rows} could not be read ({maybe})"
        )
        raise typer.Exit(1)
    if out is not None:  # (not into the stream the export went to)
        done = (
            f"salvaged {counted(n, 'episode')}{scope}{where}: every row read"
            if salvage
            else (f"exported {counted(n, 'episode')}{scope}{where}")
        )
        (err_console if stream else console).print(done)
    elif salvage:
        err_console.print(f"salvaged {counted(n, 'episode')}{scope}: every row read")


@app.command()
@guarded
def backup(
    dest: Annotated[
        str,
        typer.Argument(parser=given_path, help="The copy to write (a new file)."),
    ],
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
def reembed(
    missing: Annotated[
        bool,
        typer.Option(
            "--missing",
            help="Embed only the episodes that have no vector (doctor's missing vectors), "
            "with the file's embedder, and delete the vectors of no episode (one "
            "transaction; nothing else is re-embedded).",
        ),
    ] = False,
    db: DbOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Re-embed every episode with the configured embedder. Stopped part way, the file keeps
    its old vectors, and the next reembed with the same embedder goes on from there."""
    cfg = settings(config, db)
    if missing:
        with open_memory(cfg, allow_embedder_change=True) as mem:  # (another: mem refuses it)
            with progress_bar("embedding the missing vectors") as bar:
                n = mem.reembed(missing=True, progress=bar, note=note)
            console.print(
                f"embedded {counted(n, 'missing vector')} with {mem.embedder.id}", highlight=False
            )
        return
    with open_memory(cfg, allow_embedder_change=True) as mem:
        old, new = mem.store.embedder_id, mem.embedder.id
        if old == new and not mem.read_only:  # (a read-only file is refused at once)
            note(f"{cfg.db} already holds vectors of {new}: re-embedding them all again")
        seen = [0, 0]
        try:
            with progress_bar("re-embedding") as bar:

                def tracked(done: int, total: int) -> None:
                    seen[:] = [done, total]
                    bar(done, total)

                n = mem.reembed(progress=tracked, note=note)
        except ReadOnlyDatabase:  # refused before any work: nothing to tell of
            raise
        except (KeyboardInterrupt, SystemExit, MemEngineError):
            if mem.store.meta().get("embedder_id") == old:  # no swap (it is all or nothing)
                if seen[0]:
                    note(
                        f"re-embed stopped after {seen[0]:,} of {seen[1]:,} episodes; the "
                        f"searches still use the vectors of {old} in {cfg.db}. The vectors "
                        "made so far are kept: run `memengine reembed` again with this "
                        "embedder to go on from there"
                    )
                else:
                    note(
                        f"re-embed stopped at its start; the searches still use the vectors "
                        f"of {old} in {cfg.db}"
                    )
            raise
        stats = mem.stats()
    console.print(f"re-embedded {counted(n, 'episode')} with {new}", highlight=False)
    if stats["free_bytes"] >= max(stats["bytes"] / 4, 2**20):
        note(
            f"{stats['free_bytes'] / 2**20:.1f} MiB of {cfg.db} is free now: "
            "memengine optimize --vectors compacts it"
        )


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
    scrub: Annotated[
        bool,
        typer.Option(
            "--scrub",
            help="Also link the turns' neighbour words again under the current rule and "
            "neighbour_gap_minutes (a changed gap reaches stored turns only so) and "
            "compact the file, so that no free page keeps what was deleted.",
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
        progress_bar(
            "rewriting vectors" if vectors else "scrubbing" if scrub else "merging the index",
            enabled=not as_json,
            counted=vectors,
        ) as bar,
    ):
        report = mem.optimize(vectors=vectors, scrub=scrub, progress=bar)
    if as_json:
        print_json(dataclasses.asdict(report))
        return
    if vectors:
        compacted = "; file compacted" if report.vacuumed else ""
        if report.not_compacted:
            compacted = f"; file not compacted ({report.not_compacted}): run this again later"
        console.print(
            f"vectors: {report.vectors_rewritten} rewritten, "
            f"{report.vector_chunk_size} rows per chunk{compacted}",
            highlight=False,
        )
    if scrub:
        console.print(f"neighbour words linked again: {report.contexts_relinked} turns")
        if report.not_compacted and not vectors:  # (--vectors said it above)
            console.print(
                f"file not compacted ({report.not_compacted}): run this again later",
                highlight=False,
            )
    console.print(
        f"file: {report.bytes_before / 2**20:.1f} MiB -> {report.bytes_after / 2**20:.1f} MiB",
        highlight=False,
    )
    console.print(
        f"full-text segments: {report.segments_before} -> {report.segments_after} "
        f"({report.steps} steps, {report.seconds:.2f} s); WAL "
        + (
            "truncated"
            if report.wal_truncated
            else "not truncated (another process was writing or reading an older snapshot, "
            "or the disk refused)"
        )
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
        with progress_bar(
            "checking the file", enabled=not as_json, counted=False
        ):  # (seconds at 100K)
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
