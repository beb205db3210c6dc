"""memengine: a local-first memory engine for LLM agents, in one SQLite file.

The public API is re-exported here; ``__all__`` is checked by a test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _startup  # noqa: F401  (first, before the slow imports: a Ctrl-C is quiet)
from .clock import Clock, FixedClock, SystemClock
from .config import (
    Config,
    EmbedderConfig,
    LifecycleConfig,
    LLMConfig,
    RetrievalConfig,
    load_config,
)
from .embed.base import Embedder
from .errors import (
    ConfigError,
    DamagedDatabase,
    DatabaseLocked,
    DiskError,
    DiskFull,
    EmbedderChanged,
    EmbedderMismatch,
    EmbeddingError,
    EvaluationError,
    ExtensionError,
    FeedbackExists,
    InvalidInput,
    LLMError,
    LLMResponseError,
    LLMTimeout,
    MemEngineError,
    MemoryClosed,
    NotAMemEngineDatabase,
    NotFound,
    ReadOnlyDatabase,
    SchemaTooNew,
    StoreError,
)
from .importers import ImportedFile
from .lifecycle import (
    AgentRow,
    FeedbackResult,
    Judge,
    MemoryLife,
    Ranking,
    ScorerInfo,
    SleepReport,
)
from .memory import AddInterrupted, Memory, Progress, make_embedder
from .models import (
    AgentStats,
    DegradedPart,
    Episode,
    EpisodeKind,
    Message,
    NewEpisode,
    Pack,
    RecentMessage,
    Relevance,
    Retrieval,
    Retrieved,
    Role,
    RoleName,
    Stats,
)
from .store.database import ConsistencyReport
from .store.maintenance import BackupReport, ForgetReport, OptimizeReport
from .store.salvage import SalvageReport
from .transfer import salvage_file

if TYPE_CHECKING:
    from .embed.openai import OpenAIEmbedder
    from .llm.client import ChatClient

__version__ = "0.1.0"


_LAZY = ("ChatClient", "OpenAIEmbedder")
"""The public names imported when asked for: they load the ``openai`` client, which an
offline program never needs. They are not in ``__all__``, which ``from memengine import *``
imports whole (it would load ``openai`` too); ``from memengine import ChatClient`` names one."""


def __getattr__(name: str) -> Any:
    """``memengine.ChatClient`` and ``memengine.OpenAIEmbedder`` are imported when asked
    for (:data:`_LAZY`)."""
    if name == "ChatClient":
        from .llm.client import ChatClient

        return ChatClient
    if name == "OpenAIEmbedder":
        from .embed.openai import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(f"module 'memengine' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What ``dir(memengine)`` lists: the module's names and the public API, the lazily
    imported ``ChatClient`` and ``OpenAIEmbedder`` included (tab completion and ``help()``
    show them)."""
    return sorted({*globals(), *__all__, *_LAZY})


__all__ = [
    "AddInterrupted",
    "AgentRow",
    "AgentStats",
    "BackupReport",
    "Clock",
    "Config",
    "ConfigError",
    "ConsistencyReport",
    "DamagedDatabase",
    "DatabaseLocked",
    "DegradedPart",
    "DiskError",
    "DiskFull",
    "Embedder",
    "EmbedderChanged",
    "EmbedderConfig",
    "EmbedderMismatch",
    "EmbeddingError",
    "Episode",
    "EpisodeKind",
    "EvaluationError",
    "ExtensionError",
    "FeedbackExists",
    "FeedbackResult",
    "FixedClock",
    "ForgetReport",
    "ImportedFile",
    "InvalidInput",
    "Judge",
    "LLMConfig",
    "LLMError",
    "LLMResponseError",
    "LLMTimeout",
    "LifecycleConfig",
    "MemEngineError",
    "Memory",
    "MemoryClosed",
    "MemoryLife",
    "Message",
    "NewEpisode",
    "NotAMemEngineDatabase",
    "NotFound",
    "OptimizeReport",
    "Pack",
    "Progress",
    "Ranking",
    "ReadOnlyDatabase",
    "RecentMessage",
    "Relevance",
    "Retrieval",
    "RetrievalConfig",
    "Retrieved",
    "Role",
    "RoleName",
    "SalvageReport",
    "SchemaTooNew",
    "ScorerInfo",
    "SleepReport",
    "Stats",
    "StoreError",
    "SystemClock",
    "__version__",
    "load_config",
    "make_embedder",
    "salvage_file",
]

if TYPE_CHECKING:  # (public to a type checker, which loads nothing: _LAZY)
    __all__ += ["ChatClient", "OpenAIEmbedder"]
