"""The vector table's chunk size on real SQLite + sqlite-vec: new files, and rewriting old ones.

``vec0`` gives every agent whole chunks. A new file uses
:data:`~memengine.store.vectors.CHUNK_SIZE` rows a chunk; a file made with
``vec0``'s default (1,024) keeps it until ``optimize --vectors`` rewrites
it, which must keep every vector, filter column and search result, leave
the file consistent, give the freed room back, and change nothing when it
fails part way.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from memengine import FixedClock, Memory, NewEpisode
from memengine.cli import app
from memengine.embed.usem3 import USEM3Embedder
from memengine.store import maintenance
from memengine.store.filters import Filters
from memengine.store.vectors import (
    CHUNK_SIZE,
    RELAYOUT_TABLE,
    chunk_size,
    relayout_vector_table,
)

from .helpers import HashEmbedder

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
WORDS = "cat dog tea coffee rain snow piano guitar train bus deadline report garden 締切 猫".split()
AGENTS = {"solo": 1, "few": 5, "edge": CHUNK_SIZE, "many": 2 * CHUNK_SIZE + 9}
"""Agents whose histories end inside, exactly at and past a chunk's end."""


def _episodes(agent: str, n: int, seed: int) -> list[NewEpisode]:
    rng = np.random.default_rng(seed)
    return [
        NewEpisode(
            kind="message" if i % 3 else "fact",
            content=" ".join(rng.choice(WORDS, 4)) + f" {agent} {i}",
            agent=agent,
            occurred_at=T0 + timedelta(hours=i),
            sensitivity=i % 3,
        )
        for i in range(n)
    ]


def _fill(mem: Memory) -> None:
    for seed, (agent, n) in enumerate(AGENTS.items()):
        mem.add_many(_episodes(agent, n, seed))
    many = [e.id for e in mem.store.get(range(1, 400)).values() if e.agent == "many"]
    mem.delete(many[3:9], agent="many")  # holes in the chunks' validity bitmaps
    mem.store.set_status(many[20:25], "archived")  # filter columns changed in place


def _to_layout(mem: Memory, size: int) -> None:
    with mem.store.connections.write() as cur:
        relayout_vector_table(cur, mem.store.dimension, size)


def _layout(mem: Memory) -> int:
    with mem.store.connections.read() as cur:
        return chunk_size(cur)


def _searches(mem: Memory) -> list[list[tuple[int, float]]]:
    """KNN per agent, with and without filters, through vec0 (a fresh process's first search)."""
    from memengine.store import vectors

    queries = HashEmbedder().embed(["piano garden", "締切 猫", "rain bus report"])
    out = []
    with mem.store.connections.read() as cur:
        for agent in AGENTS:
            for q in queries:
                for filters in (
                    Filters(agent=agent),
                    Filters(agent=agent, kinds=("fact",), max_sensitivity=1),
                ):
                    out.append(vectors.knn(cur, q, 10, filters))
    return out


def _same(a: list[list[tuple[int, float]]], b: list[list[tuple[int, float]]]) -> None:
    """Same distances in order; the same ids except the order of ties and ties at the cut."""
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert len(x) == len(y)
        assert np.allclose([d for _, d in x], [d for _, d in y], atol=1e-5)
        if x:
            cut = x[-1][1] - 1e-5
            assert {i for i, d in x if d < cut} == {i for i, d in y if d < cut}


def test_a_new_file_has_small_chunks(mem: Memory) -> None:
    mem.add_exchange("hello", "hi", occurred_at=T0)
    assert _layout(mem) == CHUNK_SIZE
    assert mem.stats()["vector_chunk_size"] == CHUNK_SIZE
    raw = mem.store.connections.get().cursor()
    sql = raw.execute("SELECT sql FROM sqlite_master WHERE name = 'episode_vectors'").fetchone()
    assert f"chunk_size={CHUNK_SIZE}" in sql[0]
    mem.reembed()  # a re-embed makes the table anew: in the current layout too
    assert _layout(mem) == CHUNK_SIZE


