"""The search indexes of schema 0004 on real SQLite + sqlite-vec + FTS5.

The in-process vector index must give exactly what a ``vec0`` scan gives,
under every filter, after inserts, deletes, archiving and writes from
another connection; a failed batch must leave it untouched; the agent in
the full-text match must scope results without changing them; frequent
terms must be left out only where they cannot matter.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from memengine import FixedClock, InvalidInput, Memory, NewEpisode
from memengine.config import Config
from memengine.store import episodes as ep_rows
from memengine.store import vectors
from memengine.store.episodes import NEIGHBOUR_CHARS, link_neighbours
from memengine.store.filters import Filters
from memengine.store.fulltext import agent_token, match_expression
from memengine.store.migrate import latest_version
from memengine.store.vector_index import VectorIndex, prune_log
from memengine.store.vector_rows import MIN_ROWS
from memengine.store.vector_scan import top_k
from memengine.text import query_terms

from .helpers import T0, WORDS, HashEmbedder, same_hits, word_episodes


def _vec0(mem: Memory, q: np.ndarray, k: int, f: Filters) -> list[tuple[int, float]]:
    with mem.store.connections.read() as cur:
        return vectors.knn(cur, q, k, f)


FILTERS = [
    Filters(agent="a"),
    Filters(agent="a", kinds=("fact",)),
    Filters(agent="a", max_sensitivity=1),
    Filters(agent="a", since_ts=int((T0 + timedelta(hours=20)).timestamp())),
    Filters(agent="a", until_ts=int((T0 + timedelta(hours=10)).timestamp())),
    Filters(agent="a", statuses=("active", "archived")),
    Filters(agent="a", statuses=("archived",)),
]


@pytest.mark.parametrize("compact", [False, True])
def test_index_matches_vec0_under_every_filter_and_write(mem: Memory, compact: bool) -> None:
    index = mem.store.vector_index
    index.load_after = 1
    if compact:  # room for the codes, not for the floats
        index.budget_bytes = 80 * _compact_row_bytes(index.dimension)
    emb = HashEmbedder()
    ids = mem.add_many(word_episodes(60, "a"))
    mem.add_many(word_episodes(30, "b", seed=1))
    queries = emb.embed(["cat tea", "snow report deadline", "guitar"])

    def check() -> None:
        for f in FILTERS:
            got = mem.store.knn_many(queries, 7, f)
            assert index.mode("a") == ("codes" if compact else "float32")
            for q, hits in zip(queries, got, strict=True):
                same_hits(hits, _vec0(mem, q, 7, f))
        some = [i for i, _ in mem.store.knn(queries[0], 5, Filters(agent="a"))]
        with mem.store.connections.read() as cur:
            assert mem.store.similarities(queries[0], some, agent="a") == pytest.approx(
                vectors.similarities(cur, queries[0], some), abs=1e-6
            )

    check()
    mem.delete(ids[:5])
    mem.store.set_status(ids[10:20], "archived")
    mem.add_many(word_episodes(10, "a", seed=2))
    check()
    mem.delete(ids[20:50])  # past a quarter of the rows: the tombstones are squeezed out
    check()
    agent = index._agents["a"]
    assert agent.dead == 0
    if compact:  # codes only, kept current with every write
        assert agent.vecs.size == 0 and agent.coded == agent.n
    else:  # searched exactly: no codes made
        assert agent.coded == 0
    assert mem.check().ok


def test_writes_from_another_connection_are_seen(db_path: Path, clock: FixedClock) -> None:
    emb = HashEmbedder()
    q = emb.embed(["piano garden"])[0]
    with Memory.open(db_path, embedder=emb, clock=clock) as reader:
        reader.add_many(word_episodes(20, "a"))
        reader.store.knn(q, 5, Filters(agent="a"))  # the first search scans vec0
        reader.store.knn(q, 5, Filters(agent="a"))  # the second loads the index
        assert reader.store.vector_index.loaded() == {"a": 20}
        with Memory.open(db_path, embedder=emb, clock=clock) as writer:
            new = writer.add_many(
                [NewEpisode(kind="fact", content="piano garden", agent="a", occurred_at=T0)]
            )
            same_hits(
                reader.store.knn(q, 5, Filters(agent="a")), _vec0(reader, q, 5, Filters(agent="a"))
            )
            assert reader.store.knn(q, 1, Filters(agent="a"))[0][0] == new[0]
            writer.store.set_status(new, "archived")
            assert new[0] not in [i for i, _ in reader.store.knn(q, 5, Filters(agent="a"))]
            writer.delete(new)
            assert reader.store.knn(q, 5, Filters(agent="a", statuses=("archived",))) == []
        assert reader.check().ok


def test_an_episode_that_moves_to_another_held_agent(mem: Memory) -> None:
    """An id deleted from one agent and written again for another (an import that keeps its
    ids): both agents were held; the replay drops the one it cannot patch, and no search
    fails."""
    emb = HashEmbedder()
    q = emb.embed(["piano garden"])[0]
    mem.add_many(word_episodes(20, "a") + word_episodes(20, "b", seed=2))
    moved = mem.add_many(
        [NewEpisode(kind="fact", content="piano garden", agent="a", occurred_at=T0)]
    )[0]
    for _ in range(2):
        for agent in ("a", "b"):
            mem.store.knn(q, 5, Filters(agent=agent))
    assert set(mem.store.vector_index.loaded()) == {"a", "b"}
    mem.delete([moved])
    again = NewEpisode(id=moved, kind="fact", content="piano garden", agent="b", occurred_at=T0)
    assert mem.add_many([again]) == [moved]
    for agent in ("a", "b"):
        f = Filters(agent=agent)
        same_hits(mem.store.knn(q, 5, f), _vec0(mem, q, 5, f))
    assert mem.store.knn(q, 1, Filters(agent="b"))[0][0] == moved
    assert mem.check().ok


@pytest.mark.parametrize("compact", [False, True])
def test_failed_batch_leaves_index_and_log_unchanged(mem: Memory, compact: bool) -> None:
    mem.store.vector_index.load_after = 1
    if compact:  # room for the codes of these rows, not for their floats
        mem.store.vector_index.budget_bytes = 20 * _compact_row_bytes(mem.store.dimension)
    mem.add_many(word_episodes(15, "a"))
    q = HashEmbedder().embed(["rain"])[0]
    before = mem.store.knn(q, 10, Filters(agent="a"))
    assert mem.store.vector_index.mode("a") == ("codes" if compact else "float32")
    with mem.store.connections.read() as cur:
        seq = cur.execute("SELECT max(seq) FROM vector_log").fetchone()[0]
    bad = [
        *word_episodes(3, "a", seed=5),
        NewEpisode(kind="fact", content="x", agent="a", occurred_at=T0),
    ]
    vecs = np.vstack([HashEmbedder().embed([e.content or ""]) for e in bad]).astype(np.float32)
    vecs[-1, 0] = np.nan  # rejected before writing
    with pytest.raises(InvalidInput):
        mem.store.add(bad, ["x"] * len(bad), vecs)
    with pytest.raises(InvalidInput):  # fails inside the transaction: duplicate id
        mem.store.add(
            [*bad[:2], NewEpisode(kind="fact", content="dup", agent="a", occurred_at=T0, id=1)],
            ["x"] * 3,
            vecs[:3] * 0 + 0.1,
        )
    with mem.store.connections.read() as cur:
        assert cur.execute("SELECT max(seq) FROM vector_log").fetchone()[0] == seq
    assert mem.store.knn(q, 10, Filters(agent="a")) == before  # the index, unchanged
    same_hits(before, _vec0(mem, q, 10, Filters(agent="a")))
    assert mem.check().ok


def test_pruned_log_and_reembed_reload(mem: Memory) -> None:
    mem.store.vector_index.load_after = 1
    mem.add_many(word_episodes(30, "a"))
    q = HashEmbedder().embed(["train bus"])[0]
    mem.store.knn(q, 5, Filters(agent="a"))
    mem.add_many(word_episodes(5, "a", seed=3))
    with mem.store.connections.write() as cur:
        prune_log(cur, keep=2)  # the index is now behind the pruned part of the log
    same_hits(mem.store.knn(q, 5, Filters(agent="a")), _vec0(mem, q, 5, Filters(agent="a")))
    mem.reembed()
    assert mem.store.vector_index.loaded() == {}
    same_hits(mem.store.knn(q, 5, Filters(agent="a")), _vec0(mem, q, 5, Filters(agent="a")))


def test_zero_budget_uses_vec0(db_path: Path, clock: FixedClock) -> None:
    cfg = Config()
    cfg.retrieval.vector_cache_mb = 0
    with Memory.open(db_path, config=cfg, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_many(word_episodes(10, "a"))
        q = HashEmbedder().embed(["cat"])[0]
        same_hits(mem.store.knn(q, 4, Filters(agent="a")), _vec0(mem, q, 4, Filters(agent="a")))
        assert mem.store.vector_index.loaded() == {}


@pytest.mark.parametrize("other", ["b", "猫の agent", 'quote " and * OR', "Bob"])
def test_fulltext_scoped_to_agent(mem: Memory, other: str) -> None:
    mem.add_many(word_episodes(20, "bob"))
    mem.add_many(word_episodes(20, other, seed=1))
    expr = match_expression(query_terms("cat tea deadline"))
    assert expr
    for agent in ("bob", other):
        f = Filters(agent=agent)
        with mem.store.connections.read() as cur:
            from memengine.store.fulltext import bm25

            scoped = bm25(cur, expr, 8, f, scope=True)
            plain = bm25(cur, expr, 8, f, scope=False)
        assert scoped == plain and scoped
        got = mem.store.get([i for i, _ in scoped])
        assert {e.agent for e in got.values()} == {agent}
    assert agent_token("猫") == "a" + "猫".encode().hex()


def test_frequent_terms_left_out_only_in_large_indexes(mem: Memory) -> None:
    eps = [
        NewEpisode(
            kind="fact",
            content=f"common {'rare' if i == 7 else 'word'} {i}",
            agent="a",
            occurred_at=T0,
        )
        for i in range(2100)
    ]
    vecs = HashEmbedder().embed([e.content or "" for e in eps])
    mem.store.add(eps, [e.content or "" for e in eps], vecs)
    f = Filters(agent="a")
    hits, dropped = mem.store.text_search(["common", "rare"], 5, f)
    assert dropped == ["common"] and hits[0][0] == mem.store.text_search(["rare"], 1, f)[0][0][0]
    _, dropped = mem.store.text_search(["common"], 5, f)
    assert dropped == []  # never every term
    _, dropped = mem.store.text_search(["word", "rare"], 5, f, max_df=1.0, posting_budget=500)
    assert dropped == ["word"]


def test_small_index_keeps_every_term(mem: Memory) -> None:
    mem.add_many(word_episodes(30, "a"))
    _, dropped = mem.store.text_search(["cat", "dog", "tea"], 5, Filters(agent="a"))
    assert dropped == []


def test_chunk_loader_equals_row_by_row(mem: Memory) -> None:
    mem.add_many(word_episodes(40, "a"))
    mem.add_many(word_episodes(3000, "b", seed=4))  # several vec0 chunks
    mem.delete(list(range(45, 60)))  # holes in the chunks' validity bitmaps
    mem.store.set_status([3, 4, 70, 2000], "archived")  # filter columns updated in place
    index = mem.store.vector_index
    with mem.store.connections.read() as cur:
        for name in ("a", "b"):
            from memengine.store.vector_rows import AgentRows

            fast = AgentRows(index.dimension)
            assert index._read_chunks(cur, name, fast, mem.store.count(name))
            slow = AgentRows(index.dimension)
            slow.vecs = np.empty((0, index.dimension), np.float32)
            slow.put([index._encode(r) for r in index._agent_rows(cur, name)])
            assert fast.where.keys() == slow.where.keys()
            assert len(fast.where) == mem.store.count(name)
            for i, p in fast.where.items():
                q = slow.where[i]
                assert np.allclose(fast.vecs[p], slow.vecs[q])
                assert (fast.kind[p], fast.sens[p], fast.status[p], fast.ts[p]) == (
                    slow.kind[q],
                    slow.sens[q],
                    slow.status[q],
                    slow.ts[q],
                )
            assert int(fast.status[fast.where[3 if name == "a" else 2000]]) == 1
            # a count that disagrees (another layout, or rows missing): no partial load
            assert not index._read_chunks(cur, name, AgentRows(index.dimension), 7)


def test_an_agent_loads_at_its_second_search_from_the_chunk_blobs(mem: Memory) -> None:
    mem.add_many(word_episodes(30, "a"))
    mem.store.set_status([2], "archived")
    index = mem.store.vector_index
    q = HashEmbedder().embed(["piano garden"])[0]
    f = Filters(agent="a")
    first = mem.store.knn(q, 5, f)
    assert "a" not in index.loaded()  # one vec0 scan for a one-shot process
    same_hits(mem.store.knn(q, 5, f), first)
    assert index.loaded() == {"a": 30}
    sims = mem.store.similarities(q, [1, 2, 3], agent="a")  # from memory now
    with mem.store.connections.read() as cur:
        assert np.allclose(
            [sims[i] for i in (1, 2, 3)],
            [vectors.similarities(cur, q, [i])[i] for i in (1, 2, 3)],
            atol=1e-5,
        )
    same_hits(mem.store.knn(q, 5, Filters(agent="a", statuses=("archived",))), [(2, 1 - sims[2])])


def test_contexts_written_at_insert_equal_the_relink(mem: Memory) -> None:
    rng = np.random.default_rng(3)
    for batch in range(4):  # batches that interleave in time with what is stored
        eps = []
        for i in range(25):
            # every seventh turn is longer than what a neighbour may lend
            said = f"turn {batch} {i} " + " ".join(rng.choice(WORDS, 300 + i if i % 7 == 3 else 2))
            eps.append(
                NewEpisode(
                    kind="exchange" if i % 4 else "fact",
                    user_text=said if i % 4 else None,
                    reply_text="ok" if i % 4 else None,
                    content=None if i % 4 else f"fact {batch} {i}",
                    agent="a" if i % 5 else "b",
                    occurred_at=T0 + timedelta(minutes=int(rng.integers(0, 600))),
                )
            )
        mem.add_many(eps)
    for j in range(10):  # single turns landing between stored ones, and far from any
        minutes = int(rng.integers(0, 600)) if j % 3 else 5_000 + 200 * j
        mem.add_exchange(f"late {j}", "ok", agent="a", occurred_at=T0 + timedelta(minutes=minutes))
    with mem.store.connections.write() as cur:
        before = cur.execute("SELECT total_changes()").fetchone()[0]
        for agent in ("a", "b"):
            link_neighbours(cur, agent, 0, 2**40, mem.store.neighbour_gap_s)
        assert cur.execute("SELECT total_changes()").fetchone()[0] == before
        with_context = cur.execute("SELECT count(*) FROM episodes WHERE context_text != ''")
        assert with_context.fetchone()[0] > 50
        longest = cur.execute("SELECT max(length(context_text)) FROM episodes").fetchone()[0]
        assert NEIGHBOUR_CHARS < longest <= 2 * NEIGHBOUR_CHARS + 1
    assert mem.check().ok


def test_an_append_reads_the_two_stored_turns_each_side_not_the_whole_session(
    mem: Memory,
) -> None:
    """A turn added to a long session reads its two stored turns before and after (in the
    order of time, then id), not every turn of the last two hours with its texts."""
    start = T0 + timedelta(hours=5)
    ids = mem.add_many(  # 300 turns in an hour, the last 20 in one second
        [
            NewEpisode(
                user_text=f"turn {i}",
                reply_text="ok",
                occurred_at=start + timedelta(seconds=min(i, 280) * 12),
            )
            for i in range(300)
        ]
        + [NewEpisode(kind="fact", content="a fact between", occurred_at=start)]
    )
    last_ts = int((start + timedelta(seconds=280 * 12)).timestamp())
    gap = mem.store.neighbour_gap_s
    with mem.store.connections.read() as cur:
        appended = ep_rows._stored_near(cur, "default", [(last_ts, 10**6, "x", 0)], gap)
        assert sorted(int(r[1]) for r in appended) == ids[298:300]
        between = ep_rows._stored_near(cur, "default", [(last_ts, ids[290], "x", 0)], gap)
        assert sorted(int(r[1]) for r in between) == [ids[288], ids[289], ids[291], ids[292]]
        first_ts = int(start.timestamp())  # (the fact is no turn: passed over)
        before = ep_rows._stored_near(cur, "default", [(first_ts - 1, 10**6, "x", 0)], gap)
        assert sorted(int(r[1]) for r in before) == ids[:2]


@pytest.mark.parametrize("seed", range(3))
def test_a_few_new_turns_link_as_a_batch_by_its_spans_does(
    tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """The same writes (one to twenty turns at a time, ties in time, sensitive turns,
    long pastes, other kinds, deletes) leave the same rows whether a few new turns read
    their stored neighbours one by one or every batch reads its spans; a relink of
    everything then changes nothing."""

    def write(few: int) -> list[tuple[object, ...]]:
        monkeypatch.setattr(ep_rows, "FEW_TURNS", few)
        rng = np.random.default_rng(seed)
        with Memory.open(tmp_path / f"{few}.db", embedder=HashEmbedder(), clock=clock) as m:
            for _ in range(25):
                eps = []
                for _ in range(int(rng.choice([1, 1, 2, 3, 9, 20]))):
                    said = " ".join(rng.choice(WORDS, int(rng.choice([1, 3, 300]))))
                    kind = str(rng.choice(["exchange", "exchange", "message", "fact"]))
                    talk = kind == "exchange"
                    minutes = int(rng.choice([rng.integers(0, 300), rng.integers(0, 30) * 60]))
                    eps.append(
                        NewEpisode(
                            kind=kind,
                            user_text=said if talk else None,
                            reply_text="ok" if talk else None,
                            content=None if talk else said,
                            agent=str(rng.choice(["a", "a", "b"])),
                            sensitivity=int(rng.choice([0, 0, 1, 3])),
                            occurred_at=T0 + timedelta(minutes=minutes),
                        )
                    )
                m.add_many(eps)
                if rng.random() < 0.2:
                    stored = m.store.count()
                    gone = [int(i) for i in rng.integers(1, stored + 1, 2)]
                    m.delete(gone, all_agents=True)
            with m.store.connections.write() as cur:
                before = cur.execute("SELECT total_changes()").fetchone()[0]
                for agent in ("a", "b"):
                    link_neighbours(cur, agent, 0, 2**40, m.store.neighbour_gap_s)
                assert cur.execute("SELECT total_changes()").fetchone()[0] == before
                rows = cur.execute("SELECT id, agent, context_text FROM episodes ORDER BY id")
                return [tuple(r) for r in rows.fetchall()]

    few = write(ep_rows.FEW_TURNS)
    assert sum(1 for r in few if r[2]) > 20
    assert few == write(0)


@pytest.mark.parametrize("space", [NEIGHBOUR_CHARS - 2, NEIGHBOUR_CHARS - 1, NEIGHBOUR_CHARS])
def test_a_neighbour_is_cut_the_same_in_python_and_sql(mem: Memory, space: int) -> None:
    from memengine.store.episodes import _piece

    # the first space two characters before the cut, one before, or the last one kept
    text = "x" * (space - 1) + " " + "tail " * 400
    with mem.store.connections.read() as cur:
        sql = cur.execute("SELECT rtrim(substr(?, 1, ?), ' ')", (text, NEIGHBOUR_CHARS))
        assert sql.fetchone()[0] == _piece(text)
    assert len(_piece(text)) <= NEIGHBOUR_CHARS and not _piece(text).endswith(" ")


def test_prefilter_codes_are_made_when_needed_and_survive_writes(mem: Memory) -> None:
    index = mem.store.vector_index
    index.load_after = 1
    mem.add_many(word_episodes(300, "a", seed=11))
    q = HashEmbedder().embed(["cat tea rain"])
    f = Filters(agent="a")
    mem.store.knn_many(q, 10, f)
    agent = index._agents["a"]
    assert agent.coded == 0 and len(agent.bits) == 0  # searched exactly: no codes kept
    index.exact_max_rows = 100  # from now on the prefilter runs
    first = mem.store.knn_many(q, 10, f)[0]
    assert agent.coded == agent.n == 300
    same_hits(first, _vec0(mem, q[0], 10, f))  # keeps ≥ 4,000 rows of 300: exact
    ids = mem.add_many(word_episodes(50, "a", seed=12))  # new rows: coded at the next search
    mem.delete(ids[:40] + [i for i, _ in first[:5]])  # tombstones
    after = mem.store.knn_many(q, 10, f)[0]
    assert agent.coded == agent.n == 310 and agent.dead == 5
    same_hits(after, _vec0(mem, q[0], 10, f))
    mem.delete([i for i in range(1, 301) if i % 3 == 0])  # a third of the rows: compaction
    again = mem.store.knn_many(q, 10, f)[0]
    assert agent.dead == 0 and agent.coded == agent.n == len(agent.where)
    same_hits(again, _vec0(mem, q[0], 10, f))
    assert mem.check().ok


def test_the_budget_counts_prefilter_codes_only_for_agents_that_get_them(mem: Memory) -> None:
    index = mem.store.vector_index
    index.load_after = 1
    mem.add_many(word_episodes(300, "a", seed=13))
    floats_only = 300 * VectorIndex.row_bytes(index.dimension, floats=True, codes=False)
    index.budget_bytes = floats_only  # room for the floats, none for codes
    q = HashEmbedder().embed(["cat tea rain"])
    mem.store.knn_many(q, 10, Filters(agent="a"))
    assert "a" in index.loaded()  # searched exactly: fits without codes
    assert index._agents["a"].floats
    index._agents.clear()
    index.exact_max_rows = 100  # now it would need its codes too: held compact
    mem.store.knn_many(q, 10, Filters(agent="a"))
    assert "a" in index.loaded() and not index._agents["a"].floats
    index._agents.clear()
    index.budget_bytes = 300 * _compact_row_bytes(index.dimension) - 1  # not even the codes
    mem.store.knn_many(q, 10, Filters(agent="a"))
    assert "a" not in index.loaded()  # too big: searched in vec0


def _compact_row_bytes(dim: int) -> int:
    """What the index counts per row of a compact agent: codes and filter columns."""
    return VectorIndex.row_bytes(dim, floats=False, codes=True)


def test_floats_go_only_into_free_room_and_codes_evict_the_least_recent(mem: Memory) -> None:
    index = mem.store.vector_index
    index.load_after = 1
    dim = index.dimension
    for name in "abc":
        mem.add_many(word_episodes(40, name, seed=ord(name)))
    # room for one agent's floats and one agent's codes, no more
    floats = VectorIndex.row_bytes(dim, floats=True, codes=False)
    index.budget_bytes = 40 * floats + 40 * _compact_row_bytes(dim) + 10
    q = HashEmbedder().embed(["cat tea rain"])[0]

    def search(name: str) -> None:
        f = Filters(agent=name)
        same_hits(mem.store.knn(q, 5, f), _vec0(mem, q, 5, f))

    search("a")
    search("b")  # a's floats stay; b's would not fit beside them: b is held as codes
    assert (index.mode("a"), index.mode("b")) == ("float32", "codes")
    search("c")  # c's codes need room: a, used least recently, is evicted
    assert (index.mode("a"), index.mode("b"), index.mode("c")) == ("vec0", "codes", "codes")
    search("a")  # back as codes, beside the others: nothing evicted
    assert [index.mode(n) for n in "abc"] == ["codes"] * 3
    assert sum(m.nbytes for m in index._agents.values()) <= index.budget_bytes
    assert mem.check().ok


def test_a_compact_agent_sees_another_connections_writes(db_path: Path, clock: FixedClock) -> None:
    emb = HashEmbedder()
    q = emb.embed(["piano garden"])[0]
    with Memory.open(db_path, embedder=emb, clock=clock) as reader:
        index = reader.store.vector_index
        index.load_after = 1
        index.budget_bytes = 50 * _compact_row_bytes(index.dimension)
        reader.add_many(word_episodes(40, "a"))
        reader.store.knn(q, 5, Filters(agent="a"))
        assert not index._agents["a"].floats
        with Memory.open(db_path, embedder=emb, clock=clock) as writer:
            new = writer.add_many(
                [NewEpisode(kind="fact", content="piano garden", agent="a", occurred_at=T0)]
            )
            assert reader.store.knn(q, 1, Filters(agent="a"))[0][0] == new[0]
            writer.delete(new)
            same_hits(
                reader.store.knn(q, 5, Filters(agent="a")), _vec0(reader, q, 5, Filters(agent="a"))
            )
        assert reader.check().ok


@pytest.mark.parametrize("compact", [False, True])
def test_the_consistency_check_finds_a_row_the_index_holds_wrongly(
    mem: Memory, compact: bool
) -> None:
    index = mem.store.vector_index
    index.load_after = 1
    if compact:
        index.budget_bytes = 50 * _compact_row_bytes(index.dimension)
    ids = mem.add_many(word_episodes(40, "a"))
    mem.store.knn(HashEmbedder().embed(["cat"])[0], 5, Filters(agent="a"))
    agent = index._agents["a"]
    assert agent.floats is not compact
    assert mem.check().ok
    pos = agent.where[ids[3]]
    if compact:
        agent.q8[pos] = -agent.q8[pos]  # the codes of another vector
    else:
        agent.vecs[pos] = -agent.vecs[pos]
    agent.ts[agent.where[ids[7]]] += 1  # a filter column out of step
    report = mem.check()
    assert not report.ok and report.stale_vector_index == [ids[3], ids[7]]


def test_hamming_matches_a_plain_popcount() -> None:
    from memengine.store.vector_scan import hamming, sign_bits

    rng = np.random.default_rng(0)
    for dim in (64, 100, 512):
        vecs = rng.standard_normal((50, dim)).astype(np.float32)
        words = (dim + 63) // 64
        bits = sign_bits(vecs, words)
        dist = hamming(bits, sign_bits(vecs[:2], words))
        for j in range(2):
            plain = [(np.sign(vecs[i]) != np.sign(vecs[j])).sum() for i in range(50)]
            assert dist[j].tolist() == plain


def test_int8_codes_keep_the_ranking_and_nearest_rows_keep_ties() -> None:
    from memengine.store.vector_scan import int8_codes, nearest_rows

    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((200, 512)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    codes, scale = int8_codes(vecs)
    assert codes.dtype == np.int8 and np.abs(codes).max() == 127
    approx = (codes.astype(np.float32) * scale[:, None]) @ vecs[0]
    assert np.abs(approx - vecs @ vecs[0]).max() < 0.01
    assert int8_codes(np.zeros((1, 4), np.float32))[0].tolist() == [[0, 0, 0, 0]]

    dist = np.array([5, 1, 3, 3, 9, 2, 3], np.uint16)
    assert nearest_rows(dist, 3, 8).tolist() == [1, 2, 3, 5, 6]  # every row tied at 3
    assert nearest_rows(dist, 1, 8).tolist() == [1]
    masked = np.array([9, 9, 2], np.uint16)  # 9: filtered out (over the limit)
    assert nearest_rows(masked, 2, 8).tolist() == [2]


def test_prefilter_for_large_agents_honours_filters_and_finds_the_nearest(mem: Memory) -> None:
    mem.store.vector_index.load_after = 1
    mem.store.vector_index.exact_max_rows = 500  # the sign-bit prefilter from 500 rows on
    mem.add_many(word_episodes(1500, "a", seed=7))
    emb = HashEmbedder()
    queries = emb.embed(["cat tea rain", "piano deadline", "garden bus snow"])
    for f in FILTERS:
        got = mem.store.knn_many(queries, 10, f)
        for q, hits in zip(queries, got, strict=True):
            exact = _vec0(mem, q, 10, f)
            if exact:  # the same distances: prefilter keeps ≥ 4,000 rows of 1,500
                same_hits(hits, exact)
            passing = mem.store.get([i for i, _ in hits])
            for e in passing.values():
                assert e.status in f.statuses
                assert f.kinds is None or e.kind.value in f.kinds
    with mem.store.connections.read() as cur:
        agent = mem.store.vector_index._agents["a"]
        from memengine.store.vector_scan import Codes, held, prefiltered

        assert agent.coded == agent.n  # codes made when the prefilter first ran
        q = queries[:1]
        codes = Codes(agent.bits, agent.q8, agent.scale, agent.words, agent.dimension)
        few = prefiltered(
            agent.ids, held(agent.vecs), codes, agent.n, None, q, 10, keep=300, rescore=80
        )[0]
        full = _vec0(mem, q[0], 10, Filters(agent="a", statuses=("active", "archived")))
        assert len({i for i, _ in few} & {i for i, _ in full}) >= 7  # an approximation
        assert cur is not None


def test_counts_past_the_cap_are_estimated_and_still_find_the_rarest_term(mem: Memory) -> None:
    eps = [
        NewEpisode(
            kind="fact",
            content=" ".join(
                w for w, every in (("alpha", 1), ("beta", 2), ("gamma", 7)) if i % every == 0
            )
            + f" n{i}",
            agent="a",
            occurred_at=T0,
        )
        for i in range(2100)
    ]
    mem.store.add(
        eps, [e.content or "" for e in eps], HashEmbedder().embed([e.content or "" for e in eps])
    )
    stats = mem.store.term_stats
    stats.cap = 20  # every term below fills the cap: its count is estimated
    with mem.store.connections.read() as cur:
        rows, df = stats.counts(cur, ["alpha", "beta", "gamma", "n7"])
        assert rows == 2100 and df["n7"] == 1  # under the cap: exact
        for term, truth in (("alpha", 2100), ("beta", 1050), ("gamma", 300)):
            assert abs(df[term] - truth) <= 0.1 * truth, (term, df[term])
        dropped = stats.frequent(cur, ["alpha", "beta", "gamma"], 1.0, budget=100)
    assert dropped == {"alpha", "beta"}  # gamma (in 300 rows) is the rarest and stays


def test_delete_relinks_the_neighbours(mem: Memory) -> None:
    ids = mem.add_many(
        [
            NewEpisode(kind="exchange", user_text=text, reply_text="ok", agent="a", occurred_at=at)
            for text, at in (
                ("the piano lesson", T0),
                ("a guitar string broke", T0 + timedelta(minutes=5)),
                ("snow on the garden", T0 + timedelta(minutes=10)),
            )
        ]
    )

    def context(i: int) -> str:
        with mem.store.connections.read() as cur:
            return str(
                cur.execute("SELECT context_text FROM episodes WHERE id = ?", (i,)).fetchone()[0]
            )

    assert "guitar" in context(ids[0]) and "guitar" in context(ids[2])
    mem.delete([ids[1]])
    assert "guitar" not in context(ids[0]) and "snow" in context(ids[0])
    assert "piano" in context(ids[2])
    assert mem.check().ok


_V3_FULLTEXT = [
    "DROP TRIGGER vector_log_insert",
    "DROP TRIGGER vector_log_delete",
    "DROP TRIGGER vector_log_update",
    "DROP TABLE vector_log",
    "DROP TRIGGER episodes_fts_insert",
    "DROP TRIGGER episodes_fts_delete",
    "DROP TRIGGER episodes_fts_update",
    "DROP TABLE episodes_fts",
    "ALTER TABLE episodes DROP COLUMN agent_key",
    "CREATE VIRTUAL TABLE episodes_fts USING fts5 (search_text, context_text, content = 'episodes', "
    "content_rowid = 'id', tokenize = 'porter unicode61 remove_diacritics 2')",
    "INSERT INTO episodes_fts (episodes_fts) VALUES ('rebuild')",
    "CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN INSERT INTO episodes_fts "
    "(rowid, search_text, context_text) VALUES (new.id, new.search_text, new.context_text); END",
    "CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN INSERT INTO episodes_fts "
    "(episodes_fts, rowid, search_text, context_text) VALUES ('delete', old.id, old.search_text, "
    "old.context_text); END",
    "ALTER TABLE episodes DROP COLUMN decay_from",
    "PRAGMA user_version = 3",
]


def test_a_version_3_file_is_migrated_with_its_data(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("the piano lesson", "nice", occurred_at=T0)
        mem.add_exchange("a guitar string broke", "oh", occurred_at=T0 + timedelta(minutes=5))
        cur = mem.store.connections.get().cursor()
        for statement in _V3_FULLTEXT:  # the file as schema version 3 left it
            cur.execute(statement)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version()
        assert mem.check().ok
        hits = mem.store.text_search(["guitar"], 5, Filters(agent="default"))[0]
        texts = [mem.store.get([i])[i].user_text for i, _ in hits]
        assert texts[0] == "a guitar string broke"  # the other one through its neighbour's words
        assert texts[1:] == ["the piano lesson"]
        new = mem.add_exchange("guitar again", "yes", occurred_at=T0 + timedelta(days=1))
        assert new in [
            i for i, _ in mem.store.text_search(["guitar"], 5, Filters(agent="default"))[0]
        ]


def test_a_version_4_file_gets_its_long_contexts_cut(db_path: Path, clock: FixedClock) -> None:
    paste = "log " + " ".join(f"line{i} timeout" for i in range(400))  # about 5,000 characters
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        a = mem.add_exchange("the piano lesson", "nice", occurred_at=T0)
        b = mem.add_exchange(paste, "long", occurred_at=T0 + timedelta(minutes=1))
        c = mem.add_exchange("a guitar string broke", "oh", occurred_at=T0 + timedelta(minutes=2))
        d = mem.add_exchange("snow", "cold", occurred_at=T0 + timedelta(minutes=3))
        cur = mem.store.connections.get().cursor()
        text = dict(cur.execute("SELECT id, search_text FROM episodes").fetchall())
        # the contexts as version 4 wrote them (the neighbours' whole texts) ...
        for i, context in ((a, text[b]), (c, f"{text[b]} {text[d]}")):
            cur.execute("UPDATE episodes SET context_text = ? WHERE id = ?", (context, i))
        cur.execute("UPDATE episodes SET context_text = 'hand made' WHERE id = ?", (d,))
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")
        cur.execute("PRAGMA user_version = 4")
        assert mem.store.text_search(["line399"], 5, Filters(agent="default"))[0][0][0] == b
        assert {i for i, _ in mem.store.text_search(["line399"], 5, Filters())[0]} == {a, b, c}
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        assert mem.store.schema_version() == latest_version()
        assert mem.check().ok
        cur = mem.store.connections.get().cursor()
        context = dict(cur.execute("SELECT id, context_text FROM episodes").fetchall())
        cut = text[b][:NEIGHBOUR_CHARS].rstrip(" ")
        assert context[a] == cut and context[c] == f"{cut} {text[d]}"
        assert context[d] == "hand made"  # in no form a version-4 context has: left alone
        # the full-text index followed: the paste's tail finds the paste alone
        assert [i for i, _ in mem.store.text_search(["line399"], 5, Filters())[0]] == [b]
        assert {i for i, _ in mem.store.text_search(["line1"], 5, Filters())[0]} == {a, b, c}
        with mem.store.connections.write() as wcur:  # a re-link now agrees with the migration
            link_neighbours(wcur, "default", 0, 2**40, mem.store.neighbour_gap_s)
        after = dict(cur.execute("SELECT id, context_text FROM episodes").fetchall())
        assert {i: after[i] for i in (a, b, c)} == {i: context[i] for i in (a, b, c)}
        assert after[d] == text[c] and mem.check().ok


def test_filters_that_pass_every_row_cost_no_mask() -> None:
    from memengine.store.vector_rows import AgentRows

    agent = AgentRows(4)
    ids = np.arange(1, 6, dtype=np.int64)
    zeros = np.zeros(5, np.int64)
    ts = np.arange(100, 105, dtype=np.int64)
    agent.put_arrays(ids, zeros, zeros, zeros, ts, np.ones((5, 4), np.float32))
    kinds: dict[str, int] = {}
    assert agent.mask(Filters(agent="a", since_ts=100, until_ts=104), kinds) is None
    until = agent.mask(Filters(agent="a", until_ts=102), kinds)
    assert until is not None and until.tolist() == [True, True, True, False, False]
    # row 2 archived (as a sync does it: dropped, then put again with its new status)
    agent.drop(2)
    agent.put_arrays(ids[1:2], zeros[:1], zeros[:1], np.ones(1, np.int64), ts[1:2], np.ones((1, 4)))
    active = agent.mask(Filters(agent="a"), kinds)
    assert active is not None and active[: agent.n].sum() == 4
    assert agent.where[2] == 5 and not active[agent.where[2]]
    agent.drop(2)  # the archived row deleted: every live row is active again
    assert agent.nonactive == 0
    alive = agent.mask(Filters(agent="a"), kinds)
    assert alive is not None and alive.sum() == 4  # only the tombstones are masked


def test_a_compact_agents_floats_come_from_vec0_once_per_search(mem: Memory) -> None:
    from memengine.store.vector_scan import stored

    ids = mem.add_many(word_episodes(6, "a"))
    rows = np.arange(6, dtype=np.intp)
    with mem.store.connections.read() as cur:
        statements: list[str] = []
        cur.connection.set_trace_callback(statements.append)
        read = stored(cur, np.asarray([*ids[:5], 10_000], np.int64), mem.store.dimension)
        found, vecs = read(rows)
        assert found.tolist() == [0, 1, 2, 3, 4]  # the last id is not stored: left out
        again, same = read(rows[2:])
        cur.connection.set_trace_callback(None)
        assert again.tolist() == [2, 3, 4] and np.array_equal(same, vecs[2:])
        lookups = [t for t in statements if t.startswith("SELECT embedding FROM episode_vectors")]
        assert len(lookups) == 6  # each row looked up once (vec0's own statements aside)
        none, empty = read(rows[5:])
        assert none.tolist() == [] and empty.shape == (0, mem.store.dimension)
        expected = HashEmbedder().embed([e.content or "" for e in word_episodes(5, "a")])
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
        assert np.allclose(vecs, expected, atol=1e-6)


def test_a_search_on_an_older_snapshot_does_not_load_an_agent_into_the_index(
    mem: Memory,
) -> None:
    """A search whose read began before another thread's newer search synced the index
    must not hold the agent as its old snapshot shows it: the rows added in between
    would be missing from every later search of the process (the log has passed them)."""
    import threading

    index = mem.store.vector_index
    index.load_after = 1
    emb = HashEmbedder()
    mem.add_many(word_episodes(20, "a"))
    mem.add_many(word_episodes(5, "b", seed=1))
    snapshot_taken, written = threading.Event(), threading.Event()
    late: list[list[tuple[int, float]]] = []

    def old_reader() -> None:
        with mem.store.connections.read() as cur:
            cur.execute("SELECT count(*) FROM episodes").fetchone()  # the snapshot starts
            snapshot_taken.set()
            written.wait(10)
            late.append(mem.store.knn(emb.embed(["violet harbour"])[0], 5, Filters(agent="a")))

    reader = threading.Thread(target=old_reader)
    reader.start()
    snapshot_taken.wait(10)
    new = mem.add_exchange("violet harbour", "noted", agent="a")
    mem.store.knn(emb.embed(["tea"])[0], 3, Filters(agent="b"))  # syncs the index past it
    written.set()
    reader.join(10)
    assert late and new not in {i for i, _ in late[0]}  # that snapshot cannot see it
    assert mem.check().stale_vector_index == []
    hits = mem.store.knn(emb.embed(["violet harbour"])[0], 5, Filters(agent="a"))
    assert hits[0][0] == new
    assert index.mode("a") == "float32"  # held now, from a current snapshot


def test_a_secret_lends_its_words_to_no_less_sensitive_neighbour(mem: Memory) -> None:
    """Neighbouring turns share their words in the full-text index; a secret's must not
    make the plain turns beside it findable by the secret (a guessed PIN would then be
    confirmed by a search that may not see secrets)."""
    at = T0
    plain_a = mem.add_exchange("we talked about the garden", "nice", occurred_at=at)
    secret = mem.add_exchange(
        "my bank PIN is 7391", "noted", sensitivity=3, occurred_at=at + timedelta(minutes=1)
    )
    plain_b = mem.add_exchange(
        "then the weather turned", "ok", occurred_at=at + timedelta(minutes=2)
    )
    mem.add_exchange("after that, lunch", "yum", occurred_at=at + timedelta(minutes=3))

    def found(text: str, level: int) -> set[int]:
        r = mem.retrieve(text, max_sensitivity=level, record=False, day_range=None)
        return {x.episode.id for x in r.results if "bm25_rank" in x.components}

    assert found("7391", 0) == set()
    assert secret in found("7391", 3)
    assert plain_a in found("garden", 0) and plain_b in found("weather", 0)
    mem.delete(plain_b)  # the neighbours are linked again (link_neighbours' SQL)
    assert found("7391", 0) == set()


@pytest.mark.parametrize("k", [1, 3, 5, 8, 12])
def test_rows_of_equal_cosine_come_last_stored_first_whatever_k(k: int) -> None:
    """Identical texts have identical vectors: which of them a search lists, and in what
    order, must not depend on how deep it asks (a deeper search lists the same first);
    the latest telling comes first."""
    rng = np.random.default_rng(3)
    ids = rng.permutation(np.arange(100, 120, dtype=np.int64))
    cosines = np.full(20, 0.5, dtype=np.float32)
    cosines[[2, 11]] = 0.9  # two better rows, then eighteen tied ones
    cosines[7] = -np.inf  # masked out
    got = top_k(ids, cosines, k)
    deep = top_k(ids, cosines, 19)
    assert got == deep[:k]
    assert [i for i, _ in deep[:2]] == sorted((int(ids[j]) for j in (2, 11)), reverse=True)
    tied = [i for i, _ in deep[2:]]
    assert tied == sorted(tied, reverse=True) and int(ids[7]) not in tied and len(tied) == 17


def _copies_and_near_misses(mem: Memory, clock: FixedClock) -> tuple[list[int], int, int]:
    """150 episodes of other words, nine copies of one text on nine days among them, an
    older text that holds it and one more word, and a newer one that holds two of its words:
    (the copies, the older near miss, the newer one)."""
    mem.add_many(word_episodes(80, "a"))
    near = mem.add("violin harbor lantern moon", agent="a")  # nearer than "violin harbor"
    copies = []
    for i in range(9):
        clock.advance(days=1)
        copies.append(mem.add("violin harbor lantern", agent="a"))
        mem.add_many(word_episodes(8, "a", seed=i + 1))  # the copies in several chunks
    farther = mem.add("violin harbor", agent="a")  # the latest stored, yet farther
    return copies, near, farther


@pytest.mark.parametrize("k", [1, 3, 5, 9, 11])
def test_a_first_search_in_vec0_lists_copies_as_the_later_ones_do(
    db_path: Path, clock: FixedClock, k: int
) -> None:
    """A process's first search runs in ``vec0``, which kept an arbitrary few of the rows
    tied at its cut (an older copy first, the latest left out); the in-memory scan of the
    later searches lists the last stored first. Every CLI call ranked copies otherwise
    than a server; now both list the same, and a nearer row still comes before a farther
    one stored later."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        copies, near, farther = _copies_and_near_misses(mem, clock)
    expected = [*sorted(copies, reverse=True), near, farther][:k]
    q = HashEmbedder().embed(["violin harbor lantern"])[0]
    f = Filters(agent="a")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        index = mem.store.vector_index
        first = mem.store.knn(q, k, f)
        assert index.mode("a") == "vec0"  # (the first search ran in vec0)
        second = mem.store.knn(q, k, f)
        assert index.mode("a") == "float32"
    assert [i for i, _ in first] == [i for i, _ in second] == expected
    assert np.allclose([d for _, d in first], [d for _, d in second], atol=1e-5)


