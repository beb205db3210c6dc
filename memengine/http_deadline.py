"""A wall-clock limit and a size limit on every reply an OpenAI-compatible server sends.

An HTTP client's timeouts bound each network operation, not a whole reply:
a server that sends one byte every few tenths of a second never trips a
read timeout, and one that sends 200 MB is read to the end. Both would hold
a turn (or the thread it left behind) far past its deadline.
:class:`DeadlineTransport` wraps the real transport and ends a request once
its own read timeout has passed since it was sent (the clients set it to
the time left before their deadline): the connection, the request, the
status line and headers (a server may trickle those too, or send interim
``1xx`` answers without end) and the body, each read given no more than
the time left; and it ends the reading of a reply that passes
:data:`MAX_REPLY_BYTES`. Replies are asked for uncompressed,
and a compressed one is refused (the bytes counted would not be the reply's:
200 KB of gzip can decode to 200 MB). Nothing here reads configuration;
:func:`http_client` keeps the ``openai`` library's own client, environment
proxies included.
"""

from __future__ import annotations

import os
import ssl
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import Any
from urllib.parse import urlsplit

import httpcore2
import httpx2

from .config import masked_url
from .errors import ConfigError

__all__ = [
    "MAX_CHAT_REPLY_BYTES",
    "MAX_REPLY_BYTES",
    "ByteCap",
    "DeadlineTransport",
    "ReplyTooLarge",
    "http_client",
]

MAX_REPLY_BYTES = 16 * 2**20
"""The largest reply read (16 MiB): a JSON answer of a few hundred tokens or a batch of
embeddings is far smaller."""

MAX_CHAT_REPLY_BYTES = 2**20
"""The largest chat reply read (1 MiB, a few hundred tokens are a few KB): parsing a reply
of megabytes of JSON holds the interpreter past a turn's deadline."""

ByteCap = int | Callable[[httpx2.Request], int]
"""The most bytes of a reply read: one number, or one per request (a batch's size)."""


class ReplyTooLarge(httpx2.ReadError):
    """A reply passed :data:`MAX_REPLY_BYTES`, or came compressed so that its size could
    not be bounded (an :class:`httpx2.ReadError`, so the OpenAI client reports it as a
    connection error)."""


_DEADLINE: ContextVar[float | None] = ContextVar("memengine_http_deadline", default=None)
"""The moment (``time.monotonic``) by which the request this thread is sending must end."""


