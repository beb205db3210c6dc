"""ChatClient through real HTTP, with the real openai client, against the scripted server."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from memengine.errors import LLMError, LLMResponseError, LLMTimeout
from memengine.llm import ChatClient, JSONReply, Usage
from tests.openai_server import (
    ScriptedOpenAI,
    ScriptedReply,
    completion_body,
    response_format_kind,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"queries": {"type": "array", "items": {"type": "string"}}},
    "required": ["queries"],
}


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


@pytest.fixture
def client(srv: ScriptedOpenAI) -> Iterator[ChatClient]:
    with ChatClient(
        base_url=srv.base_url, api_key=None, timeout_s=2.0, max_retries=2, backoff_base_s=0.01
    ) as c:
        yield c


def ask(
    client: ChatClient, *, schema: dict[str, Any] | None = SCHEMA, deadline_s: float = 2.0
) -> JSONReply:
    return client.complete_json(
        model="test-chat",
        system="Answer in JSON.",
        user="Expand the query: coffee",
        schema=schema,
        max_tokens=64,
        deadline_s=deadline_s,
    )


def test_plain_json_reply(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(json_data={"queries": ["espresso", "latte"]}, usage=(12, 5))
    reply = ask(client)
    assert reply.data == {"queries": ["espresso", "latte"]}
    assert reply.raw == '{"queries": ["espresso", "latte"]}'
    assert reply.attempts == 1
    assert reply.usage == Usage(12, 5)
    assert reply.response_format == "json_schema"
    assert reply.finish_reason == "stop"
    assert 0 < reply.elapsed_s < 2.0

    (body,) = srv.chat_requests
    assert body["model"] == "test-chat"
    assert body["max_tokens"] == 64
    assert body["messages"] == [
        {"role": "system", "content": "Answer in JSON."},
        {"role": "user", "content": "Expand the query: coffee"},
    ]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "reply", "schema": SCHEMA, "strict": False},
    }
    assert srv.requests[0].headers["authorization"] == "Bearer not-needed"


def test_api_key_is_sent(srv: ScriptedOpenAI) -> None:
    srv.push_chat(json_data={"ok": 1})
    with ChatClient(base_url=srv.base_url, api_key="sk-test", timeout_s=2.0) as c:
        ask(c)
    assert srv.requests[0].headers["authorization"] == "Bearer sk-test"


def test_a_key_the_server_echoes_is_not_repeated(srv: ScriptedOpenAI) -> None:
    """A server's error that quotes the key it refused: the message (and so ``degraded``,
    ``--json``, ``llm-check``) says *** in its place."""
    key = "sk-proj-SECRETKEY1234567890"
    srv.push_chat(status=401, error_message=f"Incorrect API key provided: {key}. See docs.")
    c = ChatClient(base_url=srv.base_url, api_key=key, timeout_s=2.0, max_retries=0)
    with c, pytest.raises(LLMError, match="HTTP 401") as err:
        ask(c)
    assert key not in str(err.value) and "Incorrect API key provided: ***." in str(err.value)


def test_no_schema_uses_json_object(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(json_data={"ok": True})
    reply = ask(client, schema=None)
    assert reply.data == {"ok": True}
    assert srv.chat_requests[0]["response_format"] == {"type": "json_object"}


def test_json_in_prose_and_fences(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat('Sure! Here it is:\n```json\n{"queries": ["mocha",],}\n```\nEnjoy.')
    srv.push_chat('I think {"queries": ["flat white"]} fits best.')
    assert ask(client).data == {"queries": ["mocha"]}
    assert ask(client).data == {"queries": ["flat white"]}


def test_truncated_json_raises_response_error(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat('{"queries": ["espresso", "lat', finish_reason="length", usage=(10, 64))
    with pytest.raises(LLMResponseError, match=r"truncated.*max_tokens=64"):
        ask(client)
    assert client.usage_total == Usage(10, 64)  # tokens spent are still counted


def test_non_object_reply_raises_response_error(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat('["a", "b"]')
    with pytest.raises(LLMResponseError, match="not an object"):
        ask(client)


def test_empty_choices_raises_response_error(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(
        body={"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}
    )
    with pytest.raises(LLMResponseError, match="no message content"):
        ask(client)


def test_429_then_success(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(status=429, error_message="slow down")
    srv.push_chat(json_data={"queries": []})
    reply = ask(client)
    assert reply.attempts == 2
    assert reply.data == {"queries": []}
    assert len(srv.chat_requests) == 2


def test_500_repeated_raises_llm_error(srv: ScriptedOpenAI, client: ChatClient) -> None:
    for _ in range(3):
        srv.push_chat(status=500, error_message="model crashed")
    with pytest.raises(LLMError, match=r"HTTP 500.*model crashed") as info:
        ask(client)
    assert not isinstance(info.value, LLMTimeout)
    assert len(srv.chat_requests) == 3  # 1 + max_retries
    assert srv.pending == 0


def test_retries_stop_at_deadline(srv: ScriptedOpenAI) -> None:
    """Ten retries with growing back-off would take seconds: the deadline ends them, with
    the last error. (The deadline leaves room for the first 503 to come back on a loaded
    machine: at 0.5 s it once passed before the first answer, and the error was a
    timeout.)"""
    srv.default_chat = ScriptedReply(status=503, error_message="overloaded")
    with ChatClient(
        base_url=srv.base_url, timeout_s=3.0, max_retries=10, backoff_base_s=0.2, backoff_max_s=5
    ) as c:
        start = time.monotonic()
        with pytest.raises(LLMError, match="HTTP 503"):
            ask(c, deadline_s=1.5)
        assert time.monotonic() - start < 1.5 + 0.25
    assert 2 <= len(srv.chat_requests) < 11


def test_retry_after_longer_than_deadline_fails_fast(
    srv: ScriptedOpenAI, client: ChatClient
) -> None:
    srv.push_chat(status=429, headers={"Retry-After": "30"})
    start = time.monotonic()
    with pytest.raises(LLMError, match=r"HTTP 429.*server asked to wait 30 s before a retry"):
        ask(client, deadline_s=1.0)
    assert time.monotonic() - start < 0.5
    assert len(srv.chat_requests) == 1


def test_a_retry_after_past_the_deadline_is_the_reason_given(
    srv: ScriptedOpenAI, client: ChatClient
) -> None:
    """Most of the budget left, but less than the server's Retry-After: the error says
    that, not that no time was left."""
    srv.push_chat(status=429, headers={"Retry-After": "5"})
    with pytest.raises(LLMError) as caught:
        ask(client, deadline_s=0.9)
    said = str(caught.value)
    assert "(1 attempt, and the server asked to wait 5 s before a retry, more than the 0." in said
    left = float(said.split("more than the ")[1].split(" s left")[0])
    assert 0.5 < left <= 0.9 and "no time was left" not in said  # (0.895 is told 0.9)
    assert len(srv.chat_requests) == 1


def test_a_vague_400_walks_the_whole_ladder_then_fails(
    srv: ScriptedOpenAI, client: ChatClient
) -> None:
    """llama.cpp, Ollama and older vLLM refuse a format with a message that does not say
    so: every step is tried, and the last one's error is the call's."""
    srv.default_chat = ScriptedReply(status=400, error_message="Bad Request")
    with pytest.raises(LLMError, match=r"HTTP 400.*Bad Request"):
        ask(client)
    kinds = [response_format_kind(b) for b in srv.chat_requests]
    assert kinds == ["json_schema", "json_object_schema", "json_object", "none"]
    assert client.response_format_in_use == "json_schema"  # nothing was learned from failures


def _error(message: str, **fields: object) -> dict[str, object]:
    """An OpenAI-shaped error body: ``message`` with ``param``, ``code`` or ``type``."""
    return {"error": {"message": message, "type": "invalid_request_error"} | fields}


_CONTEXT = (
    "This model's maximum context length is 8192 tokens. However, your messages resulted in "
    "9120 tokens."
)


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (_error(_CONTEXT, param="messages", code="context_length_exceeded"), "maximum context"),
        (
            _error("Invalid 'messages[1].content': string too long.", param="messages[1].content"),
            "string too long",
        ),
        (_error("Request could not be processed.", code="context_length_exceeded"), "could not be"),
        (  # llama.cpp
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                }
            },
            "available context size",
        ),
        (  # vLLM: the error is the body, its code a number
            {
                "object": "error",
                "message": _CONTEXT,
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            },
            "maximum context length",
        ),
        (_error("prompt is too long: 9120 tokens > 8192 maximum"), "prompt is too long"),
        (_error("context length exceeded"), "context length exceeded"),
        (_error("Too many tokens in the request"), "Too many tokens"),
        (  # TGI, Together
            _error("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 8192."),
            "must be <= 8192",
        ),
        (  # vLLM
            _error("The decoder prompt (length 9120) is longer than the maximum model length"),
            "maximum model length",
        ),
        (  # Gemini's compatible endpoint
            _error("The input token count exceeds the maximum number of tokens allowed (8192)."),
            "maximum number of tokens",
        ),
        (  # LiteLLM, the upstream's own words lost
            {
                "error": {
                    "message": "litellm.ContextWindowExceededError: BadRequestError: "
                    "context window exceeded",
                    "type": "None",
                    "param": "None",
                    "code": "400",
                }
            },
            "context window exceeded",
        ),
        (
            _error("Invalid 'max_tokens': integer above maximum value.", param="max_tokens"),
            "max_tokens",
        ),
    ],
)
def test_a_400_about_the_context_stops_at_once(
    srv: ScriptedOpenAI, client: ChatClient, body: dict[str, object], said: str
) -> None:
    """A request longer than the model's context (or a parameter other than the format)
    fails with any ``response_format``: four requests said so four times, a turn's wait."""
    srv.default_chat = ScriptedReply(status=400, body=body)
    with pytest.raises(LLMError, match=rf"HTTP 400 for model 'test-chat': .*{said}"):
        ask(client)
    assert len(srv.chat_requests) == 1 and client.requests == 1
    assert response_format_kind(srv.chat_requests[0]) == "json_schema"
    assert client.response_format_in_use == "json_schema"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (
            _error(
                "400: Invalid model name passed in model=nope. Call `/v1/models` to view "
                "available models for your key."
            ),
            "model=nope",
        ),
        (_error("model 'nope' not found, try pulling it first"), "'nope' not found"),
        (
            _error("The model `nope` does not exist or you do not have access to it."),
            "`nope` does not exist",
        ),
        (_error("Unknown model: nope"), "Unknown model: nope"),
        # Ollama's native {"error": "…"} and a body of plain text reach the library as a
        # string, which it leaves out of its "Error code: 400": the text is the message
        ({"error": "model 'nope' not found, try pulling it first"}, "'nope' not found"),
        ("model 'nope' not found", "'nope' not found"),
    ],
    ids=["litellm", "ollama", "openai", "unknown", "ollama's shape", "a text body"],
)
def test_a_400_about_an_unknown_model_stops_at_once(
    srv: ScriptedOpenAI, client: ChatClient, body: object, said: str
) -> None:
    """LiteLLM and other proxies answer 400 for a model they do not have: the error names
    the cause, after one request, whatever the shape of the body that says it."""
    srv.default_chat = ScriptedReply(status=400, body=body)
    with pytest.raises(LLMError, match=r"HTTP 400 for model 'test-chat': .*" + re.escape(said)):
        ask(client)
    assert len(srv.chat_requests) == 1 and client.requests == 1


