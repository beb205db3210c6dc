"""Episode rows in and out: encoding, batch inserts, reads, scoped deletes."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any

from ..clock import ensure_aware
from ..errors import DamagedDatabase, StoreError
from ..models import Episode, EpisodeKind, NewEpisode
from ..text import doctor_command, salvage_command
from . import meta
from . import reembed as staging
from .connect import damaged_error, file_of, not_utf8, sqlite_module
from .filters import Filters
from .ids import MAX_KEPT_ID, highest_id_given
from .term_stats import ERASURES

__all__ = [
    "COLUMNS",
    "NEIGHBOUR_CHARS",
    "delete_and_relink",
    "delete_episodes",
    "deleted_turns",
    "ensure_agents",
    "fetch_episodes",
    "held_ids",
    "insert_episodes",
    "iter_episode_ids",
    "link_neighbours",
    "newest_turns",
    "next_turns",
    "relink_beside",
    "row_to_episode",
    "visible_ids",
    "visible_sql",
]

COLUMNS = (
    "id, agent, kind, user_text, reply_text, content, occurred_at, created_at, sensitivity, "
    "importance, tags, metadata, status, strength, access_count, candidate_count, last_access, "
    "impact_score, consolidation_level"
)

_INSERT = (
    "INSERT INTO episodes (id, agent, kind, user_text, reply_text, content, occurred_at, "
    "occurred_ts, created_at, sensitivity, importance, tags, metadata, status, search_text, "
    "strength, context_text, decay_from) VALUES "
)
_ROW = "(" + ", ".join(["?"] * 18) + ")"
_ROWS_PER_INSERT = 500
"""Rows per INSERT statement. FTS5 flushes its pending terms to a new segment
at the start of every statement that writes it, so one statement per row
(``executemany``) writes one tiny segment per episode and then merges them;
a statement of 500 rows (9,000 parameters, under SQLite's 32,766) writes
one segment for all of them: in a profile, 3× less full-text work per row."""
_TURN_KINDS = ("exchange", "message")

NEIGHBOUR_CHARS = 1_000
"""The most of a neighbour's analysed text that goes into a turn's ``context_text``.

A conversation turn is indexed with its neighbours' words (at a lower
weight). Without a bound, a pasted log of 50 KB would lend all of its words
to the turns before and after it, and FTS5's length normalisation would
then bury those turns under their own words (a turn holding every word
of a query ranked below the turns holding fewer of them). 1,000
characters are about 150 English words or, analysed into grams, about
200 Japanese characters: longer than the turns of a conversation, so
only pastes are cut. :func:`_piece` and the
SQL of :data:`_NEIGHBOURS` (and of migration 0005) cut the same way."""


def _piece(text: str) -> str:
    """What one neighbour lends to a turn's context: its first :data:`NEIGHBOUR_CHARS`
    characters, without trailing spaces (SQL: ``rtrim(substr(text, 1, n), ' ')``)."""
    return text[:NEIGHBOUR_CHARS].rstrip(" ")


def _decay_from(ep: NewEpisode, now: datetime, now_iso: str) -> str | None:
    """Schema 8's ``decay_from`` of a new row: the moment a strength the episode brings
    holds for (its ``decayed_at``, an export's), else, for one created before now (an
    import of an older export), now; None for the others (they decay from creation)."""
    if ep.strength is None:
        return None
    if ep.decayed_at is not None:
        return _iso(ep.decayed_at)
    created = ep.created_at
    return now_iso if created is not None and ensure_aware(created) < now else None


def _iso(moment: datetime) -> str:
    return ensure_aware(moment).isoformat()


def ensure_agents(cur: Any, agents: Iterable[str], now: datetime) -> None:
    """Create the agents that do not exist yet."""
    cur.executemany(
        "INSERT OR IGNORE INTO agents (name, created_at) VALUES (?, ?)",
        [(a, _iso(now)) for a in set(agents)],
    )


def insert_episodes(
    cur: Any,
    episodes: Sequence[NewEpisode],
    search_texts: Sequence[str],
    now: datetime,
    *,
    gap_s: int = 0,
) -> list[int]:
    """Insert ``episodes`` (inside the caller's transaction) and return their ids in order.

    Ids are assigned here, above the largest one ever given out (stored, or
    deleted from the top: an id is never reused), so that the batch
    goes in with a few multi-row statements (:data:`_ROWS_PER_INSERT`); with
    ``gap_s`` each new conversation turn is written with its neighbours'
    words already in ``context_text``, so the full-text index sees each row
    once, and the older turns next to the new ones are re-linked from the
    same rows (what :func:`link_neighbours` would do, without its scan); a
    stored turn beside a new one but farther than ``gap_s`` is linked again
    too (what :func:`relink_beside` does, found among the same rows: its words of the turn
    it was beside then go).
    """
    explicit = [e.id for e in episodes if e.id is not None]
    next_id = max([highest_id_given(cur, "episodes"), *explicit]) + 1
    ids: list[int] = []
    for ep in episodes:
        if ep.id is not None:
            ids.append(ep.id)
        else:
            ids.append(next_id)
            next_id += 1
    if ids and max(ids) > MAX_KEPT_ID:  # an export must be able to be imported again
        raise StoreError(
            "this memory has given out every episode id up to 2**53 - 1 (an import kept "
            "one that high), so no new episode can be numbered; export it and import the "
            "export into a new file with new ids (memengine import --new-ids)"
        )
    occurred = [ensure_aware(ep.occurred_at) for ep in episodes]
    stamps = [int(moment.timestamp()) for moment in occurred]  # (once: read three times)
    contexts, relinked, beside = (
        _contexts(cur, episodes, search_texts, ids, stamps, gap_s) if gap_s > 0 else ({}, [], [])
    )
    rows = []
    now_iso = _iso(now)
    for i, ep, search_text, moment, ts in zip(
        ids, episodes, search_texts, occurred, stamps, strict=True
    ):
        rows.append(
            (
                i,
                ep.agent,
                ep.kind.value,
                ep.user_text,
                ep.reply_text,
                ep.content,
                moment.isoformat(),
                ts,
                now_iso if ep.created_at is None else _iso(ep.created_at),
                ep.sensitivity,
                ep.importance,
                json.dumps(list(ep.tags), ensure_ascii=False) if ep.tags else "[]",
                json.dumps(ep.metadata, ensure_ascii=False) if ep.metadata else "{}",
                ep.status,
                search_text,
                1.0 if ep.strength is None else ep.strength,
                contexts.get(i, ""),
                _decay_from(ep, now, now_iso),
            )
        )
    for start in range(0, len(rows), _ROWS_PER_INSERT):
        chunk = rows[start : start + _ROWS_PER_INSERT]
        cur.execute(_INSERT + ", ".join([_ROW] * len(chunk)), [v for r in chunk for v in r])
    if relinked:
        cur.executemany("UPDATE episodes SET context_text = ? WHERE id = ?", relinked)
    if gap_s > 0:  # the turns beside the new ones were read with the rows near them
        for agent, ts in beside:
            link_neighbours(cur, agent, ts, ts, gap_s)
    else:
        turns = [
            (ep.agent, ts, i)
            for i, ep, ts in zip(ids, episodes, stamps, strict=True)
            if ep.kind.value in _TURN_KINDS
        ]
        relink_beside(cur, turns, gap_s, skip=set(ids))
    return ids


_NEAR = """
SELECT occurred_ts, id, search_text, context_text, sensitivity FROM episodes
 WHERE agent = :agent AND kind IN ('exchange', 'message') AND occurred_ts BETWEEN :lo AND :hi
UNION ALL
SELECT * FROM (SELECT occurred_ts, id, search_text, context_text, sensitivity FROM episodes
 WHERE agent = :agent AND kind IN ('exchange', 'message') AND occurred_ts < :lo
 ORDER BY occurred_ts DESC, id DESC LIMIT 1)
UNION ALL
SELECT * FROM (SELECT occurred_ts, id, search_text, context_text, sensitivity FROM episodes
 WHERE agent = :agent AND kind IN ('exchange', 'message') AND occurred_ts > :hi
 ORDER BY occurred_ts, id LIMIT 1)
"""
"""The stored turns of one span around new ones, and the turn just before and just after it
(however far): with them every new turn's stored neighbours are read."""

_AROUND = """
SELECT * FROM (SELECT occurred_ts, id, search_text, context_text, sensitivity FROM episodes
 WHERE agent = :agent AND kind IN ('exchange', 'message') AND (occurred_ts, id) < (:ts, :id)
 ORDER BY occurred_ts DESC, id DESC LIMIT 2)
UNION ALL
SELECT * FROM (SELECT occurred_ts, id, search_text, context_text, sensitivity FROM episodes
 WHERE agent = :agent AND kind IN ('exchange', 'message') AND (occurred_ts, id) > (:ts, :id)
 ORDER BY occurred_ts, id LIMIT 2)
"""
"""The two stored turns just before one new turn and the two just after it (in the order of
time, then id; however far): every stored turn whose words or context its coming changes."""

FEW_TURNS = 8
"""Up to this many new turns of one agent, each one's stored neighbours are read with
:data:`_AROUND` (four rows); more are read by their spans with :data:`_NEAR`. An append to a
chat read every turn of the last ``2 × gap`` (two hours by default) with its texts: about
a quarter of a single ``add_exchange`` commit once a session had a hundred turns."""


def _contexts(
    cur: Any,
    episodes: Sequence[NewEpisode],
    search_texts: Sequence[str],
    ids: Sequence[int],
    stamps: Sequence[int],
    gap_s: int,
) -> tuple[dict[int, str], list[tuple[str, int]], list[tuple[str, int]]]:
    """``context_text`` of each new conversation turn, ``(context, id)`` of the stored
    turns whose context the new ones change (what :func:`link_neighbours` would write), and
    ``(agent, occurred_ts)`` of the stored turns to link again because a new one now stands
    beside them farther than ``gap_s`` (what :func:`relink_beside` would find).

    A stored turn can only change when a new one lands within ``gap_s`` of
    it, and its own neighbours are then within ``2 × gap_s`` of the new
    one, so the rows :func:`_stored_near` reads are enough to compute it: for a few new
    turns the two stored turns on each side of each, for more every stored turn of their
    spans and the turn just outside each span, so that a new turn's neighbour farther away
    is known without a second lookup (one statement a new turn or a span). Such a neighbour
    is linked again only when it holds the words of the stored turn it was beside before (a
    turn appended after the last one, the usual write, relinks nothing).
    """
    by_agent: dict[str, list[tuple[int, int, str, int]]] = {}
    for i, ep, text, ts in zip(ids, episodes, search_texts, stamps, strict=True):
        if ep.kind.value in _TURN_KINDS:
            by_agent.setdefault(ep.agent, []).append((ts, i, text, ep.sensitivity))
    out: dict[int, str] = {}
    relinked: list[tuple[str, int]] = []
    beside: set[tuple[str, int]] = set()
    for agent, new in by_agent.items():
        old = {int(row[1]): row for row in _stored_near(cur, agent, new, gap_s)}
        stored = {i: str(r[3]) for i, r in old.items()}
        turns = sorted(
            [*((int(r[0]), int(r[1]), str(r[2]), int(r[4])) for r in old.values()), *new]
        )
        fresh = {n[1] for n in new}
        for k, (ts, i, _, sens) in enumerate(turns):
            prev = turns[k - 1] if k > 0 and turns[k - 1][0] >= ts - gap_s else None
            nxt = turns[k + 1] if k + 1 < len(turns) and turns[k + 1][0] <= ts + gap_s else None
            if i not in fresh and not any(n is not None and n[1] in fresh for n in (prev, nxt)):
                continue  # a stored turn changes only with a new neighbour within gap_s
            # a turn lends its words only to neighbours at least as sensitive as itself
            pieces = (
                _piece(prev[2]) if prev and prev[3] <= sens else "",
                _piece(nxt[2]) if nxt and nxt[3] <= sens else "",
            )
            context = " ".join(pieces).strip(" ")
            if i in fresh:
                out[i] = context
            elif context != stored[i]:
                relinked.append((context, i))
                stored[i] = context
        for k, (ts, i, _, _) in enumerate(turns):
            for step in (-1, 1) if i in fresh else ():
                near = k + step  # a stored turn beside it farther than gap_s …
                if not 0 <= near < len(turns) or turns[near][1] in fresh:
                    continue
                if abs(turns[near][0] - ts) <= gap_s or not stored[turns[near][1]]:
                    continue
                was = near - step  # … that holds words of the stored turn it was beside
                while 0 <= was < len(turns) and turns[was][1] in fresh:
                    was -= step
                if 0 <= was < len(turns) and _piece(turns[was][2]) in stored[turns[near][1]]:
                    beside.add((agent, turns[near][0]))
    return out, relinked, sorted(beside)


def _stored_near(
    cur: Any, agent: str, new: Sequence[tuple[int, int, str, int]], gap_s: int
) -> list[Any]:
    """The stored turns of ``agent`` that :func:`_contexts` reads around its ``new`` turns
    (``(occurred_ts, id, text, sensitivity)``): for a few, the two stored turns before and
    after each (:data:`_AROUND`); else every stored turn within ``2 × gap_s`` of one, and
    the one just outside each span (:data:`_NEAR`: a batch out of time order spans the
    whole file). What :func:`_contexts` reads of a new turn's surroundings lies within two
    places of it (its neighbours, theirs, the stored turn across a run of new ones), and
    the first read holds every stored turn there, so both give the same contexts."""
    if len(new) <= FEW_TURNS:
        asks = [{"agent": agent, "ts": ts, "id": i} for ts, i, _, _ in new]
        return [row for ask in asks for row in cur.execute(_AROUND, ask)]
    spans = _spans(sorted(n[0] for n in new), 2 * gap_s)
    return [
        row for lo, hi in spans for row in cur.execute(_NEAR, {"agent": agent, "lo": lo, "hi": hi})
    ]


def _spans(times: Sequence[int], reach: int) -> list[tuple[int, int]]:
    """The (sorted) ``times`` each widened by ``reach`` on both sides, overlapping ones
    merged: what :func:`_contexts` reads. Two turns read side by side across a gap between
    spans are never taken for neighbours of a turn that changes: that turn's neighbours
    all lie within ``reach`` of a new one."""
    spans: list[tuple[int, int]] = []
    for ts in times:
        if spans and ts - reach <= spans[-1][1]:
            spans[-1] = (spans[-1][0], ts + reach)
        else:
            spans.append((ts - reach, ts + reach))
    return spans


def row_to_episode(row: Sequence[Any]) -> Episode:
    """Build an Episode from a row selected with :data:`COLUMNS`.

    A row that does not decode (JSON, a date, a value out of range) raises
    :class:`.DamagedDatabase`: memengine never writes one, so the row was
    changed outside it or its page is damaged.
    """
    try:
        return Episode(
            id=row[0],
            agent=row[1],
            kind=EpisodeKind(row[2]),
            user_text=row[3],
            reply_text=row[4],
            content=row[5],
            occurred_at=datetime.fromisoformat(row[6]),
            created_at=datetime.fromisoformat(row[7]),
            sensitivity=row[8],
            importance=row[9],
            tags=tuple(json.loads(row[10])),
            metadata=json.loads(row[11]),
            status=row[12],
            strength=row[13],
            access_count=row[14],
            candidate_count=row[15],
            last_access=datetime.fromisoformat(row[16]) if row[16] else None,
            impact_score=row[17],
            consolidation_level=row[18],
        )
    except (ValueError, TypeError) as exc:  # bad JSON, a bad date; pydantic's errors too
        first = " ".join(str(exc).split())[:200]
        raise DamagedDatabase(
            f"episode {row[0]} does not read back ({first}): it was changed outside "
            "memengine or its page is damaged; `memengine export --all-agents --salvage` "
            "saves every episode that still reads"
        ) from exc


def held_ids(ids: Sequence[int]) -> list[int]:
    """The ``ids`` an SQLite integer holds (64 bits): a larger one names no episode, and
    binding it would raise ``OverflowError`` ("delete 99999999999999999999999")."""
    return [i for i in ids if -(2**63) <= i < 2**63]


def _rows_by_id(cur: Any, columns: str, ids: Sequence[int]) -> Iterator[Any]:
    """The rows of the episodes with these ids (``SELECT columns``), 500 ids a statement."""
    ids = held_ids(ids)
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        # read whole: a generator left suspended inside the cursor (an export stopped by
        # Ctrl-C) would touch it after its connection closed
        try:
            rows = cur.execute(
                f"SELECT {columns} FROM episodes WHERE id IN ({marks})", chunk
            ).fetchall()
        except sqlite_module().Error as exc:
            if not_utf8(exc) is None:
                raise
            # (not chained: the driver's error quotes the stored text)
            raise _not_utf8_error(cur, columns, chunk, exc) from None
        yield from rows


def _not_utf8_error(cur: Any, columns: str, ids: Sequence[int], exc: Exception) -> DamagedDatabase:
    """The error for a read of these ids (at most 500) that met a stored text that is no
    longer UTF-8 (the driver's ``exc``), naming the first episode whose row does not
    decode: each is read alone, by its id (the driver names the column, not the row)."""
    where = file_of(cur)
    for i in ids:
        try:
            cur.execute(f"SELECT {columns} FROM episodes WHERE id = ?", (i,)).fetchall()
        except sqlite_module().Error as alone:
            if not_utf8(alone) is None:  # another damage on the way: no row is named
                break
            return damaged_error(str(not_utf8(exc, i)), where)
    said = not_utf8(exc)
    return damaged_error(f"{said}; `{doctor_command(where)}` names the episodes", where)


def existing_ids(cur: Any, ids: Sequence[int], agent: str | None = None) -> set[int]:
    """The ids among ``ids`` that are stored episodes (``agent``'s, when given)."""
    if agent is None:
        return {int(row[0]) for row in _rows_by_id(cur, "id", ids)}
    return {int(row[0]) for row in _rows_by_id(cur, "id, agent", ids) if row[1] == agent}


def exchange_texts(cur: Any, ids: Sequence[int], max_chars: int) -> dict[int, tuple[str, str]]:
    """The user turn and reply of each exchange among these ids that has a user turn (a
    missing reply is ""; the other ids are absent), each its first ``max_chars`` (read so
    from the file: a 50 KB paste is not read whole)."""
    n = int(max_chars)
    columns = f"id, kind, substr(user_text, 1, {n}), substr(reply_text, 1, {n})"
    rows = _rows_by_id(cur, columns, ids)
    return {int(r[0]): (str(r[2]), r[3] or "") for r in rows if r[1] == "exchange" and r[2]}


def fetch_episodes(cur: Any, ids: Sequence[int]) -> dict[int, Episode]:
    """The episodes with these ids, keyed by id (missing ids are simply absent)."""
    return {row[0]: row_to_episode(row) for row in _rows_by_id(cur, COLUMNS, ids)}


_NEXT_TURN = """
SELECT e.id, n.id
  FROM episodes AS e
  JOIN episodes AS n ON n.id = (
        SELECT x.id FROM episodes AS x
         WHERE x.agent = e.agent AND x.kind IN ('exchange', 'message')
           AND (x.occurred_ts, x.id) > (e.occurred_ts, e.id)
           AND x.occurred_ts <= e.occurred_ts + ?  -- (the gap: not a scan of all after)
         ORDER BY x.occurred_ts, x.id
         LIMIT 1)
 WHERE e.id IN ({marks}) AND e.kind IN ('exchange', 'message')
"""


def next_turns(cur: Any, ids: Sequence[int], gap_s: int) -> dict[int, int]:
    """The conversation turn that follows each of ``ids`` (the next ``exchange`` or
    ``message`` of its agent in time, at most ``gap_s`` seconds later), as ``{id: next id}``;
    the neighbour order of :func:`link_neighbours`. Ids without one are absent."""
    if not ids or gap_s <= 0:
        return {}
    marks = ",".join("?" * len(ids))
    rows = cur.execute(_NEXT_TURN.format(marks=marks), [gap_s, *ids]).fetchall()
    return {int(a): int(b) for a, b in rows}


def newest_turns(cur: Any, agent: str, until_ts: int, limit: int) -> list[Episode]:
    """The agent's ``limit`` newest conversation turns (``exchange`` and ``message``, any
    status) that happened at or before ``until_ts``, newest first (the ``(agent,
    occurred_ts)`` index, read backwards)."""
    rows = cur.execute(
        f"SELECT {COLUMNS} FROM episodes WHERE agent = ? AND occurred_ts <= ? "
        "AND kind IN ('exchange', 'message') ORDER BY occurred_ts DESC, id DESC LIMIT ?",
        [agent, until_ts, limit],
    ).fetchall()
    return [row_to_episode(row) for row in rows]


IN_WINDOW_SCAN = 1000
"""How many of a time range's newest episodes :func:`window_ids` chooses among (a range of a
year in a large agent would otherwise be read and sorted whole)."""


SAID_READ = 201
"""How much of each episode's turns :func:`window_ids` reads: one character past the longest
a retrieval groups copies of (longer is its own)."""


def window_ids(
    cur: Any, filters: Filters, skip: AbstractSet[int] = frozenset()
) -> list[tuple[int, str, str]]:
    """The ids of the episodes within ``filters`` (their time range), principles and the ids
    in ``skip`` aside, among the :data:`IN_WINDOW_SCAN` newest: the most important first,
    then the strongest, then the newest, each with the start of what it said (an exchange's
    user turn, else its text) and of its reply ("" for none): :data:`SAID_READ` characters
    of each (a light read: no episode is built)."""
    where, params = filters.sql()
    rows = cur.execute(
        f"SELECT id, importance, strength, occurred_ts, "
        f"substr(coalesce(user_text, content, ''), 1, {SAID_READ}), "
        f"substr(coalesce(reply_text, ''), 1, {SAID_READ}) "
        f"FROM episodes WHERE {where} "
        "AND kind != 'principle' ORDER BY occurred_ts DESC, id DESC LIMIT ?",
        [*params, IN_WINDOW_SCAN],
    ).fetchall()
    rows = [r for r in rows if r[0] not in skip]
    ranked = sorted(rows, key=lambda r: (-r[1], -r[2], -r[3], -r[0]))
    return [(int(r[0]), str(r[4]), str(r[5])) for r in ranked]


def visible_sql(n: int, where: str) -> str:
    """The query of :func:`visible_ids` for ``n`` ids and a filters ``WHERE`` fragment.

    The rows are taken by id first: asked as one ``WHERE id IN (…) AND
    agent = ? AND status = ?``, SQLite scans the agent's whole
    ``(agent, status, …)`` index instead (8 ms at 100K episodes)."""
    marks = ",".join("?" * n)
    return (
        f"WITH chosen AS MATERIALIZED (SELECT * FROM episodes WHERE id IN ({marks})) "
        f"SELECT id FROM chosen WHERE {where}"
    )


def visible_ids(cur: Any, ids: Sequence[int], filters: Filters) -> set[int]:
    """The ``ids`` that ``filters`` let through."""
    if not ids:
        return set()
    where, params = filters.sql()
    return {int(r[0]) for r in cur.execute(visible_sql(len(ids), where), [*ids, *params])}


def delete_episodes(cur: Any, ids: Sequence[int], agent: str | None) -> list[int]:
    """Delete these ids, only those belonging to ``agent`` when given; return what was
    deleted. Every process's cached word counts are then counted again (a count must not
    tell of a deleted episode's word: :data:`.term_stats.ERASURES`)."""
    ids = held_ids(ids)
    deleted: list[int] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        sql = f"DELETE FROM episodes WHERE id IN ({marks})"
        params: list[Any] = chunk
        if agent is not None:
            sql += " AND agent = ?"
            params = [*chunk, agent]
        deleted.extend(r[0] for r in cur.execute(sql + " RETURNING id", params).fetchall())
    staging.drop_deleted(cur, deleted)  # a stopped re-embed's vectors of them go too
    if deleted:  # a delete, a forget, a sleep's prune
        meta.bump(cur, ERASURES)
    return deleted


def delete_and_relink(cur: Any, ids: Sequence[int], agent: str | None, gap_s: int) -> list[int]:
    """:func:`delete_episodes`, then re-link the neighbours of what went (same transaction):
    the turns within ``gap_s`` of a deleted turn, and the turn just before and just after
    it however far (:func:`relink_beside`: one linked under a larger gap holds its words)."""
    turns = deleted_turns(cur, ids)
    deleted = delete_episodes(cur, ids, agent)
    went = set(deleted)
    gone = [t for t in turns if t[2] in went]
    spans: dict[str, tuple[int, int]] = {}
    for name, ts, _ in gone:
        lo, hi = spans.get(name, (ts, ts))
        spans[name] = (min(lo, ts), max(hi, ts))
    for name, (lo, hi) in spans.items():
        link_neighbours(cur, name, lo, hi, gap_s)
    relink_beside(cur, gone, gap_s)
    return deleted


def deleted_turns(cur: Any, ids: Sequence[int]) -> list[tuple[str, int, int]]:
    """``(agent, occurred_ts, id)`` of the conversation turns among these ids (read before a
    delete, to re-link their neighbours after it: no other kind lends its words)."""
    ids = held_ids(ids)
    turns: list[tuple[str, int, int]] = []
    for start in range(0, len(ids), 500):
        chunk = list(ids[start : start + 500])
        marks = ",".join("?" * len(chunk))
        turns.extend(
            (str(agent), int(ts), int(i))
            for agent, ts, i in cur.execute(
                f"SELECT agent, occurred_ts, id FROM episodes WHERE id IN ({marks}) "
                "AND kind IN ('exchange', 'message')",
                chunk,
            )
        )
    return turns


_BESIDE = """
WITH k(agent, ts, id) AS (VALUES {rows})
SELECT s.agent, s.occurred_ts, s.id, k.ts
  FROM k
  JOIN episodes AS s ON s.id IN (
        (SELECT x.id FROM episodes AS x
          WHERE x.agent = k.agent AND x.kind IN ('exchange', 'message')
            AND (x.occurred_ts, x.id) < (k.ts, k.id)
          ORDER BY x.occurred_ts DESC, x.id DESC LIMIT 1),
        (SELECT x.id FROM episodes AS x
          WHERE x.agent = k.agent AND x.kind IN ('exchange', 'message')
            AND (x.occurred_ts, x.id) > (k.ts, k.id)
          ORDER BY x.occurred_ts, x.id LIMIT 1))
 WHERE s.context_text != ''
"""


def relink_beside(
    cur: Any,
    turns: Sequence[tuple[str, int, int]],
    gap_s: int,
    skip: AbstractSet[int] = frozenset(),
) -> int:
    """Link again the stored turns just before and just after each of ``turns`` (``(agent,
    occurred_ts, id)``: turns just written, or just deleted), however far, when they hold
    neighbour words; return how many changed. The ids in ``skip`` are left (a batch's own).

    A turn's ``context_text`` then only ever holds the words of the turns beside it now,
    whatever ``neighbour_gap_minutes`` was when it was linked: a turn linked under a gap of
    60 minutes holds a turn's 30 minutes away, and with the gap lowered to 10 the rule
    alone would look for neither when one of them is deleted, or another turn comes
    between them. Turns within ``gap_s`` of one of ``turns`` are the caller's to link (a
    batch's rows, :func:`link_neighbours` over a delete's span); two index lookups a turn.
    """
    points: set[tuple[str, int]] = set()
    for start in range(0, len(turns), 300):
        chunk = turns[start : start + 300]
        rows = cur.execute(
            _BESIDE.format(rows=",".join(["(?, ?, ?)"] * len(chunk))),
            [v for t in chunk for v in t],
        ).fetchall()
        points.update(
            (str(agent), int(ts))
            for agent, ts, i, near in rows
            if i not in skip and not (gap_s > 0 and abs(ts - near) <= gap_s)
        )
    return sum(link_neighbours(cur, agent, ts, ts, gap_s) for agent, ts in sorted(points))


def iter_episode_ids(cur: Any, agent: str | None = None, batch: int = 1000) -> Iterator[list[int]]:
    """Yield episode ids in ascending order, ``batch`` at a time. Ids out of order (a
    damaged page of the index answers the same rows again) are :class:`.DamagedDatabase`,
    not a walk without end."""
    last = 0
    while True:
        if agent is None:
            rows = cur.execute(
                "SELECT id FROM episodes WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
            ).fetchall()
        else:
            rows = cur.execute(
                "SELECT id FROM episodes WHERE id > ? AND agent = ? ORDER BY id LIMIT ?",
                (last, agent, batch),
            ).fetchall()
        if not rows:
            return
        ids = [r[0] for r in rows]
        if ids[0] <= last or any(a >= b for a, b in itertools.pairwise(ids)):
            raise DamagedDatabase(
                f"the episode ids do not read in order after id {last}: the file is damaged "
                f"(memengine doctor; `{salvage_command(file_of(cur))}` saves what reads)"
            )
        last = ids[-1]
        yield ids


_NEIGHBOURS = """
WITH ordered AS (
    SELECT id, occurred_ts,
           rtrim(substr(LAG(search_text) OVER w, 1, :cap), ' ') AS p_text,
           LAG(occurred_ts) OVER w AS p_ts,
           LAG(sensitivity) OVER w <= sensitivity AS p_lends,
           rtrim(substr(LEAD(search_text) OVER w, 1, :cap), ' ') AS n_text,
           LEAD(occurred_ts) OVER w AS n_ts,
           LEAD(sensitivity) OVER w <= sensitivity AS n_lends
      FROM episodes
     WHERE agent = :agent AND kind IN ('exchange', 'message')
       AND occurred_ts BETWEEN :lo - 2 * :gap AND :hi + 2 * :gap
    WINDOW w AS (ORDER BY occurred_ts, id)
)
UPDATE episodes
   SET context_text = trim(
         CASE WHEN o.p_ts >= o.occurred_ts - :gap AND o.p_lends THEN o.p_text ELSE '' END || ' ' ||
         CASE WHEN o.n_ts <= o.occurred_ts + :gap AND o.n_lends THEN o.n_text ELSE '' END)
  FROM ordered AS o
 WHERE episodes.id = o.id
   AND o.occurred_ts BETWEEN :lo - :gap AND :hi + :gap
   AND episodes.context_text != trim(
         CASE WHEN o.p_ts >= o.occurred_ts - :gap AND o.p_lends THEN o.p_text ELSE '' END || ' ' ||
         CASE WHEN o.n_ts <= o.occurred_ts + :gap AND o.n_lends THEN o.n_text ELSE '' END)
"""


def link_neighbours(cur: Any, agent: str, lo_ts: int, hi_ts: int, gap_s: int) -> int:
    """Refresh ``context_text`` (the neighbours' words) of ``agent``'s turns between
    ``lo_ts - gap_s`` and ``hi_ts + gap_s`` (around new or deleted turns); return how many
    changed.

    Two conversation turns (kinds ``exchange`` and ``message``) are neighbours
    when they are adjacent in time for that agent and at most ``gap_s``
    seconds apart (the same conversation); each lends at most
    :data:`NEIGHBOUR_CHARS` characters, and the full-text index gives their
    words a lower weight than the episode's own. A turn lends its words only
    to a neighbour at least as sensitive as itself (a secret's words must not
    make a plain turn findable).
    """
    if gap_s <= 0:  # no neighbours: no turn holds another's words
        cur.execute(
            "UPDATE episodes SET context_text = '' WHERE agent = ? AND occurred_ts BETWEEN ? "
            "AND ? AND kind IN ('exchange', 'message') AND context_text != ''",
            [agent, lo_ts, hi_ts],
        )
        return max(int(cur.rowcount), 0)
    cur.execute(
        _NEIGHBOURS,
        {"agent": agent, "lo": lo_ts, "hi": hi_ts, "gap": gap_s, "cap": NEIGHBOUR_CHARS},
    )
    return max(int(cur.rowcount), 0)
