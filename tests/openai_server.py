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
    "deterministic_vector",
    "response_format_kind",
    "scripted_openai",
]


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAI]:
    """A started :class:`ScriptedOpenAI`, closed after the test."""
    with ScriptedOpenAI() as srv:
        yield srv