def test_a_new_process_keeps_the_latest_copy_in_its_vector_list(
    db_path: Path, clock: FixedClock
) -> None:
    """A vector list holds one copy of a text, the latest: in a new process's first
    retrieve the oldest copy took the list's first place and the latest was left out of it
    (in the second, the latest was first)."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        copies, near, _ = _copies_and_near_misses(mem, clock)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        runs = []
        for _ in range(2):
            r = mem.retrieve("violin harbor lantern", agent="a", record=False, day_range=None)
            by_vector = sorted(
                (x for x in r.results if "knn_rank" in x.components),
                key=lambda x: x.components["knn_rank"],
            )
            runs.append([x.episode.id for x in by_vector])
    assert runs[0] == runs[1]
    assert runs[0][:2] == [copies[-1], near]
    assert not set(copies[:-1]) & set(runs[0])


def test_the_cache_holds_its_budget_as_held_agents_grow(mem: Memory) -> None:
    """The budget was checked only when an agent was loaded: a long-lived process kept a
    hot agent's floats however many rows it gained (83 MB against 1 MB). The arrays' room
    is counted, and grows by half the rows (not to 1,024 rows for a 10-row agent)."""
    index = mem.store.vector_index
    index.load_after = 1
    dim = index.dimension
    floats = VectorIndex.row_bytes(dim, floats=True, codes=False)
    for name in "ab":
        mem.add_many(word_episodes(20, name, seed=ord(name)))
    index.budget_bytes = 60 * floats  # both agents' floats, with room for 20 more rows
    q = HashEmbedder().embed(["cat tea rain"])[0]

    def search(name: str) -> None:
        f = Filters(agent=name)
        same_hits(mem.store.knn(q, 5, f), _vec0(mem, q, 5, f))

    search("a")
    search("b")
    assert (index.mode("a"), index.mode("b")) == ("float32", "float32")
    mem.add_many(word_episodes(1, "a", seed=1))  # the arrays grow past their 20 rows
    search("a")
    assert index._agents["a"].held_bytes == 30 * floats  # counted: the room, 21 rows and 9
    assert (index.mode("a"), index.mode("b")) == ("float32", "float32")
    mem.add_many(word_episodes(30, "a", seed=2))  # 51 + 20 rows: past the budget
    search("a")
    assert index.mode("b") == "vec0"  # used least recently: evicted
    assert sum(m.held_bytes for m in index._agents.values()) <= index.budget_bytes
    mem.add_many(word_episodes(40, "a", seed=3))  # a alone past it: a goes too
    search("a")
    assert sum(m.held_bytes for m in index._agents.values()) <= index.budget_bytes
    search("a")  # loaded again under the rule: compact (its codes fit), or vec0
    assert index.mode("a") in ("codes", "vec0")
    assert mem.check().ok


def test_the_agent_searched_is_the_last_the_budget_evicts(mem: Memory) -> None:
    """The budget was checked when the log was replayed, before the searched agent was
    marked as used: it was evicted at the start of its own search (and read again as
    codes) while the agent that grew stayed; dropped rows counted until a compaction."""
    index = mem.store.vector_index
    index.load_after = 1
    floats = VectorIndex.row_bytes(index.dimension, floats=True, codes=False)
    for name in "ab":
        mem.add_many(word_episodes(40, name, seed=ord(name)))
    index.budget_bytes = 90 * floats
    q = HashEmbedder().embed(["cat tea rain"])[0]
    for name in "ab":  # b used last
        mem.store.knn(q, 5, Filters(agent=name))
    held_a = index._agents["a"]
    mem.add_many(word_episodes(15, "b", seed=5))  # 95 rows: over by 5
    mem.store.knn(q, 5, Filters(agent="a"))
    assert index._agents.get("a") is held_a  # a, searched, stays; b, now the least recent, goes
    assert index.mode("b") == "vec0"
    mem.store.knn(q, 5, Filters(agent="b"))  # b back (as codes: a's floats leave no room)
    with mem.store.connections.read() as cur:
        some = [r[0] for r in cur.execute("SELECT id FROM episodes WHERE agent = 'a' LIMIT 9")]
    mem.store.set_status(some, "archived")  # nine dropped-and-put rows: the live count is 40
    before = index._agents.get("a")
    mem.store.knn(q, 5, Filters(agent="a"))
    assert index._agents.get("a") is before  # not reloaded for its tombstones
    assert mem.check().ok


def test_a_held_agent_that_gains_a_row_keeps_arrays_near_its_size(mem: Memory) -> None:
    """Every held agent's arrays grew to at least 1,024 rows at its first new row: 400
    agents of one exchange each, given one more, held 808 MB of arrays for 800 rows (2 MB
    an agent at 512-d), which the budget did not count. They now grow by half their rows,
    and the budget counts that room."""
    index = mem.store.vector_index
    names = [f"user{i}" for i in range(12)] + [f"ゆうこ{i}" for i in range(12)]
    for name in names:
        mem.add_exchange(f"my cat is called mochi ({name})", "nice name", agent=name)
    for name in names:
        for _ in range(2):  # the second search loads the agent
            mem.retrieve("what is my cat called? 猫の名前は?", agent=name, record=False)
    assert set(index.loaded()) == set(names)
    for i, name in enumerate(names):
        if i % 2:
            mem.add_exchange("and my dog is rex", "ok", agent=name)
        else:
            mem.add_exchange("犬の名前はポチです", "いい名前ですね", agent=name)
        mem.retrieve("what is my dog called? 犬の名前は?", agent=name, record=False)
    assert set(index.loaded()) == set(names)
    for name, rows in index.loaded().items():
        agent = index._agents[name]
        assert rows == agent.n > 1
        assert len(agent.ids) <= max(MIN_ROWS, 2 * rows)
        assert agent.nbytes <= agent.held_bytes  # the budget counts what the arrays take
    assert mem.check().ok


def test_appends_reallocate_an_agents_arrays_only_now_and_then(mem: Memory) -> None:
    """Growing by half the rows keeps appends amortised O(1): 120 rows added one at a
    time to an agent of 40 move its arrays four times (60, 90, 135, 202 rows), not at
    every row, and the agent stays held as it was."""
    index = mem.store.vector_index
    index.load_after = 1
    mem.add_many(word_episodes(40, "a"))
    q = HashEmbedder().embed(["cat tea rain"])[0]
    mem.store.knn(q, 5, Filters(agent="a"))
    agent = index._agents["a"]
    sizes = [len(agent.ids)]
    for i in range(120):
        new = NewEpisode(kind="fact", content=f"piano garden {i}", agent="a", occurred_at=T0)
        mem.add_many([new])
        mem.store.knn(q, 5, Filters(agent="a"))
        if len(agent.ids) != sizes[-1]:
            sizes.append(len(agent.ids))
    assert index._agents["a"] is agent and agent.n == 160
    assert sizes == [40, 60, 90, 135, 202]
    f = Filters(agent="a")
    same_hits(mem.store.knn(q, 10, f), _vec0(mem, q, 10, f))


def test_an_agent_grows_only_into_the_room_the_budget_leaves(mem: Memory) -> None:
    """Growth never takes the room past the budget while the rows fit: an agent near it
    is not evicted (and loaded again at every new row) for room it does not use yet; only
    rows past the budget evict it."""
    index = mem.store.vector_index
    index.load_after = 1
    floats = VectorIndex.row_bytes(index.dimension, floats=True, codes=False)
    index.budget_bytes = 100 * floats
    mem.add_many(word_episodes(60, "a"))
    q = HashEmbedder().embed(["cat tea rain"])[0]
    f = Filters(agent="a")
    mem.store.knn(q, 5, f)
    agent = index._agents["a"]
    mem.add_many(word_episodes(1, "a", seed=1))
    mem.store.knn(q, 5, f)
    assert len(agent.ids) == 90  # half as many rows again: in the room
    mem.add_many(word_episodes(29, "a", seed=2))  # 90 rows: the room is full
    mem.store.knn(q, 5, f)
    assert len(agent.ids) == 90
    mem.add_many(word_episodes(1, "a", seed=3))  # 91 rows: 135 would be past the budget
    same_hits(mem.store.knn(q, 5, f), _vec0(mem, q, 5, f))
    assert index._agents.get("a") is agent and index.mode("a") == "float32"
    assert len(agent.ids) == 100 and agent.held_bytes == index.budget_bytes
    mem.add_many(word_episodes(9, "a", seed=4))  # 100 rows: in the arrays as they are
    mem.store.knn(q, 5, f)
    assert index._agents.get("a") is agent and len(agent.ids) == 100
    mem.add_many(word_episodes(1, "a", seed=5))  # 101 rows: past it
    mem.store.knn(q, 5, f)
    assert index._agents.get("a") is not agent
    same_hits(mem.store.knn(q, 5, f), _vec0(mem, q, 5, f))  # loaded again, compact
    assert index.mode("a") == "codes"
    assert index._held_bytes() <= index.budget_bytes
    assert mem.check().ok


def test_a_small_cache_bounds_the_bytes_its_agents_arrays_take(
    db_path: Path, clock: FixedClock
) -> None:
    """With ``vector_cache_mb = 1``, agents of 14 rows that each gained one held 2 MB of
    arrays apiece, 40 of them 83 MB: the cache counted only the rows in use. It now counts
    the room, and the agents used least recently go to keep the arrays within it."""
    cfg = Config()
    cfg.retrieval.vector_cache_mb = 1
    emb = HashEmbedder(512)
    with Memory.open(db_path, config=cfg, embedder=emb, clock=clock) as mem:
        index = mem.store.vector_index
        index.load_after = 1
        names = [f"u{i}" for i in range(40)]
        for i, name in enumerate(names):
            mem.add_many(word_episodes(14, name, seed=i))
        q = emb.embed(["cat tea rain"])[0]
        for name in names:
            mem.store.knn(q, 5, Filters(agent=name))
        modes = {index.mode(name) for name in names}
        assert {"float32", "codes"} <= modes  # 560 rows of floats: 1.1 MiB
        for round_ in range(2):
            for i, name in enumerate(names):
                mem.add_many(word_episodes(1, name, seed=100 * round_ + i + 50))
                f = Filters(agent=name)
                same_hits(mem.store.knn(q, 5, f), _vec0(mem, q, 5, f))
                assert sum(a.nbytes for a in index._agents.values()) <= 2**20
                assert index._held_bytes() <= 2**20
        assert 1 < len(index.loaded()) < len(names)
        assert mem.check().ok


def test_a_word_counted_absent_is_counted_again_once_it_is_stored(mem: Memory) -> None:
    """On a file of 10,000 episodes or more a word's count was kept until a tenth more
    were stored: a word first seen in a turn's question (counted 0), then stored, was
    still taken as absent, its reach 0 and the fact just told ranked below unrelated ones."""
    mem.add_many(word_episodes(10_050, "a", seed=31), batch_size=2_000)
    stats = mem.store.term_stats
    with mem.store.connections.read() as cur:
        assert stats.counts(cur, ["okonkwo"])[1] == {"okonkwo": 0}
    mem.add("my appointment with Okonkwo is on Friday", kind="fact", agent="a")
    with mem.store.connections.read() as cur:
        assert stats.counts(cur, ["okonkwo"])[1] == {"okonkwo": 1}
    mem.add("Okonkwo called again", kind="fact", agent="a")
    with mem.store.connections.read() as cur:
        assert stats.counts(cur, ["okonkwo"])[1] == {"okonkwo": 2}


class _AsksCounted:
    """A real cursor that notes the ``k`` of each ``vec0`` KNN query run through it."""

    def __init__(self, cur: object) -> None:
        self.cur = cur
        self.asks: list[int] = []

    def execute(self, sql: str, params: list[object]) -> object:
        """Run ``sql`` on the real cursor, noting a KNN query's ``k`` (its second value)."""
        if "embedding MATCH" in sql:
            self.asks.append(int(params[1]))  # type: ignore[call-overload]
        return self.cur.execute(sql, params)  # type: ignore[attr-defined]


