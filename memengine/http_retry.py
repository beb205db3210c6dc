"""What the OpenAI-compatible clients (chat and embeddings) share about HTTP failures.

Backoff with jitter, the server's ``Retry-After``, the server's own error
message, whether a failure was a refused connection, and the endpoint a
client built directly is given, checked as the configuration checks it.
Nothing here sends a request or reads configuration.
"""

from __future__ import annotations

import base64
import email.utils
import functools
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar
from urllib.parse import unquote, urlsplit

import httpx2
import openai
from pydantic import BaseModel, ValidationError

from .arguments import real, whole
from .config import api_key_text, http_url
from .errors import ConfigError, MemEngineError
from .lazy_re import lazy_compile

__all__ = [
    "DEFAULT_BASE_URL",
    "PLACEHOLDER_API_KEY",
    "backoff_delay",
    "client_endpoint",
    "describe",
    "has_cause",
    "is_connect_failure",
    "retry_after",
    "server_message",
    "setting_argument",
]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Used when ``base_url`` is None (passed explicitly so the library never reads OPENAI_BASE_URL)."""

PLACEHOLDER_API_KEY = "not-needed"
"""Sent when ``api_key`` is None: local servers ignore the key but the library insists on one."""

_SERVER_MESSAGE_CHARS = 300


def client_endpoint(base_url: str | None, api_key: str | None) -> tuple[str, str | None]:
    """The URL (:data:`DEFAULT_BASE_URL` for None) and the key a client is given, checked as
    the configuration checks them, for a client built directly (a :class:`.ConfigError`
    naming the setting)."""
    if base_url is not None and not isinstance(base_url, str):
        raise ConfigError(
            f"base_url is a URL's text (http://localhost:11434/v1) or None, not "
            f"{type(base_url).__name__}"
        )
    if api_key is not None and not isinstance(api_key, str):  # (the value is not shown)
        raise ConfigError(f"api_key is text or None, not {type(api_key).__name__}")
    try:
        http_url(base_url)
    except ValueError as exc:
        raise ConfigError(f"base_url: {exc}") from exc
    try:
        key = api_key_text(api_key)
    except ValueError as exc:
        raise ConfigError(f"api_key: {exc}") from exc
    return (base_url or DEFAULT_BASE_URL).rstrip("/"), key


def setting_argument(name: str, value: object, section: type[BaseModel], setting: str) -> Any:
    """The argument ``name`` of a client built directly, as the configuration's ``setting``
    of ``section`` takes it (``timeout_s`` as ``[llm] request_timeout_s``: above 0, at most
    an hour; 3.0 or Decimal("3") as 3 retries), else a ConfigError naming it: "5", True and
    None are no numbers (a text is not read as the configuration reads a file's), NaN and
    -1 no wait (the sleep would raise), 2.5 no count of retries."""
    counted = section.model_fields[setting].annotation in (int, int | None)
    kind = "a whole number" if counted else "a number of seconds"
    number = real(value)
    if number is None:
        raise ConfigError(f"{name} is {kind}, not {value!r:.80}")
    given = whole(value)  # (numpy's integers as Python's; one past the floats as infinite)
    try:
        checked = section.model_validate(
            {setting: value if given is None else given if counted else number}
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        if error["type"] == "int_from_float":  # "got a number with a fractional part"
            raise ConfigError(f"{name} is {kind}, not {value!r:.80}") from None
        why = str(error["msg"]).removeprefix("Input ")  # "should be greater than 0"
        label = f"[{section.__name__.removesuffix('Config').lower()}] {setting}"
        raise ConfigError(f"{name} {why} (as {label}), not {value!r:.80}") from None
    return getattr(checked, setting)


_MAX_DOUBLINGS = 1024
"""The most times a backoff doubles: ``2.0**1024`` is past the floats (an OverflowError),
and every cap is reached long before."""


def backoff_delay(retry: int, base_s: float, max_s: float) -> float:
    """Exponential backoff with "equal jitter": between half and all of ``base_s * 2**retry``
    (capped; the 2,000th retry waits the cap too); never below 0 nor NaN, which a sleep
    refuses with a ValueError."""
    ceiling = min(max_s, base_s * 2.0 ** min(retry, _MAX_DOUBLINGS - 1))
    if not ceiling > 0:  # (a negative or NaN base or cap)
        return 0.0
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def retry_after(headers: httpx2.Headers) -> float:
    """Seconds asked for by a ``Retry-After`` (seconds, or an HTTP date) or
    ``retry-after-ms`` header (0 if absent or unreadable)."""
    value = headers.get("retry-after-ms")
    scale = 0.001
    if value is None:
        value = headers.get("retry-after")
        scale = 1.0
    if value is None:
        return 0.0
    try:
        return max(0.0, float(value) * scale)
    except ValueError:
        pass
    try:  # "Wed, 21 Oct 2026 07:28:00 GMT"
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return 0.0
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def has_cause(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` or anything in its chain of causes is a ``kind``."""
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        if isinstance(node, kind):
            return True
        seen.add(id(node))
        node = node.__cause__ or node.__context__
    return False


def is_connect_failure(exc: openai.APIConnectionError) -> bool:
    """True when no connection could be made (refused, DNS, unreachable): not worth retrying."""
    return has_cause(exc, httpx2.ConnectError) or has_cause(exc, ConnectionRefusedError)


_CREDENTIALS = lazy_compile(
    r"(?i)(bearer|basic)\s+(?!(?:token|authentication|auth|credentials?|scheme)\b)"
    r"[^\s'\"),.;]{4,}"  # a token, not the words an error writes after the scheme's name
    r"|(?<=header value )b?(['\"]).*?\2"
)


def describe(exc: BaseException) -> str:
    """``exc`` with its cause, on one line, without the credentials a header carries (an
    HTTP library's error may quote the header it refused: ``Illegal header value b'Bearer
    sk-…'``)."""
    cause = exc.__cause__ or exc.__context__
    text = f"{exc} ({cause})" if cause is not None else str(exc)
    return _CREDENTIALS.sub(lambda m: f"{m.group(1)} ***" if m.group(1) else "(not shown)", text)


def server_message(
    exc: openai.APIStatusError, secrets: Iterable[str] = (), *, limit: int | None = None
) -> str:
    """The server's own error message (OpenAI's ``{"error": {"message": …}}``, Ollama's
    ``{"error": "…"}``, or a body of plain text), shortened (to ``limit`` characters, by
    default a line's worth), with ``secrets`` (:func:`secrets_of`: a server may echo the
    key it refused) shown as ``***``. The library hands ``{"error": "…"}`` and a text body
    over as a string ``body`` and says only "Error code: 400" of them: the text is the
    message (an HTML page, a proxy's, is not)."""
    body = exc.body
    message: object = exc.message
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            message = inner["message"]
        elif isinstance(inner, str):
            message = inner
    elif isinstance(body, str) and body.strip() and not body.lstrip().startswith("<"):
        message = f"{exc.message} - {body}"
    text = hidden(" ".join(str(message).split()), secrets)
    return text[: _SERVER_MESSAGE_CHARS if limit is None else limit]


def hidden(text: str, secrets: Iterable[str], keep: Iterable[str] = ()) -> str:
    """``text`` with each of ``secrets`` (:func:`secrets_of`) shown as ``***``, except
    inside the words of ``keep`` (what memengine writes itself: the endpoint as shown, the
    model's name; a placeholder key ``ollama`` is no reason to mask ``http://ollama:11434``)."""
    found = sorted({s for s in secrets if s}, key=len, reverse=True)
    if not found:
        return text
    kept = [
        (m.start(), m.end())
        for word in {k for k in keep if k}
        for m in re.finditer(re.escape(word), text)
    ]

    def mask(m: re.Match[str]) -> str:  # (a key that merely holds a model's name: masked)
        inside = any(a <= m.start() and m.end() <= b for a, b in kept)
        return m.group() if inside else "***"

    return re.sub("|".join(map(re.escape, found)), mask, text)


class _HoldsSecrets(Protocol):
    @property
    def _secrets(self) -> Sequence[str]: ...

    @property
    def shown_url(self) -> str: ...


S = TypeVar("S", bound=_HoldsSecrets)
P = ParamSpec("P")
R = TypeVar("R")


def hides_secrets(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Raise the memengine errors of a client's ``method`` with its secrets (``self._secrets``)
    shown as ``***`` in the message, and without the HTTP library's error they were raised
    from (a server may echo the request's headers in it, where a log's traceback shows it:
    a reply with status 200 that quotes the key, an ``Authorization: Basic`` header)."""

    @functools.wraps(method)
    def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except MemEngineError as exc:
            named = args[0] if args and isinstance(args[0], str) else None  # (ping's model)
            model = kwargs.get("model", named or getattr(self, "model", None))
            keep = (self.shown_url, model if isinstance(model, str) else "")
            exc.args = tuple(
                hidden(a, self._secrets, keep) if isinstance(a, str) else a for a in exc.args
            )
            exc.__context__ = None
            raise exc from None

    return wrapper


def secrets_of(
    base_url: str | None, api_key: str | None, headers: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    """What a client sends that no message may repeat: its key, the password in its URL
    (as written, decoded, and in the ``Authorization: Basic`` token the HTTP library makes
    of the name and password; the name beside a password is no secret, and often a word:
    ``user``; a name without one is a token: ``https://TOKEN@host``) and its extra headers'
    values (longest first, so a longer one is masked whole). Messages show the URL without
    its name, password and query anyway."""
    url = urlsplit(base_url) if base_url else None
    name, password = (url.username or "", url.password or "") if url else ("", "")
    found = [api_key or "", *(headers or {}).values(), password]
    if name and not password:  # (a token given as the name: https://TOKEN@host)
        found += [name, unquote(name)]
    if name or password:
        pair = f"{unquote(name)}:{unquote(password)}"
        found += [unquote(password), base64.b64encode(pair.encode("utf-8")).decode("ascii")]
    return tuple(sorted({s.strip() for s in found if len(s.strip()) >= 4}, key=len, reverse=True))
