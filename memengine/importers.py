"""Reading conversation files into episodes: memengine JSONL, LoCoMo JSON, memsets JSON.

Each reader yields :class:`NewEpisode` objects and never writes; the facade
stores them in batches. Formats:

- **JSONL** (``memengine export``): one episode per line with its id, times,
  metadata and status, so an export re-imports to the same ids.
- **LoCoMo** (``locomo10.json`` layout): one ``message`` episode per turn,
  text ``"<speaker>: <text>"`` plus the image caption, ``occurred_at`` from
  the session date, ``metadata.dia_id`` and ``metadata.conversation``.
- **memsets** (companion-chat sets): one ``exchange`` per exchange, with
  ``metadata.exchange_id`` and ``metadata.conversation``.
"""

from __future__ import annotations

import errno
import json
import os
import re
import tempfile
import unicodedata
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import ValidationError

from .arguments import agent_name, checked_episode, switches
from .clock import iso_text, time_text
from .config import ends_as_a_folder
from .errors import DiskError, DiskFull, InvalidInput
from .models import EPISODE_TIMES, Episode, EpisodeKind, NewEpisode
from .store.connect import NO_ROOM_ERRNOS, past_size_limit
from .store.migrate import SQLITE_HEADER
from .text import (
    SHOWN_VALUE_CHARS,
    counted,
    json_escaped,
    name_fault,
    preview,
    quoted_name,
    shown_name,
    shown_value,
)

__all__ = [
    "ImportedFile",
    "checked_path",
    "detect_format",
    "episode_to_json",
    "names_a_folder",
    "parse_locomo_date",
    "read_conversations",
    "read_file",
    "read_jsonl",
    "read_locomo",
    "read_memsets",
    "read_stream",
    "why_not_json",
]

Format = Literal["jsonl", "locomo", "memsets"]

STANDARD_INPUT = "standard input"
"""The name every message of an import of standard input (``import -``) gives it, as
``add -`` does: "standard input:2: invalid episode …", "standard input holds none"."""


def detect_format(path: Path) -> Format:
    """Guess the format of a file from its name and structure: ``.jsonl``, or a file of
    JSON objects one per line whatever its name (or of nothing: an empty export), is
    JSONL; a JSON file is LoCoMo or memsets, whatever its name. A database (a memengine
    file under any name), a gzip file, UTF-16 without its byte-order mark, a JSON array of
    episodes and one episode written over several lines are refused, saying what they are."""
    _refuse_binary(path)
    if path.suffix == ".jsonl":
        first = _first_line(path)
        if isinstance(first, dict) and "conversations" not in first:
            return "jsonl"
        # a LoCoMo or memsets file saved as .jsonl; else read_jsonl names the line that is
        # no episode (unless the file is JSON of another shape: a JSON array of episodes)
        return _format_by_content(path, fallback="jsonl")
    return _format_by_content(path)


def _first_line(path: Path) -> object:
    """The JSON value on the first non-blank line of ``path`` (None when it is not JSON)."""
    with path.open(encoding="utf-8-sig", errors="replace") as fh:
        for line in fh:
            if line.strip():
                try:
                    return json.loads(line)
                except (ValueError, RecursionError):  # not JSON; a number of 5,000 digits
                    return None
    return None


def _refuse_binary(path: Path) -> None:
    """An :class:`.InvalidInput` for a file that is no text to import, saying what it is by
    its first bytes: an SQLite database, a gzip-compressed file, or UTF-16 (or UTF-32)
    text without its byte-order mark, which reads as UTF-8 with a NUL after each letter
    (JSON's "Expecting property name" says nothing of the encoding)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_HEADER))
    except OSError:  # (read_file says why it cannot be read)
        return
    if head == SQLITE_HEADER:
        raise InvalidInput(
            f"{path}: an SQLite database (a memengine file?), not an export to import: "
            "copy a memengine file with `memengine backup`, or write its episodes out with "
            "`memengine export --db FILE` and import that"
        )
    if head.startswith(_GZIP_MAGIC):
        raise InvalidInput(
            f"{path}: gzip-compressed, not text: import what it holds, "
            "`memengine import <(zcat FILE)` (or `zcat FILE | memengine import -`)"
        )
    wide = next((codec for codec, shape in _UNMARKED_WIDE if shape.match(head)), None)
    if wide is not None:
        raise InvalidInput(
            f"{path}: looks like {wide} text without a byte-order mark (NUL bytes between "
            "its letters): save it as UTF-8"
        )


_GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of a gzip file (``export -o >(gzip > x.gz)`` writes one)."""

_UNMARKED_WIDE = (
    ("UTF-32", re.compile(rb"(?:[\x01-\x7f]\x00{3}){2}|(?:\x00{3}[\x01-\x7f]){2}")),
    ("UTF-16", re.compile(rb"(?:[\x01-\x7f]\x00){2}|(?:\x00[\x01-\x7f]){2}")),
)
"""How UTF-32 and UTF-16 text without a byte-order mark begins: two ASCII characters
(JSON begins with ``{``, ``[`` or a space) each with its NUL bytes, which UTF-8 JSON never
holds (a NUL in a text is written ``\\u0000``)."""


