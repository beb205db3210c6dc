"""What the public API accepts: each argument checked (and normalised) before it is used.

:class:`~memengine.Memory` calls these on everything a caller hands it, so
a wrong type, an out-of-range number or text SQLite cannot store is an
:class:`.InvalidInput` (or :class:`.NotFound` for an id no episode can have)
naming the argument, before anything is written.
"""

from __future__ import annotations

import json
import math
import numbers
import operator
import os
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from .clock import ensure_aware
from .config import MAX_DAY_RANGE
from .errors import InvalidInput, NotFound
from .lazy_re import lazy_compile
from .models import ROLE_NAMES, Episode, EpisodeKind, Message, NewEpisode, Role
from .quote import SPEAKERS
from .store.ids import MAX_KEPT_ID
from .text import (
    drawn_as_nothing,
    has_surrogate,
    is_blank,
    name_fault,
    quoted_name,
    scrub,
    shell_word,
)

__all__ = [
    "EARLIEST",
    "LATEST",
    "MAX_BATCH",
    "MAX_DAY_RANGE",
    "MAX_EPISODE_CHARS",
    "MAX_ID",
    "MAX_KEPT_ID",
    "MAX_METADATA_CHARS",
    "MAX_METADATA_DEPTH",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "ROLES",
    "agent_name",
    "agent_of_a_new_file",
    "at_least",
    "batch_size",
    "checked_episode",
    "clean_text",
    "day_range",
    "episode_id",
    "episode_kind",
    "episode_source",
    "extra_queries",
    "in_span",
    "kinds",
    "labelled_message",
    "listed",
    "message",
    "moment",
    "new_episode",
    "progress_callback",
    "real",
    "recent_messages",
    "result_limit",
    "sensitivity_level",
    "spelled_as_declared",
    "switches",
    "task_count",
    "used_ids",
    "wait_seconds",
    "whole",
]

MAX_EPISODE_CHARS = 200_000
"""The longest text of one field of an episode (a 50 KB paste is well inside it)."""

MAX_ID = 2**63 - 1
"""The largest id SQLite can store; a larger one names nothing."""

MAX_METADATA_DEPTH = 32
"""The deepest nesting of lists and objects in an episode's metadata."""

MAX_METADATA_CHARS = MAX_EPISODE_CHARS
"""The most characters of a new episode's metadata written as JSON (each retrieval that
returns the episode reads it whole); an import copies what an earlier version stored."""

MAX_TAGS = 100
"""The most tags of a new episode (an import copies what an earlier version stored)."""

MAX_TAG_CHARS = 200
"""The longest tag of a new episode (an import copies what an earlier version stored)."""

ROLES = ROLE_NAMES
"""A recent message's role, with the names other chat APIs give the partner."""

LABELS: dict[str, Role] = {
    **ROLE_NAMES,
    **{user.lower(): "user" for user, _ in SPEAKERS.values()},
    **{partner.lower(): "partner" for _, partner in SPEAKERS.values()},
    "アシスタント": "partner",
    "システム": "system",
}
"""The role a message written as one line names before its colon: a role's name (``assistant``
is the partner), the pack's and the prompts' labels in either language (:data:`.quote.SPEAKERS`:
``User``, ``相手``) and the Japanese names of the assistant and the system, as English's."""
_LABEL = lazy_compile(r"\s*(\w+)\s*[:：]")


def labelled_message(line: str) -> dict[str, str]:
    """A recent message written as one line (a CLI's ``-r``): the user's, unless it starts with a
    role's label and a colon, ASCII or a Japanese IME's (``partner:``, ``相手：``, :data:`LABELS`),
    which names the role and is not part of the text."""
    m = _LABEL.match(line)
    role = LABELS.get(m.group(1).lower()) if m else None
    if m is None or role is None:
        return {"role": "user", "text": line}
    return {"role": role, "text": line[m.end() :].strip()}


