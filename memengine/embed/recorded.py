"""The embedder of a memory opened for work that embeds nothing (``embeds=False``)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..errors import EmbedderMismatch
from .base import Vectors

__all__ = ["RecordedOnly"]


class RecordedOnly:
    """The id and dimension recorded in a file, standing in for its embedder: inspecting,
    exporting or deleting needs no model and no endpoint. Embedding raises
    :class:`.EmbedderMismatch`."""

    def __init__(self, embedder_id: str, dimension: int, path: Path) -> None:
        self._id = embedder_id
        self._dimension = dimension
        self._path = path

    @property
    def id(self) -> str:
        """The id of the embedder recorded in the file."""
        return self._id

    @property
    def dimension(self) -> int:
        """The dimension recorded in the file."""
        return self._dimension

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Refuse: the memory was opened for work that embeds nothing."""
        raise EmbedderMismatch(
            f"{self._path} was opened to embed nothing (embeds=False): open it again with its "
            f"embedder, {self._id}, to add or search"
        )
