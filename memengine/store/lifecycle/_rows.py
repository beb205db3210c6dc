"""What the row modules share: ISO times, id chunks, SQL placeholders, the principle test.

Every function takes a cursor and runs inside the caller's transaction."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from ...clock import ensure_aware

__all__ = ["CHUNK", "IS_PRINCIPLE", "chunks", "iso", "marks"]


CHUNK = 500


IS_PRINCIPLE = (
    "(kind = 'principle' OR (episodes.tags LIKE '%\"principle\"%' AND EXISTS (SELECT 1 FROM "
    "json_each(episodes.tags) WHERE lower(json_each.value) = 'principle')))"
)
"""An episode is a principle: kind ``principle``, or a tag ``principle`` in any case (the
rule of :func:`memengine.lifecycle.strength.is_principle`; the LIKE, also blind to case, is
the partial index ``episodes_principles``'s and spares the JSON of the other rows). Tags are
stored without outer spaces; one an earlier version stored with them is no principle to
either rule, and so none to the pack and the sleep alike."""


def iso(moment: datetime) -> str:
    return ensure_aware(moment).isoformat()


def chunks(ids: Sequence[int]) -> Iterable[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield list(ids[start : start + CHUNK])


def marks(n: int) -> str:
    return ",".join("?" * n)


# -- agents -------------------------------------------------------------------------------
