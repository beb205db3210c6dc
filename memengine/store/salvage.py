"""Reading what still reads of a damaged file.

A damaged page fails every statement that reads it, so a plain export of
such a file stops at the first one. A salvage fetches the episodes by id
range instead; a range that fails is split in halves until what fails is
single ids, which are skipped and reported. An episode's row lives on one
leaf page of the ``episodes`` table, so a damaged leaf costs the rows on
it, and a damaged interior page the ranges under it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..errors import DatabaseLocked, StoreError
from ..models import Episode

__all__ = ["SalvageReport", "id_ranges", "salvaged"]

BATCH = 500
"""Ids per fetch while nothing fails."""


@dataclass(frozen=True)
class SalvageReport:
    """What a salvage saved: how many episodes were written, and the id ranges (inclusive)
    whose rows could not be read (some of those ids may have been deleted before)."""

    episodes: int
    unreadable: tuple[tuple[int, int], ...]

    @property
    def complete(self) -> bool:
        """Whether every id up to the highest one the file records was read."""
        return not self.unreadable


def salvaged(
    fetch: Callable[[list[int]], list[Episode]], last_id: int, unreadable: list[int]
) -> Iterator[list[Episode]]:
    """Yield the episodes ``fetch`` can read among ids 1 … ``last_id``, in id order; the ids
    it cannot read are appended to ``unreadable``."""
    for lo in range(1, last_id + 1, BATCH):
        yield from _walk(fetch, lo, min(lo + BATCH, last_id + 1), unreadable)


def _walk(
    fetch: Callable[[list[int]], list[Episode]], lo: int, hi: int, unreadable: list[int]
) -> Iterator[list[Episode]]:
    try:
        found = fetch(list(range(lo, hi)))
    except DatabaseLocked:
        raise  # not damage: the file is busy
    except (StoreError, ValueError):  # a damaged page, or a row that no longer decodes
        if hi - lo == 1:
            unreadable.append(lo)
            return
        mid = (lo + hi) // 2
        yield from _walk(fetch, lo, mid, unreadable)
        yield from _walk(fetch, mid, hi, unreadable)
        return
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