@pytest.mark.parametrize(
    "body",
    [
        _error(
            'Invalid request body: {"model": "nope", "messages": [{"role": "user", "content": '
            '"the model was not found, the prompt is too long"}]} - response_format json_schema '
            "unsupported"
        ),
        _error('Invalid request: {"model": "test-chat", "messages": []}'),
        _error("json_schema is not supported by this model; unknown model option 'grammar'"),
        _error("invalid request"),
        _error("Invalid schema for response_format 'reply'", param="response_format"),
        _error("Invalid value", param="response_format.json_schema.schema", code="invalid_value"),
        {  # LiteLLM's proxy: a param of "None" in every error
            "error": {
                "message": "litellm.BadRequestError: OpenAIException - Invalid parameter: "
                "'response_format' of type 'json_schema' is not supported with this model.",
                "type": "None",
                "param": "None",
                "code": "400",
            }
        },
        _error(  # OpenAI: the format refused for what the messages lack
            "'messages' must contain the word 'json' in some form, to use 'response_format' "
            "of type 'json_object'.",
            param="messages",
        ),
    ],
)
def test_a_400_that_may_be_about_the_format_still_steps_down(
    srv: ScriptedOpenAI, client: ChatClient, body: dict[str, object]
) -> None:
    """What a refused format looks like, or a quoted request body (with its messages, model
    and the user's words) beside it, is no other cause: the next format is tried."""
    srv.push_chat(status=400, body=body)
    srv.push_chat(json_data={"queries": ["a"]})
    reply = ask(client)
    assert (reply.attempts, reply.response_format) == (2, "json_object_schema")
    assert len(srv.chat_requests) == 2


