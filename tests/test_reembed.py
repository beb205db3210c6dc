"""A re-embed makes its vectors beside the old ones, swaps them in at once, and goes on
after an interruption from where it stopped."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memengine import (
    EmbedderChanged,
    EmbedderMismatch,
    EmbeddingError,
    FixedClock,
    Memory,
    NewEpisode,
    StoreError,
)
from memengine.embed.base import Vectors
from memengine.embed.probe import PROBE_TEXT
from memengine.store import reembed as staging
from memengine.store.database import Store

from .helpers import HashEmbedder, word_episodes

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc)
N = 1000  # four batches of 256


class StopsAfter(HashEmbedder):
    """The new embedder: fails after ``limit`` texts (an endpoint that goes down), and
    can run a hook before each batch (another writer at work meanwhile)."""

    def __init__(self, limit: int | None = None) -> None:
        super().__init__(32, name="new")
        self.limit = limit
        self.texts: list[str] = []
        self.before_batch: list[object] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.limit is not None and len(self.texts) + len(texts) > self.limit:
            raise EmbeddingError("the endpoint went away")
        for hook in self.before_batch if PROBE_TEXT not in texts else ():
            hook()  # type: ignore[operator]  # between the batches of episodes
        self.texts.extend(texts)
        return super().embed(texts)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    with Memory.open(path, embedder=HashEmbedder(), clock=FixedClock(T0)) as mem:
        mem.add_many(word_episodes(N, "default"))
    return path


def open_with(path: Path, embedder: HashEmbedder) -> Memory:
    return Memory.open(path, embedder=embedder, clock=FixedClock(T0), allow_embedder_change=True)


def stored_vector(mem: Memory, episode_id: int) -> np.ndarray:
    with mem.store.connections.read() as cur:
        row = cur.execute(
            "SELECT embedding FROM episode_vectors WHERE episode_id = ?", (episode_id,)
        ).fetchone()
    return np.frombuffer(row[0], dtype=np.float32)


def made_by_new(mem: Memory, episode_id: int) -> bool:
    """The vector stored for the episode is the new embedder's vector of its text."""
    expected = HashEmbedder(32, name="new").embed([mem.get(episode_id).text])[0]
    return bool(np.allclose(stored_vector(mem, episode_id), expected, atol=1e-6))


def made(embedder: StopsAfter) -> list[str]:
    """The episode texts the embedder embedded (without the probe text a re-embed keeps)."""
    return [t for t in embedder.texts if t != PROBE_TEXT]


def staged(mem: Memory) -> tuple[str, int] | None:
    with mem.store.connections.read() as cur:
        return staging.staged_count(cur)


def test_an_interrupted_reembed_keeps_the_old_vectors_and_goes_on_later(db: Path) -> None:
    first = StopsAfter(limit=600)  # two batches of 256 made, the third fails
    with open_with(db, first) as mem, pytest.raises(EmbeddingError, match="went away"):
        mem.reembed()
    with Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0)) as old:
        assert old.stats()["embedder"] == "hash:64"  # the searches still read the old vectors
        assert old.check().ok and old.retrieve("anything", day_range=None).results
        assert staged(old) == ("new:32:32", 512)
    second = StopsAfter()
    seen: list[tuple[int, int]] = []
    with open_with(db, second) as mem:
        assert mem.reembed(progress=lambda d, t: seen.append((d, t))) == N
        assert len(made(second)) == N - 512  # only what the first run had not made
        assert seen[:2] == [(0, N), (256, N)] and seen[-1] == (N, N)
        assert staged(mem) is None and mem.check().ok
    with Memory.open(db, embedder=HashEmbedder(32, name="new"), clock=FixedClock(T0)) as mem:
        stats = mem.stats()
        assert (stats["embedder"], stats["dimension"]) == ("new:32", 32)
        assert all(made_by_new(mem, i) for i in (1, 256, 512, 513, 700, N))


def test_a_reembed_to_another_embedder_starts_anew(db: Path) -> None:
    with open_with(db, StopsAfter(limit=300)) as mem, pytest.raises(EmbeddingError):
        mem.reembed()
    other = HashEmbedder(48, name="other")
    with open_with(db, other) as mem:
        assert staged(mem) == ("new:32:32", 256)
        assert mem.reembed() == N
        assert sum(other.calls) == N + 2  # nothing of new:32 was used (+ the probe, twice)
        assert mem.stats()["dimension"] == 48 and mem.check().ok


