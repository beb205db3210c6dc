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
from ..text import has_surrogate, replace_surrogates

__all__ = ["parse_json_object"]

_FENCE_RE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
# How many opening braces to try as the start of the object before giving up;
# keeps pathological inputs (thousands of "{") from costing quadratic time.
_MAX_STARTS = 64
# How many characters the brace scan may read in all (a reply of a megabyte of "{" and
# filler would otherwise cost seconds of a turn's thread, holding the GIL).
_SCAN_BUDGET = 1_000_000
_SNIPPET = 120


def parse_json_object(text: str, *, cut: bool = False) -> dict[str, Any]:
    """Return the first JSON object found in ``text``, with any lone surrogate in its
    strings replaced (``"\\ud800"`` is valid JSON but cannot be stored or sent on).

    Accepts plain JSON, JSON in a ```json fence or surrounded by prose, and
    trailing commas; raises LLMResponseError if no complete object can be found.
    ``cut``: the reply was cut at its token limit, so an object found inside one that
    never closes is a piece of the answer, not the answer (also an LLMResponseError).
    """
    if not isinstance(text, str):
        raise LLMResponseError(f"LLM reply is not text but {type(text).__name__}")
    whole = _loads(text.strip())  # (a reason may quote "<think>": the reply is still JSON)
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
            return _safe_strings(_first_object(after, cut))
        if after:
            with contextlib.suppress(LLMResponseError):
                return _safe_strings(_first_object(after, cut))
    cleaned = _without_thinking(text).strip()
    if not cleaned:
        raise LLMResponseError("LLM reply is empty; expected a JSON object")

    return _safe_strings(_first_object(cleaned, cut))


_THINK_OPEN = re.compile("<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile("</think>", re.IGNORECASE)


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


def _first_object(cleaned: str, cut: bool) -> dict[str, Any]:
    whole = _loads(cleaned)
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
        value = _loads(fenced)
        if isinstance(value, dict):
            return value
        if value is not _FAIL:
            raise LLMResponseError(
                f"LLM reply's fenced JSON is not an object (top level is {_json_type(value)}): "
                f"{_snippet(fenced)}"
            )
        found, unclosed = _scan(fenced, cut)
        if found is not None:
            return found
        truncated = truncated or unclosed

    found, unclosed = _scan(cleaned, cut)
    if found is not None:
        return found
    truncated = truncated or unclosed

    if truncated:
        raise LLMResponseError(f"LLM reply holds a truncated JSON object: {_snippet(cleaned)}")
    raise LLMResponseError(f"LLM reply holds no valid JSON object: {_snippet(cleaned)}")


_FAIL: Any = object()


_BRACE = re.compile(r"\{")


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


def _loads(candidate: str) -> Any:
    """json.loads, then once more without trailing commas; ``_FAIL`` if both fail (or the
    nesting is too deep to parse). A text longer than :data:`_SCAN_BUDGET` is not
    repaired: the repair reads every character in Python (megabytes of broken JSON would
    cost seconds of a thread, holding the GIL, after its turn has moved on)."""
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError):  # RecursionError: nested past the stack's depth
        pass
    if len(candidate) > _SCAN_BUDGET:
        return _FAIL
    fixed = _strip_trailing_commas(candidate)
    if fixed == candidate:
        return _FAIL
    try:
        return json.loads(fixed)
    except (ValueError, RecursionError):
        return _FAIL


def _scan(text: str, cut: bool = False) -> tuple[dict[str, Any] | None, bool]:
    """Find the first balanced ``{…}`` that parses to a dict.

    Returns ``(object, truncated)``: ``truncated`` is True when some opening
    brace was never closed (the text ends inside an object). With ``cut``, an object
    found after such a brace is not returned (it is a piece of the unclosed one). At
    most :data:`_MAX_STARTS` braces are tried and :data:`_SCAN_BUDGET` characters read.
    """
    truncated = False
    start = text.find("{")
    tries = 0
    budget = _SCAN_BUDGET
    while start != -1 and tries < _MAX_STARTS and budget > 0:
        tries += 1
        stop = min(len(text), start + budget)
        end, read_to = _balanced_end(text, start, stop)
        budget -= read_to - start
        if end is None:
            truncated = truncated or stop == len(text)
        elif end > start:
            value = _loads(text[start : end + 1])
            if isinstance(value, dict):
                return (None, True) if cut and truncated else (value, False)
        start = text.find("{", start + 1)
    return None, truncated


def _balanced_end(text: str, start: int, stop: int) -> tuple[int | None, int]:
    """Index of the ``}`` closing the ``{`` at ``start``, aware of strings and escapes,
    read up to ``stop``; with the index after the last character read.

    ``None`` means ``stop`` came first (the text ended: truncated); ``-1`` means a
    bracket mismatch.
    """
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, stop):
        ch = text[i]
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
                return (i if ch == "}" else -1), i + 1
    return None, stop


def _strip_trailing_commas(text: str) -> str:
    """Drop commas that directly precede ``}`` or ``]`` (outside strings)."""
    out: list[str] = []
    in_string = False
    escaped = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if in_string:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
            out.append(ch)
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
            out.append(ch)
        else:
            out.append(ch)
        i += 1
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
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= _SNIPPET else flat[:_SNIPPET] + "…")


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
