"""Test helpers: a deterministic bag-of-words embedder for store mechanics tests.

It is a real embedder (text in, unit vectors out), only a simple one: tests
about storage, filters and consistency use it to run fast; tests about
retrieval quality use the real default embedder.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memengine.embed.base import Vectors, normalize
from memengine.text import query_terms


class HashEmbedder:
    """Hashes the query terms of a text into a fixed number of buckets."""

    def __init__(self, dimension: int = 64, name: str = "hash") -> None:
        self.dimension = dimension
        self.id = f"{name}:{dimension}"
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in query_terms(text) or [text]:
                h = int.from_bytes(hashlib.blake2b(term.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dimension] += 1.0
            out[row, 0] += 0.01
        return normalize(out)