def test_episodes_written_while_the_vectors_are_made_get_them_in_the_swap(db: Path) -> None:
    """Another writer goes on with the old embedder during the long part; the swap embeds
    what it added, and what it deleted stays deleted."""
    new = StopsAfter()
    added: list[int] = []
    writer = Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0))

    def write_meanwhile() -> None:  # from another thread, as another user would
        if len(added) == 4:  # the swap's call: it holds the write lock
            return

        def one() -> None:
            added.append(writer.add_exchange(f"plumber visit number {len(added)}", "ok"))
            writer.delete([len(added)])

        t = threading.Thread(target=one)
        t.start()
        t.join()

    new.before_batch.append(write_meanwhile)
    try:
        with open_with(db, new) as mem:
            assert mem.reembed() == N  # N + 4 added, 4 deleted (ids 1–4)
            report = mem.check()
            assert report.ok and report.vectors == report.episodes == N
            assert len(added) == 4 and len(made(new)) == N + 4  # the swap embedded the 4 added
    finally:
        writer.close()
    with Memory.open(db, embedder=HashEmbedder(32, name="new"), clock=FixedClock(T0)) as mem:
        assert all(made_by_new(mem, i) for i in added)


def test_a_staged_vector_of_other_text_is_made_again(db: Path) -> None:
    """An id whose episode was replaced after its vector was staged (deleted, and imported
    again with its id) is embedded again in the swap: the digest tells."""
    with open_with(db, StopsAfter(limit=300)) as mem, pytest.raises(EmbeddingError):
        mem.reembed()
    with Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0)) as old:
        episode = old.get(10)
        old.delete([10])
        replaced = NewEpisode(
            id=10,
            kind=episode.kind,
            content="a completely different text",
            occurred_at=episode.occurred_at,
        )
        assert old.import_episodes([replaced]) == [10]
        assert old.get(10).text == "a completely different text"
    again = StopsAfter()
    with open_with(db, again) as mem:
        mem.reembed()
        assert "a completely different text" in again.texts
        assert made_by_new(mem, 10) and made_by_new(mem, 11)


def test_doctor_tells_of_a_stopped_reembed(db: Path) -> None:
    from memengine.config import Config
    from memengine.diagnostics import diagnose

    with open_with(db, StopsAfter(limit=300)) as mem, pytest.raises(EmbeddingError):
        mem.reembed()
    checks = diagnose(Config(db=db))["checks"]
    ok, detail = checks["re-embed"]
    assert ok and "a re-embed to new:32 has made 256 vectors" in detail
    assert checks["consistency"][0]


class Changed(StopsAfter):
    """Another model behind the same id (``new:32``): its vectors lie elsewhere."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        return np.ascontiguousarray(super().embed(texts)[:, ::-1])


def test_a_model_changed_behind_the_id_does_not_take_the_staged_vectors(db: Path) -> None:
    with open_with(db, StopsAfter(limit=600)) as mem, pytest.raises(EmbeddingError):
        mem.reembed()
    notes: list[str] = []
    with open_with(db, StopsAfter(limit=600)) as mem:  # the same model: goes on
        mem.reembed(note=notes.append)
    assert notes == ["going on from the 512 vectors a stopped re-embed made"]

    with open_with(db, HashEmbedder()) as mem:  # back to the first embedder
        mem.reembed()
    with open_with(db, StopsAfter(limit=600)) as mem, pytest.raises(EmbeddingError):
        mem.reembed()
    changed = Changed()
    notes.clear()
    with open_with(db, changed) as mem:
        assert mem.reembed(note=notes.append) == N
        assert len(made(changed)) == N  # every vector made anew by the model now behind it
        assert notes == [
            "the 512 vectors a stopped re-embed made were dropped: the model behind new:32 "
            "has changed since"
        ]
        expected = changed.embed([mem.get(1).text])[0]
        assert np.allclose(stored_vector(mem, 1), expected, atol=1e-6)


def test_deleted_episodes_leave_no_staged_vector(db: Path) -> None:
    """A scrubbed delete or a forgotten agent keeps nothing of the episodes, not even the
    vectors a stopped re-embed made of them."""
    with Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0)) as mem:
        mem.add_many(word_episodes(40, "alice", seed=3))
    with open_with(db, StopsAfter(limit=1030)) as mem, pytest.raises(EmbeddingError):
        mem.reembed()  # four batches of 256 staged: ids 1-1024, alice's 1001-1024 among them
    with Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0)) as mem:
        assert staged(mem) == ("new:32:32", 1024)
        mem.forget_agent("alice")
        mem.delete([1, 2, 3], scrub=True)
        with mem.store.connections.read() as cur:
            left = {r[0] for r in cur.execute(f"SELECT id FROM {staging.TABLE}")}
        assert left == set(range(4, 1001))


def test_an_agent_forgotten_while_a_batch_is_embedded_leaves_no_staged_vector(
    db: Path,
) -> None:
    """The batch being embedded when its agent was forgotten was staged all the same: the
    forgotten user's vectors stayed in the file after a forget that said it kept nothing."""
    with Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0)) as mem:
        mem.add_many(word_episodes(40, "alice", seed=3))  # ids 1001-1040
        mem.add_many(word_episodes(60, "carol", seed=4))  # ids 1041-1100
    new = StopsAfter(limit=1025)  # the probe and four batches are made, then it goes down
    with (
        Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0)) as server,
        open_with(db, new) as job,
    ):
        new.before_batch.append(
            lambda: server.forget_agent("alice") if len(made(new)) == 768 else None
        )
        with pytest.raises(EmbeddingError):
            job.reembed()
        with server.store.connections.read() as cur:
            left = {r[0] for r in cur.execute(f"SELECT id FROM {staging.TABLE}")}
        assert left == set(range(1, 1001)) and not server.has_agent("alice")


