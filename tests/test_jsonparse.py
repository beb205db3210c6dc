"""Unit and property tests of memengine.llm.jsonparse.parse_json_object."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memengine.errors import LLMError, LLMResponseError
from memengine.llm import parse_json_object

from .helpers import brace_scan_reads


def test_plain_object() -> None:
    assert parse_json_object('{"a": 1, "b": [true, null]}') == {"a": 1, "b": [True, None]}


def test_surrounding_whitespace() -> None:
    assert parse_json_object('\n\n  {"a": 1}  \n') == {"a": 1}


def test_fenced_json() -> None:
    text = 'Here you go:\n```json\n{"queries": ["a", "b"]}\n```\nHope this helps!'
    assert parse_json_object(text) == {"queries": ["a", "b"]}


def test_fence_without_language_and_same_line() -> None:
    assert parse_json_object('```{"a": 2}```') == {"a": 2}
    assert parse_json_object('```\n{"a": 3}\n```') == {"a": 3}


def test_prose_around_object() -> None:
    text = 'Sure! The answer is {"score": 0.5, "ok": true}. Let me know if you need more.'
    assert parse_json_object(text) == {"score": 0.5, "ok": True}


def test_braces_inside_strings_and_escapes() -> None:
    text = 'Result: {"s": "a } tricky { \\" quote", "t": "back\\\\slash"} end'
    assert parse_json_object(text) == {"s": 'a } tricky { " quote', "t": "back\\slash"}


def test_prose_braces_before_object_are_skipped() -> None:
    text = 'I considered {options} and {"choice": 1} is best.'
    assert parse_json_object(text) == {"choice": 1}


def test_nested_objects() -> None:
    text = 'x {"a": {"b": {"c": [1, {"d": 2}]}}} y'
    assert parse_json_object(text) == {"a": {"b": {"c": [1, {"d": 2}]}}}


def test_trailing_commas() -> None:
    assert parse_json_object('{"a": [1, 2, ], "b": {"c": 1,},}') == {"a": [1, 2], "b": {"c": 1}}


def test_comma_inside_string_is_kept() -> None:
    assert parse_json_object('{"a": "x,}", "b": 1,}') == {"a": "x,}", "b": 1}


def test_think_block_is_ignored() -> None:
    text = '<think>maybe {"wrong": 1} or not</think>\n{"right": 2}'
    assert parse_json_object(text) == {"right": 2}


def test_first_object_wins() -> None:
    assert parse_json_object('{"a": 1} and {"b": 2}') == {"a": 1}


def test_unicode() -> None:
    assert parse_json_object('Réponse : {"mot": "été ☀"}') == {"mot": "été ☀"}


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "b": [1, 2',
        '```json\n{"queries": ["a", "b"',
        'Here: {"a": "unterminated string',
    ],
)
def test_truncated_raises(text: str) -> None:
    with pytest.raises(LLMResponseError, match="truncated"):
        parse_json_object(text)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "no json here", "{not json}", '{"a": 1]', "{'a': 1}"],
)
def test_invalid_raises(text: str) -> None:
    with pytest.raises(LLMResponseError):
        parse_json_object(text)


@pytest.mark.parametrize(
    "text", ["[1, 2]", '"a string"', "42", "null", "true", "```json\n[1]\n```"]
)
def test_top_level_not_object_raises(text: str) -> None:
    with pytest.raises(LLMResponseError, match="not an object"):
        parse_json_object(text)


def test_error_is_an_llm_error() -> None:
    with pytest.raises(LLMError):
        parse_json_object("nope")


def test_many_open_braces_is_fast() -> None:
    with pytest.raises(LLMResponseError):
        parse_json_object("{" * 20_000)


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=12,
)
_json_objects = st.dictionaries(st.text(max_size=8), _json_values, max_size=5)
_prose = st.text(
    alphabet=st.characters(exclude_characters='{}[]"`', exclude_categories=["Cs"]),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(
    obj=_json_objects,
    before=_prose,
    after=_prose,
    fenced=st.booleans(),
    indent=st.sampled_from([None, 2]),
)
def test_roundtrip_property(
    obj: dict[str, Any], before: str, after: str, fenced: bool, indent: int | None
) -> None:
    dumped = json.dumps(obj, indent=indent, ensure_ascii=False)
    body = f"```json\n{dumped}\n```" if fenced else dumped
    assert parse_json_object(f"{before}{body}{after}") == obj


def test_think_blocks_around_text_whose_lower_case_is_longer() -> None:
    """İ lower-cases to two characters: the tags are found in the text itself."""
    reply = 'İ<think>İstanbul or İzmir?</think>{"expanded_queries": ["İstanbul trip"]}'
    assert parse_json_object(reply) == {"expanded_queries": ["İstanbul trip"]}


def test_trailing_commas_are_repaired_only_within_the_scan_budget() -> None:
    """The repair reads every character in Python: megabytes of broken JSON cost seconds
    of a thread after its turn had moved on."""
    from memengine.llm import jsonparse

    small = '{"queries": ["a", "b",],}'
    assert parse_json_object(small) == {"queries": ["a", "b"]}
    padding = " " * jsonparse._SCAN_BUDGET
    big = '{"queries": ["a", "b",],' + padding + "}"
    assert jsonparse._loads(big) is jsonparse._FAIL
    with pytest.raises(LLMResponseError, match="no valid JSON object"):
        parse_json_object("```json\n" + big + "\n```")


def _reference_end(text: str, start: int, stop: int) -> tuple[int | None, int]:
    """The brace scan as it was, a character at a time: what the weighed one must agree with."""
    depth, in_string, escaped = 0, False, False
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


def _reference_strip(text: str) -> str:
    """The trailing-comma repair as it was, a character at a time."""
    out: list[str] = []
    in_string, escaped, i = False, False, 0
    while i < len(text):
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
        elif ch == "," and text[i + 1 :].lstrip(" \t\r\n")[:1] in ("}", "]"):
            pass
        else:
            out.append(ch)
        i += 1
    return "".join(out)


_BRACKETY = st.text(alphabet='{}[]"\\ a,:1\n', max_size=80)


@settings(max_examples=400, deadline=None)
@given(body=_BRACKETY, chunk=st.integers(1, 9), cut=st.integers(0, 90))
@example(body='"\\"}', chunk=2, cut=90)  # a stretch read ends on an escape inside a string
def test_the_weighed_brace_scan_agrees_with_reading_each_character(
    body: str, chunk: int, cut: int
) -> None:
    """Stretches are passed whole by counting (C speed); where each one ends and how an
    escape crosses into the next must not change which bracket closes the object."""
    from memengine.llm import jsonparse

    text = "{" + body
    stop = min(len(text), 1 + cut)
    saved = jsonparse._CHUNK
    jsonparse._CHUNK = chunk
    try:
        got = jsonparse._balanced_end(text, 0, stop, jsonparse._Budget())
    finally:
        jsonparse._CHUNK = saved
    assert got == _reference_end(text, 0, stop)


@settings(max_examples=400, deadline=None)
@given(text=_BRACKETY)
def test_the_trailing_comma_repair_agrees_with_reading_each_character(text: str) -> None:
    from memengine.llm import jsonparse

    assert jsonparse._strip_trailing_commas(text, jsonparse._Budget()) == _reference_strip(text)


@pytest.mark.parametrize(
    "reply",
    ["{" * 1_000_000, "{ a" * 330_000, "<think>" + "{" * 500_000, "{" + '"a":1,' * 160_000],
    ids=["braces", "braces-and-filler", "unclosed-thinking", "commas"],
)
def test_a_megabyte_of_braces_is_weighed_not_read_a_character_at_a_time(reply: str) -> None:
    """Read a character at a time, twice repaired and once scanned, such a reply cost two
    seconds of a turn's thread, past both phase deadlines (and its turn said "timeout")."""
    from memengine.llm import jsonparse

    budget = jsonparse._Budget()
    with pytest.raises(LLMResponseError, match="holds a truncated JSON object"):
        jsonparse._parse(reply, False, budget)
    assert budget.stepped < 10_000


