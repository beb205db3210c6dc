"""The fast path's deadline for a turn's query vectors (``[retrieval] embed_deadline_s``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memengine import Config, FixedClock, Memory, MemoryClosed
from memengine.embed.base import Vectors
from memengine.retrieve import fastpath
from tests.helpers import T0, HashEmbedder, in_forked_child


class Slow(HashEmbedder):
    """The bag-of-words embedder, taking ``delay`` seconds a call once ``slow`` is set."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.slow = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.slow.is_set():
            time.sleep(self.delay)
        return super().embed(texts)


def _memory(path: Path, embedder: HashEmbedder, deadline: float | None) -> Memory:
    cfg = Config.model_validate({"retrieval": {"embed_deadline_s": deadline}})
    mem = Memory.open(path, config=cfg, embedder=embedder, clock=FixedClock(T0))
    mem.add_exchange("the dentist appointment is on Friday", "noted", occurred_at=T0)
    mem.add_exchange("my cat Miso loves the blue blanket", "sweet", occurred_at=T0)
    return mem


def test_concurrent_turns_embed_side_by_side(tmp_path: Path) -> None:
    """Each turn's embedding starts at once: turns do not queue for it, so a deadline
    that one call meets is met by many at a time."""
    slow = Slow(0.4)
    with _memory(tmp_path / "m.db", slow, deadline=2.0) as mem:
        slow.slow.set()
        t0 = time.monotonic()
        with ThreadPoolExecutor(12) as pool:
            turns = list(pool.map(lambda i: mem.retrieve(f"dentist {i}", record=False), range(12)))
        took = time.monotonic() - t0
    assert all(not r.degraded for r in turns), [r.degraded for r in turns]
    assert took < 1.8, took  # twelve 0.4 s embeddings at once, not three rounds of four


def test_a_hung_embedder_is_asked_nothing_more_past_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(fastpath, "MAX_ABANDONED", 2)
    slow = Slow(2.0)
    with _memory(tmp_path / "m.db", slow, deadline=0.5) as mem:
        slow.slow.set()
        for _ in range(2):  # each leaves its embedding running
            r = mem.retrieve("dentist appointment", record=False)
            assert any("not embedded within 0.5 s" in d for d in r.degraded)
        t0 = time.monotonic()
        r = mem.retrieve("dentist appointment", record=False)
        assert time.monotonic() - t0 < 0.4  # no wait for the deadline
        assert any("2 query embeddings are still running" in d for d in r.degraded)
        assert r.results[0].episode.text.startswith("the dentist")
        slow.slow.clear()
        time.sleep(1.6)  # the two end (2 s after they began); the embedder is asked again
        assert not mem.retrieve("dentist appointment", record=False).degraded


def test_a_closed_memory_takes_no_more_embeddings(tmp_path: Path) -> None:
    mem = _memory(tmp_path / "m.db", HashEmbedder(), deadline=1.0)
    mem.close()
    with pytest.raises(MemoryClosed):
        mem.retrieve("dentist")
    with pytest.raises(MemoryClosed):
        mem.retriever.fast.embed(["dentist"])


def test_an_abandoned_embedding_does_not_hold_up_the_exit(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import time
        from memengine import Config, Memory
        from tests.helpers import HashEmbedder

        class Hung(HashEmbedder):
            def embed(self, texts):
                if texts and texts[0].startswith("dentist"):
                    time.sleep(30)
                return super().embed(texts)

        cfg = Config.model_validate({{"retrieval": {{"embed_deadline_s": 0.3}}}})
        with Memory.open({str(tmp_path / "m.db")!r}, config=cfg, embedder=Hung()) as mem:
            mem.add("the dentist appointment is on Friday")
            r = mem.retrieve("dentist appointment", record=False)
            print(r.degraded_parts, r.results[0].episode.id)
        """
    )
    t0 = time.monotonic()
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert out.returncode == 0, out.stderr
    assert "vector" in out.stdout and out.stdout.strip().endswith(" 1")
    assert time.monotonic() - t0 < 15  # not the 30 s the embedding would take


def test_the_worker_threads_are_kept_for_the_next_call() -> None:
    from memengine.retrieve import workers

    assert workers.submit(lambda: 1).result(timeout=5) == 1
    before = threading.active_count()
    for i in range(50):
        assert workers.submit(lambda i=i: i * 2).result(timeout=5) == i * 2
    assert threading.active_count() < before + 5  # not a thread a call

    def fails() -> None:
        raise ValueError("handed on")

    with pytest.raises(ValueError, match="handed on"):
        workers.submit(fails).result(timeout=5)
    assert all(t.daemon for t in threading.enumerate() if t.name == "memengine-worker")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_embeds_its_first_queries_at_once(db_path: Path, clock: FixedClock) -> None:
    """The threads do not cross a fork: a child kept the parent's count of idle ones, and
    its first turns (a gunicorn --preload worker's, which opens its own memory) waited out
    embed_deadline_s each for a thread it did not have, then lost the vector search."""
    from memengine.retrieve import workers

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add("the dentist appointment is on Friday")
        mem.retrieve("dentist appointment")  # the master warms up
    started = threading.Barrier(4)
    calls = [workers.submit(lambda: started.wait(10)) for _ in range(3)]
    started.wait(10)
    for call in calls:  # three threads at once, idle now
        call.result(timeout=10)

    def child() -> list[object]:
        with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mine:
            turns = []
            for _ in range(4):
                t0 = time.monotonic()
                r = mine.retrieve("dentist appointment", record=False)
                turns.append([time.monotonic() - t0, list(r.degraded), r.results[0].episode.id])
            return turns

    turns = in_forked_child(child)
    assert isinstance(turns, list) and len(turns) == 4, turns
    for seconds, degraded, top in turns:
        assert degraded == [] and top == 1, turns
        assert seconds < 3, turns  # not the 5 s deadline
    assert workers.submit(lambda: 2).result(timeout=5) == 2  # the parent's threads go on


class SlowAfter(HashEmbedder):
    """Answers its first ``quick`` calls at once and every later one ``delay`` seconds late."""

    def __init__(self, quick: int, delay: float) -> None:
        super().__init__()
        self.quick, self.delay = quick, delay

    def embed(self, texts: Sequence[str]) -> Vectors:
        if len(self.calls) >= self.quick:
            time.sleep(self.delay)
        return super().embed(texts)


def test_the_coverage_rule_keeps_the_deadline_too(tmp_path: Path) -> None:
    """The opt-in coverage rule's word vectors are asked for after the query's own: an
    embedder that slows down between them costs the turn at most the deadline, and the
    turn still answers (the rule not read)."""
    cfg = Config.model_validate({"retrieval": {"embed_deadline_s": 0.5, "coverage_min": 0.5}})
    emb = SlowAfter(quick=10**6, delay=3.0)
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=emb, clock=FixedClock(T0)) as mem:
        for i in range(6):
            mem.add_exchange(f"my cat Miso {i} loves the blue blanket", "sweet", occurred_at=T0)
        mem.add_exchange("the dentist appointment is on Friday", "noted", occurred_at=T0)
        emb.quick = len(emb.calls) + 1  # the turn's query is embedded at once, then slowly
        t0 = time.monotonic()
        r = mem.retrieve("when is the dentist appointment, and what does Miso love?", limit=2)
        took = time.monotonic() - t0
    assert r.results and r.should_inject and took < 2.5, took
    assert any("coverage" in note for note in r.degraded), r.degraded