def test_a_reembed_to_another_target_started_meanwhile_stops_this_one(db: Path) -> None:
    """Two re-embeds that overlap: the one started later takes the staging over, and the
    first stops rather than undo its work."""
    first = StopsAfter()
    other: list[int] = []

    def start_another() -> None:
        if other:
            return
        with open_with(db, HashEmbedder(48, name="other")) as second:
            other.append(second.reembed())

    first.before_batch.append(lambda: len(first.texts) >= 256 and start_another())
    with open_with(db, first) as mem, pytest.raises(StoreError, match="took over"):
        mem.reembed()
    assert other == [N]
    with Memory.open(db, embedder=HashEmbedder(48, name="other"), clock=FixedClock(T0)) as mem:
        assert mem.stats()["embedder"] == "other:48" and mem.check().ok
        assert staged(mem) is None


def test_many_episodes_added_meanwhile_are_staged_before_the_swap(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer that adds many episodes while the vectors are made does not make the swap,
    which holds the write lock, embed them all: a catch-up pass stages them first."""
    new = StopsAfter()
    writer = Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0))
    added: list[int] = []

    def add_a_lot() -> None:  # once, during the first batch, from another thread
        if added:
            return
        t = threading.Thread(
            target=lambda: added.extend(writer.add_many(word_episodes(700, "default")))
        )
        t.start()
        t.join()

    new.before_batch.append(add_a_lot)
    left_for_the_swap: list[int] = []
    swap = Store._swap_vectors

    def counting_swap(self: Store, cur: Any, *args: Any, **kwargs: Any) -> int:
        left_for_the_swap.append(len(staging.unstaged(cur, 10**6)))
        return swap(self, cur, *args, **kwargs)

    monkeypatch.setattr(Store, "_swap_vectors", counting_swap)
    try:
        with open_with(db, new) as mem:
            assert mem.reembed() == N + 700
            report = mem.check()
            assert report.ok and report.vectors == report.episodes == N + 700
    finally:
        writer.close()
    assert len(added) == 700 and left_for_the_swap == [0]
    assert len(made(new)) == N + 700  # each embedded once


def test_the_few_added_during_a_reembed_are_embedded_before_the_swap(db: Path) -> None:
    """Up to 256 episodes added meanwhile were left to the swap, which embedded them
    holding the write lock (an endpoint's retries kept every other writer waiting)."""
    new = StopsAfter()
    mem = open_with(db, new)
    in_lock: list[bool] = []
    plain = new.embed

    def watched(texts: Sequence[str]) -> Vectors:
        in_lock.append(mem.store.connections.get().driver_connection.in_transaction)
        return plain(texts)

    new.embed = watched  # type: ignore[method-assign]
    other = Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(T0))
    batches = 0

    def add_at_the_end() -> None:
        nonlocal batches
        batches += 1
        if batches == 4:  # the last batch of episodes: ten more come in meanwhile
            other.add_many(word_episodes(10, "default"))

    new.before_batch.append(add_at_the_end)
    try:
        assert mem.reembed() == N + 10
    finally:
        other.close()
    assert not any(in_lock), in_lock  # every text was embedded outside the swap's lock
    assert made_by_new(mem, N + 10)
    mem.close()


def test_a_model_changed_behind_the_id_during_a_reembed_swaps_nothing(db: Path) -> None:
    """The probe was made once, at the start: a model swapped behind the same name midway
    left the file with vectors of two models, and ``doctor`` passed."""

    class Changes(StopsAfter):
        def embed(self, texts: Sequence[str]) -> Vectors:
            out = super().embed(texts)
            return np.roll(out, 5, axis=1) if len(self.texts) > 600 else out

    mem = open_with(db, Changes())
    with pytest.raises(EmbedderChanged, match="changed while the re-embed ran"):
        mem.reembed()
    assert mem.store.embedder_id == "hash:64"  # the old vectors stay
    mem.close()


def test_an_add_to_a_file_of_another_embedder_says_so(db: Path) -> None:
    """Opened with ``allow_embedder_change``, an add blamed its input ("vectors have shape
    (1, 32), the database expects 64 dimensions")."""
    with open_with(db, StopsAfter()) as mem, pytest.raises(EmbedderMismatch, match="reembed"):
        mem.add("a new note")
