"""Noticing a model swapped behind the same embedder id.

A file records its embedder's id and dimension, and opening it with another
is refused. A model replaced behind the *same* name (a local server that
loads another model under an alias, a re-pulled tag) gives vectors of the
same length from another space: every search would compare the new query
vectors with the file's old ones and find nothing of meaning, silently.

So the file also keeps the vector of one fixed text, :data:`PROBE_TEXT`,
made by its embedder. :class:`ProbedEmbedder` adds that text to the first
batch it embeds (and to one batch every :data:`RECHECK_S` seconds after),
one more text in a batch (a request of its own only for a batch already at
the endpoint's batch size), and compares: a cosine
below :data:`MIN_COSINE` raises :class:`.EmbedderChanged`. The same model
at another precision or quantization stays far above it (0.99 and more);
another model falls far below. A file that has no probe yet gets the one
the embedder makes, written with the next episodes it stores.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ..errors import EmbedderChanged, EmbeddingError
from .base import Embedder, Vectors

__all__ = ["MIN_COSINE", "PROBE_TEXT", "RECHECK_S", "ProbedEmbedder", "cosine", "same_model"]

PROBE_TEXT = "memengine probe: the cat sleeps by the window. 猫が窓辺で眠っている。"
"""The text whose vector a file keeps (meta ``embedder_probe``)."""

MIN_COSINE = 0.9
"""The least cosine between the file's probe vector and the embedder's for the same model."""

RECHECK_S = 600.0
"""How long a check holds before the probe rides along with a batch again."""


def cosine(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """The cosine of two probe vectors (0 when either is all zeros)."""
    u, v = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = float(np.linalg.norm(u) * np.linalg.norm(v))
    return float(np.dot(u, v)) / norms if norms else 0.0


def same_model(a: npt.ArrayLike, b: npt.ArrayLike) -> bool:
    """Whether two vectors of the probe text come from one model (cosine ≥ :data:`MIN_COSINE`)."""
    return cosine(a, b) >= MIN_COSINE


class ProbedEmbedder:
    """Wraps ``inner``, checking now and then that it still makes the file's vectors.

    ``recorded()`` returns the file's probe vector for this embedder (None when
    the file has none, or holds one of another embedder, as while a re-embed
    runs); ``where`` names the file in messages. :meth:`unrecorded` gives the
    probe to write when the file has none."""

    def __init__(
        self,
        inner: Embedder,
        recorded: Callable[[], Vectors | None],
        where: str,
        *,
        stamp: Callable[[], str | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self._recorded = recorded
        self._where = where
        self._stamp = stamp
        self._stamp_seen: str | None = None
        self._clock = clock
        self._checked_at: float | None = None
        self._made: Vectors | None = None  # the probe vector made at the last check
        self._unrecorded: Vectors | None = None
        self._lock = threading.Lock()

    @property
    def id(self) -> str:
        """The wrapped embedder's id."""
        return self.inner.id

    @property
    def dimension(self) -> int:
        """The wrapped embedder's dimension."""
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` with the wrapped embedder; when a check is due the probe text
        goes in the same batch and is compared with the file's (:class:`.EmbedderChanged`
        when it no longer matches)."""
        stamp = self._stamp() if self._stamp is not None and texts else None
        if not texts or not self._due(stamp):
            return self.inner.embed(texts)
        vectors = self.inner.embed([*texts, PROBE_TEXT])
        if len(vectors) != len(texts) + 1:  # its last row would not be the probe's
            raise EmbeddingError(
                f"the embedder returned {len(vectors)} vector(s) for {len(texts) + 1} "
                "texts (the probe's included)"
            )
        self._check(vectors[-1])
        with self._lock:
            self._stamp_seen = stamp
        return vectors[:-1]

    def unrecorded(self) -> Vectors | None:
        """The probe vector made for a file that has none yet, to be written with the next
        episodes (then :meth:`recorded_now`); None when there is nothing to write."""
        with self._lock:
            return self._unrecorded

    def recorded_now(self) -> None:
        """The probe from :meth:`unrecorded` is in the file (its own: no change to check)."""
        stamp = self._stamp() if self._stamp is not None else None
        with self._lock:
            self._unrecorded = None
            self._stamp_seen = stamp

    def _due(self, stamp: str | None) -> bool:
        """Whether a check is due: never made, made :data:`RECHECK_S` ago, or the file's
        probe (``stamp``) changed since (another process re-embedded the file)."""
        with self._lock:
            if self._checked_at is None or self._clock() - self._checked_at >= RECHECK_S:
                return True
            return self._stamp is not None and stamp != self._stamp_seen

    def file_changed(self, recorded: Vectors | None) -> None:
        """The file's probe vector changed since its store last saw it (another process
        re-embedded the file under the same id, or wrote its first probe): the next
        embedding checks again, and :class:`.EmbedderChanged` refuses the call under way
        when the vector this embedder made at its last check is another model's (its
        vectors in hand would be: once the endpoint serves the file's model, the check
        passes)."""
        with self._lock:
            made = self._made
            if made is None or recorded is None or not same_model(recorded, made):
                self._checked_at = None
            if made is None or recorded is None:
                return
        similar = cosine(recorded, made)
        if similar < MIN_COSINE:
            raise EmbedderChanged(
                f"{self._where} was re-embedded by another process with a model that answers "
                f"under {self.id} but is not the one this process embeds with (cosine "
                f"{similar:.2f} between their probe vectors): nothing was added or searched; "
                "the next embedding checks the model again"
            )

    def _check(self, made: Vectors) -> None:
        with self._lock:
            self._made = np.asarray(made, dtype=np.float32).copy()
        kept = self._recorded()
        if kept is None:
            with self._lock:
                self._unrecorded = np.asarray(made, dtype=np.float32).copy()
                self._checked_at = self._clock()
            return
        similar = cosine(kept, made)
        if similar < MIN_COSINE:
            raise EmbedderChanged(
                f"the model behind {self.id} no longer makes the vectors stored in "
                f"{self._where} (cosine {similar:.2f} to the file's probe, at least "
                f"{MIN_COSINE} expected): another model answers under the same name; serve "
                "the one the file was embedded with, or re-embed the file (memengine reembed)"
            )
        with self._lock:
            self._checked_at = self._clock()