def test_optimize_rewrites_an_older_layout_and_keeps_every_vector(mem: Memory) -> None:
    _fill(mem)
    _to_layout(mem, 1024)  # the layout of files made before session 19
    assert _layout(mem) == 1024 and mem.check().ok
    before = _searches(mem)
    episodes = mem.store.count()
    calls: list[tuple[int, int]] = []

    report = mem.optimize(vectors=True, progress=lambda done, total: calls.append((done, total)))

    assert report.vectors_rewritten == episodes and report.vector_chunk_size == CHUNK_SIZE
    assert calls and calls[-1] == (episodes, episodes)
    assert report.vacuumed and report.bytes_after < report.bytes_before
    assert _layout(mem) == CHUNK_SIZE
    _same(_searches(mem), before)
    check = mem.check()  # vectors, filter columns, chunk index, in-memory index
    assert check.ok, check
    # the in-memory index loads from the new chunks and agrees with vec0
    q = HashEmbedder().embed(["piano garden"])[0]
    for agent in AGENTS:
        first = mem.store.knn(q, 5, Filters(agent=agent))  # vec0
        _same([mem.store.knn(q, 5, Filters(agent=agent))], [first])  # the in-memory index
    assert set(mem.store.vector_index.loaded()) == set(AGENTS)
    assert mem.check().ok
    # writes go on in the new layout
    new = mem.add_exchange("the piano tuner comes on Friday", "noted", agent="solo", occurred_at=T0)
    assert mem.retrieve("piano tuner", agent="solo", day_range=None).results[0].episode.id == new
    again = mem.optimize(vectors=True)  # already in the current layout: nothing to rewrite
    assert again.vectors_rewritten == 0 and not again.vacuumed


def test_many_small_agents_take_less_room(db_path: Path, tmp_path: Path, clock: FixedClock) -> None:
    old_path = tmp_path / "old.db"
    sizes = {}
    for path, size in ((old_path, 1024), (db_path, CHUNK_SIZE)):
        with Memory.open(path, embedder=HashEmbedder(), clock=clock) as mem:
            for n in range(12):
                mem.add_many(_episodes(f"user{n}", 3, n))
            if size != CHUNK_SIZE:
                _to_layout(mem, size)
                maintenance.vacuum(mem.store.connections)
            mem.optimize()
            sizes[size] = mem.stats()["bytes"]
    # 64 vectors of 64 floats a chunk against 1,024: each agent's floor is 16 times smaller
    assert sizes[CHUNK_SIZE] * 3 < sizes[1024]


def test_optimize_vectors_compacts_a_file_after_large_deletions(mem: Memory) -> None:
    for n in range(30):
        mem.add_many(_episodes(f"user{n}", 3, n))
    gone = [e.id for e in mem.store.get(range(1, 100)).values() if int(e.agent[4:]) < 25]
    mem.delete(gone)  # 25 agents' memories: their chunks are freed, the file keeps the room
    assert mem.optimize().vacuumed is False  # the plain merge never rewrites the file
    report = mem.optimize(vectors=True)
    assert report.vectors_rewritten == 0  # the layout is current: only the compaction runs
    assert report.vacuumed and report.bytes_after < report.bytes_before
    assert mem.check().ok and mem.store.count() == 15
    hits = mem.retrieve("garden", agent="user27", day_range=None).results
    assert hits and all(h.episode.agent == "user27" for h in hits)
    assert mem.optimize(vectors=True).vacuumed is False  # nothing left to give back


