"""Embedders: the :class:`Embedder` protocol, the offline default (:class:`USEM3Embedder`)
and one over any OpenAI-compatible ``/embeddings`` endpoint (:class:`OpenAIEmbedder`).

The two are imported when named (``from memengine.embed import OpenAIEmbedder``): this
package is loaded by ``import memengine``, which an offline program makes without the
``openai`` client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Embedder

if TYPE_CHECKING:
    from .openai import OpenAIEmbedder
    from .usem3 import USEM3Embedder

__all__ = ["Embedder", "USEM3Embedder"]  # (not OpenAIEmbedder: a * import would load openai)
if TYPE_CHECKING:  # (public to a type checker, which loads nothing)
    __all__ += ["OpenAIEmbedder"]


def __getattr__(name: str) -> Any:
    """``OpenAIEmbedder`` and ``USEM3Embedder``, imported when asked for (the first loads
    the ``openai`` client)."""
    if name == "OpenAIEmbedder":
        from .openai import OpenAIEmbedder

        return OpenAIEmbedder
    if name == "USEM3Embedder":
        from .usem3 import USEM3Embedder

        return USEM3Embedder
    raise AttributeError(f"module 'memengine.embed' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What ``dir(memengine.embed)`` lists: the module's names and the embedders, the lazily
    imported ones included."""
    return sorted({*globals(), *__all__, "OpenAIEmbedder"})
