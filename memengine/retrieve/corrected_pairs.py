"""A correction in the next turn and the memory it corrects, kept together: the correction
comes in right before that memory (:mod:`.corrections`), so a cut to the first ``limit``
results that falls between them would keep "Actually it's Tuesday, not Monday" without
the yoga class it is about; and a correction shown alone (a ``limit`` of 1, a tight pack
budget) still says when the memory it corrects was said (``changes_at``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from .fastpath import Candidate

T = TypeVar("T")


def corrected_when(candidates: Sequence[Candidate]) -> list[Candidate]:
    """``candidates`` with each correction (``correction``, ``changes``: the id of the
    memory it corrects) marked ``changes_at``, when that memory was said (POSIX seconds),
    where it is one of them: the pack's reason line says "corrects the memory of 20:05 the
    same day" of a correction whose memory the results or the budget left out."""
    said = {c.episode.id: c.episode.occurred_at.timestamp() for c in candidates}
    out: list[Candidate] = []
    for c in candidates:
        at = said.get(int(c.components.get("changes", 0)))
        if c.components.get("correction", 0.0) >= 1.0 and at is not None:
            c = replace(c, components={**c.components, "changes_at": at})
        out.append(c)
    return out


def first_keeping_corrected(
    items: Sequence[T],
    n: int,
    key: Callable[[T], int],
    marks: Callable[[T], Mapping[str, float]],
) -> list[T]:
    """The first ``n`` of ``items`` (best first; ``key`` an item's episode id, ``marks`` its
    score components), but with the memory a kept correction corrects (``correction``,
    ``changes``) kept too, in its place, in the stead of the lowest kept item that is
    neither (each correction in turn, the best first): cut between them, the correction
    would take the memory's slot and the memory go. Where no such item is left (``n`` of 1,
    a correction first) the correction stays alone: it states the current value."""
    ids = [key(x) for x in items]
    present = set(ids)
    corrected = {
        key(x): int(m.get("changes", 0))
        for x in items
        if (m := marks(x)).get("correction", 0.0) >= 1.0
    }
    kept = set(ids[:n])
    while True:
        missing = next(
            (
                corrected[i]
                for i in ids
                if i in kept and i in corrected and corrected[i] in present - kept
            ),
            None,
        )
        if missing is None:
            break
        pairs = {i for i in kept if i in corrected and corrected[i] in kept | {missing}}
        bound = pairs | {corrected[i] for i in pairs}
        free = [i for i in ids if i in kept and i not in bound]
        if not free:
            break
        kept.discard(free[-1])
        kept.add(missing)
    return [x for x in items if key(x) in kept]
