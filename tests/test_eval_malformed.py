"""Malformed evaluation data is an EvaluationError naming what is wrong, not a traceback
(no shared data needed)."""

from __future__ import annotations

import copy
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memengine.errors import EvaluationError
from memengine.evaluation.locomo import load_locomo
from memengine.evaluation.memsets import load_memset

MEMSET: dict[str, Any] = {
    "id": "c1",
    "sessions": [
        {
            "id": "s1",
            "exchanges": [
                {
                    "id": "e1",
                    "at": "2026-05-01T09:00:00Z",
                    "user": "I got a cat.",
                    "partner": "Nice!",
                }
            ],
        }
    ],
    "questions": [
        {
            "id": "q1",
            "type": "direct",
            "asked_at": "2026-05-02T09:00:00Z",
            "recent": [{"role": "user", "text": "Guess what"}],
            "query": "What pet do I have?",
            "evidence": ["e1"],
        }
    ],
}

EXCHANGE: dict[str, Any] = {**MEMSET["sessions"][0]["exchanges"][0], "partner": ""}

LOCOMO: dict[str, Any] = {
    "sample_id": "s",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I went camping in June."}],
    },
    "qa": [{"question": "When did Ann camp?", "evidence": ["D1:1"], "category": 2}],
}


def _memset(**question: Any) -> dict[str, Any]:
    conv = copy.deepcopy(MEMSET)
    conv["questions"][0].update(question)
    return conv


def _without(key: str) -> dict[str, Any]:
    conv = copy.deepcopy(MEMSET)
    del conv["questions"][0][key]
    return conv


def test_the_well_formed_samples_load() -> None:
    assert [q.evidence for q in load_memset(copy.deepcopy(MEMSET)).questions] == [("e1",)]
    assert [q.evidence for q in load_locomo(copy.deepcopy(LOCOMO)).questions] == [("D1:1",)]


@pytest.mark.parametrize(
    ("conversation", "said"),
    [
        ({**MEMSET, "questions": ["What pet do I have?"]}, "question 1 is not an object"),
        ({**MEMSET, "questions": {"q1": {}}}, "questions is a list, not a dict"),
        (_memset(recent="Guess what"), "question 1: recent is a list, not a str"),
        (_memset(recent=["Guess what"]), "question 1: recent holds a str, not a message"),
        (_memset(asked_at=1767225600), "question 1: asked_at is a time as ISO 8601 text, not"),
        (_memset(evidence="e1"), "question 1: evidence is a list, not a str"),
        (_memset(asked_at="yesterday"), "question 1: asked_at: not an ISO 8601 time"),
        (_without("query"), "c1 question 1 has no 'query'"),
        (_memset(query=None), "question 1: query is text, not None"),
        (_memset(id=None), "question 1: id is text, not None"),
        (_memset(type=None), "question 1: type is text, not None"),
        (_memset(recent=[{"role": "user", "text": None}]), "recent message's text is text, not"),
        (_memset(recent=[{"role": None, "text": "hi"}]), "recent message's role is text, not"),
        (
            {**MEMSET, "sessions": [{"id": "s1", "exchanges": ["I got a cat."]}]},
            "c1: session s1 exchange 1: not an object but a str",
        ),
        # found by a review (session 45): each was a repr, a late error or a wrong score
        (_memset(query="   "), "question q1: query is empty"),
        (_memset(query=5), "question q1: query is text, not 5"),
        (_memset(recent=[{"role": "bot", "text": "hi"}]), "role is one of user, partner"),
        (_memset(type="None", evidence=[]), "question 1: type 'None' is spelled 'none'"),
        (_memset(type="none"), "a 'none' question has nothing to find, but lists evidence"),
        (_memset(asked_at="2026-04-30T09:00:00Z"), "before its evidence e1 happened"),
        ({**MEMSET, "sessions": {"s1": []}}, "c1: sessions is a list, not a dict"),
        ({k: v for k, v in MEMSET.items() if k != "sessions"}, "c1: has no 'sessions'"),
        (
            {**MEMSET, "sessions": [{"id": "s1", "exchanges": [{"id": "e1", "user": "x"}]}]},
            "c1: session s1 exchange e1: has no 'at'",
        ),
        (
            {**MEMSET, "sessions": [{"id": "s1", "exchanges": [{**EXCHANGE, "id": None}]}]},
            "c1: session s1 exchange 1: id is text, not None",
        ),
        (
            {**MEMSET, "sessions": [{"id": "s1", "exchanges": [EXCHANGE, EXCHANGE]}]},
            "c1 exchange e1 appears twice",
        ),
        (
            {**MEMSET, "sessions": [{"id": "s1", "exchanges": [{**EXCHANGE, "user": " "}]}]},
            "c1 exchange e1: an exchange needs non-empty user or reply text",
        ),
        (
            {**MEMSET, "questions": [MEMSET["questions"][0], MEMSET["questions"][0]]},
            "c1 question q1 appears twice",
        ),
    ],
)
def test_a_malformed_memsets_conversation_is_named(conversation: dict[str, Any], said: str) -> None:
    with pytest.raises(EvaluationError, match="memsets conversation c1") as caught:
        load_memset(conversation)
    assert said in str(caught.value)


