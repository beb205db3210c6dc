"""Ctrl-C during ``add_many``: the batches written are kept, and the interrupt says how many
(a retry of the whole list would store them twice)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memengine import AddInterrupted, Memory, NewEpisode

from .helpers import word_episodes


def _interrupted_at(episodes: list[NewEpisode], k: int) -> Iterator[NewEpisode]:
    """The episodes, with Ctrl-C as the ``k``-th is asked for (a notebook's interrupt)."""
    for i, ep in enumerate(episodes):
        if i == k:
            raise KeyboardInterrupt
        yield ep


def test_the_batches_written_before_ctrl_c_are_counted_and_named(mem: Memory) -> None:
    episodes = word_episodes(700, "default")
    with pytest.raises(AddInterrupted) as caught:
        mem.add_many(_interrupted_at(episodes, 600), batch_size=256)
    stop = caught.value
    assert isinstance(stop, KeyboardInterrupt)  # a program that stops on Ctrl-C stops
    assert stop.stored == 512 and stop.writing == 0 and len(stop.ids) == 512
    assert mem.store.count() == 512
    assert [mem.get(i).content for i in (stop.ids[0], stop.ids[-1])] == [
        episodes[0].content,
        episodes[511].content,
    ]
    said = str(stop)
    assert said.startswith("interrupted (the first 512 episodes to store were stored")
    assert "go on from there" in said
    # going on from there stores each episode once
    mem.add_many(episodes[stop.stored :])
    assert mem.store.count() == 700


def test_ctrl_c_before_any_batch_is_written_is_a_plain_interrupt(mem: Memory) -> None:
    with pytest.raises(KeyboardInterrupt) as caught:
        mem.add_many(_interrupted_at(word_episodes(300, "default"), 100), batch_size=256)
    assert type(caught.value) is KeyboardInterrupt
    assert mem.store.count() == 0


def test_ctrl_c_as_a_batch_is_written_says_it_may_be_in(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The interrupt may come after the store committed a batch and before the call counted
    it: that batch is named apart, as stored or not, never counted as not stored."""
    add = mem.store.add
    calls = []

    def committed_then_interrupted(*args: Any, **kwargs: Any) -> list[int]:
        ids = add(*args, **kwargs)  # the real write, committed
        calls.append(ids)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return ids

    monkeypatch.setattr(mem.store, "add", committed_then_interrupted)
    with pytest.raises(AddInterrupted) as caught:
        mem.add_many(word_episodes(600, "default"), batch_size=256)
    stop = caught.value
    assert stop.stored == 256 and stop.writing == 256 and stop.ids == calls[0]
    assert mem.store.count() == 512  # the batch being written was committed
    assert "; the 256 episodes after them were being written: stored whole or not" in str(stop)


def test_ctrl_c_as_a_single_add_is_committed_says_it_may_be_in(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    add = mem.store.add

    def committed_then_interrupted(*args: Any, **kwargs: Any) -> list[int]:
        add(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(mem.store, "add", committed_then_interrupted)
    with pytest.raises(AddInterrupted) as caught:
        mem.add_exchange("We adopted a cat", "Lovely")
    stop = caught.value
    assert (stop.stored, stop.writing, stop.ids) == (0, 1, [])
    assert str(stop).startswith("interrupted while 1 episode was being written: stored whole")
    assert mem.store.count() == 1


def test_an_import_interrupted_says_to_go_on_with_skip_existing(
    mem: Memory, tmp_path: Path
) -> None:
    source = tmp_path / "in.jsonl"
    mem.add_many(word_episodes(300, "default"))
    mem.export(source)
    with Memory.open(tmp_path / "copy.db", embedder=mem.embedder, clock=mem.clock) as copy:
        progress_calls = []

        def progress(done: int, total: int) -> None:
            progress_calls.append(done)
            if done == 256:
                raise KeyboardInterrupt

        with pytest.raises(AddInterrupted) as caught:
            copy.import_(source, progress=progress)
        assert caught.value.stored == 256 and copy.store.count() == 256
        assert "skip_existing=True" in str(caught.value)
        copy.import_(source, skip_existing=True)
        assert copy.store.count() == 300


def test_the_cli_says_what_an_interrupted_add_kept(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from memengine.cli import app
    from memengine.store.database import Store

    add = Store.add

    def committed_then_interrupted(self: Store, *args: Any, **kwargs: Any) -> list[int]:
        add(self, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Store, "add", committed_then_interrupted)
    db = str(tmp_path / "m.db")
    result = CliRunner().invoke(app, ["add", "We adopted a cat", "--db", db])
    assert result.exit_code == 130
    said = " ".join(result.output.split())
    assert said.startswith("interrupted while 1 episode was being written: stored whole or not")


def test_ctrl_c_in_the_merge_after_a_bulk_load_says_all_are_in(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The full-text merge that ends a bulk load runs after the last batch: Ctrl-C there
    was a bare KeyboardInterrupt, while every episode was stored."""

    def interrupted(**kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(mem, "optimize", interrupted)
    with pytest.raises(AddInterrupted) as caught:
        mem.add_many(word_episodes(300, "default"), optimize=True)
    stop = caught.value
    assert (stop.stored, stop.writing, len(stop.ids)) == (300, 0, 300)
    assert str(stop).startswith("interrupted after all 300 episodes given were stored, in the")
    assert "run optimize()" in str(stop) and mem.store.count() == 300


def test_ctrl_c_once_every_episode_is_stored_says_none_is_left(mem: Memory) -> None:
    def progress(done: int, total: int) -> None:
        if done == 300:
            raise KeyboardInterrupt

    with pytest.raises(AddInterrupted) as caught:
        mem.add_many(word_episodes(300, "default"), batch_size=256, progress=progress)
    assert caught.value.stored == 300
    assert str(caught.value) == "interrupted after all 300 episodes given were stored"


def test_ctrl_c_after_the_store_gave_the_ids_back_counts_the_batch(mem: Memory) -> None:
    """An interrupt between the store's return (the batch's ids taken) and the count: the
    batch is in, and counted so, not told as maybe written."""
    import linecache
    import sys
    from types import FrameType

    seen = []

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        if frame.f_code.co_name != "_add_many":
            return None
        if event == "line":
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
            if line == "done += len(batch)":
                seen.append(line)
                if len(seen) == 2:
                    raise KeyboardInterrupt
        return tracer

    sys.settrace(tracer)
    try:
        with pytest.raises(AddInterrupted) as caught:
            mem.add_many(word_episodes(600, "default"), batch_size=256)
    finally:
        sys.settrace(None)
    stop = caught.value
    assert (stop.stored, stop.writing, len(stop.ids)) == (512, 0, 512)
    assert mem.store.count() == 512 and "being written" not in str(stop)
