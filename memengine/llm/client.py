"""A small, deadline-bounded JSON chat client for any OpenAI-compatible server.

:class:`ChatClient` wraps the real :class:`openai.OpenAI` client (OpenAI,
Ollama, llama.cpp server, vLLM, …) and adds what memengine's LLM phases need:

* one JSON object per call (:meth:`ChatClient.complete_json`), parsed
  tolerantly by :func:`~memengine.llm.jsonparse.parse_json_object`;
* a hard deadline for the whole call, retries included: every request gets
  the remaining time as its timeout and no backoff sleeps past the deadline;
* its own retries on HTTP 429 and 5xx with exponential backoff and jitter
  (the openai library's retries are switched off);
* a ``response_format`` ladder: ``json_schema`` → llama.cpp's
  ``json_object`` + ``schema`` → plain ``json_object`` → none, moving down
  when the server answers 422, or a 400 that may be about the format (not one whose
  ``param`` names another parameter, nor one about the context length or an unknown
  model), and remembering per client what worked for 10 minutes;
* thread-safe token accounting.

Nothing here reads the environment or a configuration file: every value is
passed in by the caller.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx2
import openai

from ..arguments import real
from ..config import MAX_WAIT_S, LLMConfig, masked_url
from ..errors import ConfigError, LLMError, LLMResponseError, LLMTimeout
from ..http_deadline import MAX_CHAT_REPLY_BYTES, ReplyTooLarge, http_client, proxy_for
from ..http_retry import (
    DEFAULT_BASE_URL,
    PLACEHOLDER_API_KEY,
    backoff_delay,
    client_endpoint,
    describe,
    has_cause,
    hides_secrets,
    is_connect_failure,
    retry_after,
    secrets_of,
    server_message,
    setting_argument,
)
from ..lazy_re import lazy_compile
from ..text import counted
from .jsonparse import parse_json_object

__all__ = ["DEFAULT_BASE_URL", "PLACEHOLDER_API_KEY", "ChatClient", "JSONReply", "Usage"]

_BRACKET = lazy_compile(r"[{}\[\]]")
_OPENER = {"}": "{", "]": "["}
_REQUEST_KEY = lazy_compile(r"""["']messages["']\s*:""")
"""What only a chat request's body holds, quoted: its ``messages`` key."""


def _without_request_bodies(text: str) -> str:
    """``text`` without the request bodies it quotes (a server echoing what it was sent: every
    parameter and the user's words), each object or list holding a ``messages`` key left
    out whole, nested ones with it, as one space; other quoted objects and lists (an
    upstream server's error a proxy wraps, a list of refused parameters) are read. One
    pass: a closing bracket ends the nearest open one of its kind (and unclosed ones of the
    other kind inside it); one with none open is text. (Removing the innermost ones pass
    after pass took a pass a level, seconds for some thousands of nested brackets.)"""
    keys = [m.start() for m in _REQUEST_KEY.finditer(text)]
    kept: list[str] = []  # pieces of text and brackets, in order
    opens: list[tuple[str, int, int]] = []  # open brackets: kind, where in ``kept``, in text
    count = {"{": 0, "[": 0}
    at = 0
    for m in _BRACKET.finditer(text):
        kept.append(text[at : m.start()])
        at = m.end()
        char = m.group()
        if char in count:
            opens.append((char, len(kept), m.start()))
            count[char] += 1
            kept.append(char)
            continue
        if count[_OPENER[char]]:
            while True:  # (each open bracket is popped once: linear over the text)
                kind, where, began = opens.pop()
                count[kind] -= 1
                if kind == _OPENER[char]:
                    break
            following = bisect.bisect_right(keys, began)
            if following < len(keys) and keys[following] < m.start():  # a request body
                del kept[where:]
                kept.append(" ")
                continue
        kept.append(char)
    kept.append(text[at:])
    return "".join(kept)


_REFUSAL_CHARS = 100_000
"""How much of a 400's message is read for what it refuses (an echoed body, whole)."""


def _refusal(exc: openai.BadRequestError) -> tuple[dict[str, Any], str]:
    """A 400's error object (``param``, ``code``, ``type``; empty when the body has none)
    and its message in lower case without the request bodies it quotes: a server that
    echoes the body names every parameter sent, and the user's words, in it."""
    body = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error", body)
    text = _without_request_bodies(server_message(exc, limit=_REFUSAL_CHARS))
    error = dict(inner) if isinstance(inner, dict) else {}
    if str(error.get("param")).strip().lower() in _NO_PARAM:
        error["param"] = None
    return error, text.lower()


_NO_PARAM = {"", "none", "null"}
"""A ``param`` that names none (LiteLLM's proxy writes ``"param": "None"`` in every error)."""


def _refuses_temperature(exc: openai.BadRequestError) -> bool:
    """Whether a 400 is about the ``temperature`` parameter: its ``param`` says so, or its
    message names it outside a request body it quotes ("Unsupported value: 'temperature'
    does not support 0.0", "Unrecognized request argument supplied: temperature"; not
    '{"temperature": 0.0, …} - response_format … is not supported')."""
    error, text = _refusal(exc)
    if error.get("param") is not None:
        return error.get("param") == "temperature"
    return "temperature" in text


_FORMAT_WORDS = lazy_compile(r"response_format|json_schema|json_object|schema|grammar")
"""What a refusal of the ``response_format`` names (its ``param``, or its message)."""

_NOT_A_FORMAT_CODE = lazy_compile(
    r"context_length|exceed_context|model_not_found|contextwindowexceeded"
)
"""An error ``code`` or ``type`` that is no refusal of a format (OpenAI's
``context_length_exceeded``, llama.cpp's ``exceed_context_size_error``, LiteLLM's
``ContextWindowExceededError``)."""

_NOT_A_FORMAT_MESSAGE = lazy_compile(
    r"context[ _]length|maximum context|exceeds? the (?:\w+ )?context|context window"
    r"|too many tokens|prompt is too long|maximum number of tokens|maximum model length"
    r"|tokens \+ `?max_new_tokens`? must be"
    r"|(?:invalid|unknown) model|model\b[^.;]{0,120}?\b(?:not found|does not exist)"
)
"""A message that names another cause than the format: a request longer than the model's
context (OpenAI, vLLM, llama.cpp, Ollama, TGI, Gemini), or a model the server does not have (LiteLLM
and proxies answer 400 "Invalid model name", "model 'x' not found")."""


def _may_refuse_format(exc: openai.BadRequestError) -> bool:
    """Whether a 400 may be a refusal of the ``response_format``, so that the next step of
    the ladder could pass: not when its ``code`` (or one its message wraps) says the context
    length or an unknown model; when its message names the format, whatever its ``param``;
    not when its ``param`` names another parameter or its message another cause.
    llama.cpp, Ollama and older vLLM refuse a format with a vague message ("Bad Request"):
    anything unsure steps down, as every 400 did; a sure other cause would fail four times
    over, a turn's wait for nothing."""
    error, text = _refusal(exc)
    codes = f"{error.get('code')} {error.get('type')} {text}".lower()
    if _NOT_A_FORMAT_CODE.search(codes):  # (also one a proxy's message wraps: LiteLLM's)
        return False
    if _FORMAT_WORDS.search(text):  # (OpenAI's "'messages' must contain the word 'json'
        return True  # … to use 'response_format' of type 'json_object'", param "messages")
    param = error.get("param")
    if param is not None:
        return bool(_FORMAT_WORDS.search(str(param).lower()))
    return not _NOT_A_FORMAT_MESSAGE.search(text)


_SETTING_OF = {
    "timeout_s": "request_timeout_s",
    "max_retries": "max_retries",
    "backoff_base_s": "backoff_base_s",
    "backoff_max_s": "backoff_base_s",  # (no setting of its own: a wait, as the first one)
}
"""The ``[llm]`` setting whose type and bounds each number argument of :class:`ChatClient`
is checked with (a client built directly takes what the configuration would)."""


def _memory_seconds(value: object) -> float:
    """A ``format_memory_s``: a number of seconds from 0 (try the best format every call)
    to :data:`~memengine.config.MAX_WAIT_S`, else a ConfigError naming it."""
    number = real(value)
    if number is None or not 0 <= number <= MAX_WAIT_S:
        raise ConfigError(
            f"format_memory_s is a number of seconds from 0 to {MAX_WAIT_S:g}, not {value!r:.80}"
        )
    return number


_HEADER_NAME = lazy_compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""A header's name as HTTP writes it (a token: ``X-Title``, ``OpenAI-Organization``)."""


def _headers(value: object) -> dict[str, str] | None:
    """``default_headers`` as the HTTP client can send them: None, or a mapping of header
    names to values of printable ASCII without white space around them, else a ConfigError
    (not showing a value: it may be a token); such a header failed only at the first call,
    or was reported as a reply that is not UTF-8."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ConfigError(
            "default_headers is a mapping of header names to values ({'X-Title': 'my app'}), "
            f"not {type(value).__name__}"
        )
    for name, text in value.items():
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise ConfigError(
                f"default_headers: {name!r:.80} is not a header's name (ASCII letters, digits "
                "and - _ . ! # $ % & ' * + ^ ` | ~)"
            )
        if (
            not isinstance(text, str)
            or text != text.strip()
            or any(c > "~" or c < " " for c in text)
        ):
            raise ConfigError(
                f"default_headers: the value of {name} is not text an HTTP header can carry "
                "(printable ASCII, without white space around it); the value is not shown"
            )
    return dict(value)


_WARM_REPLY: dict[str, Any] = {
    "id": "warm",
    "object": "chat.completion",
    "created": 0,
    "model": "warm",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


_WARM_FAILURES = (
    openai.OpenAIError,
    httpx2.HTTPError,
    OSError,  # (a tracer's exporter that cannot connect)
    ValueError,  # (pydantic's ValidationError is one)
    TypeError,
    AttributeError,
    LookupError,
    RuntimeError,
)
"""What a warm-up may meet that does not stop the client being built: another version of
the library reading the canned reply otherwise, a caller's own patch of it (a test's
scripted ``create``, a tracer's wrapper)."""


@functools.cache
def _warm_the_library() -> None:
    """Send one chat completion through the openai library to a reply held in memory (no
    request leaves the process), once per process. The library imports its chat
    resources and ``jiter``, and builds its request and reply models, only at the first
    request: ~0.3 s the first turn's expansion paid out of its deadline, after
    ``Memory.warm`` and the CLI had waited for the client so that it would not."""
    answer = httpx2.MockTransport(lambda request: httpx2.Response(200, json=_WARM_REPLY))
    with (
        httpx2.Client(transport=answer) as http,
        openai.OpenAI(
            base_url="http://memengine-warm-up.invalid/v1",
            api_key=PLACEHOLDER_API_KEY,
            max_retries=0,
            http_client=http,
        ) as library,
    ):
        library.chat.completions.create(
            model="warm",
            messages=[{"role": "user", "content": ""}],
            extra_body={"max_tokens": 1},
            timeout=httpx2.Timeout(1.0),
        )


# The response_format ladder, best first. "none" sends no response_format at all.
_FORMATS = ("json_schema", "json_object_schema", "json_object", "none")
_FIRST_WITHOUT_SCHEMA = _FORMATS.index("json_object")


@dataclass(frozen=True)
class Usage:
    """Token counts reported by the server (zero when it reports none)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        """Sum two usages."""
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )


@dataclass(frozen=True)
class JSONReply:
    """The result of :meth:`ChatClient.complete_json`.

    ``data`` is the parsed object, ``raw`` the model's text, ``usage`` the
    tokens of all attempts, ``attempts`` the number of HTTP requests sent and
    ``response_format`` the ladder step that produced the answer.
    """

    data: dict[str, Any]
    raw: str
    usage: Usage
    elapsed_s: float
    attempts: int
    response_format: str = "none"
    finish_reason: str | None = None


class ChatClient:
    """A thread-safe JSON chat client over the ``openai`` library, with deadlines and retries.

    One instance may be shared by many threads; it keeps running totals of
    token usage (:attr:`usage_total`), calls and HTTP requests.
    """

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        max_retries: int = 2,
        backoff_base_s: float = 0.05,  # ([llm] backoff_base_s's)
        backoff_max_s: float = 2.0,
        default_headers: Mapping[str, str] | None = None,
        format_memory_s: float = 600.0,
    ) -> None:
        """Create a client for ``base_url`` (given as None: api.openai.com); the models are
        named per call (``[llm] expansion_model``, ``rerank_model``).

        ``timeout_s`` caps each HTTP request, ``max_retries`` the retries on
        429/5xx; ``api_key`` None sends a placeholder (fine for local servers).
        A step down the ``response_format`` ladder is remembered for
        ``format_memory_s`` seconds, then the best format is tried again (a 400
        from a proxy, say, must not cost the client its JSON mode for good).
        Each argument is checked as the ``[llm]`` setting it stands for is
        (``timeout_s`` as ``request_timeout_s``; ``backoff_max_s`` as
        ``backoff_base_s``) and converted as it is (3.0 retries as 3, Decimal("5")
        seconds as 5.0): a wrong one ("5", True, -1, 2.5 retries) is a ConfigError naming it.
        """
        checked = {
            name: setting_argument(name, given, LLMConfig, _SETTING_OF[name])
            for name, given in (
                ("timeout_s", timeout_s),
                ("max_retries", max_retries),
                ("backoff_base_s", backoff_base_s),
                ("backoff_max_s", backoff_max_s),
            )
        }
        memory_s = _memory_seconds(format_memory_s)
        headers = _headers(default_headers)
        self.base_url, api_key = client_endpoint(base_url, api_key)
        self.shown_url = masked_url(self.base_url)
        """``base_url`` as messages show it (without a name and password in it)."""
        self.timeout_s: float = checked["timeout_s"]
        self.max_retries: int = checked["max_retries"]
        self.backoff_base_s: float = checked["backoff_base_s"]
        self.backoff_max_s: float = checked["backoff_max_s"]
        self._secrets = secrets_of(self.base_url, api_key, headers)
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=self.timeout_s,
            max_retries=0,
            default_headers=headers or None,
            # a reply ends at its deadline, and at 1 MiB: parsing more would outlast a turn
            http_client=http_client(self.base_url, max_bytes=MAX_CHAT_REPLY_BYTES),
        )
        # (here, on the thread that builds the client: not in a turn); a warm-up that
        # fails stakes only the first turn's speed, which pays as it did before
        with contextlib.suppress(*_WARM_FAILURES):
            _warm_the_library()
        self._lock = threading.Lock()
        self._closed = False
        self._format_floor = 0
        self._format_memory_s = memory_s
        self._floor_until = 0.0
        self._use_max_completion_tokens = False
        self._omit_temperature = False
        self._usage_total = Usage()
        self._calls = 0
        self._requests = 0

    @classmethod
    def from_config(cls, llm: LLMConfig) -> ChatClient:
        """A client for the ``[llm]`` section: its endpoint, key, timeout and retries."""
        return cls(
            base_url=llm.base_url,
            api_key=llm.api_key,
            timeout_s=llm.request_timeout_s,
            max_retries=llm.max_retries,
            backoff_base_s=llm.backoff_base_s,
        )

    # -- bookkeeping ----------------------------------------------------------------

    @property
    def usage_total(self) -> Usage:
        """Tokens used by every request this client has made so far."""
        with self._lock:
            return self._usage_total

    @property
    def calls(self) -> int:
        """Number of :meth:`complete_json` and :meth:`ping` calls made so far."""
        with self._lock:
            return self._calls

    @property
    def requests(self) -> int:
        """Number of HTTP requests sent so far (retries and fallbacks included)."""
        with self._lock:
            return self._requests

    @property
    def response_format_in_use(self) -> str:
        """The best ``response_format`` kind this server is still believed to accept."""
        with self._lock:
            return _FORMATS[self._format_floor]

    def close(self) -> None:
        """Close the underlying HTTP connection pool; a call then (or one under way) raises
        :class:`.LLMError`."""
        self._closed = True
        self._client.close()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ChatClient(base_url={self.shown_url!r})"

    # -- public calls ---------------------------------------------------------------

    @hides_secrets
    def complete_json(
        self,
        *,
        model: str,
        system: str,
        user: str,
        schema: dict[str, Any] | None,
        max_tokens: int,
        deadline_s: float,
        schema_name: str = "reply",
        temperature: float | None = 0.0,
    ) -> JSONReply:
        """Ask ``model`` for one JSON object and return it parsed, within ``deadline_s`` seconds.

        Raises LLMTimeout past the deadline, LLMError on connection/HTTP
        failures (after retries) and LLMResponseError on unusable text.
        """
        start = time.monotonic()
        deadline = start + deadline_s
        with self._lock:
            self._calls += 1
            if self._format_floor and start >= self._floor_until:
                self._format_floor = 0  # long enough: try the best format again
            floor = self._format_floor
        first = floor if schema is not None else max(floor, _FIRST_WITHOUT_SCHEMA)
        fmt_index = first
        retries = 0
        attempts = 0
        usage = Usage()
        messages: list[dict[str, str]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": user},
        ]
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timeout(model, deadline_s, attempts)
            fmt = _FORMATS[fmt_index]
            body: dict[str, Any] = {}
            response_format = _response_format(fmt, schema, schema_name)
            if response_format is not None:
                body["response_format"] = response_format
            if temperature is not None and not self._omit_temperature:
                body["temperature"] = temperature
            attempts += 1
            try:
                completion = self._create(model, messages, max_tokens, body, remaining)
            except openai.BadRequestError as exc:
                if self._adapt_to_rejection(exc, sent_temperature="temperature" in body):
                    continue
                if fmt_index + 1 < len(_FORMATS) and _may_refuse_format(exc):
                    fmt_index += 1
                    continue
                raise self._status_error(exc, model, attempts) from exc
            except openai.UnprocessableEntityError as exc:
                if fmt_index + 1 < len(_FORMATS):
                    fmt_index += 1
                    continue
                raise self._status_error(exc, model, attempts) from exc
            except (openai.RateLimitError, openai.InternalServerError) as exc:
                retries = self._backoff_or_raise(exc, retries, deadline, model, attempts)
                continue
            except openai.APITimeoutError as exc:
                if time.monotonic() >= deadline - 0.005:
                    raise self._timeout(model, deadline_s, attempts) from exc
                retries = self._backoff_or_raise(exc, retries, deadline, model, attempts)
                continue
            except openai.APIConnectionError as exc:
                if self._closed:  # closed under the call: its socket went away
                    raise LLMError(f"the chat client for {self.shown_url} has been closed") from exc
                if is_connect_failure(exc) or has_cause(exc, ReplyTooLarge):  # (again: the same)
                    raise LLMError(self._connect_message(exc)) from exc
                retries = self._backoff_or_raise(exc, retries, deadline, model, attempts)
                continue
            except openai.APIStatusError as exc:
                raise self._status_error(exc, model, attempts) from exc
            except openai.APIError as exc:
                raise LLMError(f"LLM call to {model!r} at {self.shown_url} failed: {exc}") from exc

            reply_usage = _usage_of(completion)
            usage = usage + reply_usage
            self._account(reply_usage)
            if fmt_index > first:
                with self._lock:
                    self._format_floor = max(self._format_floor, fmt_index)
                    self._floor_until = time.monotonic() + self._format_memory_s
            text, finish_reason = _content_of(completion)
            if text is None:
                raise LLMResponseError(
                    f"LLM {model!r} at {self.shown_url} returned no message content"
                    + _why_empty(completion)
                )
            try:
                data = parse_json_object(text, cut=finish_reason == "length")
            except LLMResponseError as exc:
                hint = (
                    f" (the reply hit max_tokens={max_tokens})" if finish_reason == "length" else ""
                )
                raise LLMResponseError(f"{exc}{hint}") from exc
            return JSONReply(
                data=data,
                raw=text,
                usage=usage,
                elapsed_s=time.monotonic() - start,
                attempts=attempts,
                response_format=fmt,
                finish_reason=finish_reason,
            )

    @hides_secrets
    def ping(self, model: str, *, deadline_s: float | None = None) -> float:
        """Send a one-token completion to ``model`` and return its latency in seconds.

        Raises the same errors as :meth:`complete_json`; no retries.
        """
        limit = self.timeout_s if deadline_s is None else deadline_s
        with self._lock:
            self._calls += 1
        start = time.monotonic()
        messages = [{"role": "user", "content": "Reply with the single word: pong"}]
        for _ in range(2):
            try:
                completion = self._create(model, messages, 1, {}, limit)
            except openai.BadRequestError as exc:
                if self._adapt_to_rejection(exc, sent_temperature=False):
                    continue
                raise self._status_error(exc, model, 1) from exc
            except openai.APITimeoutError as exc:
                raise self._timeout(model, limit, 1) from exc
            except openai.APIConnectionError as exc:
                if is_connect_failure(exc) or has_cause(exc, ReplyTooLarge):  # as a phase says
                    raise LLMError(self._connect_message(exc)) from exc
                raise LLMError(f"LLM endpoint {self.shown_url} failed: {describe(exc)}") from exc
            except openai.APIStatusError as exc:
                raise self._status_error(exc, model, 1) from exc
            except openai.APIError as exc:
                raise LLMError(f"ping of {model!r} at {self.shown_url} failed: {exc}") from exc
            self._account(_usage_of(completion))
            return time.monotonic() - start
        raise LLMError(f"ping of {model!r} at {self.shown_url} was rejected (HTTP 400)")

    # -- internals ------------------------------------------------------------------

    def _create(
        self,
        model: str,
        messages: list[dict[str, str]],
        max_tokens: int,
        extra: dict[str, Any],
        timeout: float,
    ) -> Any:
        """Send one chat completion request with ``timeout`` seconds for every phase."""
        with self._lock:
            self._requests += 1
            token_key = "max_completion_tokens" if self._use_max_completion_tokens else "max_tokens"
        body = dict(extra)
        body[token_key] = max_tokens
        per_request = min(self.timeout_s, max(timeout, 0.001))
        if self._closed:
            raise LLMError(f"the chat client for {self.shown_url} has been closed")
        try:
            return self._client.chat.completions.create(
                model=model,
                messages=messages,  # type: ignore[arg-type]
                extra_body=body,
                timeout=httpx2.Timeout(per_request),
            )
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            # a page, a cut reply, JSON nested past the stack or a number past Python's digits
            raise LLMResponseError(
                f"LLM {model!r} at {self.shown_url} sent a reply that is not JSON in UTF-8 "
                f"that can be read ({type(exc).__name__}: {str(exc)[:200]})"
            ) from exc
        except RuntimeError as exc:  # the HTTP client closed under the call
            if not self._closed:
                raise
            raise LLMError(f"the chat client for {self.shown_url} has been closed") from exc

    def _adapt_to_rejection(self, exc: openai.BadRequestError, *, sent_temperature: bool) -> bool:
        """Adapt once to a 400 about a parameter (OpenAI reasoning models); True means resend.

        Such models want ``max_completion_tokens`` instead of ``max_tokens`` and
        accept no ``temperature``; the change is remembered for this client.
        """
        text = f"{exc.message} {exc.body}"
        with self._lock:
            if not self._use_max_completion_tokens and "max_completion_tokens" in text:
                self._use_max_completion_tokens = True
                return True
            if sent_temperature and not self._omit_temperature and _refuses_temperature(exc):
                self._omit_temperature = True
                return True
            return False

    def _account(self, usage: Usage) -> None:
        with self._lock:
            self._usage_total = self._usage_total + usage

    def _backoff_or_raise(
        self, exc: openai.APIError, retries: int, deadline: float, model: str, attempts: int
    ) -> int:
        """Sleep before the next retry and return the new retry count, or raise if none is left."""
        if retries >= self.max_retries:
            why = "after retries" if self.max_retries > 0 else "with retries off (max_retries 0)"
            raise self._final_error(exc, model, attempts, why) from exc
        delay = backoff_delay(retries, self.backoff_base_s, self.backoff_max_s)
        asked = retry_after(exc.response.headers) if isinstance(exc, openai.APIStatusError) else 0
        delay = max(delay, asked)
        if not delay >= 0:  # (NaN too) a wait of none, not a ValueError out of the sleep
            delay = 0.0
        remaining = deadline - time.monotonic()
        if delay >= remaining:
            # why no retry: the server's Retry-After, or the backoff, is longer than what is
            # left (saying "no time was left" of 0.9 s left misled)
            left = f"{max(remaining, 0):.2f} s left before the deadline"
            why = (
                f"and the server asked to wait {asked:g} s before a retry, more than the {left}"
                if asked >= remaining
                else f"and the wait before a retry ({delay:.2f} s) is more than the {left}"
            )
            raise self._final_error(exc, model, attempts, why) from exc
        time.sleep(delay)
        return retries + 1

    def _final_error(self, exc: openai.APIError, model: str, attempts: int, why: str) -> LLMError:
        if isinstance(exc, openai.APITimeoutError):
            return LLMTimeout(
                f"LLM {model!r} at {self.shown_url} timed out ({self.timeout_s:g}s per request) "
                f"{counted(attempts, 'time')} {why}"
            )
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(exc, model, attempts, why)
        return LLMError(
            f"LLM endpoint {self.shown_url} failed {counted(attempts, 'time')} {why}: "
            f"{describe(exc)}"
        )

    def _status_error(
        self, exc: openai.APIStatusError, model: str, attempts: int, why: str = ""
    ) -> LLMError:
        suffix = f" ({attempts} attempt{'s' if attempts != 1 else ''}, {why})" if why else ""
        return LLMError(
            f"LLM endpoint {self.shown_url} returned HTTP {exc.status_code} for model "
            f"{model!r}{suffix}: {server_message(exc, self._secrets)}"
        )

    def _timeout(self, model: str, deadline_s: float, attempts: int) -> LLMTimeout:
        return LLMTimeout(
            f"LLM {model!r} at {self.shown_url} did not answer within the deadline of "
            f"{deadline_s:.3g}s ({counted(attempts, 'attempt')})"
        )

    def _connect_message(self, exc: openai.APIConnectionError) -> str:
        if has_cause(exc, ReplyTooLarge):
            cause = exc.__cause__ or exc.__context__
            return f"LLM endpoint {self.shown_url} sent a reply it cannot read: {cause}"
        proxy = proxy_for(self.base_url)
        via = f" (through the proxy {proxy}, which the environment names)" if proxy else ""
        if has_cause(exc, ConnectionRefusedError):
            return f"LLM endpoint {self.shown_url}{via} refused the connection"
        return f"cannot connect to LLM endpoint {self.shown_url}{via}: {describe(exc)}"


def _response_format(fmt: str, schema: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    if fmt == "json_schema" and schema is not None:
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": False},
        }
    if fmt == "json_object_schema" and schema is not None:
        return {"type": "json_object", "schema": schema}
    if fmt in ("json_object", "json_schema", "json_object_schema"):
        return {"type": "json_object"}
    return None


def _count(value: object) -> int:
    """A token count from a reply: 0 for anything that is not a whole number ≥ 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value) if math.isfinite(value) and value >= 0 else 0


