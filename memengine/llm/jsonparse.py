"""Tolerant extraction of one JSON object from an LLM reply.

Models asked for JSON often wrap it in a Markdown fence, add a sentence
before or after it, leave a trailing comma, or (reasoning models) put a
``<think>…</think>`` block first. :func:`parse_json_object` copes with all of
these and raises :class:`~memengine.errors.LLMResponseError` for anything it
cannot turn into a ``dict`` (truncated text, invalid JSON, a top-level list).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from typing import Any

from ..errors import LLMResponseError
from ..lazy_re import lazy_compile
from ..text import has_surrogate, replace_surrogates

__all__ = ["parse_json_object"]

_FENCE_RE = lazy_compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
# How many opening braces to try as the start of the object before giving up;
# keeps pathological inputs (thousands of "{") from costing quadratic time.
_MAX_STARTS = 64
# How many characters the brace scans and the trailing-comma repairs of one parse may
# read in all, every pass together (a reply of a megabyte of "{" and filler would
# otherwise cost seconds of a turn's thread, holding the GIL, after its turn gave up).
_SCAN_BUDGET = 1_000_000
# The stretch the brace scan weighs at once with str.count (C speed): one that cannot
# close the object is skipped whole; only one that may is read a character at a time.
_CHUNK = 4096
_SNIPPET = 120


class _Budget:
    """What one parse may still read (:data:`_SCAN_BUDGET` characters, shared by all its
    passes, so that two passes cannot cost twice the bound), the characters it read one
    at a time in Python (``stepped``: the work the bound is there to keep small), and the
    text it tried to load last with what that gave (``tried``, ``tried_value``)."""

    __slots__ = ("left", "stepped", "tried", "tried_value")

    def __init__(self, left: int = _SCAN_BUDGET) -> None:
        self.left = left
        self.stepped = 0
        self.tried: str | None = None
        self.tried_value: Any = None


def parse_json_object(text: str, *, cut: bool = False) -> dict[str, Any]:
    """Return the first JSON object found in ``text``, with any lone surrogate in its
    strings replaced (``"\\ud800"`` is valid JSON but cannot be stored or sent on).

    Accepts plain JSON, JSON in a ```json fence or surrounded by prose, and
    trailing commas; raises LLMResponseError if no complete object can be found.
    ``cut``: the reply was cut at its token limit, so an object found inside one that
    never closes is a piece of the answer, not the answer (also an LLMResponseError).
    """
    return _parse(text, cut, _Budget())


def _parse(text: str, cut: bool, budget: _Budget) -> dict[str, Any]:
    """:func:`parse_json_object` reading at most what ``budget`` allows."""
    if not isinstance(text, str):
        raise LLMResponseError(f"LLM reply is not text but {type(text).__name__}")
    whole = _loads(text.strip(), budget)  # (a reason may quote "<think>": the reply is still JSON)
    if isinstance(whole, dict):
        return _safe_strings(whole)
    closes = list(_THINK_CLOSE.finditer(text))
    opened = list(_THINK_OPEN.finditer(text))
    if cut and opened and (not closes or opened[-1].start() > closes[-1].start()):
        before = text[: opened[-1].start()].rstrip()  # a block the reply begins with, or one
        if not before or _THINK_CLOSE.search(before[-8:]):  # after another: thinking, cut
            raise LLMResponseError(  # (what it quoted while thinking is no answer)
                "LLM reply was cut inside its thinking (<think> never closed); expected a "
                "JSON object"
            )
    if closes:  # the answer follows the last close: thinking may quote a memory's JSON
        after = text[closes[-1].end() :].strip()
        if not _THINK_OPEN.search(text, 0, closes[0].start()):  # (a template opened it:
            # Qwen3, DeepSeek-R1): all before the close is thinking, unless the close is
            # inside a string of the answer (a reply about HTML, "</think> tags")
            holding = _object_around(text, closes[-1].start())
            if holding is not None:
                return _safe_strings(holding)
            if not after:
                raise LLMResponseError("LLM reply holds only its thinking; expected a JSON object")
            return _safe_strings(_first_object(after, cut, budget))
        if after:
            with contextlib.suppress(LLMResponseError):
                return _safe_strings(_first_object(after, cut, budget))
    cleaned = _without_thinking(text).strip()
    if not cleaned:
        raise LLMResponseError("LLM reply is empty; expected a JSON object")

    return _safe_strings(_first_object(cleaned, cut, budget))


_THINK_OPEN = lazy_compile("<think>", re.IGNORECASE)
_THINK_CLOSE = lazy_compile("</think>", re.IGNORECASE)


def _without_thinking(text: str) -> str:
    """``text`` without its ``<think>…</think>`` blocks (an unclosed one stays), in one
    pass: one regular expression for a whole block rescans to the end from every unclosed
    ``<think>``. The tags are found in ``text`` itself (its lower-case form may be longer:
    İ is two characters there)."""
    parts: list[str] = []
    at = 0
    while True:
        start = _THINK_OPEN.search(text, at)
        end = _THINK_CLOSE.search(text, start.end()) if start is not None else None
        if start is None or end is None:
            parts.append(text[at:])
            return "".join(parts)
        parts.append(text[at : start.start()])
        at = end.end()


def _first_object(cleaned: str, cut: bool, budget: _Budget) -> dict[str, Any]:
    whole = _loads(cleaned, budget)
    if isinstance(whole, dict):
        return whole
    if whole is not _FAIL:
        raise LLMResponseError(
            f"LLM reply is JSON but not an object (top level is {_json_type(whole)}): "
            f"{_snippet(cleaned)}"
        )

    truncated = False
    for match in _FENCE_RE.finditer(cleaned):
        fenced = match.group(1).strip()
        value = _loads(fenced, budget)
        if isinstance(value, dict):
            return value
        if value is not _FAIL:
            raise LLMResponseError(
                f"LLM reply's fenced JSON is not an object (top level is {_json_type(value)}): "
                f"{_snippet(fenced)}"
            )
        found, unclosed = _scan(fenced, cut, budget)
        if found is not None:
            return found
        truncated = truncated or unclosed

    found, unclosed = _scan(cleaned, cut, budget)
    if found is not None:
        return found
    truncated = truncated or unclosed

    if truncated:
        raise LLMResponseError(f"LLM reply holds a truncated JSON object: {_snippet(cleaned)}")
    raise LLMResponseError(f"LLM reply holds no valid JSON object: {_snippet(cleaned)}")


_FAIL: Any = object()


_BRACE = lazy_compile(r"\{")


def _object_around(text: str, at: int) -> dict[str, Any] | None:
    """The JSON object in ``text`` whose span holds the position ``at`` (a ``</think>``
    written inside one of its strings), or None; at most :data:`_MAX_STARTS` braces
    before ``at`` are tried."""
    decoder = json.JSONDecoder()
    for brace in itertools.islice(_BRACE.finditer(text, 0, at), _MAX_STARTS):
        start = brace.start()
        try:
            value, end = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and end > at:
            return value
    return None


def _loads(candidate: str, budget: _Budget | None = None) -> Any:
    """json.loads, then once more without trailing commas; ``_FAIL`` if both fail (or the
    nesting is too deep to parse). The repair reads in Python, so it runs only where a
    comma stands before a closing bracket (a C-speed search) and only while ``budget``
    holds the whole text (megabytes of broken JSON would cost seconds of a thread,
    holding the GIL, after its turn has moved on); the text tried last is not tried
    again (the whole reply is, from two places)."""
    if budget is None:
        budget = _Budget()
    if candidate is budget.tried or candidate == budget.tried:
        return budget.tried_value
    try:
        value = json.loads(candidate)
    except (ValueError, RecursionError):  # RecursionError: nested past the stack's depth
        value = _FAIL
    if value is _FAIL and _TRAILING_COMMA.search(candidate) and len(candidate) <= budget.left:
        budget.left -= len(candidate)
        fixed = _strip_trailing_commas(candidate, budget)
        if fixed != candidate:
            try:
                value = json.loads(fixed)
            except (ValueError, RecursionError):
                value = _FAIL
    budget.tried, budget.tried_value = candidate, value
    return value


_TRAILING_COMMA = lazy_compile(r",[ \t\r\n]*[}\]]")
# What the trailing-comma repair stops at outside strings, and the rest of a string.
_COMMA_OR_QUOTE = lazy_compile(r'["]|,(?=[ \t\r\n]*[}\]])')
_STRING_REST = lazy_compile(r'[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def _scan(text: str, cut: bool, budget: _Budget) -> tuple[dict[str, Any] | None, bool]:
    """Find the first balanced ``{…}`` that parses to a dict.

    Returns ``(object, truncated)``: ``truncated`` is True when some opening
    brace was never closed (the text ends inside an object). With ``cut``, an object
    found after such a brace is not returned (it is a piece of the unclosed one). At
    most :data:`_MAX_STARTS` braces are tried, and no more read than ``budget`` allows.
    """
    truncated = False
    start = text.find("{")
    tries = 0
    while start != -1 and tries < _MAX_STARTS and budget.left > 0:
        tries += 1
        stop = min(len(text), start + budget.left)
        end, read_to = _balanced_end(text, start, stop, budget)
        budget.left -= read_to - start
        if end is None:
            truncated = truncated or stop == len(text)
        elif end > start:
            value = _loads(text[start : end + 1], budget)
            if isinstance(value, dict):
                return (None, True) if cut and truncated else (value, False)
        start = text.find("{", start + 1)
    return None, truncated


def _balanced_end(text: str, start: int, stop: int, budget: _Budget) -> tuple[int | None, int]:
    """Index of the ``}`` closing the ``{`` at ``start``, aware of strings and escapes,
    read up to ``stop``; with the index after the last character read.

    ``None`` means ``stop`` came first (the text ended: truncated); ``-1`` means a
    bracket mismatch. A stretch whose strings hold no backslash is weighed with
    str.split and str.count (C speed): if its closing brackets outside strings are
    fewer than the depth, it cannot close the object and is passed whole; so a megabyte
    of ``{`` or filler costs milliseconds, not the second of reading it a character at
    a time (which only a stretch that may close the object, or escapes in its strings,
    still costs, within the budget).
    """
    depth = 1
    in_string = False
    i = start + 1
    while i < stop:
        chunk_end = min(stop, i + _CHUNK)
        pieces = text[i:chunk_end].split('"')
        inside = "".join(pieces[0::2] if in_string else pieces[1::2])
        if "\\" not in inside:  # no quote is escaped: the quotes split it exactly
            outside = "".join(pieces[1::2] if in_string else pieces[0::2])
            closes = outside.count("}") + outside.count("]")
            if closes < depth:
                depth += outside.count("{") + outside.count("[") - closes
                in_string ^= len(pieces) % 2 == 0  # an odd number of quotes
                i = chunk_end
                continue
        budget.stepped += chunk_end - i
        escaped = False
        for j in range(i, chunk_end):
            ch = text[j]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    return (j if ch == "}" else -1), j + 1
        if escaped:  # the chunk ended on a backslash: its character is the next one
            budget.stepped += 1
            i = chunk_end + 1
        else:
            i = chunk_end
    return None, stop


def _strip_trailing_commas(text: str, budget: _Budget) -> str:
    """Drop commas that directly precede ``}`` or ``]`` (outside strings), going from one
    quote or such comma to the next with regular expressions (C speed)."""
    out: list[str] = []
    at = 0
    n = len(text)
    while at < n:
        mark = _COMMA_OR_QUOTE.search(text, at)
        if mark is None:
            break
        budget.stepped += 1
        if mark.group() == ",":
            out.append(text[at : mark.start()])
            at = mark.end()
            continue
        rest = _STRING_REST.match(text, mark.end())
        if rest is None:  # a string that never closes: the rest is in it
            break
        out.append(text[at : rest.end()])
        at = rest.end()
    out.append(text[at:])
    return "".join(out)


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def _snippet(text: str) -> str:
    """The start of ``text`` with its runs of whitespace as one space, cut at
    :data:`_SNIPPET` characters; only a head of it is split (splitting a megabyte of
    filler into words cost more than the parse it reports on)."""
    head = text[: _SNIPPET * 8]
    flat = " ".join(head.split())
    if len(flat) <= _SNIPPET and len(head) == len(text):
        return repr(flat)
    return repr(flat[:_SNIPPET] + "…")


def _safe_strings(obj: dict[str, Any]) -> dict[str, Any]:
    """Every string in ``obj`` (keys and values, at any depth) with its lone surrogates
    replaced, in place; iterative, so that a deeply nested reply cannot exhaust the stack."""
    todo: list[Any] = [obj]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            for key, value in list(node.items()):
                if isinstance(value, str):
                    node[key] = replace_surrogates(value)
                else:
                    todo.append(value)
                if has_surrogate(key):
                    node[replace_surrogates(key)] = node.pop(key)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, str):
                    node[i] = replace_surrogates(value)
                else:
                    todo.append(value)
    return obj