def test_a_scan_that_runs_out_of_budget_finds_no_valid_object() -> None:
    """Past 1,000,000 characters the scan stops: it cannot say the text ended in an object."""
    from memengine.llm import jsonparse

    budget = jsonparse._Budget()
    with pytest.raises(LLMResponseError, match="holds no valid JSON object"):
        jsonparse._parse("{" * 1_040_000, False, budget)
    assert budget.stepped < 10_000


def test_an_object_after_900_000_characters_of_filler_is_still_found() -> None:
    from memengine.llm import jsonparse

    budget = jsonparse._Budget()
    reply = "x" * 900_000 + '{"expanded_queries": ["a", "b",], "s": "x,}",}'
    assert jsonparse._parse(reply, False, budget) == {"expanded_queries": ["a", "b"], "s": "x,}"}
    assert budget.stepped < 10_000


def test_the_passes_of_one_parse_share_one_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fenced reply was scanned in its fence and then whole, each pass with a budget of
    its own: twice the characters the documentation promises."""
    from memengine.llm import jsonparse

    read = brace_scan_reads(monkeypatch)
    with pytest.raises(LLMResponseError, match="truncated JSON object"):
        parse_json_object("```json\n{" + "x" * 900_000 + "\n```")
    assert len(read) == 2  # the fence's text, then the reply whole: what was left
    assert sum(read) == jsonparse._SCAN_BUDGET