def _usage_of(completion: Any) -> Usage:
    usage = getattr(completion, "usage", None)
    if usage is None:
        return Usage()
    return Usage(
        _count(getattr(usage, "prompt_tokens", 0)),
        _count(getattr(usage, "completion_tokens", 0)),
    )


def _why_empty(completion: Any) -> str:
    """What a reply without content said instead: a refusal, tool calls, why it stopped,
    or that it was no chat completion at all (an HTML page served with status 200)."""
    if isinstance(completion, str):
        return f" (the reply is text, not a chat completion: {' '.join(completion.split())[:80]!r})"
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list | tuple) or not choices:
        return " (the reply has no choices)"
    message = getattr(choices[0], "message", None)
    said: list[str] = []
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        kind = "parts without text" if isinstance(content, list) else type(content).__name__
        said.append(f"content of another kind than text: {kind}")
    refusal = getattr(message, "refusal", None)
    if isinstance(refusal, str) and refusal:
        said.append(f"refusal {' '.join(refusal.split())[:80]!r}")
    if getattr(message, "tool_calls", None):
        said.append("tool calls instead of text")
    reason = getattr(choices[0], "finish_reason", None)
    if isinstance(reason, str) and reason:
        said.append(f"finish_reason {reason!r}")
    return f" ({'; '.join(said)})" if said else ""


def _content_of(completion: Any) -> tuple[str | None, str | None]:
    """The text of a reply's first choice (a list of text parts, as some servers send,
    joined), and why it stopped."""
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list | tuple) or not choices:
        return None, None
    choice = choices[0]
    message = getattr(choice, "message", None)
    content = getattr(message, "content", None)
    if isinstance(content, list):
        texts = [_part_text(part) for part in content]
        content = "".join(t for t in texts if t is not None) if any(texts) else None
    return (content if isinstance(content, str) else None), getattr(choice, "finish_reason", None)


def _part_text(part: Any) -> str | None:
    """The text of one content part (``{"type": "text", "text": …}``), else None."""
    if isinstance(part, dict):
        kind, text = part.get("type"), part.get("text")
    else:
        kind, text = getattr(part, "type", None), getattr(part, "text", None)
    return text if kind == "text" and isinstance(text, str) else None
