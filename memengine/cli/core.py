"""Store commands: init, add, import, show, delete, stats."""

from __future__ import annotations

import json
import shlex
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ..arguments import (
    MAX_EPISODE_CHARS,
    agent_of_a_new_file,
    checked_episode,
    episode_kind,
    new_episode,
)
from ..clock import SystemClock, iso_text, time_text
from ..errors import InvalidInput, StoreError
from ..text import counted, json_escaped

if TYPE_CHECKING:
    from ..config import Config
    from ..importers import ImportedFile

from ._app import (
    STOPS,
    AgentOpt,
    ConfigOpt,
    DbOpt,
    JsonOpt,
    app,
    console,
    err_console,
    given_file,
    guarded,
    interrupted_compaction,
    number,
    open_memory,
    print_json,
    print_table,
    progress_bar,
    refuse_undecodable,
    settings,
    shown_name,
    stop_code,
    too_narrow,
    warn_if_unknown,
    whole,
)


def _when(value: str | None) -> datetime | None:
    """``--at``: an ISO 8601 time, typed in full width too (２０２６－１２－０１, as an IME
    gives it, like the command line's numbers)."""
    if value is None:
        return None
    try:
        return time_text(value)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc


def _json_object(value: str, option: str) -> dict[str, Any]:
    """The JSON object given to ``option`` (an :class:`.InvalidInput` for anything else)."""
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise InvalidInput(f"{option} is not JSON ({exc}): {value[:80]!r}") from exc
    except RecursionError as exc:  # (before the depth check could say so)
        raise InvalidInput(f"{option} is nested too deeply: {value[:80]!r}") from exc
    if not isinstance(parsed, dict):
        kind = {type(None): "null", list: "a list", str: "a string"}.get(type(parsed), "a number")
        raise InvalidInput(f"{option} must be a JSON object ({{...}}), not {kind}")
    return parsed


def _stdin_bytes(*bounds: Any) -> bytes:
    """Standard input's bytes, which must end within ``bounds`` (a limit and what to say
    past it; default: what an import reads from a pipe); an :class:`.InvalidInput` when it
    is closed (``<&-``) or goes on past them."""
    from ..importers import STANDARD_INPUT, read_bounded

    if sys.stdin is None:
        raise InvalidInput(f"{STANDARD_INPUT} is closed: give the text or the file's path")
    return read_bounded(sys.stdin.buffer, STANDARD_INPUT, *bounds)