def test_a_failed_rewrite_changes_nothing(mem: Memory) -> None:
    _fill(mem)
    _to_layout(mem, 1024)
    before = _searches(mem)
    seen: list[int] = []

    def fail(done: int, total: int) -> None:
        seen.append(done)
        if done < total:
            raise RuntimeError("interrupted part way")

    with pytest.raises(RuntimeError), mem.store.connections.write() as cur:
        relayout_vector_table(cur, mem.store.dimension, CHUNK_SIZE, progress=fail, batch=50)
    assert seen == [50]  # stopped after the first batch, inside the transaction
    assert _layout(mem) == 1024
    _same(_searches(mem), before)
    assert mem.check().ok

    def fail_at_the_end(done: int, total: int) -> None:
        raise RuntimeError("interrupted before the commit")

    with pytest.raises(RuntimeError):
        mem.optimize(vectors=True, progress=fail_at_the_end)
    assert _layout(mem) == 1024
    _same(_searches(mem), before)
    assert mem.check().ok
    # and it can be run again
    assert mem.optimize(vectors=True).vectors_rewritten == mem.store.count()
    _same(_searches(mem), before)


def test_optimize_vectors_command_and_doctor(
    tmp_path: Path, clock: FixedClock, usem3: USEM3Embedder, cli_env: None
) -> None:
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=usem3, clock=clock) as mem:  # the CLI's default embedder
        for n in range(3):
            mem.add_exchange(f"user {n} likes tea", "noted", agent=f"u{n}", occurred_at=T0)
        _to_layout(mem, 1024)
    doctor = CliRunner().invoke(app, ["doctor", "--db", str(db), "--json"])
    assert doctor.exit_code == 0, doctor.output  # an older layout is advice, not a failure
    ok, detail = json.loads(doctor.output)["checks"]["vector layout"]
    assert ok and "1024" in detail and "optimize --vectors" in detail
    stats = CliRunner().invoke(app, ["stats", "--db", str(db), "--json"])
    assert json.loads(stats.output)["vector_chunk_size"] == 1024

    result = CliRunner().invoke(app, ["optimize", "--vectors", "--db", str(db), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["vectors_rewritten"] == 3 and data["vector_chunk_size"] == CHUNK_SIZE
    assert data["vacuumed"] is True and data["bytes_after"] < data["bytes_before"]
    text = CliRunner().invoke(app, ["optimize", "--vectors", "--db", str(db)])
    assert text.exit_code == 0 and "0 rewritten" in text.output
    doctor = CliRunner().invoke(app, ["doctor", "--db", str(db), "--json"])
    assert json.loads(doctor.output)["checks"]["vector layout"] == [
        True,
        f"{CHUNK_SIZE} vectors per chunk",
    ]
    hit = CliRunner().invoke(app, ["retrieve", "tea", "--agent", "u1", "--db", str(db), "--json"])
    assert hit.exit_code == 0 and json.loads(hit.output)["results"][0]["episode"]["agent"] == "u1"


def test_the_rewrite_keeps_its_copy_in_the_file_not_in_memory(mem: Memory) -> None:
    """The connections keep temporary tables in memory (temp_store = MEMORY): a copy of
    every vector there grew with the file (about 357 MB at 100K episodes). The copy is a
    table of the file, gone once the rewrite is done or undone."""
    _fill(mem)
    _to_layout(mem, 1024)
    where: list[tuple[int, int]] = []
    with mem.store.connections.write() as cur:

        def look(done: int, total: int) -> None:
            temp = cur.execute("SELECT count(*) FROM temp.sqlite_master").fetchone()[0]
            main = cur.execute(
                "SELECT count(*) FROM main.sqlite_master WHERE name = ?", (RELAYOUT_TABLE,)
            ).fetchone()[0]
            where.append((int(temp), int(main)))

        relayout_vector_table(cur, mem.store.dimension, CHUNK_SIZE, progress=look, batch=100)
    assert where and all(w == (0, 1) for w in where)
    with mem.store.connections.read() as cur:
        left = cur.execute(
            "SELECT count(*) FROM sqlite_master WHERE name = ?", (RELAYOUT_TABLE,)
        ).fetchone()[0]
    assert left == 0 and mem.check().ok
