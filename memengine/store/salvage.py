"""Reading what still reads of a damaged file.

A damaged page fails every statement that reads it, so a plain export of
such a file stops at the first one. A salvage first lists the episode ids
from every index that holds them (the episodes table, the vectors' rowids,
the full-text index's sizes), each as far as it reads, then fetches the
episodes in batches; a batch that fails is split in halves until what fails
is single ids, which are skipped and reported. An episode's row lives on one
leaf page of the ``episodes`` table, so a damaged leaf costs the rows on it,
and a damaged interior page the rows under it. Nothing else of the file is
read (not even its settings), so a salvage opens a file whatever else of it
is damaged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DamagedDatabase, DatabaseLocked, StoreError
from ..lazy_re import lazy_compile
from ..models import Episode
from . import episodes as ep_rows
from .connect import Connections, read_only_access
from .ids import MAX_KEPT_ID
from .migrate import check_header

__all__ = ["SalvageReport", "id_ranges", "open_for_salvage", "readable_batches", "salvaged"]

BATCH = 500
"""Ids per fetch while nothing fails."""

_LISTINGS = (
    ("episodes", "id"),
    ("episode_vectors_rowids", "rowid"),
    ("episodes_fts_docsize", "id"),
)
"""The tables that hold every episode id, and the column that does."""


@dataclass(frozen=True)
class SalvageReport:
    """What a salvage saved: how many episodes were written, and the ranges (inclusive) of
    the ids an index lists whose rows could not be read."""

    episodes: int
    unreadable: tuple[tuple[int, int], ...]

    @property
    def complete(self) -> bool:
        """Whether every episode an index lists was read."""
        return not self.unreadable


def open_for_salvage(path: Path) -> Connections:
    """Read-only connections to a (damaged) file, which read nothing of it but its schema
    (a :class:`.ReadOnlyDatabase` when its ``-wal`` cannot be read from here)."""
    if not path.is_file():
        raise StoreError(f"no memory file at {path}")
    check_header(path)  # another kind of file is no damaged one
    connections = Connections(path, access=read_only_access(path), why="a salvage", salvage=True)
    try:
        connections.probe()
    except DamagedDatabase as exc:
        connections.close()
        why = exc.__cause__ if exc.__cause__ is not None else exc  # (not its advice to salvage)
        raise DamagedDatabase(
            f"{path}: the file's schema itself is damaged, so SQLite cannot read any of its "
            f"tables and nothing can be salvaged through it ({why}); restore a backup"
        ) from exc
    except StoreError:
        connections.close()
        raise
    try:
        with connections.read() as cur:
            found = cur.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'episodes'"
            ).fetchone()[0]
    except DamagedDatabase as exc:  # the list of tables itself does not read
        found, check = 0, str(exc.__cause__ if exc.__cause__ is not None else exc)
    else:  # (damage elsewhere in another program's file is no damage of a schema)
        check = "ok" if found else connections.check_pages()
        check = check if _SCHEMA_TREE.search(check) else "ok"
    if not found:  # a damaged schema page, an empty file (0 bytes), another program's file
        connections.close()
        if check != "ok":
            raise DamagedDatabase(
                f"{path}: the file's schema is damaged ({check}), so SQLite lists none of "
                "its tables and nothing can be salvaged through it; restore a backup"
            )
        raise StoreError(f"{path} holds no memengine episodes table: there is nothing to salvage")
    return connections


_SCHEMA_TREE = lazy_compile(r"\bTree 1 page\b|\breported as \d+ on page 1\b|(?:^|\n)Page 1\b")
"""What SQLite's page check says of the schema's own pages (its tree is rooted at page 1;
"Fragmentation of … bytes reported as 0 on page 1" when its cells are lost); not "2nd
reference to page 1" nor "freelist leaf count too big on page 1", a pointer of another
tree or of the free list."""


def salvaged(
    connections: Connections, agent: str | None, unreadable: list[int]
) -> Iterator[list[Episode]]:
    """Yield every episode that still reads (of ``agent``, or all), in id order; the ids an
    index lists whose rows cannot be read are appended to ``unreadable``."""

    def fetch(ids: list[int]) -> tuple[list[Episode], list[int]]:
        with connections.read() as cur:
            found = ep_rows.fetch_episodes(cur, ids)
        # an id an index lists whose row is not found: a damaged page that hides its rows
        return (
            [e for i in ids if (e := found.get(i)) and agent in (None, e.agent)],
            [i for i in ids if i not in found],
        )

    yield from readable_batches(fetch, _listed_ids(connections), unreadable)


def readable_batches(
    fetch: Callable[[list[int]], tuple[list[Episode], list[int]]],
    ids: Sequence[int],
    unreadable: list[int],
) -> Iterator[list[Episode]]:
    """The episodes of ``ids`` that read, :data:`BATCH` at a time through ``fetch`` (the
    episodes found, the ids not found); a batch that fails is split until the ids at fault,
    which go to ``unreadable`` with those not found."""
    for start in range(0, len(ids), BATCH):
        yield from _walk(fetch, list(ids[start : start + BATCH]), unreadable)


def _listed_ids(connections: Connections) -> list[int]:
    """Every episode id some index lists, as far as each reads (DamagedDatabase when none
    reads at all)."""
    ids: set[int] = set()
    failed: list[StoreError] = []
    for table, column in _LISTINGS:
        last = 0
        while True:
            rows: list[Any] = []
            try:
                with connections.read() as cur:
                    for row in cur.execute(  # row by row: those before a damaged page count
                        f"SELECT {column} FROM {table} WHERE {column} > ? "
                        f"ORDER BY {column} LIMIT 5000",
                        (last,),
                    ):
                        rows.append(row)
            except DatabaseLocked:
                raise
            except StoreError as exc:  # read up to a damaged page: the others go on
                failed.append(exc)
                ids.update(int(r[0]) for r in rows)
                break
            if not rows:
                break
            ids.update(int(r[0]) for r in rows)
            top = max(int(r[0]) for r in rows)
            if top <= last:  # a damaged page answers the same rows again: this index ends
                failed.append(DamagedDatabase(f"{table} lists ids out of order after {last}"))
                break
            last = top
    if len(failed) == len(_LISTINGS) and not ids:
        first = failed[0]
        why = first.__cause__ if first.__cause__ is not None else first  # (not its advice)
        raise DamagedDatabase(
            f"{connections.path}: no table that lists the episodes reads ({why}), so "
            "nothing can be salvaged from it; restore a backup"
        )
    # (a damaged page can list a number no id ever was: -1, 0, past the largest id kept)
    return sorted(i for i in ids if 1 <= i <= MAX_KEPT_ID)


def _walk(
    fetch: Callable[[list[int]], tuple[list[Episode], list[int]]],
    ids: list[int],
    unreadable: list[int],
) -> Iterator[list[Episode]]:
    try:
        found, missing = fetch(ids)
    except DatabaseLocked:
        raise  # not damage: the file is busy
    except (StoreError, ValueError):  # a damaged page, or a row that no longer decodes
        if len(ids) == 1:
            unreadable.extend(ids)
            return
        mid = len(ids) // 2
        yield from _walk(fetch, ids[:mid], unreadable)
        yield from _walk(fetch, ids[mid:], unreadable)
        return
    unreadable.extend(missing)
    if found:
        yield found


def id_ranges(ids: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Ascending ids as inclusive ranges: ``[1, 2, 3, 7]`` → ``((1, 3), (7, 7))``."""
    out: list[tuple[int, int]] = []
    for i in ids:
        if out and i == out[-1][1] + 1:
            out[-1] = (out[-1][0], i)
        else:
            out.append((i, i))
    return tuple(out)