def _stdin_text() -> str:
    """Standard input as text, without the newlines that end it (as `$(…)` drops them)."""
    data = _stdin_bytes(
        4 * MAX_EPISODE_CHARS + 4, f"a text is at most {MAX_EPISODE_CHARS:,} characters"
    )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"standard input is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return text.rstrip("\r\n")


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
    text: Annotated[
        str,
        typer.Argument(
            help="The user's words, or the content for other kinds; - reads stdin; one that starts with - goes after --."
        ),
    ],
    reply: Annotated[str | None, typer.Option("--reply", help="The partner's reply.")] = None,
    kind: Annotated[str, typer.Option("--kind", help="exchange, fact, principle, …")] = "exchange",
    at: Annotated[str | None, typer.Option("--at", help="When it happened (ISO 8601).")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag; repeat.")] = None,
    sensitivity: Annotated[
        int,
        typer.Option(
            "--sensitivity",
            min=0,
            max=3,
            parser=whole(0, 3),
            help="How private it is: 0 (plain) to 3; a retrieval with a lower "
            "--max-sensitivity leaves it out.",
        ),
    ] = 0,
    importance: Annotated[
        float,
        typer.Option(
            "--importance",
            min=0.0,
            max=1.0,
            parser=number(0.0, 1.0),
            help="How much it matters, 0 to 1: of a time a message asks about, the more "
            "important memories are fetched first.",
        ),
    ] = 0.5,
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
    """Store one episode; a TEXT of - is read from standard input (UTF-8)."""
    if text == "-":
        text = _stdin_text()
    refuse_undecodable(text=text, **{"--reply": reply, "--metadata": metadata, "--tag": tag})
    kind = episode_kind(kind).value
    if reply is not None and kind != "exchange":
        raise InvalidInput(
            f"--reply belongs to --kind exchange; one of kind {kind} has only its text"
        )
    extra = _json_object(metadata, "--metadata") if metadata is not None else None
    cfg = settings(config, db, agent)
    when = _when(at)
    common: dict[str, Any] = dict(
        occurred_at=when,
        tags=tag or (),
        sensitivity=sensitivity,
        importance=importance,
        metadata=extra,
    )
    texts = dict(user_text=text, reply_text=reply) if kind == "exchange" else dict(content=text)
    # checked before the file is opened: a failing add creates no file
    draft = {**common, "occurred_at": when or SystemClock()}
    checked_episode(new_episode(kind=episode_kind(kind), **texts, **draft))
    agent_of_a_new_file(cfg.db, cfg.agent)
    with open_memory(cfg, create=True) as mem:
        if kind == "exchange":
            new_id = mem.add_exchange(text, reply, **common)
        else:
            new_id = mem.add(text, kind=kind, **common)
        ahead = _dated_ahead(mem, new_id, zoned=cfg.time_zone is not None) if when else ""
    if as_json:
        print_json({"id": new_id})
    else:
        console.print(f"added episode {new_id}")
    # a local time a summer-time change skips or repeats, and one after the clock
    for note in (cfg.local_time_note(when) if when else "", ahead):
        if note:
            err_console.print(
                f"[yellow]note:[/yellow] {escape(note)}",
                highlight=False,
                soft_wrap=True,
                markup=True,
            )


def _dated_ahead(mem: Any, episode_id: int, *, zoned: bool) -> str:
    """What to say of an episode dated more than a minute after the memory's clock (searches
    find it only from then on, and nothing else says so): a local time typed without its
    offset, with no ``time_zone`` set, is read as UTC; else ""."""
    episode = mem.get(episode_id, all_agents=True)
    ahead = episode.occurred_at - mem.clock()
    if ahead <= timedelta(minutes=1):
        return ""
    hours = ahead.total_seconds() / 3600
    if hours < 1:
        span = f"{hours * 60:.0f} minutes"
    else:
        span = f"{hours:.1f} hours" if hours < 48 else f"{hours / 24:.0f} days"
    why = (
        ""
        if zoned
        else " (a time without an offset is read as UTC: give one, --at 2026-05-01T10:00+09:00,"
        " or set time_zone)"
    )
    return (
        f"episode {episode_id} is dated {iso_text(episode.occurred_at)}, {span} after now: "
        f"searches find it from then on{why}"
    )


@app.command("import")
@guarded
def import_(
    path: Annotated[
        Path,
        typer.Argument(
            parser=given_file,
            help="JSONL export, LoCoMo JSON or memsets JSON; - reads stdin.",
        ),
    ],
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
    skip_existing: Annotated[
        bool,
        typer.Option(
            "--skip-existing",
            help="Leave out the episodes the file already holds: by id, or (without an "
            "id: LoCoMo, memsets) by agent, kind, text and time. Finishes an import that "
            "was interrupted.",
        ),
    ] = False,
    db: DbOpt = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            "-a",
            help="Put every episode into this agent (a JSONL file whose lines name more than "
            "one agent is refused: import an export per agent). Without it a line keeps its "
            "agent, and one that names none goes to the configured agent; when the "
            "configuration names one (agent =, MEMENGINE_AGENT), a line naming another is "
            "refused (--all-agents imports it). With --agent-per-conversation, the prefix.",
        ),
    ] = None,
    all_agents: Annotated[
        bool,
        typer.Option(
            "--all-agents",
            help="Keep the agent each line names, whatever agent is configured (the import "
            "of an export --all-agents).",
        ),
    ] = False,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Import episodes from a file (format detected); - reads standard input. Under an agent
    the configuration names (agent =, MEMENGINE_AGENT), a JSONL line naming another agent is
    refused: --all-agents keeps each line's agent, --agent puts one agent's file into it."""
    from ..importers import STANDARD_INPUT, read_file, read_stream

    if agent is not None and all_agents:
        raise typer.BadParameter("either --agent or --all-agents", param_hint="--all-agents")
    cfg = settings(config, db, agent)
    # read and checked before the file is opened: a malformed one creates nothing
    options: dict[str, Any] = dict(
        agent=agent,
        default_agent=cfg.agent,
        per_conversation=per_conversation,
        keep_to=None if all_agents else cfg.named_agent(),
    )
    stdin = str(path) == "-"
    if stdin:
        read = read_stream(_stdin_bytes(), STANDARD_INPUT, **options)
    else:
        read = read_file(path, **options)
    for name in read.assigned:  # a name refused for a new agent: no new file either
        agent_of_a_new_file(cfg.db, name)
    unmade = not read.episodes and not cfg.db.exists()  # nothing to put in a new file
    if unmade:
        ids: list[int] = []
    else:
        ids = _import_read(
            cfg,
            read,
            stdin=stdin,
            path=path,
            new_ids=new_ids,
            skip_existing=skip_existing,
            all_agents=all_agents,
            quiet=as_json,
        )
    fmt = read.format
    skipped = len(read.episodes) - len(ids)
    if as_json:
        print_json({"format": fmt, "imported": len(ids), "skipped": skipped})
    else:
        note = f", {skipped:,} already in the file skipped" if skipped else ""
        source = STANDARD_INPUT if stdin else path
        empty = f"; {source} holds none, so no memory file was made" if unmade else ""
        console.print(f"imported {counted(len(ids), 'episode')} ({fmt}{note}){empty}")


def _import_read(
    cfg: Config,
    read: ImportedFile,
    *,
    stdin: bool,
    path: Path,
    new_ids: bool,
    skip_existing: bool,
    all_agents: bool = False,
    quiet: bool,
) -> list[int]:
    """Store an import file read and checked (:func:`.importers.read_file`); return the ids."""
    from ..importers import STANDARD_INPUT

    with open_memory(cfg, create=True) as mem:
        before = mem.store.count()
        stored = [0]  # the episodes of the batches committed, as the progress reports them
        planned = [-1]  # how many it writes (the file's, less those skipped), once reported

        try:
            with progress_bar(
                f"importing {STANDARD_INPUT if stdin else path.name}", enabled=not quiet
            ) as bar:

                def progress(done: int, total: int) -> None:
                    stored[0], planned[0] = done, total
                    bar(done, total)

                ids: list[int] = mem.add_imported(
                    read,
                    keep_ids=not new_ids,
                    skip_existing=skip_existing,
                    all_agents=all_agents,
                    progress=progress,
                )
                return ids
        except (KeyboardInterrupt, SystemExit) as stop:  # Ctrl-C, or SIGTERM's exit
            # (counted in the file: the interrupt may come between a commit and its report)
            written = mem.store.count() - before
            if 0 <= planned[0] <= written:  # every batch is in: the index merge that follows
                _interrupted_merge(written, cfg)
            else:
                _interrupted_import(written, len(read.episodes))
            if isinstance(stop, STOPS):  # (said: not guarded's bare "interrupted" as well)
                raise typer.Exit(stop_code(stop)) from None
            raise
        except StoreError:  # a batch failed (its error is printed after this)
            # what the batches before it kept, as reported: not counted in the file, where
            # the other writer that held it may have written too
            if 0 < planned[0] <= stored[0]:  # every batch is in: the merge failed
                _interrupted_merge(stored[0], cfg, why="stopped")
            elif stored[0] > 0:
                _interrupted_import(stored[0], len(read.episodes), why="stopped")
            raise


def _interrupted_merge(written: int, cfg: Config, why: str = "interrupted") -> None:
    """Say that an import was interrupted (or ``why`` else stopped) in the full-text index
    merge that ends a large one, when every episode is in already."""
    held = (
        f"all {written:,} episodes were imported"
        if written
        else "the file held every episode already"
    )
    err_console.print(
        f"{why} while merging the full-text index: {held} and search works; run `memengine optimize --db {shlex.quote(str(cfg.db))}` "
        "to finish the merge (searches are slower until then)",
        highlight=False,
        soft_wrap=True,
    )


def _interrupted_import(written: int, total: int, why: str = "interrupted") -> None:
    """Say what an interrupted (or ``why`` else stopped) import kept: the batches written
    before it stopped."""
    said = (
        f"{why}: {written:,} episodes were imported by this run (of the file's {total:,}) and are "
        "kept; run the same import again with --skip-existing to add the rest"
        if written > 0
        else f"{why} before its first batch: none of the file's {total:,} episodes "
        "was imported; run the same import again"
    )
    err_console.print(said, highlight=False, soft_wrap=True)


@app.command()
@guarded
def show(
    episode_id: Annotated[int, typer.Argument(parser=whole(), help="Episode id.")],
    agent: AgentOpt = None,
    db: DbOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show one episode: only the agent's that --agent or the configuration names (agent =
    "user-42", MEMENGINE_AGENT), as search keeps to it; any agent's when none is named."""
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        # the scope given as an agent: the library's hint (agent=…, all_agents=True) is Python's
        ep = mem.get(episode_id, agent=cfg.agent_scope(agent))
    if as_json:
        print_json(ep.model_dump(mode="json"))
        return
    fields = [
        (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for key, value in ep.model_dump(mode="json").items()
        if value not in (None, [], {}, "")
    ]
    if not console.is_terminal or too_narrow():  # a pipe, a file: one `key: value` line each
        for key, value in fields:
            breaks = value.splitlines() != [value]  # (\r, U+2028… too)
            one_line = json_escaped(json.dumps(value, ensure_ascii=False)) if breaks else value
            console.print(f"{key}: {one_line}", highlight=False)
        return
    table = Table(show_header=False)
    table.add_column("field", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in fields:
        table.add_row(key, value)  # the console leaves out control characters
    print_table(table)


@app.command()
@guarded
def delete(
    ids: Annotated[list[int], typer.Argument(parser=whole(), help="Episode ids to delete.")],
    scrub: Annotated[
        bool,
        typer.Option(
            "--scrub",
            help="Also leave no copy of their bytes in the file: rebuild the full-text index, "
            "compact the file and empty its log (seconds for a large file).",
        ),
    ] = False,
    db: DbOpt = None,
    agent: AgentOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Delete episodes by id: only the agent's that --agent or the configuration names, as
    show does; any agent's when none is named. Exits 1 when an id was not deleted (absent,
    or another agent's), after deleting the others."""
    cfg = settings(config, db)
    with open_memory(cfg, embeds=False) as mem:
        present = mem.store.existing(ids) if scrub else set()
        try:
            with progress_bar(
                "deleting and compacting" if scrub else "deleting",
                enabled=not as_json,
                counted=False,
            ):
                deleted = mem.delete(ids, agent=cfg.agent_scope(agent), scrub=scrub)
        except STOPS as stop:  # during the compaction the delete is saved: say so
            gone = present - mem.store.existing(list(present))
            if gone:
                interrupted_compaction(f"{counted(len(gone), 'episode')} deleted", stop)
            raise
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
        typer.Option(
            "--never-used",
            help="List memories retrieved often (never_used_min_candidates) but never used.",
        ),
    ] = False,
    db: DbOpt = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            "-a",
            help="Only this agent's counts (default: the agent memengine.toml or "
            "MEMENGINE_AGENT names; when neither does, every agent's). The file's totals "
            "are shown either way.",
        ),
    ] = None,
    all_agents: Annotated[
        bool,
        typer.Option("--all-agents", help="Every agent's counts, whatever agent is configured."),
    ] = False,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Counts per agent and kind, file size, embedder (or, with --never-used, the never-used
    list). Like show and export, it keeps to the agent the configuration names (agent =
    "user-42" in memengine.toml, or MEMENGINE_AGENT); --all-agents counts every agent's."""
    if agent is not None and all_agents:
        raise typer.BadParameter("either --agent or --all-agents", param_hint="--all-agents")
    if never and all_agents:  # (never_used is one agent's list)
        raise typer.BadParameter(
            "--never-used lists one agent's memories", param_hint="--all-agents"
        )
    if never:
        from .life_cmds import never_used

        never_used(min_candidates=None, db=db, agent=agent, config=config, as_json=as_json)
        return
    cfg = settings(config, db)
    agent = cfg.agent_scope(agent, all_agents=all_agents)  # (a per-user process's own)
    with open_memory(cfg, embeds=False) as mem:
        data = mem.stats(agent=agent)
        if agent is not None:
            warn_if_unknown(mem, agent)
    if as_json:
        print_json(data)
        return
    mib, free = data["bytes"] / 2**20, data["free_bytes"] / 2**20
    size = f"{mib:.1f} MiB" + (
        f" ({free:.1f} MiB free: memengine optimize --vectors compacts it)"
        if free >= max(1.0, mib / 4)
        else ""
    )
    own = data["agent"]
    # with --agent the table and the line under it are the agent's own, and every
    # file-wide number is on a line that says it is the file's (every agent's)
    table = Table(
        title=f"{cfg.db}: {counted(data['episodes'], 'episode')}, {size}"
        if own is None
        else f"{shown_name(own['name'])}: {counted(own['episodes'], 'episode')}, "
        f"{counted(own['turns'], 'turn')}"
    )
    table.add_column("agent")
    table.add_column("active", justify="right")
    table.add_column("archived", justify="right")
    for name, counts in data["agents"].items():
        table.add_row(
            shown_name(name), str(counts.get("active", 0)), str(counts.get("archived", 0))
        )
    print_table(table)  # (a name is never cut: too narrow for it, lines)

    def listed(counts: dict[str, int]) -> str:
        return ", ".join(f"{k} {n}" for k, n in counts.items()) or "none"

    kinds = listed(data["kinds"])
    if own is not None:
        console.print(
            f"{shown_name(own['name'])}'s kinds: {listed(own['kinds'])}",
            highlight=False,
            soft_wrap=True,
        )
        kinds = (
            f"the file {cfg.db} (every agent's): {data['episodes']} episodes across "
            f"{counted(data['agent_count'], 'agent')}, {size}  ·  kinds: {kinds}"
        )
    else:
        kinds = f"kinds: {kinds}"
    console.print(
        kinds + f"  ·  embedder: {data['embedder']}  ·  "
        f"full-text segments: {data['fulltext_segments']}  ·  "
        f"vector chunk: {data['vector_chunk_size']} rows",
        highlight=False,
        soft_wrap=True,  # (the terminal wraps it: an embedder's name is not cut in two)
    )
