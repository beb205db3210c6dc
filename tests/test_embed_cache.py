"""The caching embedder: same vectors as the model, each new text embedded once, safe
when threads evict each other's entries."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from memengine.embed.cache import CachingEmbedder
from memengine.errors import InvalidInput

from .helpers import HashEmbedder


def test_same_vectors_and_each_new_text_once() -> None:
    inner = HashEmbedder()
    cached = CachingEmbedder(inner, size=8)
    texts = ["red cat", "blue dog", "red cat", "猫が好き"]
    first = cached.embed(texts)
    assert np.array_equal(first, inner.embed(texts))
    assert inner.calls[0] == 3  # the repeated text went to the model once
    inner.calls.clear()
    again = cached.embed(["blue dog", "red cat"])
    assert inner.calls == []  # all known
    assert np.array_equal(again, first[[1, 0]])
    assert cached.embed([]).shape == (0, inner.dimension)


def test_oldest_used_goes_first() -> None:
    inner = HashEmbedder()
    cached = CachingEmbedder(inner, size=2)
    cached.embed(["a one", "b two"])
    cached.embed(["a one"])  # now b is the oldest used
    cached.embed(["c three"])
    inner.calls.clear()
    cached.embed(["a one"])
    assert inner.calls == []
    cached.embed(["b two"])
    assert inner.calls == [1]


def test_threads_evicting_each_other_get_right_vectors() -> None:
    inner = HashEmbedder()
    cached = CachingEmbedder(inner, size=1)  # every call evicts someone else's entry
    words = [f"word{i} other{i % 7}" for i in range(40)]
    expected = {w: inner.embed([w])[0] for w in words}
    failures: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for round_ in range(60):
                batch = [words[(offset + round_ + k) % len(words)] for k in range(3)]
                got = cached.embed(batch)
                assert all(np.array_equal(got[i], expected[t]) for i, t in enumerate(batch))
        except BaseException as exc:  # collected and re-raised in the main thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(i * 5,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_bad_arguments() -> None:
    with pytest.raises(InvalidInput, match="single string"):
        CachingEmbedder(HashEmbedder()).embed("one text")
    with pytest.raises(InvalidInput, match="at least one"):
        CachingEmbedder(HashEmbedder(), size=0)
