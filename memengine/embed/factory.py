"""Building the embedder that the ``[embedder]`` section names."""

from __future__ import annotations

from ..config import EmbedderConfig
from ..errors import ConfigError
from .base import Embedder

__all__ = ["make_embedder"]


def make_embedder(config: EmbedderConfig, *, recorded_id: str | None = None) -> Embedder:
    """Build the embedder named in the configuration.

    ``recorded_id`` is the embedder id the memory file records, if any: a remote
    embedder with no configured ``dimensions`` takes its dimension from it when it
    names the same model, and opening the file then asks the endpoint nothing.
    """
    if not isinstance(config, EmbedderConfig):
        raise ConfigError(
            "make_embedder takes an EmbedderConfig (a Config's .embedder, or "
            f"EmbedderConfig(name='usem3')), not {type(config).__name__}"
        )
    if config.name == "usem3":
        from .usem3 import USEM3Embedder

        return USEM3Embedder(batch_size=config.batch_size, threads=config.threads)
    if config.name == "openai":
        from .openai import OpenAIEmbedder, recorded_dimension

        if not config.base_url and not config.api_key:
            raise ConfigError("[embedder] name = 'openai' needs base_url or api_key")
        return OpenAIEmbedder(
            base_url=config.base_url,
            api_key=config.api_key,
            model=config.model,
            dimensions=config.dimensions,
            batch_size=config.batch_size,
            timeout_s=config.request_timeout_s,
            max_retries=config.max_retries,
            recorded_dimension=recorded_dimension(recorded_id, config.model),
        )
    raise ConfigError(f"unknown embedder {config.name!r}")  # pragma: no cover - Literal
