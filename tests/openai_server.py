"""The scripted OpenAI-compatible server for tests: a re-export plus a pytest fixture.

The server lives in :mod:`memengine.evaluation.scripted_openai` (the LLM
latency benchmark uses it too).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memengine.evaluation.scripted_openai import (
    RecordedRequest,
    ScriptedOpenAI,
    ScriptedReply,
    deterministic_vector,
    response_format_kind,
)

__all__ = [
    "RecordedRequest",
    "ScriptedOpenAI",
    "ScriptedReply",
    "completion_body",
    "deterministic_vector",
    "response_format_kind",
    "scripted_openai",
]


def completion_body(content: str | None, **extra: object) -> dict[str, object]:
    """A chat completion body with one choice holding ``content``; ``extra`` replaces or
    adds top-level fields (``usage``, ``choices``)."""
    body: dict[str, object] = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    body.update(extra)
    return body


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """A started :class:`ScriptedOpenAI`, closed after the test."""
    with ScriptedOpenAI() as srv:
        yield srv
