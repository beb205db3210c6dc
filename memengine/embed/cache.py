"""An embedder wrapper that remembers the vectors of recently embedded texts."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ..errors import InvalidInput
from .base import Embedder, Vectors

__all__ = ["CachingEmbedder"]


class CachingEmbedder:
    """Wraps ``inner`` and keeps the vectors of the last ``size`` distinct texts; thread-safe.

    Only texts not in the cache are sent to ``inner`` (each once per call). An
    entry evicted by another thread during a call does not matter: the call
    keeps its own references to every vector it returns.
    """

    def __init__(self, inner: Embedder, size: int = 512) -> None:
        """Cache up to ``size`` vectors of ``inner`` (the oldest used go first)."""
        if size < 1:
            raise InvalidInput(f"a cache holds at least one vector, not {size}")
        self.inner = inner
        self.id = inner.id
        self.dimension = inner.dimension
        self._size = size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors of those of ``texts`` that have one, asking ``inner`` nothing:
        a search whose embedding failed still has the vectors of the texts it had before."""
        with self._lock:
            return {t: self._cache[t] for t in texts if t in self._cache}

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in order, computing only the ones not in the cache."""
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of strings, not a single string")
        with self._lock:
            known = {t: self._cache[t] for t in texts if t in self._cache}
            for t in known:
                self._cache.move_to_end(t)
        missing = list(dict.fromkeys(t for t in texts if t not in known))
        if missing:
            fresh = dict(zip(missing, self.inner.embed(missing), strict=True))
            with self._lock:
                self._cache.update(fresh)
                while len(self._cache) > self._size:
                    self._cache.popitem(last=False)
            known.update(fresh)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([known[t] for t in texts]).astype(np.float32, copy=False)