def clean_text(text: str | None, what: str) -> str | None:
    """``text`` scrubbed for storage (see :func:`.text.scrub`); None stays None.
    InvalidInput for a non-string or one past :data:`MAX_EPISODE_CHARS`."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise InvalidInput(f"{what} must be a string, not {type(text).__name__}")
    text = scrub(text)
    if len(text) > MAX_EPISODE_CHARS:
        raise InvalidInput(
            f"{what} is {len(text):,} characters; the limit is {MAX_EPISODE_CHARS:,}"
        )
    return text


def checked_episode(ep: NewEpisode, *, copied: bool = False) -> NewEpisode:
    """``ep`` checked and normalised for storage: its texts scrubbed, a side of an exchange
    that shows nothing dropped (one must remain; other kinds need content; a text field its
    kind does not search is refused, not stored unsearched, unless the episode is
    ``copied`` from a memory or an export as it was stored), its agent name (when given)
    in NFC, its tags scrubbed, its time given a zone; InvalidInput for what cannot be stored
    (metadata that is not JSON, …)."""
    user = _shown(clean_text(ep.user_text, "user text"), copied)
    reply = _shown(clean_text(ep.reply_text, "reply text"), copied)
    content = clean_text(ep.content, "content")
    if ep.kind is EpisodeKind.exchange:
        if user is None and reply is None:
            raise InvalidInput("an exchange needs non-empty user or reply text")
        if content is not None and not is_blank(content) and not copied:  # never found
            raise InvalidInput(
                "an exchange keeps its words in user_text and reply_text, and is searched by "
                "them: its content would be stored but never searched (put it in one of "
                "them, or store it as another kind, e.g. a fact)"
            )
    elif content is None or is_blank(content) or (not copied and drawn_as_nothing(content)):
        raise InvalidInput(f"an episode of kind {ep.kind.value} needs non-empty content")
    elif (user is not None or reply is not None) and not copied:
        raise InvalidInput(
            f"an episode of kind {ep.kind.value} is searched by its content: its user_text and "
            "reply_text would be stored but never searched (join them into the content, or "
            "store it as an exchange)"
        )
    if ep.metadata:
        if _depth(ep.metadata) > MAX_METADATA_DEPTH:
            raise InvalidInput(f"metadata is nested deeper than {MAX_METADATA_DEPTH} levels")
        try:
            written = json.dumps(ep.metadata, ensure_ascii=False, allow_nan=False)
            written.encode("utf-8")
        except (TypeError, ValueError) as exc:  # UnicodeEncodeError: a lone surrogate
            raise InvalidInput(f"metadata must be JSON-serialisable: {exc}") from exc
        if len(written) > MAX_METADATA_CHARS and not copied:  # (an export: as it was stored)
            raise InvalidInput(
                f"metadata is {len(written):,} characters as JSON, more than "
                f"{MAX_METADATA_CHARS:,}: keep large data elsewhere and refer to it"
            )
    tags = tuple(dict.fromkeys(t.strip() for t in map(scrub, ep.tags) if not is_blank(t)))
    if len(tags) > MAX_TAGS and not copied:
        raise InvalidInput(f"an episode takes at most {MAX_TAGS} tags, not {len(tags):,}")
    long = next((t for t in tags if len(t) > MAX_TAG_CHARS), None)
    if long is not None and not copied:
        raise InvalidInput(
            f"a tag is at most {MAX_TAG_CHARS} characters, not {len(long):,} ({long[:40]!r}…)"
        )
    if ep.id is not None and not 0 < ep.id <= MAX_KEPT_ID:
        raise InvalidInput(f"an episode id to keep is from 1 to 2**53 - 1, not {ep.id}")
    if ep.strength is not None and not (math.isfinite(ep.strength) and ep.strength >= 0):
        raise InvalidInput(f"strength is a finite number ≥ 0, not {ep.strength}")
    # (an agent left out stays so: the memory that stores the episode gives it its own)
    named = {"agent": agent_name(ep.agent)} if "agent" in ep.model_fields_set else {}
    return ep.model_copy(
        update=named
        | {
            "user_text": user,
            "reply_text": reply,
            "content": content,
            "tags": tags,  # a tag given twice is one tag; one that shows nothing is none
            "occurred_at": in_span(ensure_aware(ep.occurred_at), "occurred_at", clamp=copied),
            "created_at": None
            if ep.created_at is None
            else in_span(ensure_aware(ep.created_at), "created_at", clamp=copied),
            "decayed_at": None
            if ep.decayed_at is None
            else in_span(ensure_aware(ep.decayed_at), "decayed_at", clamp=copied),
        }
    )


def _depth(value: object) -> int:
    """How deeply lists and objects nest in ``value`` (a scalar is 0), counted without
    recursion, and no further than one level past :data:`MAX_METADATA_DEPTH`."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list | tuple) and level <= MAX_METADATA_DEPTH:
            deepest = max(deepest, level + 1)
            stack.extend(
                (v, level + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def _shown(text: str | None, copied: bool = False) -> str | None:
    """``text``, or None when it shows nothing (a new text drawn as nothing too: a lone
    variation selector; one ``copied`` from an export is kept as it was stored)."""
    if text is None or is_blank(text) or (not copied and drawn_as_nothing(text)):
        return None
    return text


def switches(*, maybe: Collection[str] = (), **values: object) -> None:
    """An :class:`.InvalidInput` naming the first of ``values`` that is not True or False,
    or None for a name in ``maybe``: ``record="no"`` would be true (and numpy's
    ``False_`` is not ``False``, which the code compares with, so it is refused too)."""
    for name, value in values.items():
        if isinstance(value, bool) or (value is None and name in maybe):
            continue
        choices = "True, False or None" if name in maybe else "True or False"
        raise InvalidInput(f"{name} is {choices}, not {value!r}"[:200])


def whole(value: object) -> int | None:
    """``value`` as a Python int when it is a whole number (an int, a numpy integer: what
    ``operator.index`` takes; a bool is not one), else None."""
    if isinstance(value, bool) or type(value).__name__ == "bool_":  # numpy's bool too
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


def real(value: object) -> float | None:
    """``value`` as a float when it is a real number (numpy's, a Decimal, a Fraction too; a
    bool is none), else None; one past the floats is infinite (10**400 seconds is no
    finite wait)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, Decimal)):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf


def episode_id(value: object) -> int:
    """``value`` as an episode id: InvalidInput if not a whole number, NotFound if out of
    the range an id can have."""
    number = whole(value)
    if number is None:
        raise InvalidInput(f"an episode id is a whole number, not {value!r}")
    if not 0 < number <= MAX_ID:
        raise NotFound(f"no episode with id {number}")
    return number


def episode_kind(value: object) -> EpisodeKind:
    """An :class:`EpisodeKind` or its name, checked (InvalidInput naming the known kinds).
    A name is read as typed in any width or case (ｆａｃｔ, Fact)."""
    if isinstance(value, str) and not isinstance(value, EpisodeKind):
        value = unicodedata.normalize("NFKC", value).strip().lower()
    try:
        return EpisodeKind(value)
    except ValueError:
        known = ", ".join(e.value for e in EpisodeKind)
        raise InvalidInput(f"unknown episode kind {value!r}; expected one of: {known}") from None


def kinds(given: Sequence[EpisodeKind | str] | None) -> list[str] | None:
    """Kind names checked against :class:`EpisodeKind` (InvalidInput for an unknown one)."""
    if given is None:
        return None
    if isinstance(given, (str, EpisodeKind)):
        given = [given]
    given = listed(given, "kinds must be a kind or a list of kinds")
    if not given:  # it would find nothing, whatever is stored
        raise InvalidInput("kinds is empty: give None for every kind, or at least one kind")
    return [episode_kind(k).value for k in given]


def new_episode(**fields: Any) -> NewEpisode:
    """A :class:`NewEpisode` made from ``fields`` (not yet :func:`checked_episode`):
    InvalidInput with one line per wrong field, without pydantic's header."""
    tags = fields.get("tags")
    if tags is None:
        tags = ()
    elif isinstance(tags, str):
        tags = (tags,)  # "abc" is one tag
    elif isinstance(tags, (bytes, Mapping)) or not isinstance(tags, Iterable):
        raise InvalidInput(f"invalid episode: tags: a tag or a list of tags, not {_cut_repr(tags)}")
    fields["tags"] = tuple(tags)
    if fields.get("metadata") is None:
        fields["metadata"] = {}
    try:
        episode = NewEpisode(**fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'episode'}: {e['msg']}" for e in exc.errors()
        )
        raise InvalidInput(f"invalid episode: {problems}") from exc
    return episode


def agent_name(name: object, what: str = "agent name") -> str:
    """An agent name (or another ``what``: a perspective) checked: a string with something
    visible, storable by SQLite, a perspective's at most :data:`.text.MAX_NAME_CHARS`
    characters, in Unicode NFC so that one name typed two ways (が as one character or two)
    is one name. (A new agent's name is checked further where a write would create it:
    ``Memory._new_agent``, :func:`.text.name_fault`.)"""
    if not isinstance(name, str) or is_blank(name) or drawn_as_nothing(name):
        article = "an" if what[:1] in "aeiou" else "a"
        raise InvalidInput(f"{article} {what} is a non-empty string, not {_cut_repr(name)}")
    if "\x00" in name or has_surrogate(name):
        raise InvalidInput(f"{what} {_cut_repr(name)} holds a NUL or a lone surrogate")
    fault = name_fault(name, what) if what != "agent name" else None
    if fault is not None:
        raise InvalidInput(fault)
    return unicodedata.normalize("NFC", name)


def agent_of_a_new_file(path: str | os.PathLike[str], name: str) -> None:
    """InvalidInput when no file is at ``path`` yet and ``name`` is no new agent's name
    (:func:`.text.name_fault`): a write that creates the file would create the agent too
    (a new file holds no name an earlier version stored), so it is refused before the file
    is made."""
    fault = None if os.path.exists(path) else name_fault(name)
    if fault is not None:
        raise InvalidInput(fault)


def spelled_as_declared(given: str, declared: Sequence[str]) -> str | None:
    """The name among ``declared`` that is ``given`` without outer spaces, compared in
    Unicode NFKC (half-width ｺｽﾄ is コスト, as an IME may type it; one stored by an earlier
    memengine keeps the spelling it was typed in), or None."""
    wanted = unicodedata.normalize("NFKC", given.strip())
    return next((d for d in declared if unicodedata.normalize("NFKC", d.strip()) == wanted), None)


def undeclared_perspective(agent: str, given: str, declared: Sequence[str]) -> InvalidInput:
    """The error for a perspective ``agent`` did not declare, naming the ones it did and the
    command that declares it: ``agent 'bob' has no perspective '納期' (declared: 'コスト',
    '品質'); add it with: memengine agent create bob --perspective 納期``."""
    listed = (
        "declared: " + ", ".join(quoted_name(p) for p in declared)
        if declared
        else "it declared none"
    )
    return InvalidInput(
        f"agent {quoted_name(agent)} has no perspective {quoted_name(given)} ({listed}); "
        f"add it with: memengine agent create {shell_word(agent)} --perspective "
        f"{shell_word(given)}"
    )


def recent_messages(recent: object) -> list[Message]:
    """The recent conversation as Messages (see :func:`message`; the messages that carry
    no conversation text are left out); a list or tuple is needed, since a string would be
    read as one message per character. An error names the message by its place."""
    if isinstance(recent, (str, bytes, Mapping)) or not isinstance(recent, Sequence):
        raise InvalidInput(
            f"recent must be a list of messages (oldest first), not {type(recent).__name__}"
        )
    out: list[Message] = []
    for i, m in enumerate(recent):
        try:
            msg = message(m)
        except InvalidInput as exc:
            raise InvalidInput(f"recent[{i}]: {exc}") from None
        if msg is not None:
            out.append(msg)
    return out


SKIPPED_ROLES = frozenset({"tool", "function"})
"""Roles of OpenAI chat messages that carry a tool's output, not the conversation: left out."""

TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
"""Types of the content parts whose ``text`` is read (images and audio are left out)."""


def message(m: Message | Mapping[str, object] | str) -> Message | None:
    """A recent message as a :class:`Message`, or None for one with no conversation text.

    One already; a plain string (the user's); or a dict with ``role`` (user, partner — also
    "assistant" or "companion" — or system, also "developer"; default user) and ``text``,
    or ``content`` as OpenAI's chat messages give it: a string, or a list of parts whose
    text parts are joined. None is returned for a tool's or function's message, and for
    one whose content is None or left out (an assistant's tool call) or has no text part."""
    if isinstance(m, Message):
        return m.model_copy(update={"text": scrub(m.text)})
    if isinstance(m, str):
        return Message(role="user", text=scrub(m))
    if not isinstance(m, Mapping):
        raise InvalidInput(
            "a recent message must be a Message, a dict with 'text' (or 'content'), "
            f"or a string: {_cut_repr(m)}"
        )
    role = m.get("role", "user")
    if isinstance(role, str) and role in SKIPPED_ROLES:
        return None  # a tool's output
    if "text" not in m and "content" not in m:
        if any(key in m for key in ("tool_calls", "function_call", "refusal")):
            return None  # a call of a tool (OpenAI may leave content out)
        raise InvalidInput(
            "a recent message must be a Message, a dict with 'text' (or 'content'), "
            f"or a string: {_cut_repr(m)}"
        )
    if not isinstance(role, str) or (role not in ROLES and role != "developer"):
        raise InvalidInput(
            f"unknown role {_cut_repr(role)} of a recent message; expected one of: "
            f"{', '.join(ROLES)} (also developer; tool and function messages are left out)"
        )
    text = m.get("text")
    if text is None and "content" in m:
        text = _content_text(m["content"])
        if text is None:
            return None
    if not isinstance(text, str):
        raise InvalidInput(f"a recent message's text must be a string, not {type(text).__name__}")
    return Message(role=ROLES.get(role, "system"), text=scrub(text))


def _content_text(content: object) -> str | None:
    """The text of an OpenAI message's ``content``: a string as it is, the text parts of a
    list joined by a new line; None when there is none."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        texts = []
        for part in content:
            if not isinstance(part, Mapping):
                raise InvalidInput(
                    f"a part of a recent message's content must be a dict, not "
                    f"{type(part).__name__}"
                )
            if part.get("type") in TEXT_PARTS:
                text = part.get("text")
                if not isinstance(text, str):
                    raise InvalidInput(
                        f"a text part's text must be a string, not {type(text).__name__}"
                    )
                texts.append(text)
        return "\n".join(texts) if texts else None
    raise InvalidInput(
        f"a recent message's content must be a string or a list of parts, not "
        f"{type(content).__name__}"
    )


def _cut_repr(value: object) -> str:
    """``value`` for an error message, cut to 80 characters."""
    shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def sensitivity_level(value: object) -> int:
    """A ``max_sensitivity`` argument: 0, 1, 2 or 3."""
    number = whole(value)
    if number is None or not 0 <= number <= 3:
        raise InvalidInput(f"max_sensitivity must be 0, 1, 2 or 3, not {value!r}")
    return number


def at_least(value: object, lowest: int, what: str) -> int:
    """``value`` as a whole number of at least ``lowest`` (InvalidInput naming ``what``)."""
    number = whole(value)
    if number is None or number < lowest:
        raise InvalidInput(f"{what} must be a whole number of at least {lowest}, not {value!r}")
    return number


def result_limit(value: object) -> int | None:
    """A ``limit`` argument: None (the configured number) or a whole number of at least 1."""
    return None if value is None else at_least(value, 1, "limit")


def day_range(value: object) -> int | bool | None:
    """A ``day_range`` argument: True (configured), None or False (all time), or days."""
    if value is None or isinstance(value, bool):
        return value
    number = whole(value)
    if number is None or not 0 <= number <= MAX_DAY_RANGE:
        raise InvalidInput(
            f"day_range must be a number of days from 0 to {MAX_DAY_RANGE:,} "
            f"(or None for all time), not {value!r}"
        )
    return number


def extra_queries(value: object) -> list[str]:
    """An ``extra_queries`` argument: a sequence of strings (not one string)."""
    if isinstance(value, str):
        raise InvalidInput("extra_queries must be a list of strings, not one string")
    queries = listed(value, "extra_queries must be a list of strings")
    if any(not isinstance(q, str) for q in queries):
        raise InvalidInput("extra_queries must be strings")
    return queries


def used_ids(value: object) -> list[int] | None:
    """The ``used`` argument of feedback: None, or memory ids (whole numbers)."""
    if value is None:
        return None
    if isinstance(value, (str, bytes)):  # "12" is no list of 1 and 2
        raise InvalidInput(f"used memories are given as a list of ids, not {_cut_repr(value)}")
    given = listed(value, "used memories are given as a list of ids")
    used = [whole(i) for i in given]
    if any(i is None for i in used):
        raise InvalidInput(f"used memories are given by id (whole numbers): {given!r}")
    return [i for i in used if i is not None]


def task_count(value: object) -> float:
    """A sleep's ``tasks``: a finite number of at least 0 (10**400 is no count of tasks)."""
    number = real(value) if isinstance(value, numbers.Real) else None  # (numpy's too)
    if number is None or not math.isfinite(number) or number < 0:
        raise InvalidInput(f"tasks must be a finite number of at least 0, not {_cut_repr(value)}")
    return number


def wait_seconds(value: object) -> float:
    """A close's ``wait_s``: a number of seconds of at least 0 (``math.inf``: as long as
    the calls under way take)."""
    number = real(value) if isinstance(value, numbers.Real) else None  # (numpy's too)
    if number is None:
        raise InvalidInput(f"wait_s is a number of seconds, not {_cut_repr(value)}")
    if math.isnan(number) or number < 0:
        raise InvalidInput(f"wait_s is a number of seconds of at least 0, not {value!r}")
    return number


def progress_callback(value: object) -> Callable[[int, int], None] | None:
    """A ``progress`` argument: None, or a callable of ``(done, total)``."""
    if value is None or callable(value):
        return value
    raise InvalidInput(f"progress is a callable of (done, total), not {_cut_repr(value)}")


MAX_BATCH = 100_000
"""The most episodes one transaction of :meth:`Memory.add_many` writes."""


def batch_size(value: object) -> int:
    """A ``batch_size`` argument: a whole number from 1 to :data:`MAX_BATCH`."""
    number = whole(value)
    if number is None or not 1 <= number <= MAX_BATCH:
        raise InvalidInput(
            f"batch_size must be a whole number from 1 to {MAX_BATCH:,}, not {_cut_repr(value)}"
        )
    return number


def episode_source(value: object) -> Iterable[Any]:
    """The episodes given to a bulk add: an iterable (not a string, not None), and not one
    episode (a pydantic model iterates as its fields: "not tuple" named no mistake)."""
    if isinstance(value, (NewEpisode, Episode)):
        raise InvalidInput(
            f"give a list of episodes, not one episode ({type(value).__name__}): [episode]"
        )
    if not isinstance(value, Iterable):  # (a str's items are refused one by one)
        raise InvalidInput(f"episodes are given as a list or an iterable, not {_cut_repr(value)}")
    return value


def listed(value: object, what: str) -> list[Any]:
    """``value`` as a list, or InvalidInput saying ``what`` when it is not iterable."""
    try:
        items: list[Any] = list(value)  # type: ignore[call-overload]
        return items
    except TypeError as exc:
        raise InvalidInput(f"{what}, not {value!r}") from exc


EARLIEST = datetime(2, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(9998, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc)
"""The span of times a memory file takes: a year inside Python's datetime on each side, so
that a time can be shown in any zone and a day window reaches back from it."""


def moment(value: object, what: str) -> datetime:
    """A point in time given as an argument: a datetime (a naive one is taken as UTC)
    from :data:`EARLIEST` to :data:`LATEST`."""
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} is a datetime, not {type(value).__name__}")
    return in_span(ensure_aware(value), what)


def in_span(value: datetime, what: str, *, clamp: bool = False) -> datetime:
    """``value`` (aware) if it lies from :data:`EARLIEST` to :data:`LATEST`, else InvalidInput;
    with ``clamp`` (a time copied as an earlier version stored it: year 1 or 9999), the
    nearer of the two instead."""
    try:
        inside = EARLIEST <= value.astimezone(timezone.utc) <= LATEST
    except OverflowError:  # past Python's years once in UTC
        inside = False
    if not inside and clamp:
        return EARLIEST if value.year < EARLIEST.year + 1 else LATEST
    if not inside:
        raise InvalidInput(
            f"{what} {value.isoformat()} is outside the times a memory keeps "
            f"({EARLIEST.date().isoformat()} to {LATEST.date().isoformat()}, UTC): "
            "give a time inside them"
        )
    offset = value.utcoffset()
    if offset is not None and offset % timedelta(minutes=1):
        # an offset with seconds (local mean time before 1900: +09:18:59) does not survive
        # JSON (an export writes minutes), so the moment is kept in UTC
        return value.astimezone(timezone.utc)
    return value