def test_401_is_reported(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(status=401, error_message="Incorrect API key provided")
    with pytest.raises(LLMError, match=r"HTTP 401.*Incorrect API key"):
        ask(client)
    assert len(srv.chat_requests) == 1


def test_slow_reply_raises_timeout_within_deadline(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(json_data={"queries": []}, delay=3.0)
    start = time.monotonic()
    with pytest.raises(LLMTimeout, match="deadline"):
        ask(client, deadline_s=0.4)
    elapsed = time.monotonic() - start
    assert 0.35 <= elapsed < 0.4 + 0.3


def test_slow_retry_is_cut_by_deadline(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(status=500)
    srv.push_chat(json_data={"queries": []}, delay=3.0)
    start = time.monotonic()
    with pytest.raises(LLMTimeout):
        ask(client, deadline_s=0.4)
    assert time.monotonic() - start < 0.4 + 0.3
    assert len(srv.chat_requests) == 2


def test_per_request_timeout_is_retried_within_deadline(srv: ScriptedOpenAI) -> None:
    srv.push_chat(json_data={"late": True}, delay=2.0)
    srv.push_chat(json_data={"queries": ["fast"]})
    with ChatClient(base_url=srv.base_url, timeout_s=0.2, max_retries=1, backoff_base_s=0.01) as c:
        reply = ask(c, deadline_s=1.5)
    assert reply.data == {"queries": ["fast"]}
    assert reply.attempts == 2


def test_zero_deadline_raises_without_request(srv: ScriptedOpenAI, client: ChatClient) -> None:
    with pytest.raises(LLMTimeout):
        ask(client, deadline_s=0)
    assert srv.chat_requests == []


def test_connection_refused_is_quick(refused_port: int) -> None:
    url = f"http://127.0.0.1:{refused_port}/v1"
    with ChatClient(base_url=url, timeout_s=2.0, max_retries=3) as c:
        start = time.monotonic()
        with pytest.raises(LLMError) as info:
            ask(c, deadline_s=2.0)
        assert time.monotonic() - start < 0.5
    assert str(info.value) == f"LLM endpoint {url} refused the connection"
    assert not isinstance(info.value, LLMTimeout)


def test_json_schema_rejected_falls_back_and_is_remembered(
    srv: ScriptedOpenAI, client: ChatClient
) -> None:
    srv.reject_formats = {"json_schema"}
    srv.push_chat(json_data={"queries": ["a"]})
    srv.push_chat(json_data={"queries": ["b"]})
    first = ask(client)
    assert first.data == {"queries": ["a"]}
    assert first.attempts == 2
    assert first.response_format == "json_object_schema"
    bodies = srv.chat_requests
    assert bodies[0]["response_format"]["type"] == "json_schema"
    assert bodies[1]["response_format"] == {"type": "json_object", "schema": SCHEMA}
    assert client.response_format_in_use == "json_object_schema"

    second = ask(client)
    assert second.attempts == 1
    assert second.data == {"queries": ["b"]}
    assert response_format_kind(srv.chat_requests[2]) == "json_object_schema"


def test_a_step_down_is_remembered_for_a_while_only(
    srv: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 400 from a proxy must not cost the client its JSON mode for good."""
    from memengine.llm import client as client_module

    # the client's clock, moved on by hand: a loaded machine could let a memory of 0.3 s
    # pass before the second call, which then tried the best format again
    later = [0.0]
    clock = SimpleNamespace(**vars(time))
    clock.monotonic = lambda: time.monotonic() + later[0]
    monkeypatch.setattr(client_module, "time", clock)
    with ChatClient(base_url=srv.base_url, max_retries=0, format_memory_s=60) as client:
        srv.reject_formats = {"json_schema"}
        srv.push_chat(json_data={"n": 1})
        assert ask(client).response_format == "json_object_schema"
        srv.reject_formats = set()
        srv.push_chat(json_data={"n": 2})
        assert ask(client).response_format == "json_object_schema"  # remembered
        later[0] = 61.0
        srv.push_chat(json_data={"n": 3})
        reply = ask(client)
        assert (reply.response_format, reply.attempts) == ("json_schema", 1)  # tried again
        assert client.response_format_in_use == "json_schema"


def test_falls_back_to_plain_json_object_then_none(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.reject_formats = {"json_schema", "json_object_schema"}
    srv.push_chat(json_data={"n": 1})
    assert ask(client).response_format == "json_object"
    assert srv.chat_requests[-1]["response_format"] == {"type": "json_object"}

    srv.reject_formats = {"any"}
    srv.push_chat(json_data={"n": 2})
    reply = ask(client)
    assert reply.response_format == "none"
    assert "response_format" not in srv.chat_requests[-1]
    assert client.response_format_in_use == "none"


def test_max_completion_tokens_adaptation(srv: ScriptedOpenAI, client: ChatClient) -> None:
    def handler(body: Any) -> ScriptedReply:
        if "max_tokens" in body:
            return ScriptedReply(
                status=400,
                error_message="Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens'.",
            )
        return ScriptedReply(content='{"ok": 1}')

    srv.chat_handler = handler
    reply = ask(client)
    assert reply.data == {"ok": 1}
    assert reply.response_format == "json_schema"
    assert srv.chat_requests[-1]["max_completion_tokens"] == 64
    ask(client)
    assert "max_tokens" not in srv.chat_requests[-1]
    assert len(srv.chat_requests) == 3


def test_usage_totals_and_counts(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(json_data={"a": 1}, usage=(10, 3))
    srv.push_chat(status=429)
    srv.push_chat(json_data={"a": 2}, usage=(7, 2))
    first = ask(client)
    second = ask(client)
    assert first.usage == Usage(10, 3)
    assert second.usage == Usage(7, 2)
    assert client.usage_total == Usage(17, 5)
    assert client.usage_total.total_tokens == 22
    assert client.calls == 2
    assert client.requests == 3


def test_usage_missing_counts_as_zero(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat(body=completion_body('{"a": 1}'))
    reply = ask(client)
    assert reply.data == {"a": 1}
    assert reply.usage == Usage()


def test_thread_safe_shared_client(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.default_chat = ScriptedReply(content='{"ok": true}', usage=(2, 1), delay=0.02)
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                assert ask(client).data == {"ok": True}
        except BaseException as exc:  # collected and re-raised by the test thread
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert client.calls == 30
    assert client.usage_total == Usage(60, 30)


def test_ping(srv: ScriptedOpenAI, client: ChatClient) -> None:
    srv.push_chat("pong", usage=(5, 1))
    latency = client.ping("test-chat")
    assert 0 < latency < 2.0
    body = srv.chat_requests[-1]
    assert body["model"] == "test-chat"
    assert body["max_tokens"] == 1
    assert "response_format" not in body


def test_ping_errors(srv: ScriptedOpenAI, client: ChatClient, refused_port: int) -> None:
    srv.push_chat(status=404, error_message="model 'nope' not found")
    with pytest.raises(LLMError, match=r"HTTP 404.*not found"):
        client.ping("nope")
    srv.push_chat("pong", delay=2.0)
    with pytest.raises(LLMTimeout):
        client.ping("test-chat", deadline_s=0.2)
    with (
        ChatClient(base_url=f"http://127.0.0.1:{refused_port}/v1") as dead,
        pytest.raises(LLMError, match="refused"),
    ):
        dead.ping("m")


def test_a_reply_past_the_size_limit_is_not_asked_for_again(
    srv: ScriptedOpenAI, client: ChatClient
) -> None:
    from memengine.http_deadline import MAX_CHAT_REPLY_BYTES

    srv.default_chat = ScriptedReply(raw=b"x" * (MAX_CHAT_REPLY_BYTES + 1024))
    with pytest.raises(LLMError, match=r"sent a reply it cannot read: .*passed 1,048,576 bytes"):
        ask(client, deadline_s=5.0)
    assert len(srv.chat_requests) == 1  # the same request would get the same reply
    # a ping says the same of it (``llm-check`` called it a connection error)
    with pytest.raises(LLMError, match=r"sent a reply it cannot read: .*passed 1,048,576 bytes"):
        client.ping("test-chat", deadline_s=5.0)


@pytest.mark.parametrize(
    "refusal",
    [
        "Unsupported value: 'temperature' does not support 0.0 with this model. "
        "Only the default (1) value is supported.",
        "Unrecognized request argument supplied: temperature",
        "Unknown parameter: 'temperature'.",
        "The temperature parameter is not available for reasoning models",
    ],
)
def test_a_refused_temperature_is_left_out_from_then_on(
    srv: ScriptedOpenAI, client: ChatClient, refusal: str
) -> None:
    srv.push_chat(status=400, error_message=refusal)
    srv.push_chat(json_data={"ok": 1})
    srv.push_chat(json_data={"ok": 2})
    assert ask(client).data == {"ok": 1} and ask(client).data == {"ok": 2}
    sent = ["temperature" in body for body in srv.chat_requests]
    assert sent == [True, False, False]


def test_a_400_that_only_quotes_the_temperature_keeps_it(
    srv: ScriptedOpenAI, client: ChatClient
) -> None:
    """A server echoing the request body beside another refusal: the temperature it quotes
    is not what it refused."""
    long = "x" * 400  # an echo past what a message line shows
    echo = f'Invalid request body: {{"temperature": 0.0, "messages": [{{"content": "{long}"}}]}} '
    srv.push_chat(status=400, error_message=echo + "- response_format json_schema unsupported")
    for _ in range(3):
        srv.push_chat(json_data={"ok": 1})
    ask(client)
    ask(client)
    assert all("temperature" in body for body in srv.chat_requests)


_FIRST_TURN_PROBE = """
import json, sys
from memengine import Memory
from memengine.config import Config
from tests.helpers import HashEmbedder
from tests.openai_server import ScriptedOpenAI, ScriptedReply

with ScriptedOpenAI() as srv:
    reply = {"expanded_queries": ["Juno"], "relevant_episodes": []}
    srv.default_chat = ScriptedReply(content=json.dumps(reply))
    llm = {"base_url": srv.base_url, "expansion_model": "m", "rerank_model": "m"}
    config = Config.model_validate({"llm": llm})
    mem = Memory.open(sys.argv[1], config=config, embedder=HashEmbedder())
    mem.add_exchange("Juno has a dental cleaning at the vet.", "I'll remind you.")
    mem.load_llm_client()
    before = set(sys.modules)
    result = mem.retrieve("When is her thing at the vet?")
    new = set(sys.modules) - before
    mem.close()
print(json.dumps({
    "asked": len(srv.chat_requests),
    "degraded": list(result.degraded),
    "new": sorted(m for m in new if m.split(".")[0] in ("openai", "jiter", "httpx2", "pydantic")),
}))
"""


def test_the_first_turn_imports_nothing_of_the_openai_library(tmp_path: Path) -> None:
    """The library imports its chat resources and ``jiter`` at its first request: the
    first turn after ``load_llm_client()`` (every CLI ``--llm`` call) paid ~0.3 s of its
    expansion's deadline for it. The client now makes that first request to a reply held
    in memory as it is built. In a new process: this one has imported them long since."""
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_TURN_PROBE, str(tmp_path / "m.db")],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": root},
        cwd=root,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen["asked"] == 2 and seen["degraded"] == []  # both phases asked, were answered
    assert seen["new"] == []


def test_a_warm_up_that_fails_leaves_the_client_built(
    srv: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm-up request is the library's: a caller's own patch of it (a test's scripted
    ``create``, a tracer's wrapper) or another version reading the canned reply otherwise
    may fail it. Only the first turn's speed was at stake, so the client is built and
    answers (it raised out of the build, and a turn lost its full-text answer)."""
    from openai.resources.chat.completions import Completions

    from memengine.llm import client as client_module

    real = Completions.create
    calls: list[str] = []

    def scripted_once(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(str(kwargs.get("model")))
        if len(calls) == 1:
            raise RuntimeError("the one reply this caller scripted")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Completions, "create", scripted_once)
    client_module._warm_the_library.cache_clear()
    srv.push_chat(json_data={"ok": 1})
    with ChatClient(base_url=srv.base_url, api_key="sk-test", timeout_s=2.0) as c:
        reply = ask(c)
    assert calls == ["warm", "test-chat"]  # the warm-up failed; the request ran
    assert reply.data == {"ok": 1}


def test_a_request_body_nested_deep_is_read_past_in_one_pass(
    srv: ScriptedOpenAI, client: ChatClient
) -> None:
    """A 400 echoing a request body that holds 30,000 nested lists: the text outside it is
    read (here: an unknown model, so one request), the body whole left out ('temperature'
    in it is no refusal of the temperature), within the call's deadline (a pass a level of
    nesting took minutes)."""
    nested = "[" * 30_000 + "'temperature' unknown model" + "]" * 30_000
    body = f'{{"model": "nope", "messages": {nested}, "temperature": 0.0}}'
    srv.default_chat = ScriptedReply(
        status=400, body={"error": f"model 'nope' not found; request {body}"}
    )
    with pytest.raises(LLMError, match=r"HTTP 400 .*'nope' not found"):
        ask(client)
    assert len(srv.chat_requests) == 1 and "temperature" in srv.chat_requests[0]


_WRAPPED = (  # LiteLLM's proxy: the upstream server's error, as a Python dict, in its message
    "litellm.BadRequestError: OpenAIException - Error code: 400 - {{'error': {{'message': "
    "\"{message}\", 'type': 'invalid_request_error', 'param': {param}, 'code': {code}}}}}"
)


def _litellm(message: str, param: str = "None", code: str = "None") -> dict[str, object]:
    """A LiteLLM-shaped error body wrapping an upstream error."""
    wrapped = _WRAPPED.format(message=message, param=param, code=code)
    return {"error": {"message": wrapped, "type": "None", "param": "None", "code": "400"}}


@pytest.mark.parametrize(
    "body",
    [
        _litellm(_CONTEXT, param="'messages'", code="'context_length_exceeded'"),
        _error(  # a context-length code, whatever the message names
            _CONTEXT + " (9000 in the messages, 120 in the response_format schema)",
            param="messages",
            code="context_length_exceeded",
        ),
    ],
    ids=["litellm", "names the schema"],
)
def test_a_context_length_code_stops_the_ladder_wherever_it_is(
    srv: ScriptedOpenAI, client: ChatClient, body: dict[str, object]
) -> None:
    srv.default_chat = ScriptedReply(status=400, body=body)
    with pytest.raises(LLMError, match="maximum context length"):
        ask(client)
    assert len(srv.chat_requests) == 1


@pytest.mark.parametrize(
    "body",
    [
        _litellm(
            "Unsupported parameter: 'temperature' is not supported with this model.",
            param="'temperature'",
            code="'unsupported_parameter'",
        ),
        {
            "error": {
                "message": "litellm.UnsupportedParamsError: openai does not support "
                "parameters: ['temperature'], for model=o1-mini.",
                "type": "None",
                "param": "None",
                "code": "400",
            }
        },
    ],
    ids=["wrapped", "a list of parameters"],
)
def test_a_temperature_refusal_through_litellm_is_adapted_to(
    srv: ScriptedOpenAI, client: ChatClient, body: dict[str, object]
) -> None:
    srv.push_chat(status=400, body=body)
    srv.push_chat(json_data={"queries": ["x"]})
    reply = ask(client)
    assert reply.data == {"queries": ["x"]} and len(srv.chat_requests) == 2
    assert "temperature" in srv.chat_requests[0]
    assert "temperature" not in srv.chat_requests[1]
    assert reply.response_format == "json_schema"