def test_a_tie_past_the_first_re_ask_is_asked_for_eight_times_more_until_it_ends(
    db_path: Path, clock: FixedClock
) -> None:
    """Sixty copies of one text tie past the first re-ask (40 at ``k`` 1): ``vec0`` is
    asked for 5, 40, then 320 rows and lists the latest copies first, as the in-memory
    scan does, rather than asked for 4,096 rows at once (twice a normal ask's cost)."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_many(word_episodes(40, "a"))
        copies = []
        for i in range(60):
            clock.advance(minutes=30)
            copies.append(mem.add("violin harbor lantern", agent="a"))
            if i % 10 == 0:
                mem.add_many(word_episodes(5, "a", seed=i + 1))  # the copies in several chunks
        unique = mem.add("cello meadow", agent="a")
    q, other = HashEmbedder().embed(["violin harbor lantern", "cello meadow"])
    f = Filters(agent="a")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        with mem.store.connections.read() as cur:
            for k, asks in ((1, [5, 40, 320]), (3, [7, 56, 448]), (60, [64])):  # 60: ends
                counted = _AsksCounted(cur)
                hits = vectors.knn(counted, q, k, f)
                assert counted.asks == asks
                assert [i for i, _ in hits] == sorted(copies, reverse=True)[:k]
            counted = _AsksCounted(cur)  # not to trigger: no tie at the cut, one ask
            assert vectors.knn(counted, other, 1, f)[0][0] == unique
            assert counted.asks == [5]
        assert mem.store.knn(q, 3, f) == mem.store.knn(q, 3, f)  # (vec0, then in memory)


def test_a_query_of_no_length_asks_for_every_tied_row_at_once(mem: Memory) -> None:
    """A zero or NaN query has no cosine to any row: every row is at 2.0, so the first ask
    is the largest (it asked 14, then 4,096), and the last stored comes first."""
    ids = mem.add_many(word_episodes(30, "a"))
    f = Filters(agent="a")
    with mem.store.connections.read() as cur:
        for q in (np.zeros(64, np.float32), np.full(64, np.nan, np.float32)):
            counted = _AsksCounted(cur)
            hits = vectors.knn(counted, q, 10, f)
            assert counted.asks == [vectors.MAX_K]
            assert hits == [(i, 2.0) for i in sorted(ids, reverse=True)[:10]]
