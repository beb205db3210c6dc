"""Typed data that crosses the public API: episodes, retrieval results, packs."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    computed_field,
    field_validator,
    model_serializer,
    model_validator,
)
from typing_extensions import TypedDict  # (pydantic reads typing's only from Python 3.12)

from .clock import time_text
from .text import cut_at

__all__ = [
    "DEGRADED_PARTS",
    "EPISODE_TIMES",
    "AgentStats",
    "DegradedPart",
    "Episode",
    "EpisodeKind",
    "Message",
    "NewEpisode",
    "Pack",
    "RecentMessage",
    "Relevance",
    "Retrieval",
    "Retrieved",
    "Role",
    "RoleName",
    "Stats",
    "Status",
]


Role = Literal["user", "partner", "system"]
"""Who said a recent message (``assistant`` and ``companion`` are read as the partner)."""

ROLE_NAMES: dict[str, Role] = {
    "user": "user",
    "partner": "partner",
    "system": "system",
    "assistant": "partner",
    "companion": "partner",
}
"""A message's role by every name it is given, with the names other chat APIs give the
partner."""

RoleName = Literal["user", "partner", "system", "assistant", "companion"]
"""Every name a :class:`Message` takes for its role (the keys of :data:`ROLE_NAMES`)."""

Relevance = Literal["high", "medium", "low"]
"""How much a result matters to the turn: ``high`` and ``medium`` go into the pack."""


DegradedPart = Literal[
    "expansion",
    "rerank",
    "search",
    "time_window",
    "vector",
    "bm25",
    "query",
    "life_ranking",
    "coverage",
    "turn_record",
    "other",
]
"""A part of a turn that a ``degraded`` note is about (see :attr:`Retrieval.degraded_parts`)."""

DEGRADED_PARTS: tuple[tuple[str, DegradedPart], ...] = (
    ("expansion:", "expansion"),  # the LLM's query expansion: skipped, timed out, failed
    ("rerank:", "rerank"),  # the LLM's rerank (or unknown ids it returned, dropped)
    ("search:", "search"),  # the expanded search missed the deadline
    ("time window", "time_window"),  # the window found nothing; searched without it
    ("vector search skipped", "vector"),  # the embedder failed: full text alone
    ("bm25 skipped", "bm25"),  # a query with no searchable terms
    ("empty query", "query"),
    ("life ranking skipped", "life_ranking"),  # the embedder failed: the fast order kept
    ("life ranking used the linear formula", "life_ranking"),  # a scorer row unreadable
    ("coverage skipped", "coverage"),  # the embedder failed: decided without the coverage rule
    ("turn not recorded", "turn_record"),  # the turn row could not be written
)
"""How each note of :attr:`Retrieval.degraded` begins, and the part it is about; these
beginnings stay the same from release to release, the rest of a note may change."""


def degraded_part(note: str) -> DegradedPart:
    """The part of the turn a ``degraded`` note is about (``"other"`` if none is known)."""
    return next((part for start, part in DEGRADED_PARTS if note.startswith(start)), "other")


class EpisodeKind(str, Enum):
    """The closed set of episode kinds.

    - ``exchange``: one user utterance and the partner's reply.
    - ``message``: a single utterance by one speaker (multi-party logs); name the
      speaker in ``metadata["speaker"]`` (retrieval favours the speaker a query names).
    - ``observation``: something the agent saw or was told.
    - ``action``: something the agent did.
    - ``reflection``: the agent's own conclusion about past episodes.
    - ``fact``: a stable fact about the user or the world.
    - ``summary``: a consolidated summary of several episodes.
    - ``principle``: a rule the agent always follows (always packed).
    - ``education``: material the agent only read (starts weaker).
    """

    exchange = "exchange"
    message = "message"
    observation = "observation"
    action = "action"
    reflection = "reflection"
    fact = "fact"
    summary = "summary"
    principle = "principle"
    education = "education"


Status = Literal["active", "archived"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    def __hash__(self) -> int:
        """Hashable, as frozen models are, also with a dict field (an episode's
        ``metadata``, a result's ``components``: pydantic's own hash raised TypeError on
        them), so that results can be put in a set; equal models (every field equal: an
        episode read again after a retrieval counted it differs by its counts) hash equal."""
        return hash((type(self), _hashable(tuple(self.__dict__.values()))))

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        """The fields, each text cut to :data:`REPR_CHARS` characters: a logged retrieval
        does not write its users' memories out in full."""
        for name, value in super().__repr_args__():
            yield name, _cut_for_repr(value)


