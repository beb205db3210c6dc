"""Moving episodes out of and into a file: the JSONL writer of exports and salvages, the
salvage of a file that no longer opens as a memory, and the rules for the ids an import
keeps. :class:`~memengine.Memory` calls these; :func:`salvage_file` is public too."""

from __future__ import annotations

import codecs
import io
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import IO, TypeVar

from . import arguments as args
from .clock import ensure_aware
from .errors import InvalidInput
from .importers import checked_path, episode_to_json, names_a_folder
from .lazy_re import lazy_compile
from .models import Episode, NewEpisode
from .store.connect import Connections
from .store.database import Store
from .store.maintenance import partial_path, refuse_own_files, remove_stale_partials
from .store.migrate import SQLITE_HEADER
from .store.salvage import SalvageReport, id_ranges, open_for_salvage, salvaged
from .text import counted

__all__ = ["is_stream", "kept_ids", "salvage_file", "save_salvaged", "write_jsonl"]


def salvage_file(
    path: str | os.PathLike[str],
    out: IO[str] | str | os.PathLike[str],
    *,
    agent: str | None = None,
    overwrite: bool = False,
) -> SalvageReport:
    """:meth:`Memory.salvage` for a file that does not open (its settings page damaged):
    read-only, reading nothing of the file but the episodes and the indexes that list
    their ids (:mod:`memengine.store.salvage`)."""
    name = None if agent is None else args.agent_name(agent)
    path = checked_path(path, "a salvage reads a file's path (a str)")
    connections = open_for_salvage(Path(path))
    try:
        return save_salvaged(connections, out, name, overwrite=overwrite)
    finally:
        connections.close()


def save_salvaged(
    connections: Connections,
    out: IO[str] | str | os.PathLike[str],
    agent: str | None,
    *,
    overwrite: bool = False,
) -> SalvageReport:
    """Write every episode that still reads through ``connections`` (of ``agent``, or all)
    as JSONL to ``out``, and report the ids that could not be read."""
    unreadable: list[int] = []
    n = write_jsonl(
        out,
        lambda: ([(e, None) for e in b] for b in salvaged(connections, agent, unreadable)),
        connections.path,
        overwrite=overwrite,
    )
    return SalvageReport(n, id_ranges(sorted(set(unreadable))))


_FD_ALIASES = lazy_compile(r"^/(dev/(stdout|stderr|fd/\d+)|proc/self/fd/\d+)$")