def _left(timeout: float | None, error: type[httpcore2.TimeoutException]) -> float | None:
    """``timeout`` cut to the time left before this thread's request deadline (``error``
    when none is left)."""
    deadline = _DEADLINE.get()
    if deadline is None:  # a request without a read timeout
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every read and write waits no longer than the deadline of the
    request being sent on it (connections are pooled, so the deadline is the thread's)."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """The network of a connection pool, its connections made within the deadline and
    wrapped in :class:`_DeadlineStream`."""

    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, left, local_address, socket_options)
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _DeadlineStream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _bound_network(transport: httpx2.BaseTransport) -> None:
    """Make the connections of ``transport``'s pool keep the request's deadline (a
    transport without an ``httpcore2`` pool keeps only the body's)."""
    pool = getattr(transport, "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if isinstance(backend, httpcore2.NetworkBackend) and not isinstance(backend, _DeadlineBackend):
        pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]


class _Limited(httpx2.SyncByteStream):
    """A reply body that stops at a moment and a size."""

    def __init__(
        self,
        inner: httpx2.SyncByteStream,
        request: httpx2.Request,
        deadline: float | None,
        limit: int,
    ) -> None:
        self._inner = inner
        self._request = request
        self._deadline = deadline
        self._limit = limit

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        chunks = iter(self._inner)
        while True:
            token = _DEADLINE.set(self._deadline)  # each read of the body waits no longer
            try:
                chunk = next(chunks)
            except StopIteration:
                return
            finally:
                _DEADLINE.reset(token)
            read += len(chunk)
            if read > self._limit:
                raise ReplyTooLarge(
                    f"the reply passed {self._limit:,} bytes", request=self._request
                )
            if self._deadline is not None and time.monotonic() > self._deadline:
                raise httpx2.ReadTimeout(
                    "the reply was still arriving at the request's deadline",
                    request=self._request,
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()


class DeadlineTransport(httpx2.BaseTransport):
    """A transport whose requests end at their read timeout, counted from the moment each
    was sent (connection, headers and body), and whose replies end at ``max_bytes``."""

    def __init__(
        self, inner: httpx2.BaseTransport | None = None, *, max_bytes: ByteCap = MAX_REPLY_BYTES
    ) -> None:
        self._inner = inner if inner is not None else httpx2.HTTPTransport()
        self._max_bytes = max_bytes
        _bound_network(self._inner)

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request``; it ends, its reply's body read, within its read timeout."""
        started = time.monotonic()
        request.headers["Accept-Encoding"] = "identity"  # the bytes counted are the reply's
        timeouts = request.extensions.get("timeout") or {}
        limit = timeouts.get("read")
        deadline = None if limit is None else started + float(limit)
        token = _DEADLINE.set(deadline)
        try:
            response = self._inner.handle_request(request)
        finally:
            _DEADLINE.reset(token)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):  # asked for none: its size would be unknown
            response.close()
            raise ReplyTooLarge(
                f"the reply came compressed ({encoding}) although none was asked for; "
                "its size cannot be bounded",
                request=request,
            )
        if not isinstance(response.stream, httpx2.SyncByteStream):
            return response
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Limited(response.stream, request, deadline, self._cap(request)),
            extensions=response.extensions,
            request=request,
        )

    def _cap(self, request: httpx2.Request) -> int:
        """The most bytes of ``request``'s reply read."""
        return self._max_bytes(request) if callable(self._max_bytes) else self._max_bytes

    def close(self) -> None:
        """Close the wrapped transport."""
        self._inner.close()


_PROXY_VARIABLES = (
    "ALL_PROXY",
    "all_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
)
"""The environment variables that name a proxy for the HTTP client."""


def _environment_proxies() -> dict[str, str | None]:
    """The proxies the environment names, by the URL pattern each serves (``http://``,
    ``all://``; None for NO_PROXY's exceptions), as the HTTP client reads them."""
    from httpx2._utils import get_environment_proxies

    return dict(get_environment_proxies())


def _broken(url: str) -> str | None:
    """Why a proxy URL names no server to connect to (None: it may): no host, or a host
    or port that cannot be read ("http://[bad", "http://", "http://host:port"). The
    reason never quotes the URL (a password in it)."""
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port
    except ValueError:
        return "its host or port cannot be read"
    return None if host else "no host"


def proxy_for(url: str) -> str | None:
    """The proxy (as messages may show it) that the HTTP client sends requests for ``url``
    through, by the environment (None: a direct connection)."""
    proxy = _proxy_url_for(url)
    return masked_url(proxy) if proxy is not None else None


def _proxy_url_for(url: str) -> str | None:
    """The proxy URL the environment names for requests to ``url`` (None: none)."""
    try:
        target = httpx2.URL(url)
    except httpx2.InvalidURL:
        return None
    from httpx2._utils import URLPattern

    patterns = sorted(
        ((URLPattern(k), v) for k, v in _environment_proxies().items()), key=lambda kv: kv[0]
    )
    for pattern, proxy in patterns:  # (the most specific first, as the client picks)
        if pattern.matches(target):
            return proxy
    return None


_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
"""The OpenAI library's own connection limits (its ``DefaultHttpxClient``'s)."""


def _without_other_proxies(
    url: str | None, own: str | None, exc: Exception, tls: dict[str, Any]
) -> httpx2.Client:
    """The client for ``url`` when the HTTP library refused a proxy of the environment's:
    through ``url``'s own proxy (``own``) alone, or none (its other settings, SSL_CERT_FILE
    among them, still read; ``tls`` the same as the first try's); a ConfigError when
    ``url`` would go through the refused one. Its text never quotes a URL (a password in
    it may hold the "/" a parser stops at)."""
    import openai

    why = str(exc) if isinstance(exc, ImportError) else "its scheme or URL cannot be used"
    refused = ConfigError(
        f"the HTTP client cannot use the proxy that {_naming(own)} names ({why}): "
        "correct or unset it"
    )
    if url is None:
        raise refused from None
    try:
        if own is None:  # a transport of its own: the environment's proxies are not read
            return openai.DefaultHttpxClient(
                transport=httpx2.HTTPTransport(limits=_LIMITS, **tls), **tls
            )
        return openai.DefaultHttpxClient(proxy=own, **tls)
    except (ImportError, ValueError, httpx2.InvalidURL):
        raise refused from None


def _tls_variable(exc: OSError | None) -> str | None:
    """The environment variable behind a TLS context the HTTP client could not build (or,
    with ``exc`` None, will not be able to use): the one naming the file the error names,
    else the one the client reads (``SSL_CERT_FILE``, else ``SSL_CERT_DIR``)."""
    named = {v: os.environ.get(v) for v in ("SSL_CERT_FILE", "SSL_CERT_DIR", "SSLKEYLOGFILE")}
    filename = getattr(exc, "filename", None)
    for variable, value in named.items():
        if value and filename is not None and os.fspath(filename) == value:
            return variable
    if named["SSL_CERT_FILE"]:
        return "SSL_CERT_FILE"
    return "SSL_CERT_DIR" if named["SSL_CERT_DIR"] else None


def _tls_files_refused(exc: OSError) -> str:
    """What to say of a TLS context the HTTP client could not build, naming the environment
    variable behind it (the usual cause)."""
    variable = _tls_variable(exc)
    named = (
        f"; {variable} in the environment names what it reads: correct or unset it"
        if variable
        else ""
    )
    return f"the HTTP client cannot be built: its TLS settings failed ({exc}){named}"


def _unusable_certificate_folder() -> str | None:
    """What to say of an ``SSL_CERT_DIR`` that names no folder while no ``SSL_CERT_FILE``
    is set: the client reads it, and OpenSSL takes a missing folder without a word, so
    every HTTPS request would fail to verify its server, naming nothing."""
    folder = os.environ.get("SSL_CERT_DIR")
    if os.environ.get("SSL_CERT_FILE") or not folder or os.path.isdir(folder):
        return None
    return (
        f"the HTTP client cannot verify servers: SSL_CERT_DIR in the environment names "
        f"no folder ({folder!r}): correct or unset it"
    )


def _uses_tls(url: str | None, proxy: str | None) -> bool:
    """Whether requests to ``url`` (through ``proxy``) need TLS: an https endpoint, or an
    https proxy (the HTTP client verifies that one too). None: unknown, so they may."""
    return url is None or any(
        u is not None and u.strip().lower().startswith("https:") for u in (url, proxy)
    )


def _trusting_no_server() -> ssl.SSLContext:
    """A TLS context that verifies every server and trusts none: for a plain-http client
    whose environment's TLS settings cannot be read. The client follows redirects, so one
    to an https URL fails to verify rather than going unverified or trusting the system's
    certificates where the environment named others."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # (CERT_REQUIRED, hostnames checked)


def _naming(proxy: str | None) -> str:
    """The environment variables that name ``proxy`` (any set, when None or none matches)."""
    set_ = [v for v in _PROXY_VARIABLES if os.environ.get(v, "").strip()]
    if proxy is not None:
        exact = [v for v in set_ if os.environ[v].strip() in (proxy, proxy.split("://", 1)[-1])]
        set_ = exact or set_
    return ", ".join(set_) if set_ else "the environment's proxy settings"


def _library_client(url: str | None, proxy: str | None, tls: dict[str, Any]) -> httpx2.Client:
    """The OpenAI library's own client with the TLS settings ``tls`` (none: the
    environment's), or ``url``'s own proxy alone when the library refuses another."""
    import openai

    try:
        return openai.DefaultHttpxClient(**tls)
    except (ImportError, ValueError, httpx2.InvalidURL) as exc:  # (a proxy it cannot use)
        return _without_other_proxies(url, proxy, exc, tls)


def http_client(url: str | None = None, *, max_bytes: ByteCap = MAX_REPLY_BYTES) -> httpx2.Client:
    """The HTTP client the OpenAI clients are given: the OpenAI library's own (its
    connection limits, the environment's proxies), each of its transports wrapped in a
    :class:`DeadlineTransport`. A proxy the environment names for ``url`` (its scheme and
    host, NO_PROXY read) that the client cannot use or that names no server is a
    ConfigError; one only other URLs would use is left to them (when the library refuses
    it, ``url``'s client takes its own proxy alone, or none). TLS settings it cannot read
    are a ConfigError only when ``url``'s requests use TLS (https, or an https proxy)."""
    proxy = _proxy_url_for(url) if url is not None else None
    tls = _uses_tls(url, proxy)  # (plain HTTP to a plain-HTTP proxy, or none, verifies none)
    if tls and (folder := _unusable_certificate_folder()) is not None:
        raise ConfigError(folder)
    try:
        client = _library_client(url, proxy, {})
    except OSError as exc:  # (its TLS context: a certificate file that cannot be read)
        if tls:
            raise ConfigError(_tls_files_refused(exc)) from exc
        # a local server over plain HTTP: a stale SSL_CERT_FILE in the shell stops nothing
        client = _library_client(url, proxy, {"verify": _trusting_no_server()})
    why = _broken(proxy) if proxy is not None else None
    if proxy is not None and why is not None:  # (taken, then every request fails)
        raise ConfigError(
            f"the HTTP client cannot use the proxy that {_naming(proxy)} names "
            f"({masked_url(proxy)!r}: {why}): correct or unset it"
        )
    # httpx builds its transports, the proxies' too, only when none is given: wrap them
    client._transport = DeadlineTransport(client._transport, max_bytes=max_bytes)
    client._mounts = {
        pattern: DeadlineTransport(t, max_bytes=max_bytes) if t is not None else None
        for pattern, t in client._mounts.items()
    }
    return client