def why_not_json(exc: Exception) -> str:
    """What ``exc``, raised reading a JSON file, says went wrong, in the file's terms: Python
    refuses a number of more than 4,300 digits with advice for programmers
    (``sys.set_int_max_str_digits``), which is here "a number of N digits"."""
    digits = re.search(r"value has (\d+) digits", str(exc))
    if digits and "integer string conversion" in str(exc):
        return f"a number of {int(digits.group(1)):,} digits"
    return str(exc)


def _format_by_content(path: Path, fallback: Format | None = None) -> Format:
    """:func:`detect_format` from what ``path`` holds, whatever its name; a file of no
    format it knows is ``fallback`` when given (a ``.jsonl`` file: read_jsonl names its
    first line that is no episode), else an InvalidInput. Episodes in a JSON shape that is
    not JSONL (an array of them, one written over several lines) are named so either way."""

    def unknown(message: str, exc: BaseException | None = None) -> Format:
        """``fallback``, else the error ``message`` (raised from ``exc``)."""
        if fallback is not None:
            return fallback
        raise InvalidInput(f"{path}: {message}") from exc

    text = ""
    try:
        raw = path.read_bytes()
        text = raw.decode(wide_codec(raw) or "utf-8-sig")  # (UTF-16 after its mark too)
        if not text.strip():  # an export of nothing (`export | import -`): no line at all
            return "jsonl"
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        if _first_line_is_object(path):  # an export saved under another name
            return "jsonl"
        _refuse_spread(path, text)  # episodes written as json.dumps(…, indent=2) writes them
        return unknown(f"not a JSON or JSONL file ({exc})", exc)
    except UnicodeDecodeError as exc:  # (Shift_JIS, as Japanese Windows tools save by default)
        if fallback is not None:
            return fallback
        if wide_codec(raw) is None:  # (named by its line, as read_jsonl names it)
            raise _not_utf8(path, exc) from exc
        raise InvalidInput(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start:,}): save it as UTF-8"
        ) from exc
    except (OSError, ValueError) as exc:  # a number of 5,000 digits
        return unknown(f"not a JSON or JSONL file ({why_not_json(exc)})", exc)
    except RecursionError as exc:
        return unknown("not a JSON file memengine reads: nested too deeply", exc)
    if isinstance(data, list) and data and isinstance(data[0], dict) and "conversation" in data[0]:
        return "locomo"
    if isinstance(data, dict) and "conversations" in data:
        return "memsets"
    if _an_episode(data):  # a one-line export
        _refuse_spread(path, text)
        return "jsonl"
    if data == []:
        raise InvalidInput(f"{path}: an empty JSON array ([]), which holds no episodes")
    if isinstance(data, list) and _an_episode(data[0]):
        raise InvalidInput(
            f"{path}: a JSON array of {counted(len(data), 'episode')}, where an import reads one "
            "episode per line (JSONL): write one object per line (`jq -c '.[]' FILE`)"
        )
    return unknown("unknown format (expected JSONL, LoCoMo or memsets JSON)")


_EPISODE_KEYS = frozenset({"occurred_at", "user_text", "reply_text", "content"})
"""The fields that make a JSON object an episode (one line of an export) to a reader."""


def _an_episode(value: object) -> bool:
    """Whether ``value`` is a JSON object written as an episode is: it holds its time or
    one of its texts (``{"user_text": "猫の名前はモチ", "occurred_at": …}``)."""
    return isinstance(value, dict) and not _EPISODE_KEYS.isdisjoint(value)


