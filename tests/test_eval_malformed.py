"""Malformed evaluation data is an EvaluationError naming what is wrong, not a traceback
(no shared data needed)."""

from __future__ import annotations

import copy
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
        (_memset(asked_at="yesterday"), "question 1: asked_at is not an ISO 8601 time"),
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


def test_a_locomo_question_that_is_null_is_skipped_not_read_as_none() -> None:
    sample = {
        **copy.deepcopy(LOCOMO),
        "qa": [{"question": None, "evidence": ["D1:1"], "category": 2}],
    }
    assert load_locomo(sample).questions == []