def is_stream(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a stream rather than a file to replace: a file descriptor's
    alias (``/dev/stdout``, ``/dev/fd/63`` of a ``>(…)``), or something that exists and is
    not a regular file (a device, a named pipe)."""
    if _FD_ALIASES.match(os.fspath(path)):
        return True
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:  # (no such file yet)
        return False


def write_text_file(out: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` to ``out`` as an export is written: a stream (:func:`is_stream`) where
    it points; a regular file whole or not at all, beside the file a symbolic link names,
    then moved into place with the old file's permissions (a new file gets the umask's)."""
    if is_stream(out):
        with open(out, "a", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        return
    _written_whole(Path(os.path.realpath(out)), lambda fh: fh.write(text))


T = TypeVar("T")


def refuse_a_database(target: Path) -> None:
    """An :class:`.InvalidInput` when ``target`` is an SQLite database (its first bytes say
    so), however it is named and whatever ``overwrite`` says: text written over it would
    destroy a memory file, another process's open one too (a name mistyped after ``-o``)."""
    try:
        with open(target, "rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError:  # (none yet, or unreadable: the write says why, if it fails)
        return
    if head == SQLITE_HEADER:
        raise InvalidInput(
            f"{target} is an SQLite database (a memory file?): text written over it would "
            "destroy it; give another file's name (remove it first if it is not wanted)"
        )


def _written_whole(target: Path, write: Callable[[IO[str]], T]) -> T:
    """``write`` into a new file beside ``target`` (a killed one's copy removed first), on
    the disk, then moved into place with the old file's permissions: ``target`` holds the
    whole or what it held before. What ``write`` returns."""
    refuse_a_database(target)
    remove_stale_partials(target)  # left by a write that was killed
    part = partial_path(target)
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    try:  # (made with the old file's permissions: a private file's words are never readable
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666 if mode is None else mode)
        with open(fd, "w", encoding="utf-8", newline="\n") as fh:  # by others, even in part)
            if mode is not None:
                os.chmod(part, mode)  # (the bits the umask took from the old file's)
            done = write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(part, target)
        return done
    finally:
        part.unlink(missing_ok=True)


def can_write(out: str | os.PathLike[str]) -> None:
    """An :class:`.InvalidInput` now when :func:`write_text_file` could not make ``out``
    later (its folder refuses a new file: a read-only mount, ``/proc``), by making and
    removing the partial copy's name there: ``os.access`` says yes to root everywhere."""
    if is_stream(out):
        return
    trial = partial_path(Path(os.path.realpath(out)))
    try:
        with open(trial, "x", encoding="utf-8"):
            pass
        trial.unlink()
    except OSError as exc:
        raise InvalidInput(f"cannot write {out}: {exc.strerror or exc}") from exc


def write_jsonl(
    out: IO[str] | str | os.PathLike[str],
    batches: Callable[[], Iterable[list[tuple[Episode, datetime | None]]]],
    database: Path,
    *,
    overwrite: bool = False,
) -> int:
    """Write the episodes of ``batches()`` (each with the moment its strength holds for, or
    None: :func:`.importers.episode_to_json`) as JSONL to ``out`` (an open text file, or a
    path to create); return how many. A regular file gets the whole export or nothing: it is
    written beside (through a symbolic link, beside the file it points to), then moved
    into place with the old file's permissions, so a failure keeps an earlier file of that
    name. A stream (:func:`is_stream`: ``/dev/stdout``, ``>(gzip …)``, a device) is
    written in place, appended to (its reader gone, :class:`BrokenPipeError` as for an
    open file). The ``database``'s own files are refused
    (:class:`.InvalidInput`), under any name, and so is a regular file that exists,
    unless ``overwrite``."""
    args.switches(overwrite=overwrite)
    if isinstance(out, (str, os.PathLike)) or not callable(getattr(out, "write", None)):
        checked_path(out, "an export goes to a path (a str) or an open text file")
    elif isinstance(out, (io.RawIOBase, io.BufferedIOBase)) or (
        isinstance(getattr(out, "mode", None), str)
        and "b" in out.mode
        and not isinstance(out, (codecs.StreamWriter, codecs.StreamReaderWriter))
    ):  # (a codecs writer is text, whose mode is the binary file's under it)
        raise InvalidInput(
            "an export goes to a path (a str) or an open text file, not a binary file: "
            "open it with mode 'w' (text)"
        )
    elif getattr(out, "closed", False) is True:
        raise InvalidInput("an export goes to an open file: this one is closed")
    elif callable(getattr(out, "writable", None)) and not out.writable():
        raise InvalidInput("an export goes to a file open for writing: this one was opened 'r'")
    if isinstance(out, (str, os.PathLike)):
        if "\x00" in os.fspath(out):
            raise InvalidInput(f"cannot write {out!r}: a path cannot hold a NUL character")
        if not str(os.fspath(out)).strip():  # Path("") is the folder "."
            raise InvalidInput("an export needs a file's path, not an empty one")
        if names_a_folder(out):
            raise InvalidInput(f"{out} is a folder: give the export's file name")
        refuse_own_files(database, Path(out), "export")
        if is_stream(out):  # written where it points, appended (a `>>` stays whole)
            try:
                with open(out, "a", encoding="utf-8", newline="\n") as fh:
                    return write_jsonl(fh, batches, database)
            except BrokenPipeError:  # its reader went away (`-o /dev/stdout | head -1`): as
                raise  # for an open file, not a path's error (the CLI then ends with 141)
            except OSError as exc:
                raise InvalidInput(f"cannot write {out}: {exc}") from exc
        target = Path(os.path.realpath(out))
        if not target.parent.is_dir():
            raise InvalidInput(f"cannot write {out}: folder {target.parent} does not exist")
        if target.is_file() and not overwrite:
            raise InvalidInput(
                f"{out} exists: export to a new file, or replace it (overwrite=True)"
            )
        try:
            if target.exists() and not target.is_file():
                with open(target, "w", encoding="utf-8", newline="\n") as fh:
                    return write_jsonl(fh, batches, database)
            return _written_whole(target, lambda fh: write_jsonl(fh, batches, database))
        except OSError as exc:
            raise InvalidInput(f"cannot write {out}: {exc}") from exc
    n = 0
    for batch in batches():
        for ep, decayed_at in batch:
            out.write(episode_to_json(ep, decayed_at) + "\n")
            n += 1
    return n


def _same(new: NewEpisode, old: Episode) -> bool:
    """Whether ``new`` (from a file) is the episode ``old`` already stored under its id."""
    return _same_checked(args.checked_episode(new, copied=True), old)


def _same_checked(ep: NewEpisode, old: Episode) -> bool:
    """:func:`_same` for an episode already checked (:func:`.arguments.checked_episode`)."""
    return (ep.agent, ep.kind, ep.user_text, ep.reply_text, ep.content, ep.occurred_at) == (
        old.agent,
        old.kind,
        old.user_text,
        old.reply_text,
        old.content,
        old.occurred_at,
    )


def _moment(ep: NewEpisode) -> tuple[str, int]:
    return ep.agent, int(ensure_aware(ep.occurred_at).timestamp())


def not_stored(store: Store, eps: list[NewEpisode]) -> list[NewEpisode]:
    """``eps`` without the id-less ones ``store`` already holds as they are (same agent,
    kind, text and time): what an import with ``skip_existing`` adds of a file without
    ids (LoCoMo, memsets, JSONL lines without an id) that was imported before."""
    lines: dict[tuple[str, int], list[int]] = {}  # the id-less lines of each (agent, time)
    for i, e in enumerate(eps):
        if e.id is None:
            lines.setdefault(_moment(args.checked_episode(e, copied=True)), []).append(i)
    moments = list(lines)
    skipped: set[int] = set()
    for start in range(0, len(moments), _CHECK_ROWS):  # (a part at a time: bounded memory)
        part = moments[start : start + _CHECK_ROWS]
        found = store.ids_at(part)
        stored = store.get(sorted({i for ids in found.values() for i in ids}))
        for key in part:
            left = [stored[i] for i in found.get(key, ()) if i in stored]
            for i in lines[key] if left else ():  # each stored one matches one line: a line
                line = args.checked_episode(eps[i], copied=True)  # the file holds twice is
                match = next((old for old in left if _same_checked(line, old)), None)
                if match is not None:  # skipped as often as the memory holds it
                    left.remove(match)
                    skipped.add(i)
    return [e for i, e in enumerate(eps) if i not in skipped] if skipped else eps


_CHECK_ROWS = 2_000
"""How many stored episodes (or times) an import with ``skip_existing`` reads at once to
compare with its lines: the check's memory stays that of a part, not of the file."""


def kept_ids(
    store: Store, eps: list[NewEpisode], *, skip_existing: bool = False
) -> list[NewEpisode]:
    """``eps`` (to import into ``store``) whose ids can all be kept, those without one given
    theirs now (above every id given out and every id kept); InvalidInput, before anything
    is written, for an id that is twice in them, already in the file, past the ids an import
    may keep, or that a recorded turn or sleep names (it was another episode's, deleted
    since). With ``skip_existing`` the episodes already in the file under their ids, and
    those without an id that it holds as they are (:func:`not_stored`), are left out
    instead (to finish an import that was interrupted); an id held by another episode
    (another agent, kind, text or time) is still an error."""
    if skip_existing:
        eps = not_stored(store, eps)
    kept = [e.id for e in eps if e.id is not None]
    if not kept:
        return eps
    fix = " Import with keep_ids=False (memengine import --new-ids) to give them new ids"
    twice = sorted(i for i, n in Counter(kept).items() if n > 1)
    if twice:
        raise InvalidInput(
            f"the import gives {len(twice):,} episode id{'' if len(twice) == 1 else 's'} to "
            f"more than one episode (first: {twice[0]}); nothing was imported." + fix
        )
    taken = sorted(store.existing(kept))
    if taken and skip_existing:
        present = set(taken)
        by_id = {e.id: e for e in eps if e.id in present}
        other = [
            i
            for start in range(0, len(taken), _CHECK_ROWS)
            for i, old in store.get(taken[start : start + _CHECK_ROWS]).items()
            if not _same(by_id[i], old)
        ]
        other.sort()
        if other:
            raise InvalidInput(
                f"{len(other):,} of the file's episode ids belong to other episodes in this "
                f"memory (first: {other[0]}: another agent, kind, text or time); nothing was "
                "imported." + fix
            )
        eps = [e for e in eps if e.id not in present]
        kept = [e.id for e in eps if e.id is not None]
        if not kept:
            return eps
    elif taken:
        raise InvalidInput(
            f"{len(taken):,} of the file's episode ids are already in this memory "
            f"(first: {taken[0]}); nothing was imported." + fix + ", or with "
            "skip_existing=True (--skip-existing) to finish an import that was interrupted"
        )
    named = store.named_by_records(kept)
    if named:
        raise InvalidInput(
            f"{len(named):,} of the file's episode ids belonged to episodes deleted from "
            f"this memory, and recorded turns or sleeps name them (first: {named[0]}): "
            "kept, they would make those records name memories they did not mean; "
            "nothing was imported." + fix
        )
    next_id = max(store.highest_id(), *kept) + 1
    unnumbered = len(eps) - len(kept)
    if unnumbered and next_id + unnumbered - 1 > args.MAX_KEPT_ID:
        raise InvalidInput(
            f"the {counted(unnumbered, 'episode')} without an id would get ids past "
            "2**53 - 1, above "
            f"the ids kept ({max(kept)}) and given out before; nothing was imported." + fix
        )
    out = []
    for ep in eps:
        if ep.id is None:
            ep = ep.model_copy(update={"id": next_id})
            next_id += 1
        out.append(ep)
    # the batches are written one by one: another writer must not take an id meanwhile
    taken = store.reserve_ids([e.id for e in out if e.id is not None])
    if taken:  # another writer took one since they were looked up
        raise InvalidInput(
            f"{len(taken):,} of the file's episode ids were stored by another writer while "
            f"the import was checked (first: {taken[0]}); nothing was imported. Import "
            "again" + (" with skip_existing=True (--skip-existing)" if skip_existing else "")
        )
    return out