def test_a_numeric_question_id_is_read_as_text() -> None:
    assert [q.id for q in load_memset(_memset(id=7)).questions] == ["7"]


@pytest.mark.parametrize(
    ("qa", "said"),
    [
        ("When did Ann camp?", "qa is a list, not a str"),
        (["When did Ann camp?"], "qa item 1 is not an object but a str"),
        (
            [{"question": "When did Ann camp?", "evidence": "D1:1", "category": 2}],
            "qa item 1: evidence is a list, not a str",
        ),
        (
            [{"question": 42, "evidence": ["D1:1"], "category": 2}],
            "qa item 1: question is text, not 42",
        ),
        (
            [{"question": "When did Ann camp?", "evidence": ["D1:1"], "category": "2"}],
            "qa item 1: category is a whole number, not '2'",
        ),
    ],
)
def test_a_malformed_locomo_sample_is_named(qa: Any, said: str) -> None:
    with pytest.raises(EvaluationError, match="LoCoMo sample s") as caught:
        load_locomo({**copy.deepcopy(LOCOMO), "qa": qa})
    assert said in str(caught.value)


def test_a_category_that_is_not_a_number_is_an_unknown_one() -> None:
    """A list as the category was an unhashable TypeError."""
    sample = copy.deepcopy(LOCOMO)
    sample["qa"][0]["category"] = [2]
    loaded = load_locomo(sample)
    assert loaded.questions == [] and loaded.evidence["unknown category"]["skipped"] == 1


@pytest.mark.parametrize("question", [None, "   ", "missing"])
def test_a_locomo_question_that_asks_nothing_is_named_not_read_as_none(question: Any) -> None:
    """A null question was skipped as one "without valid evidence" (its evidence was
    valid); a memsets file's blank query is an error too."""
    qa: dict[str, Any] = {"question": question, "evidence": ["D1:1"], "category": 2}
    if question == "missing":
        del qa["question"]
    with pytest.raises(EvaluationError, match="qa item 1 asks nothing"):
        load_locomo({**copy.deepcopy(LOCOMO), "qa": [qa]})


@pytest.mark.parametrize(
    ("session", "said"),
    [
        ([{"speaker": "Ann", "text": "hi"}], "session_1 turn 1: has no 'dia_id'"),
        (["hi"], "session_1 turn 1: not an object but a str"),
        ("hi", "session_1 is a list of turns, not a str"),
        (
            [{"speaker": "Ann", "dia_id": "D1:1", "text": "a"}] * 2,
            "turn D1:1 appears twice",
        ),
    ],
)
def test_a_malformed_locomo_turn_is_named(session: Any, said: str) -> None:
    """A turn without its id was ``malformed LoCoMo sample: KeyError('dia_id')``; two turns
    of one id were both taken as the evidence."""
    sample = copy.deepcopy(LOCOMO)
    sample["conversation"]["session_1"] = session
    with pytest.raises(EvaluationError, match="LoCoMo sample s") as caught:
        load_locomo(sample)
    assert said in str(caught.value)


def test_a_time_without_a_zone_is_asked_in_the_configured_one() -> None:
    """A naive ``at`` is read in ``time_zone``, but a naive ``asked_at`` was read as UTC: in
    New York a question asked half an hour after its evidence was asked before it."""
    from zoneinfo import ZoneInfo

    from memengine import Config

    conv = copy.deepcopy(MEMSET)
    conv["sessions"][0]["exchanges"][0]["at"] = "2026-03-10T09:30:00"
    conv["questions"][0]["asked_at"] = "2026-03-10T10:00:00"
    localize = Config(time_zone="America/New_York").localize
    asked = load_memset(conv, localize=localize).questions[0].asked_at
    assert asked == datetime(2026, 3, 10, 10, tzinfo=ZoneInfo("America/New_York"))


def test_an_error_names_the_conversation_as_the_run_does(tmp_path: Path) -> None:
    """With two files, a run calls the second's c1 ``b/c1``, but its errors said ``c1`` (the
    first file's has that id too); a conversation without an id was ``?``."""
    from memengine import Config
    from memengine.evaluation.memsets import run_memset

    from .helpers import HashEmbedder

    good, bad = tmp_path / "a.json", tmp_path / "b.json"
    good.write_text(json.dumps({"conversations": [copy.deepcopy(MEMSET)]}))
    bad.write_text(json.dumps({"conversations": [_memset(query=" ")]}))
    with pytest.raises(EvaluationError, match="memsets conversation b/c1 question q1: query"):
        run_memset([good, bad], config=Config(), embedder=HashEmbedder())
    nameless = {k: v for k, v in _memset(query=" ").items() if k != "id"}
    bad.write_text(json.dumps({"conversations": [nameless]}))
    with pytest.raises(EvaluationError, match="conversation conversation-1 question q1"):
        run_memset(bad, config=Config(), embedder=HashEmbedder())


def test_a_locomo_session_without_turns_needs_no_date() -> None:
    sample = copy.deepcopy(LOCOMO)
    sample["conversation"]["session_2"] = []
    assert [q.evidence for q in load_locomo(sample).questions] == [("D1:1",)]
