"""A wall-clock limit and a size limit on every reply an OpenAI-compatible server sends.

An HTTP client's timeouts bound each network operation, not a whole reply:
a server that sends one byte every few tenths of a second never trips a
read timeout, and one that sends 200 MB is read to the end. Both would hold
a turn (or the thread it left behind) far past its deadline.
:class:`DeadlineTransport` wraps the real transport and ends the reading of
a reply once the request's own read timeout has passed since it was sent
(the clients set it to the time left before their deadline), or once the
reply passes :data:`MAX_REPLY_BYTES`. Replies are asked for uncompressed,
and a compressed one is refused (the bytes counted would not be the reply's:
200 KB of gzip can decode to 200 MB). Nothing here reads configuration;
:func:`http_client` keeps the ``openai`` library's own client, environment
proxies included.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx2

__all__ = ["MAX_REPLY_BYTES", "DeadlineTransport", "ReplyTooLarge", "http_client"]

MAX_REPLY_BYTES = 16 * 2**20
"""The largest reply read (16 MiB): a JSON answer of a few hundred tokens or a batch of
embeddings is far smaller."""


class ReplyTooLarge(httpx2.ReadError):
    """A reply passed :data:`MAX_REPLY_BYTES`, or came compressed so that its size could
    not be bounded (an :class:`httpx2.ReadError`, so the OpenAI client reports it as a
    connection error)."""


class _Limited(httpx2.SyncByteStream):
    """A reply body that stops at a moment and a size."""

    def __init__(
        self, inner: httpx2.SyncByteStream, request: httpx2.Request, deadline: float, limit: int
    ) -> None:
        self._inner = inner
        self._request = request
        self._deadline = deadline
        self._limit = limit

    def __iter__(self) -> Iterator[bytes]:
        read = 0
        for chunk in self._inner:
            read += len(chunk)
            if read > self._limit:
                raise ReplyTooLarge(
                    f"the reply passed {self._limit:,} bytes", request=self._request
                )
            if time.monotonic() > self._deadline:
                raise httpx2.ReadTimeout(
                    "the reply was still arriving at the request's deadline",
                    request=self._request,
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()


class DeadlineTransport(httpx2.BaseTransport):
    """A transport whose replies end at the request's read timeout, counted from the
    moment it was sent, and at ``max_bytes``."""

    def __init__(
        self, inner: httpx2.BaseTransport | None = None, *, max_bytes: int = MAX_REPLY_BYTES
    ) -> None:
        self._inner = inner if inner is not None else httpx2.HTTPTransport()
        self._max_bytes = max_bytes

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request``; its reply's body is read within the request's read timeout."""
        started = time.monotonic()
        request.headers["Accept-Encoding"] = "identity"  # the bytes counted are the reply's
        timeouts = request.extensions.get("timeout") or {}
        limit = timeouts.get("read")
        response = self._inner.handle_request(request)
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):  # asked for none: its size would be unknown
            response.close()
            raise ReplyTooLarge(
                f"the reply came compressed ({encoding}) although none was asked for; "
                "its size cannot be bounded",
                request=request,
            )
        deadline = float("inf") if limit is None else started + float(limit)
        if not isinstance(response.stream, httpx2.SyncByteStream):
            return response
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_Limited(response.stream, request, deadline, self._max_bytes),
            extensions=response.extensions,
            request=request,
        )

    def close(self) -> None:
        """Close the wrapped transport."""
        self._inner.close()


def http_client(*, max_bytes: int = MAX_REPLY_BYTES) -> httpx2.Client:
    """The HTTP client the OpenAI clients are given: the OpenAI library's own (its
    connection limits, the environment's proxies), each of its transports wrapped in a
    :class:`DeadlineTransport`."""
    import openai

    client = openai.DefaultHttpxClient()
    # httpx builds its transports, the proxies' too, only when none is given: wrap them
    client._transport = DeadlineTransport(client._transport, max_bytes=max_bytes)
    client._mounts = {
        pattern: DeadlineTransport(t, max_bytes=max_bytes) if t is not None else None
        for pattern, t in client._mounts.items()
    }
    return client