def _hashable(value: Any) -> Any:
    """``value`` with its dicts, lists and sets made hashable (a dict as the frozenset of its
    items: equal dicts, in any order, hash equal)."""
    if isinstance(value, dict):
        return frozenset((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_hashable(v) for v in value)
    return value


REPR_CHARS = 60
"""How much of a text ``repr()`` of a model shows."""


def _cut_for_repr(value: Any) -> Any:
    """``value`` with each text in it (in tuples, lists and dicts too) cut to about
    :data:`REPR_CHARS` characters, where a reader sees a character end (:func:`.cut_at`)."""
    if isinstance(value, str) and len(value) > REPR_CHARS:
        return f"{value[: cut_at(value, REPR_CHARS)]}… ({len(value):,} characters)"
    if isinstance(value, list):
        return [_cut_for_repr(v) for v in value]
    if isinstance(value, tuple):  # (a named tuple is shown as a plain one)
        return tuple(_cut_for_repr(v) for v in value)
    if isinstance(value, dict):
        return {k: _cut_for_repr(v) for k, v in value.items()}
    return value


class Message(_Model):
    """One message of the recent conversation, given to ``retrieve``. The role "assistant"
    (or "companion"), as other chat APIs name it, is the partner."""

    role: Role = "user"
    text: str

    if TYPE_CHECKING:  # the names it is given, not only the one it keeps

        def __init__(self, *, role: RoleName = "user", text: str) -> None: ...

    @field_validator("role", mode="before")
    @classmethod
    def _partner_by_other_names(cls, role: object) -> object:
        if not isinstance(role, str) or role not in ROLE_NAMES:
            raise ValueError(
                f"role must be user, partner (or assistant, companion) or system, not {role!r}"
            )
        return ROLE_NAMES[role]


RecentMessage: TypeAlias = Message | Mapping[str, object] | str
"""One message of ``retrieve``'s ``recent``: a :class:`Message`, a dict such as OpenAI's chat
messages (``role`` and ``content``, or ``text``), or a plain string (the user's)."""


class AgentStats(TypedDict):
    """One agent's own totals, which :meth:`memengine.Memory.stats` adds with ``agent``
    (the other keys of :class:`Stats` count the whole file)."""

    name: str
    """The agent."""
    episodes: int
    """The agent's episodes, active and archived (each has its vector)."""
    kinds: dict[str, int]
    """The agent's episodes by kind."""
    first: str | None
    """The earliest ``occurred_at`` of the agent's episodes, None for an agent without any."""
    last: str | None
    """The latest, likewise."""
    turns: int
    """The agent's recorded retrievals (turns), with feedback or without."""


class Stats(TypedDict):
    """What :meth:`memengine.Memory.stats` reports about a file."""

    episodes: int
    """Episodes in the file (with ``agent``, still the file's total: the agent's own is
    ``agent["episodes"]``)."""
    agents: dict[str, dict[str, int]]
    """Per agent (every agent of the file, one created without episodes too; with
    ``agent``, that agent only), its episodes by status (``active``, ``archived``; both, 0
    too)."""
    agent_count: int
    """The file's agents, every one, also when ``agents`` lists only the one asked for."""
    agent: AgentStats | None
    """With ``agent``, that agent's own totals; None for the whole file."""
    kinds: dict[str, int]
    """The file's episodes by kind."""
    first: str | None
    """The file's earliest ``occurred_at`` (ISO 8601 as the models' JSON writes it: UTC as
    ``Z``), None in an empty file."""
    last: str | None
    """The file's latest ``occurred_at``, likewise."""
    bytes: int
    """The file's size with its ``-wal`` file."""
    free_bytes: int
    """Free pages, which ``optimize`` gives back."""
    embedder: str
    """The id of the embedder the vectors were made with."""
    dimension: int
    """The vectors' length."""
    fulltext_segments: int
    """FTS5 index segments (``optimize`` merges them into one)."""
    vector_chunk_size: int
    """Rows per ``vec0`` chunk."""


class NewEpisode(_Model):
    """An episode about to be written (validated, not yet stored)."""

    agent: str = "default"
    """The agent it is stored under. Left out (not in ``model_fields_set``), the memory's
    configured agent (:attr:`.Config.agent`, "default" when none is configured): so a
    per-user process's ``add_many`` stores for its user, as ``add`` does. A dump leaves
    it out then, so that the episode read back from it is stored so too."""
    kind: EpisodeKind = EpisodeKind.exchange
    user_text: str | None = None
    reply_text: str | None = None
    content: str | None = None
    occurred_at: datetime
    sensitivity: int = Field(default=0, ge=0, le=3)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    status: Status = "active"
    id: int | None = None
    created_at: datetime | None = None
    strength: float | None = None
    decayed_at: datetime | None = None
    """The moment ``strength`` holds for (an export writes it: the creation, or the agent's
    last sleep or the import or recall after it); a sleep decays the episode from then on. Without
    it, a strength given with a ``created_at`` before now holds from the moment stored."""

    if TYPE_CHECKING:  # what it reads (a kind's name, a list of tags, ISO 8601 text)

        def __init__(
            self,
            *,
            agent: str = "default",
            kind: EpisodeKind | str = EpisodeKind.exchange,
            user_text: str | None = None,
            reply_text: str | None = None,
            content: str | None = None,
            occurred_at: datetime | str,
            sensitivity: int = 0,
            importance: float = 0.5,
            tags: Sequence[str] = (),
            metadata: dict[str, Any] = {},  # noqa: B006  (never run: a signature for checkers)
            status: Status = "active",
            id: int | None = None,
            created_at: datetime | str | None = None,
            strength: float | None = None,
            decayed_at: datetime | str | None = None,
        ) -> None: ...

    @field_validator("agent", "user_text", "reply_text", "content", mode="before")
    @classmethod
    def _text_not_bytes(cls, value: object) -> object:
        if isinstance(value, bytes | bytearray):  # pydantic would decode them
            raise ValueError("text is a str, not bytes")
        return value

    @field_validator("occurred_at", "created_at", "decayed_at", mode="before")
    @classmethod
    def _time_not_number(cls, value: object) -> object:
        """A datetime, or ISO 8601 text read as an export's line is (``20260401`` is a day):
        pydantic would read a number, or text of digits, as a Unix timestamp."""
        if value is None or isinstance(value, datetime):
            return value
        if isinstance(value, str):
            return time_text(value)  # (as an export's line is read)
        raise ValueError(f"a time as a datetime or ISO 8601 text, not {type(value).__name__}")

    @field_validator("sensitivity", "importance", "id", "strength", mode="before")
    @classmethod
    def _number_not_bool(cls, value: object) -> object:
        kind = type(value)
        if isinstance(value, bool) or (kind.__module__ == "numpy" and "bool" in kind.__name__):
            raise ValueError("a number, not a bool")  # True would be 1
        if isinstance(value, str | bytes | bytearray):
            raise ValueError(f"a number, not text ({value!r})")  # "7" would be 7
        if not isinstance(value, int | float) and hasattr(value, "__index__"):
            return int(value.__index__())  # a numpy integer
        return value

    @field_validator("importance", mode="before")
    @classmethod
    def _importance_not_nan(cls, value: object) -> object:
        """NaN is refused as NaN (the bound's words said "less than or equal to 1"); a NaN
        strength has its own words, where strength is checked."""
        if isinstance(value, float) and math.isnan(value):
            raise ValueError("a number, not NaN")
        return value

    # (no return type: pydantic then gives a dump's JSON schema the model's own fields,
    # which a return type of Any left empty: a web framework's response model)
    @model_serializer(mode="wrap")
    def _agent_left_out_stays_out(self, dump: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        """A dump leaves out an agent left out (see :attr:`agent`): read back (a queue, a
        JSON file between processes), the episode is stored for the configured agent, as
        it was going to be, not under "default"."""
        data = dump(self)
        if isinstance(data, dict) and "agent" not in self.model_fields_set:
            data.pop("agent", None)
        return data


EPISODE_TIMES = ("occurred_at", "created_at", "decayed_at")
"""The times a :class:`NewEpisode` carries (a naive one is read in the configured zone)."""


class Episode(_Model):
    """A stored episode."""

    id: int
    agent: str
    kind: EpisodeKind
    user_text: str | None = None
    reply_text: str | None = None
    content: str | None = None
    occurred_at: datetime
    created_at: datetime
    sensitivity: int = 0
    importance: float = 0.5
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = Field(default_factory=dict)
    status: Status = "active"
    strength: float = 1.0
    access_count: int = 0
    candidate_count: int = 0
    last_access: datetime | None = None
    impact_score: float = 0.0
    consolidation_level: int = 0

    @property
    def text(self) -> str:
        """The episode as one text: ``user`` and ``reply`` lines, or the content."""
        return episode_text(self.kind, self.user_text, self.reply_text, self.content)


def episode_text(
    kind: EpisodeKind, user_text: str | None, reply_text: str | None, content: str | None
) -> str:
    """Join an episode's parts into the single text that is embedded and indexed."""
    if kind is EpisodeKind.exchange:
        parts = [p for p in (user_text, reply_text) if p]
        return "\n".join(parts)
    return content or ""


class Retrieved(_Model):
    """One retrieved episode with every score that placed it."""

    episode: Episode
    score: float
    rank: int
    relevance: Relevance = "medium"
    reason: str | None = None
    components: dict[str, float] = Field(default_factory=dict)


COPY_WINDOW_S = 600
"""Episodes of one text this close in time are copies of one memory (ten minutes)."""


def may_answer(components: Mapping[str, float]) -> bool:
    """Whether a result with these score ``components`` may answer at all (be relevant, count
    as evidence, be offered): not small talk's own old copy (``repeat``), not of another
    time than the only thing its message asks about (``asked_time`` 0)."""
    return components.get("repeat", 0.0) < 1.0 and components.get("asked_time", 1.0) > 0.0


def offered_results(results: Sequence[Retrieved], should_inject: bool) -> list[Retrieved]:
    """The results a turn offers its reply: the relevant ones (not ``low``) when it injects,
    best first, without copies (an episode whose text repeats one before it within
    :data:`COPY_WINDOW_S`: added twice, imported again; the same words at another time are
    another event); a MemoryPack shows these as its budget allows, and feedback judges an
    answer against them."""
    if not should_inject:
        return []
    offered: list[Retrieved] = []
    seen: dict[str, list[float]] = {}
    for r in results:
        if r.relevance == "low":
            continue
        text, at = " ".join(r.episode.text.split()), r.episode.occurred_at.timestamp()
        if any(abs(at - t) <= COPY_WINDOW_S for t in seen.get(text, ())):
            continue
        seen.setdefault(text, []).append(at)
        offered.append(r)
    return offered


class Retrieval(_Model):
    """The answer to ``retrieve``: results, the queries used, timings and what was skipped."""

    results: tuple[Retrieved, ...]
    queries: tuple[str, ...]
    timings_ms: dict[str, float] = Field(default_factory=dict)
    degraded: tuple[str, ...] = ()
    should_inject: bool = False
    language: Literal["ja", "en"] = "en"
    turn_id: int | None = None
    injection_strategy: Literal["quote_key_parts", "summarize", "full"] = "quote_key_parts"
    candidates: int = 0
    time_window: tuple[datetime, datetime] | None = None
    """The time window the message names, widened by the recording lag: the LLM turn searches
    only inside it; the fast path favours the results inside it (their ``window``
    component). None when no window was read."""
    agent: str | None = None
    """The agent searched (whose principles a pack of this retrieval carries)."""
    now: datetime | None = None
    """The moment of the message, in the user's time zone (``retrieve(now=…)``): the pack
    writes dates as days of that zone."""
    in_recent: tuple[int, ...] = ()
    """The stored turns left out because the ``recent`` messages repeat them word for word
    (``[retrieval] skip_recent``): the reply model sees them already. One above
    ``max_sensitivity`` is left out all the same but not named: a retrieval names none."""
    repeats: tuple[int, ...] = ()
    """Older exchanges found and left out (of the search lists, as far as each was read, a
    by-date fetch or a lifted next turn) because their user turn repeats a user message the
    context query reads and they are close in meaning to that recent exchange
    (:class:`.retrieve.recent.RepeatCheck`; ``[retrieval] skip_repeats``): a daily
    "Morning!" is no memory of the question."""
    max_sensitivity: int = 3
    """The most sensitive episodes searched (0–3); a pack carries no principle above it."""
    signals: dict[str, float] = Field(default_factory=dict)
    """What the fast path's should-inject decision read: ``asks`` and ``evidence`` (1 or 0),
    ``top_cosine``, the query's lexical ``reach`` (with ``adaptive_weights``) and, with the
    opt-in rule on, ``coverage`` (for a question the evidence lets through). Empty when an
    LLM decided."""

    @property
    def episodes(self) -> list[Episode]:
        """The episodes of the results, best first."""
        return [r.episode for r in self.results]

    @property
    def offered(self) -> list[Retrieved]:
        """The results offered to the reply (:func:`offered_results`)."""
        return offered_results(self.results, self.should_inject)

    @model_validator(mode="before")
    @classmethod
    def _computed_fields_dropped(cls, data: Any) -> Any:
        """A retrieval written as JSON carries ``degraded_parts``, which is read from its
        notes, not taken: it reads back as it was written."""
        if isinstance(data, dict) and "degraded_parts" in data:
            data = {k: v for k, v in data.items() if k != "degraded_parts"}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def degraded_parts(self) -> frozenset[DegradedPart]:
        """Which parts of the turn the ``degraded`` notes are about, for code that reacts to
        them (the notes are prose for people): see :data:`DEGRADED_PARTS`."""
        return frozenset(degraded_part(note) for note in self.degraded)


class Pack(_Model):
    """A MemoryPack: the prompt section built from a retrieval."""

    text: str
    episode_ids: tuple[int, ...]
    tokens: int
    injected: bool
    language: Literal["ja", "en"] = "en"
    truncated: bool = False
    # why none of the retrieval's memories went in ("" when one did): to log, or to tell a
    # user why the reply knows nothing (:func:`.pack._no_memory_note`)
    note: str = ""
