"""The one exception tree of memengine.

Every error the library raises on purpose derives from :class:`MemEngineError`,
so a caller can catch that one class::

    MemEngineError
    ├── ConfigError              bad configuration value or file
    ├── StoreError               anything about the SQLite file
    │   ├── NotAMemEngineDatabase    the file is not ours (or not SQLite)
    │   ├── SchemaTooNew             written by a newer memengine
    │   ├── ReadOnlyDatabase         the file or its folder cannot be written
    │   ├── ExtensionError           sqlite-vec or FTS5 cannot be loaded
    │   ├── DatabaseLocked           another writer kept the file past the wait
    │   ├── DiskError                the disk failed a read or write
    │   │   └── DiskFull                 it had no room for a write
    │   ├── DamagedDatabase          a page of the file is damaged
    │   └── MemoryClosed             the memory was closed (under a call, or before it)
    ├── EmbedderMismatch         the file was embedded by another embedder
    │   └── EmbedderChanged          another model answers under the file's id (and an EmbeddingError)
    ├── EmbeddingError           an embedder failed (dimension, HTTP, …)
    ├── InvalidInput             empty text, unknown kind, bad id, …
    │   ├── NotFound                 no such episode / agent / turn
    │   └── FeedbackExists           the turn has had its feedback
    ├── LLMError                 an LLM call failed
    │   ├── LLMTimeout               it missed its deadline
    │   └── LLMResponseError         it answered, but not what was asked
    └── EvaluationError          an evaluation data file cannot be read
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DamagedDatabase",
    "DatabaseLocked",
    "DiskError",
    "DiskFull",
    "EmbedderChanged",
    "EmbedderMismatch",
    "EmbeddingError",
    "EvaluationError",
    "ExtensionError",
    "FeedbackExists",
    "InvalidInput",
    "LLMError",
    "LLMResponseError",
    "LLMTimeout",
    "MemEngineError",
    "MemoryClosed",
    "NotAMemEngineDatabase",
    "NotFound",
    "ReadOnlyDatabase",
    "SchemaTooNew",
    "StoreError",
]


class MemEngineError(Exception):
    """Root of every error memengine raises on purpose."""

    stored: int | None = None
    """For an error raised while episodes given to ``add``, ``add_exchange``, ``add_many``
    or an import were being checked and stored: how many of them were stored, the first
    ones in the order given (0: none; the message says so too when some were). None for
    an error raised before (bad arguments, a closed or read-only memory) and any other."""

    counted_by: object = None
    """The call whose episodes :attr:`stored` counts (memengine's own bookkeeping)."""


class ConfigError(MemEngineError):
    """A configuration value or file is invalid."""


class StoreError(MemEngineError):
    """The SQLite store cannot do what was asked."""


class NotAMemEngineDatabase(StoreError):
    """The file exists but is not a memengine database (or not SQLite at all)."""


class SchemaTooNew(StoreError):
    """The file was written by a newer memengine whose schema this one does not know."""


class ReadOnlyDatabase(StoreError):
    """The database file (or its folder, needed for WAL files) cannot be written."""


class ExtensionError(StoreError):
    """sqlite-vec or FTS5 is not available with the chosen SQLite driver."""


LONGER_WAIT = (
    "a longer write_wait_s waits longer: memengine.toml's or MEMENGINE_WRITE_WAIT_S, which "
    "load_config() reads, or Config(write_wait_s=…)"
)
"""Which setting a locked write's error names (a program that opens ``Memory.open(path)``
without ``config=load_config()`` reads neither the file nor the environment)."""


class DatabaseLocked(StoreError):
    """Another writer (thread or process) held the file longer than the write could wait."""

    @classmethod
    def waited(cls, who: str, seconds: float) -> DatabaseLocked:
        """The error of a write that waited ``seconds`` while ``who`` ("another process")
        kept writing, saying which setting waits longer."""
        return cls(
            f"database is locked: {who} kept writing for {round(max(seconds, 0.0), 2):g} s "
            f"({LONGER_WAIT})"
        )


class DiskError(StoreError):
    """The disk failed a read or write ("disk I/O error": a failing disk, a limit on the
    size of files); ``memengine doctor`` tells whether the file itself is damaged."""


class DiskFull(DiskError):
    """The disk (or a quota) had no room for a write: nothing of that write is in the file
    (a "disk I/O error" where the disk has next to no room left is one too). Free some
    space; the memory goes on. A file past a limit on its size (``ulimit -f``) is a
    :class:`DiskError` saying which limit: freeing space does not lift it."""


class MemoryClosed(StoreError):
    """The memory has been closed: a call made after :meth:`memengine.Memory.close`, or
    one that was running in another thread when it was called."""


class DamagedDatabase(StoreError):
    """A page of the file is damaged (SQLite's page check fails): restore a backup, or save
    what still reads with :meth:`memengine.Memory.salvage`."""


class EmbedderMismatch(MemEngineError):
    """The database was embedded with another embedder than the one in use."""


class EmbeddingError(MemEngineError):
    """An embedder failed or returned vectors of the wrong shape."""

    lasting: bool = False
    """True when asking again gets the same answer (an endpoint that makes vectors of
    another length than the file's): the message says what to change instead."""


class EmbedderChanged(EmbedderMismatch, EmbeddingError):
    """The embedder has the file's id and dimension, but its model makes other vectors than
    the ones stored (the file's probe vector no longer matches): a model swapped behind the
    same name. Adds refuse; a search answers from the full text alone, as when the embedder
    fails (hence also an :class:`EmbeddingError`)."""


class InvalidInput(MemEngineError):
    """The caller passed a value memengine cannot accept."""


class NotFound(InvalidInput):
    """No episode, agent or turn with that identifier exists."""


class FeedbackExists(InvalidInput):
    """The turn already has its feedback: a turn is reinforced once (a retried call can
    catch this and carry on; nothing changed)."""


class LLMError(MemEngineError):
    """An LLM call failed."""


class LLMTimeout(LLMError):
    """An LLM call did not finish within its deadline."""


class LLMResponseError(LLMError):
    """The LLM answered, but the answer could not be used (broken JSON, wrong types)."""


class EvaluationError(MemEngineError):
    """An evaluation data file is missing or malformed."""