def _refuse_spread(path: Path, text: str) -> None:
    """InvalidInput when ``text`` begins with an episode written over several lines, as
    ``json.dumps(episode, indent=2)`` writes it: read line by line, its first line ``{``
    would be named as a line that is no JSON, not as the shape that is not JSONL. Told to
    write it on one line only when that line would import; else what is wrong with it comes
    first (``"foo": 1``: "pretty.json:1: invalid episode written over 4 lines: unknown
    field 'foo' …"), which that line would be refused for next."""
    start = len(text) - len(text.lstrip())
    try:
        first, end = json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):  # (not JSON from its start: said as such)
        return
    lines = text.count("\n", start, end) + 1
    if lines == 1 or not _an_episode(first):
        return
    try:  # as its one line would be read (into any agent: `--agent` may name one)
        _line_episode(json.loads(text[start:end], object_pairs_hook=_unique_keys), agent="a")
    except (InvalidInput, ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else why_not_json(exc)
        at = text.count("\n", 0, start) + 1
        raise InvalidInput(
            f"{path}:{at}: invalid episode written over {lines:,} lines: {why}"
        ) from exc
    raise InvalidInput(
        f"{path}: an episode written over {lines:,} lines, where an import reads one "
        "episode per line (JSONL): write each episode on one line"
    )


def _first_line_is_object(path: Path) -> bool:
    """Whether the first non-blank line of ``path`` is a JSON object on its own."""
    return isinstance(_first_line(path), dict)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are each given once: with ``"sensitivity": 3,
    "sensitivity": 0`` the last would win and a secret be stored as level 0."""
    out = dict(pairs)
    if len(out) != len(pairs):
        twice = next(k for i, (k, _) in enumerate(pairs) if k in dict(pairs[:i]))
        raise ValueError(f"the key {shown_value(twice)} is given twice")
    return out


def episode_to_json(ep: Any, decayed_at: datetime | None = None) -> str:
    """One episode as a JSONL line that :func:`read_jsonl` reads back unchanged; with
    ``decayed_at``, the moment its strength holds for (:attr:`.NewEpisode.decayed_at`)."""
    data = ep.model_dump(mode="json")
    if decayed_at is not None:
        data["decayed_at"] = iso_text(decayed_at)
    return json_escaped(json.dumps(data, ensure_ascii=False))  # (-o -: a terminal)


_JSONL_FIELDS = set(NewEpisode.model_fields)
_EXPORT_ONLY = set(Episode.model_fields) - _JSONL_FIELDS
"""Fields an export lists for reading that an import does not restore (usage counters)."""


def _line_episode(
    raw: object,
    agent: str | None = None,
    default_agent: str | None = None,
    defaulted: set[str] | None = None,
    named: set[str] | None = None,
) -> NewEpisode:
    """The episode one JSONL line's JSON value ``raw`` stores, checked as it would be stored
    (:func:`read_jsonl`'s rules; ``named`` collects the agent it names when ``agent`` is
    given); an :class:`.InvalidInput` saying what is wrong with it ("unknown field 'foo'
    …"), without its place in the file, which the caller gives."""
    if not isinstance(raw, dict):
        raise InvalidInput("not a JSON object")
    unknown = sorted(set(raw) - _JSONL_FIELDS - _EXPORT_ONLY)
    if unknown:  # a misspelt "sensitivity" would store a secret as level 0
        raise InvalidInput(
            f"unknown field {', '.join(map(shown_value, unknown[:5]))}{' …' * (len(unknown) > 5)} "
            f"(known: {', '.join(sorted(_JSONL_FIELDS))})"
        )
    fields = {k: v for k, v in raw.items() if k in _JSONL_FIELDS}
    fields |= {k: _time_field(k, v) for k in EPISODE_TIMES if (v := fields.get(k)) is not None}
    if agent is not None:
        if isinstance(fields.get("agent"), str) and named is not None:
            named.add(unicodedata.normalize("NFC", fields["agent"]))
        fields["agent"] = agent
    elif "agent" not in fields:
        if default_agent is not None:  # (else left out: the memory's configured agent)
            fields["agent"] = default_agent
            if defaulted is not None:
                defaulted.add(default_agent)
    else:  # a name an earlier version took (a zero-width space)
        try:
            agent_name(fields["agent"])
        except InvalidInput as exc:
            raise InvalidInput(
                f"{exc}; import the file into one named agent: memengine import --agent NAME "
                "(import_(…, agent=NAME))"
            ) from None
    try:
        episode = NewEpisode.model_validate(fields)
    except ValidationError as exc:
        raise InvalidInput(one_line(exc)) from exc
    checked = checked_episode(episode, copied=True)  # as it was stored
    # a time without a zone stays so: the memory reads it in its time_zone
    naive = {
        k: v for k in EPISODE_TIMES if (v := getattr(episode, k)) is not None and v.tzinfo is None
    }
    return checked.model_copy(update=naive) if naive else checked


def read_jsonl(
    path: Path,
    *,
    agent: str | None = None,
    default_agent: str | None = None,
    defaulted: set[str] | None = None,
    keep_to: str | None = None,
) -> Iterator[NewEpisode]:
    """Episodes from a memengine JSONL export (ids, times, metadata preserved), each checked
    as it would be stored (:func:`.arguments.checked_episode`); InvalidInput names the line.
    Every line goes to ``agent`` when it is given, else to its own ``agent`` field, else
    (a hand-written line without one) to ``default_agent`` (added to ``defaulted`` when
    given: a name the caller chose, not the file); with none, such a line names no agent,
    and the memory that stores it gives it its configured agent. A file whose lines name more
    than one agent is refused with ``agent`` (once it is read: the episodes are yielded
    as they are read), since it would merge them into one. Without ``agent``, a line that
    names an agent other than ``keep_to`` (the agent a configuration names on purpose) is
    refused likewise, naming the lines: a file's words must not steer one user's process
    into another user's memories."""
    try:
        fh = path.open(encoding="utf-8-sig")
    except OSError as exc:
        raise unreadable(path, exc) from exc
    with fh:
        number = 0
        named: set[str] = set()  # the agents the lines name (in NFC), for ``agent``
        kept = (
            None if agent is not None or keep_to is None else unicodedata.normalize("NFC", keep_to)
        )
        elsewhere: dict[str, list[int]] = {}  # the lines naming another agent than ``kept``
        names_kept = False  # whether a line names ``kept`` (a file of several agents then)
        try:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                # (a line cut inside a text still ends in its newline: "Unterminated string")
                raw = json.loads(line.rstrip("\r\n"), object_pairs_hook=_unique_keys)
                try:
                    episode = _line_episode(raw, agent, default_agent, defaulted, named)
                except InvalidInput as exc:
                    raise InvalidInput(
                        f"{path}:{number}: invalid episode: {exc}"
                    ) from exc.__cause__
                if kept is not None and "agent" in raw:
                    if episode.agent != kept:
                        elsewhere.setdefault(episode.agent, []).append(number)
                    else:
                        names_kept = True
                yield episode
        except RecursionError as exc:
            raise InvalidInput(f"{path}:{number}: invalid episode: nested too deeply") from exc
        except UnicodeDecodeError as exc:  # (read in blocks: ``number`` may be lines before)
            raise _not_utf8(path, exc) from exc
        except OSError as exc:  # (a failing disk, a network mount gone: a read, not an output)
            raise unreadable(path, exc) from exc
        except ValueError as exc:  # not JSON, a duplicate key, a number of 5,000 digits
            raise InvalidInput(f"{path}:{number}: invalid episode: {why_not_json(exc)}") from exc
    _refuse_merging(path, named)
    if kept is not None:
        _refuse_other_agents(path, kept, elsewhere, names_kept=names_kept)


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> InvalidInput:
    """The error for a text file that is not UTF-8, naming its first line that is not
    ("trunc.jsonl:3: not UTF-8 text"), and that the file looks cut off when it ends
    inside a character (a copy or a download that did not finish)."""
    try:
        found = _first_line_not_utf8(path)
    except OSError:
        found = None
    if found is None:  # (every line reads now: the file changed meanwhile)
        return InvalidInput(f"{path}: not UTF-8 text ({exc.reason}): save it as UTF-8")
    number, reason, cut = found
    if cut:
        return InvalidInput(
            f"{path}:{number}: not UTF-8 text ({reason}): the file ends inside a character, "
            "it looks cut off (a copy or a download that did not finish?)"
        )
    return InvalidInput(f"{path}:{number}: not UTF-8 text ({reason}): save it as UTF-8")


def _first_line_not_utf8(path: Path) -> tuple[int, str, bool] | None:
    """The number of the first line of ``path`` that is not UTF-8, why, and whether the
    file ends inside its last character (None when every line is UTF-8). Lines end as
    in text mode, at \n, \r\n or a lone \r (bytes never part of a UTF-8 character)."""
    number = 0
    with path.open("rb") as fh:
        for raw in fh:
            pieces = re.split(rb"\r(?!\n)", raw)
            for piece in pieces:
                number += 1
                try:
                    piece.decode("utf-8")
                except UnicodeDecodeError as bad:
                    last = piece is pieces[-1] and not fh.read(1)
                    ends = bad.reason == "unexpected end of data"  # (not a byte \xff)
                    return number, bad.reason, last and ends and bad.end == len(piece)
    return None


def _refuse_merging(path: Path, named: set[str]) -> None:
    """InvalidInput when the lines of ``path`` name more than one agent (``named``): an
    import into one agent (``--agent``) would mix their memories."""
    if len(named) > 1:
        raise InvalidInput(
            f"{path} holds the episodes of {len(named):,} agents, and --agent (agent=…) would "
            "put them all into one: import it with --all-agents instead (import_(…, "
            "all_agents=True)) to keep the agent each line names, or import an export per "
            "agent (memengine export --agent NAME)"
        )


def _refuse_other_agents(
    path: Path, kept: str, elsewhere: dict[str, list[int]], *, names_kept: bool = False
) -> None:
    """InvalidInput when lines of ``path`` name agents other than ``kept``, the one the
    configuration names on purpose (``elsewhere``: their lines by agent; ``names_kept``:
    whether a line names ``kept`` too): the import of a per-user process would write into
    other users' memories (a principle, always packed). The advice is the flag that imports
    it: --all-agents (the agents the lines name) for a file of several agents; for one
    agent's, also --agent with the configured name (its episodes put into that agent)."""
    if not elsewhere:
        return
    lines = sorted(n for numbers in elsewhere.values() for n in numbers)
    shown = ", ".join(f"{n:,}" for n in lines[:5]) + (
        f" and {len(lines) - 5:,} more" if len(lines) > 5 else ""
    )
    names = ", ".join(map(quoted_name, sorted(elsewhere)[:5])) + " …" * (len(elsewhere) > 5)
    keep = (
        "memengine import --all-agents (import_(…, all_agents=True)) keeps the agent each "
        "line names"
    )
    if len(elsewhere) == 1 and not names_kept:  # one agent's file: it may go into ``kept``
        name = quoted_name(kept)
        advice = (
            f"To put its episodes into {name}: memengine import --agent {name} "
            f"(import_(…, agent={kept!r})); to keep them under {names}: {keep}"
        )
    else:
        advice = f"To import it: {keep}"
    raise InvalidInput(
        f"{path}: line{'s' * (len(lines) > 1)} {shown} name{'s' * (len(lines) == 1)} "
        f"agent{'s' * (len(elsewhere) > 1)} {names}, and this import keeps to the agent the "
        f"configuration names, {quoted_name(kept)} (agent = in memengine.toml, "
        f"MEMENGINE_AGENT, Config(agent=…)): nothing was imported. {advice}"
    )


def _time_field(name: str, value: object) -> datetime:
    """A line's time ``name`` read as ``memengine add --at`` reads it (ISO 8601 text): a
    JSON number, or a string of digits other than a basic-form date (``20260401``), is an
    :class:`.InvalidInput` (pydantic would read it as a Unix timestamp, silently)."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name}: a time as ISO 8601 text, not {json.dumps(value)[:80]}")
    try:
        return time_text(value)
    except ValueError as exc:
        raise InvalidInput(f"{name}: {exc}") from exc


def parse_locomo_date(text: str) -> datetime:
    """Parse LoCoMo's ``"1:56 pm on 8 May, 2023"`` (taken as UTC)."""
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except ValueError as exc:
        raise InvalidInput(f"unrecognised LoCoMo date: {shown_value(text)}") from exc


def locomo_turn_text(turn: dict[str, Any]) -> str:
    """The episode text of one LoCoMo turn: speaker, text and image caption."""
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [image: {caption}]"
    return text


_SESSION_DIGITS = 9
"""The most digits of a LoCoMo session number (``session_<n>``): far more sessions than
any conversation holds, and a longer one is no number to read."""


def read_locomo(sample: dict[str, Any], *, agent: str = "default") -> Iterator[NewEpisode]:
    """Episodes of one LoCoMo sample, one per turn, a minute apart within a session
    (:class:`.InvalidInput` naming the session or turn that is not of its kind)."""
    conv = sample["conversation"]
    if not isinstance(conv, dict):
        raise InvalidInput(f"conversation is an object, not a {type(conv).__name__}")
    numbers = [k.split("_")[1] for k in conv if k.startswith("session_") and k.count("_") == 1]
    long = next((n for n in numbers if len(n) > _SESSION_DIGITS), None)
    if long is not None:  # (Python refuses to read a number of over 4,300 digits)
        raise InvalidInput(
            f"conversation.session_{shown_name(long[:12])}… ({len(long):,} characters): a "
            f"session is session_<n>, n a number of at most {_SESSION_DIGITS} digits (1, 2, …)"
        )
    odd = next(  # (session_01 would be read as session_1, and one of them lost)
        (n for n in numbers if not (n.isascii() and n.isdigit() and str(int(n)) == n)), None
    )
    if odd is not None:
        raise InvalidInput(
            f"conversation.session_{odd if odd.isprintable() else shown_name(odd)}: a session "
            "is session_<n>, n a number (1, 2, …)"
        )
    sessions = sorted(map(int, numbers))
    for n in sessions:
        turns = conv.get(f"session_{n}") or []
        if not isinstance(turns, list):
            raise InvalidInput(f"session_{n} is a list of turns, not a {type(turns).__name__}")
        if not turns:  # (a session without turns needs no date)
            continue
        if f"session_{n}_date_time" not in conv:
            raise InvalidInput(f"session_{n} has no session_{n}_date_time")
        when = conv[f"session_{n}_date_time"]
        if not isinstance(when, str):  # (5 or null: no date to read, not a Python error)
            raise InvalidInput(
                f'session_{n}_date_time: a date as text ("1:56 pm on 8 May, 2023"), '
                f"not {shown_value(when)}"
            )
        try:
            start = parse_locomo_date(when)
        except InvalidInput as exc:
            raise InvalidInput(f"session_{n}_date_time: {exc}") from exc
        for i, turn in enumerate(turns):
            if not isinstance(turn, dict):
                raise InvalidInput(
                    f"session_{n} turn {i + 1}: not an object but a {type(turn).__name__}"
                )
            lacks = [key for key in ("dia_id", "speaker", "text") if key not in turn]
            if lacks:
                raise InvalidInput(f"session_{n} turn {i + 1}: has no {lacks[0]!r}")
            odd = next(
                (k for k in ("speaker", "text") if not isinstance(turn[k], str)), None
            )  # (a speaker None or a text [..] would be stored as "None: …", "A: ['x']")
            if odd is None and turn.get("blip_caption") is not None:  # (or absent, or null)
                odd = "blip_caption" if not isinstance(turn["blip_caption"], str) else None
            if odd is not None:
                raise InvalidInput(
                    f"session_{n} turn {i + 1}: {odd} is text, not {type(turn[odd]).__name__}"
                )
            if not turn["speaker"].strip():
                raise InvalidInput(f"session_{n} turn {i + 1}: speaker is empty")
            yield NewEpisode(
                agent=agent,
                kind=EpisodeKind.message,
                content=locomo_turn_text(turn),
                occurred_at=start + timedelta(minutes=i),
                metadata={
                    "dia_id": turn["dia_id"],
                    "speaker": turn["speaker"],
                    "conversation": sample.get("sample_id", ""),
                },
            )


def read_memsets(conversation: dict[str, Any], *, agent: str = "default") -> Iterator[NewEpisode]:
    """Episodes of one memsets conversation, one exchange each (:class:`.InvalidInput`
    naming the exchange whose fields are not of their kinds)."""
    sessions = _list_of(conversation, "sessions", "")
    for k, session in enumerate(sessions):
        if not isinstance(session, dict):
            raise InvalidInput(f"session {k + 1}: not an object but a {type(session).__name__}")
        named = f"session {_shown_id(session.get('id', k + 1))}"
        for n, ex in enumerate(_list_of(session, "exchanges", named)):
            if not isinstance(ex, dict):
                where = f"{named} exchange {n + 1}"
                raise InvalidInput(f"{where}: not an object but a {type(ex).__name__}")
            where = f"{named} exchange {_shown_id(ex.get('id', n + 1))}"
            lacks = [key for key in ("id", "at", "user", "partner") if key not in ex]
            if lacks:
                raise InvalidInput(f"{where}: has no {lacks[0]!r}")
            if not _an_id(ex["id"]):
                raise InvalidInput(
                    f"{named} exchange {n + 1}: id is text, not {shown_value(ex['id'])}"
                )
            if not isinstance(ex["at"], str):  # (pydantic would read a number as epoch seconds)
                raise InvalidInput(
                    f"{where}: at: a time as ISO 8601 text, not {shown_value(ex['at'])}"
                )
            try:
                at = time_text(ex["at"])
                yield NewEpisode(
                    agent=agent,
                    kind=EpisodeKind.exchange,
                    user_text=ex["user"],
                    reply_text=ex["partner"],
                    occurred_at=at,
                    metadata={
                        "exchange_id": ex["id"],
                        "session": session.get("id", k + 1),
                        "conversation": conversation.get("id", ""),
                    },
                )
            except ValidationError as exc:
                raise InvalidInput(f"{where}: {one_line(exc, _MEMSETS_NAMES)}") from exc
            except ValueError as exc:  # a time it cannot read
                raise InvalidInput(f"{where}: at: {exc}") from exc


def _shown_id(value: object) -> str:
    """A record's id as a message names it: text as :func:`.text.shown_name` shows a name
    (one line, ``$'e\\n1'`` for an id holding a line break), anything else as it prints;
    either within :data:`.text.SHOWN_VALUE_CHARS` (an id of 100,000 characters is cut, "…")."""
    if isinstance(value, str):
        return shown_name(preview(value, SHOWN_VALUE_CHARS))
    return shown_value(value)


def _an_id(value: object) -> bool:
    """Whether ``value`` names a record of a LoCoMo or memsets file: text that is not blank,
    or a whole number (not null, a list or a bool)."""
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, int) and not isinstance(value, bool)


def _list_of(record: dict[str, Any], key: str, where: str) -> list[Any]:
    """``record[key]``, a list; an :class:`.InvalidInput` naming ``where`` when it is
    missing or anything else."""
    if key not in record:
        raise InvalidInput(f"{where} has no {key!r}" if where else f"has no {key!r}")
    value = record[key]
    if not isinstance(value, list):
        raise InvalidInput(
            f"{where}: " * bool(where) + f"{key} is a list, not a {type(value).__name__}"
        )
    return value


_MEMSETS_NAMES = {"user_text": "user", "reply_text": "partner", "occurred_at": "at"}
"""A memsets exchange's own names for the episode's fields, in its errors."""


def one_line(exc: ValidationError, names: Mapping[str, str] | None = None) -> str:
    """A validation error as one line: the first problem's field (by its name in ``names``,
    the file's own) and message (and how many more there are)."""
    errors = exc.errors()
    first = errors[0]
    where = ".".join(str((names or {}).get(str(p), p)) for p in first["loc"]) or "episode"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg']}{more}"


def read_conversations(
    path: Path, fmt: Literal["locomo", "memsets"], *, agent: str, per_conversation: bool = False
) -> list[NewEpisode]:
    """Every episode of a LoCoMo or memsets file, for ``agent``, each checked as it would be
    stored (:func:`.arguments.checked_episode`); with ``per_conversation`` each conversation
    gets its own agent, ``<agent>/<conversation id>`` (so two files' conversations of one id
    stay apart when their ``agent`` differs). InvalidInput names what a malformed file
    lacks, or the episode that cannot be stored, before anything is."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as exc:  # (a failing disk, a network mount gone: a read, not an output)
        raise unreadable(path, exc) from exc
    except UnicodeDecodeError as exc:  # (read_file has found it UTF-8: called on its own)
        raise _not_utf8(path, exc) from exc
    except ValueError as exc:  # not JSON, a number of 5,000 digits
        raise InvalidInput(f"{path}: not a JSON file ({why_not_json(exc)})") from exc
    except RecursionError as exc:
        raise InvalidInput(f"{path}: not a JSON file memengine reads: nested too deeply") from exc

    def owner(conversation_id: object, which: str) -> str:
        """The agent a conversation's episodes go to: with ``per_conversation``
        ``<agent>/<id>``, refused, naming the conversation (``which``: "sample", a LoCoMo
        file's), when that is no new agent's name ("conversation ' c1 ': agent name
        'default/ c1 ' begins or ends with white space…")."""
        if not per_conversation:
            return agent
        if not _an_id(conversation_id):  # (not an agent "default/None")
            raise InvalidInput(
                f"a conversation's id names its agent: text, not {shown_value(conversation_id)}"
            )
        name = f"{agent}/{conversation_id}"
        try:
            fault = name_fault(agent_name(name))
        except InvalidInput as exc:  # a NUL, a lone surrogate
            fault = str(exc)
        if fault is not None:
            raise InvalidInput(f"{which} {_shown_id(conversation_id)}: {fault}")
        return name

    episodes: list[NewEpisode] = []
    try:
        if fmt == "locomo":
            if not isinstance(data, list):
                raise TypeError(f"a LoCoMo file is a list of samples, not a {type(data).__name__}")
            for k, sample in enumerate(data):
                if not isinstance(sample, dict):
                    raise TypeError(f"sample {k + 1}: not an object but a {type(sample).__name__}")
                name = owner(sample.get("sample_id", "locomo"), "sample")
                try:
                    episodes.extend(read_locomo(sample, agent=name))
                except InvalidInput as exc:
                    which = _shown_id(sample.get("sample_id", k + 1))
                    raise InvalidInput(f"sample {which}: {exc}") from exc
        else:
            if not isinstance(data, dict):
                raise TypeError(f"a memsets file is an object, not a {type(data).__name__}")
            conversations = data.get("conversations")
            if not isinstance(conversations, list):
                what = "none" if conversations is None else f"a {type(conversations).__name__}"
                raise TypeError(f"conversations is a list, not {what}")
            for k, conv in enumerate(conversations):
                if not isinstance(conv, dict):
                    raise TypeError(
                        f"conversation {k + 1}: not an object but a {type(conv).__name__}"
                    )
                if per_conversation and "id" not in conv:  # (without it, the id is not needed)
                    raise InvalidInput(
                        f"conversation {k + 1} has no 'id', which names its agent with "
                        "--agent-per-conversation (per_conversation)"
                    )
                episodes.extend(read_memsets(conv, agent=owner(conv.get("id"), "conversation")))
    except InvalidInput as exc:  # a LoCoMo date it cannot read, a memsets exchange
        raise InvalidInput(f"{path}: {exc}") from exc
    except ValidationError as exc:
        raise InvalidInput(f"{path}: not a valid {fmt} file: {one_line(exc)}") from exc
    except KeyError as exc:
        raise InvalidInput(f"{path}: not a valid {fmt} file: a record lacks {exc}") from exc
    except (TypeError, AttributeError, ValueError) as exc:  # ValidationError is a ValueError
        raise InvalidInput(f"{path}: not a valid {fmt} file: {exc}") from exc
    if not episodes:
        where = "conversation.session_<n> lists" if fmt == "locomo" else "sessions' exchanges"
        raise InvalidInput(
            f"{path}: no episodes found in this {fmt} file (they are in its {where})"
        )
    for ep in episodes:
        try:
            checked_episode(ep)
        except InvalidInput as exc:
            which = "exchange" if "exchange_id" in ep.metadata else "turn"
            where = ep.metadata.get("exchange_id") or ep.metadata.get("dia_id") or "?"
            raise InvalidInput(
                f"{path}: agent {shown_name(ep.agent)}, {which} {_shown_id(where)}: {exc}"
            ) from exc
    return episodes


@dataclass(frozen=True)
class ImportedFile:
    """A file read for import: its format and its episodes, every one already checked, and
    the agents the caller put them into (``assigned``: ``agent``, the configured agent for
    lines naming none, a LoCoMo or memsets file's agents) rather than the file's own names;
    a write refuses such a name as a new agent's (``Memory._new_agent``). ``unowned_prefix``:
    the prefix its per-conversation agents were given for want of an agent to read them for
    ("default/"), which the storing memory replaces by its configured agent's."""

    format: Format
    episodes: list[NewEpisode]
    assigned: frozenset[str] = frozenset()
    unowned_prefix: str | None = None


def read_file(
    path: str | os.PathLike[str],
    *,
    agent: str | None = None,
    default_agent: str | None = None,
    per_conversation: bool = False,
    keep_to: str | None = None,
) -> ImportedFile:
    """Read and check a whole file of any supported format (detected), writing nothing.

    A JSONL export keeps each episode's agent unless ``agent`` is given (a line without
    one goes to ``default_agent``, else to the configured agent of the memory that stores
    it); without ``agent``, a line that names another agent
    than ``keep_to`` (when given: the agent a configuration names on purpose,
    :meth:`.Config.named_agent`) is refused. The
    episodes of a LoCoMo or memsets file go to ``agent`` (else ``default_agent``, else the
    storing memory's configured agent), or with ``per_conversation`` one agent per
    conversation, ``<agent>/<id>`` (``default/<id>`` when neither is given).
    InvalidInput names what is wrong, before anything is stored.
    """
    switches(per_conversation=per_conversation)
    file = Path(checked_path(path, "an import reads a file's path (a str)"))
    if file.is_dir():
        raise InvalidInput(f"{file} is a folder: give the file to import")
    if not file.exists():
        raise InvalidInput(f"no such file: {file}")
    if not file.is_file():  # a pipe (`<(…)`, /dev/stdin) is read once, here
        try:
            with file.open("rb") as fh:
                data = read_bounded(fh, str(file))
        except OSError as exc:
            raise unreadable(file, exc) from exc
        return read_stream(
            data,
            str(file),
            agent=agent,
            default_agent=default_agent,
            per_conversation=per_conversation,
            keep_to=keep_to,
        )
    return _read_regular(file, agent, default_agent, per_conversation, keep_to)


def unreadable(path: str | os.PathLike[str], exc: OSError) -> InvalidInput:
    """The error of a file that could not be read (a failing disk, a network mount gone,
    no permission): a read's, named as such, not taken for the output's."""
    return InvalidInput(f"cannot read {os.fspath(path)}: {exc.strerror or exc}")


def checked_path(value: object, what: str) -> str | os.PathLike[str]:
    """``value`` when it is a path given as text (a str, or an ``os.PathLike`` of one); an
    :class:`.InvalidInput` saying ``what`` it must be otherwise (None, a number, bytes)."""
    if isinstance(value, (str, os.PathLike)) and isinstance(os.fspath(value), str):
        return value
    raise InvalidInput(f"{what}, not {type(value).__name__}")


def names_a_folder(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder, or ends in a separator or a ``.`` or ``..`` part
    (``exports/``, ``exports/.``) and so means one, whether or not it exists (a file of
    that name is not what it asks for: ``Path("exports/.")`` is the file ``exports``)."""
    text = os.fspath(path)
    return ends_as_a_folder(text) or os.path.isdir(text)


MAX_STREAM_BYTES = 2**30
"""The most bytes read from a pipe or a device to import (a file is read as a file)."""


def read_bounded(
    stream: IO[bytes],
    name: str,
    limit: int = MAX_STREAM_BYTES,
    advice: str = "write it to a file and import the file",
) -> bytes:
    """All of ``stream``, which must end within ``limit`` bytes: ``import /dev/zero``, or
    a pipe that never ends, is an :class:`.InvalidInput` (saying ``advice``) rather than
    memory without end."""
    data = stream.read(limit + 1)
    if len(data) > limit:
        size = f"{limit / 2**30:g} GiB" if limit >= 2**30 else f"{limit:,} bytes"
        raise InvalidInput(f"{name} goes on past {size}: {advice}")
    return data


def read_stream(
    data: bytes,
    name: str = STANDARD_INPUT,
    *,
    agent: str | None = None,
    default_agent: str | None = None,
    per_conversation: bool = False,
    keep_to: str | None = None,
) -> ImportedFile:
    """Like :func:`read_file`, for a file's bytes already read (standard input, a pipe);
    errors name the input ``name``. The bytes are read from a copy in the temporary folder
    (``TMPDIR``): a :class:`.DiskFull` (:class:`.DiskError`) names it when it takes none."""
    try:
        temporary = tempfile.TemporaryDirectory(prefix="memengine-import-")
    except OSError as exc:
        raise _no_copy(exc, name, len(data)) from exc
    with temporary as folder:
        copy = Path(folder) / "input"
        try:
            copy.write_bytes(data)
        except OSError as exc:  # (a write's error names no file)
            raise _no_copy(exc, name, len(data), os.path.dirname(folder)) from exc
        try:
            return _read_regular(copy, agent, default_agent, per_conversation, keep_to)
        except (InvalidInput, DiskError) as exc:  # (a UTF-16 file is copied again, as UTF-8)
            raise type(exc)(str(exc).replace(str(copy), name)) from exc.__cause__


def _no_copy(exc: OSError, name: str, size: int, folder: str | None = None) -> DiskError:
    """The error of a temporary copy of the input ``name`` (``size`` bytes) that could not
    be written to ``folder`` (else the one ``exc`` names): a :class:`.DiskFull` when there was
    no room, said so rather than taken for a failure to print the output; a
    :class:`.DiskError` naming the limit when the copy reached a limit on the size of files
    (``ulimit -f``), which no space freed lifts."""
    where = folder or (os.path.dirname(os.fsdecode(exc.filename)) if exc.filename else None)
    said = f"could not write the temporary copy of {name} an import reads ({size:,} bytes)"
    said += f" to {where}" if where else ""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EFBIG:  # (a limit on the size of files: no space freed lifts it)
        elsewhere = "set TMPDIR to a folder on another file system"
        return DiskError(f"{said}: {reason}: {past_size_limit(elsewhere)} (nothing was imported)")
    if exc.errno in NO_ROOM_ERRNOS:
        return DiskFull(
            f"{said}: {reason}; free some space there, or set TMPDIR to a folder with room "
            "(nothing was imported)"
        )
    return DiskError(f"{said}: {reason}; set TMPDIR to another folder (nothing was imported)")


_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
"""The byte-order marks of UTF-16 and UTF-32 (Windows PowerShell 5's ``>`` writes UTF-16)."""


def wide_codec(head: bytes) -> str | None:
    """The codec of a file that begins with ``head`` when that is a UTF-16 or UTF-32
    byte-order mark (None: UTF-8, with or without its own mark)."""
    return next((codec for bom, codec in _WIDE_BOMS if head.startswith(bom)), None)


def _read_regular(
    file: Path,
    agent: str | None,
    default_agent: str | None,
    per_conversation: bool,
    keep_to: str | None = None,
) -> ImportedFile:
    try:
        with file.open("rb") as fh:
            head = fh.read(4)
    except OSError as exc:
        raise unreadable(file, exc) from exc
    wide = wide_codec(head)
    if wide is not None:  # read again as UTF-8
        try:
            text = file.read_bytes().decode(wide)
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{file}: not {wide.upper()} after its byte-order mark") from exc
        except OSError as exc:  # (a read, not an output)
            raise unreadable(file, exc) from exc
        return read_stream(
            text.encode("utf-8"),
            str(file),
            agent=agent,
            default_agent=default_agent,
            per_conversation=per_conversation,
            keep_to=keep_to,
        )
    fmt = detect_format(file)
    if fmt == "jsonl":
        if per_conversation:
            raise InvalidInput(
                "per_conversation (--agent-per-conversation) is for LoCoMo and memsets "
                "files: a JSONL export keeps each episode's agent (an agent puts them all in one)"
            )
        defaulted: set[str] = set()  # the configured agent, given to lines that name none
        eps = list(
            read_jsonl(
                file,
                agent=agent,
                default_agent=default_agent,
                defaulted=defaulted,
                keep_to=keep_to,
            )
        )
        return ImportedFile(fmt, eps, frozenset(defaulted if agent is None else {agent}))
    owner = agent if agent is not None else default_agent
    eps = read_conversations(file, fmt, agent=owner or "default", per_conversation=per_conversation)
    if owner is None and not per_conversation:  # no agent chosen: the storing memory's
        eps = [_unnamed(e) for e in eps]
    assigned = frozenset(e.agent for e in eps if "agent" in e.model_fields_set)
    unowned = "default/" if owner is None and per_conversation else None
    return ImportedFile(fmt, eps, assigned, unowned_prefix=unowned)


def _unnamed(episode: NewEpisode) -> NewEpisode:
    """``episode`` with its agent left out, so the memory that stores it gives it its
    configured agent (:attr:`.NewEpisode.agent`)."""
    return NewEpisode.model_construct(episode.model_fields_set - {"agent"}, **dict(episode))
