"""The default embedder's BLAS threads: one for a small batch, ``threads`` for a bulk one."""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_info

from memengine.config import EmbedderConfig
from memengine.embed.factory import make_embedder
from memengine.embed.usem3 import SMALL_BATCH, USEM3Embedder


def _blas_threads() -> int:
    return max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")


AT_START = _blas_threads()
"""numpy's BLAS threads when the tests are collected, before any test's thread can hold a
one-thread limit of its own (a leftover embedding of an earlier test on a busy host made a
count read inside the test 1)."""


def test_a_small_batch_runs_on_one_blas_thread_and_a_bulk_one_on_threads() -> None:
    emb = USEM3Embedder(threads=2)
    emb.embed(["warm"])  # loads the model
    model = emb._model
    seen: list[tuple[int, int]] = []
    encode = model.encode

    def watched(texts: list[str]) -> object:
        seen.append((len(texts), _blas_threads()))
        return encode(texts)

    model.encode = watched
    before = _blas_threads()
    small = emb.embed(["what did I buy at the market?"])
    bulk = emb.embed([f"note number {i} about the garden" for i in range(SMALL_BATCH + 1)])
    assert seen == [(1, 1), (SMALL_BATCH + 1, min(2, AT_START))]  # (one core: one thread)
    assert _blas_threads() == before  # the process's own numpy is left as it was
    assert small.shape == (1, 512) and bulk.shape == (SMALL_BATCH + 1, 512)
    assert np.allclose(np.linalg.norm(bulk, axis=1), 1.0, atol=1e-5)


def test_the_configured_threads_reach_the_embedder() -> None:
    emb = make_embedder(EmbedderConfig(threads=1))
    assert isinstance(emb, USEM3Embedder) and emb._threads == 1
