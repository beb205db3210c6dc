"""A scripted OpenAI-compatible HTTP server for tests and benchmarks (stdlib + numpy).

It listens on 127.0.0.1 on an ephemeral port in a background thread and
answers ``POST /v1/chat/completions``, ``POST /v1/embeddings`` and
``GET /v1/models`` the way an OpenAI-compatible server would, following a
script that the test writes::

    with ScriptedOpenAI() as srv:
        srv.push_chat(status=429)                 # first call: rate limited
        srv.push_chat(content='{"ok": true}')     # second call: a JSON answer
        client = ChatClient(base_url=srv.base_url, api_key=None)
        ...
        assert srv.chat_requests[-1]["model"] == "m"

Chat replies are taken from a queue (``push_chat``) or, when the queue is
empty, from ``chat_handler`` (a callable ``body -> ScriptedReply``) or the
``default_chat`` reply. Embedding replies default to deterministic
hash-seeded unit vectors (``embedding_dim`` long, or the request's
``dimensions``); ``embed_fn`` replaces that with any ``text -> vector``.
``reject_formats`` makes the server answer 400 to chosen ``response_format``
kinds without consuming the queue, like servers that do not support them.
Every request is recorded in ``requests``.

The tests import it through ``tests/openai_server.py`` (which adds a pytest
fixture); ``memengine.evaluation.llm_latency`` uses it for the LLM latency
benchmark.
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

__all__ = [
    "RecordedRequest",
    "ScriptedOpenAI",
    "ScriptedReply",
    "deterministic_vector",
    "response_format_kind",
]


@dataclass(frozen=True)
class ScriptedReply:
    """One scripted answer: an HTTP status (with an error body), a chat content or a raw body.

    ``delay`` seconds pass before the answer is sent. For chat, ``content`` is
    wrapped as the assistant message of a chat completion; ``body`` (any JSON
    value) replaces the whole response body. For embeddings, ``vectors``
    replaces the computed vectors (one per input) and ``dimension`` overrides
    the vector length of the default embedding. ``raw`` bytes are sent as the
    body as they are (not UTF-8, cut short, …); ``byte_interval`` seconds pass
    between the body's bytes (a server that trickles), ``head_interval`` between
    those of the status line and headers (one slow to begin its answer).
    """

    status: int = 200
    content: str | None = None
    body: Any = None
    delay: float = 0.0
    error_message: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: tuple[int, int] | None = None
    finish_reason: str = "stop"
    vectors: Sequence[Sequence[float]] | None = None
    dimension: int | None = None
    raw: bytes | None = None
    byte_interval: float = 0.0
    head_interval: float = 0.0


@dataclass(frozen=True)
class RecordedRequest:
    """A request the server received: method, path, headers and the decoded JSON body."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float


def response_format_kind(body: Any) -> str:
    """Classify a chat request's ``response_format``.

    Returns ``"json_schema"``, ``"json_object_schema"`` (llama.cpp form),
    ``"json_object"``, ``"none"`` (absent) or ``"other"``.
    """
    rf = body.get("response_format") if isinstance(body, dict) else None
    if rf is None:
        return "none"
    if not isinstance(rf, dict):
        return "other"
    kind = rf.get("type")
    if kind == "json_schema":
        return "json_schema"
    if kind == "json_object":
        return "json_object_schema" if "schema" in rf else "json_object"
    return "other"


def deterministic_vector(text: str, dimension: int) -> list[float]:
    """A unit vector seeded by the SHA-256 of ``text``: same text, same vector, on any machine."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vec = np.random.default_rng(seed).standard_normal(dimension)
    vec /= np.linalg.norm(vec) or 1.0
    return [float(x) for x in vec]


class ScriptedOpenAI:
    """A scripted OpenAI-compatible server on ``127.0.0.1:<ephemeral port>``; use as a context manager."""

    def __init__(
        self,
        *,
        embedding_dim: int = 8,
        models: Sequence[str] = ("test-chat", "test-embed"),
    ) -> None:
        """Prepare (but do not start) a server whose default embeddings have ``embedding_dim``."""
        self.embedding_dim = embedding_dim
        self.models = list(models)
        self.reject_formats: set[str] = set()
        self.chat_handler: Callable[[Any], ScriptedReply] | None = None
        self.default_chat: ScriptedReply | None = None
        self.embed_fn: Callable[[str], Sequence[float]] | None = None
        self.requests: list[RecordedRequest] = []
        self._chat: deque[ScriptedReply] = deque()
        self._embeddings: deque[ScriptedReply] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> ScriptedOpenAI:
        """Bind the port and start serving in a daemon thread."""
        if self._server is not None:
            return self
        server = _QuietServer(("127.0.0.1", 0), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving, wake up delayed handlers and release the port."""
        self._closing.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._server is None:
            raise RuntimeError("ScriptedOpenAI is not started")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. ``http://127.0.0.1:54321/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- script --------------------------------------------------------------------

    def push_chat(
        self,
        content: str | None = None,
        *,
        json_data: Any = None,
        status: int = 200,
        delay: float = 0.0,
        error_message: str | None = None,
        headers: dict[str, str] | None = None,
        usage: tuple[int, int] | None = None,
        finish_reason: str = "stop",
        body: Any = None,
        raw: bytes | None = None,
        byte_interval: float = 0.0,
        head_interval: float = 0.0,
    ) -> None:
        """Queue the answer to the next chat completion request.

        ``content`` is the assistant text verbatim; ``json_data`` is dumped to
        JSON and used as content; ``status`` >= 400 sends an OpenAI-style error;
        ``raw``, ``byte_interval`` and ``head_interval`` as in :class:`ScriptedReply`.
        """
        if json_data is not None:
            content = json.dumps(json_data)
        self._chat.append(
            ScriptedReply(
                status=status,
                content=content,
                body=body,
                delay=delay,
                error_message=error_message,
                headers=dict(headers or {}),
                usage=usage,
                finish_reason=finish_reason,
                raw=raw,
                byte_interval=byte_interval,
                head_interval=head_interval,
            )
        )

    def push_embeddings(
        self,
        *,
        status: int = 200,
        delay: float = 0.0,
        error_message: str | None = None,
        headers: dict[str, str] | None = None,
        vectors: Sequence[Sequence[float]] | None = None,
        dimension: int | None = None,
        body: Any = None,
        raw: bytes | None = None,
        head_interval: float = 0.0,
    ) -> None:
        """Queue the answer to the next embeddings request (default: deterministic vectors;
        ``raw`` and ``head_interval`` as in :class:`ScriptedReply`)."""
        self._embeddings.append(
            ScriptedReply(
                status=status,
                delay=delay,
                error_message=error_message,
                headers=dict(headers or {}),
                vectors=vectors,
                dimension=dimension,
                body=body,
                raw=raw,
                head_interval=head_interval,
            )
        )

    # -- inspection ----------------------------------------------------------------

    def _bodies(self, suffix: str) -> list[Any]:
        with self._lock:
            return [r.body for r in self.requests if r.path.endswith(suffix)]

    @property
    def chat_requests(self) -> list[Any]:
        """JSON bodies of every chat completion request received, in order."""
        return self._bodies("/chat/completions")

    @property
    def embedding_requests(self) -> list[Any]:
        """JSON bodies of every embeddings request received, in order."""
        return self._bodies("/embeddings")

    @property
    def pending(self) -> int:
        """How many scripted chat + embeddings replies are still queued."""
        return len(self._chat) + len(self._embeddings)

    # -- answers (called from handler threads) ---------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append(
                RecordedRequest(
                    method=handler.command,
                    path=handler.path,
                    headers={k.lower(): v for k, v in handler.headers.items()},
                    body=body,
                    received_at=time.monotonic(),
                )
            )

    def _next_chat(self, body: Any) -> ScriptedReply:
        kind = response_format_kind(body)
        if kind in self.reject_formats or ("any" in self.reject_formats and kind != "none"):
            return ScriptedReply(
                status=400,
                error_message=f"response_format type {kind!r} is not supported by this server",
            )
        with self._lock:
            if self._chat:
                return self._chat.popleft()
        if self.chat_handler is not None:
            return self.chat_handler(body)
        if self.default_chat is not None:
            return self.default_chat
        return ScriptedReply(status=500, error_message="scripted server: no chat reply queued")

    def _next_embeddings(self) -> ScriptedReply:
        with self._lock:
            if self._embeddings:
                return self._embeddings.popleft()
        return ScriptedReply()

    def _chat_body(self, reply: ScriptedReply, request: Any) -> Any:
        if reply.body is not None:
            return reply.body
        content = reply.content if reply.content is not None else "{}"
        prompt_tokens, completion_tokens = reply.usage or (
            sum(len(str(m.get("content", "")).split()) for m in request.get("messages", [])),
            max(1, len(content.split())),
        )
        return {
            "id": f"chatcmpl-scripted-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "unknown"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _embeddings_body(self, reply: ScriptedReply, request: Any) -> Any:
        if reply.body is not None:
            return reply.body
        inputs = request.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        dimension = reply.dimension or request.get("dimensions") or self.embedding_dim
        if reply.vectors is not None:
            vectors = [list(map(float, v)) for v in reply.vectors]
        elif self.embed_fn is not None:
            vectors = [list(map(float, self.embed_fn(t))) for t in inputs]
        else:
            vectors = [deterministic_vector(str(t), int(dimension)) for t in inputs]
        as_base64 = request.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": (
                    base64.b64encode(np.asarray(v, dtype="<f4").tobytes()).decode("ascii")
                    if as_base64
                    else v
                ),
            }
            for i, v in enumerate(vectors)
        ]
        tokens = sum(len(str(t).split()) for t in inputs)
        return {
            "object": "list",
            "data": data,
            "model": request.get("model", "unknown"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _error_body(status: int, message: str | None) -> dict[str, Any]:
    kinds = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}
    return {
        "error": {
            "message": message or f"scripted HTTP {status}",
            "type": kinds.get(status, "server_error" if status >= 500 else "invalid_request_error"),
            "param": None,
            "code": None,
        }
    }


class _QuietServer(ThreadingHTTPServer):
    """Says nothing when a client goes away mid-answer (it timed out, or was closed)."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Report a handler's error, unless the client reset or closed the connection."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def _make_handler(srv: ScriptedOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            """Keep test output quiet."""

        def _read_json(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return {"_unparsed": raw.decode("utf-8", "replace")}

        def _send(
            self,
            status: int,
            body: Any,
            headers: dict[str, str] | None = None,
            *,
            raw: bytes | None = None,
            byte_interval: float = 0.0,
            head_interval: float = 0.0,
        ) -> None:
            payload = raw if raw is not None else json.dumps(body).encode("utf-8")
            try:
                if head_interval > 0 and not self._trickle_head(
                    status, len(payload), headers or {}, head_interval
                ):
                    return
                if head_interval <= 0:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                if byte_interval <= 0:
                    self.wfile.write(payload)
                for i in range(len(payload) if byte_interval > 0 else 0):
                    self.wfile.write(payload[i : i + 1])
                    self.wfile.flush()
                    if srv._closing.wait(byte_interval):
                        self.close_connection = True
                        return
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def _trickle_head(
            self, status: int, length: int, headers: dict[str, str], interval: float
        ) -> bool:
            """Send the status line and headers a byte at a time; False once closing."""
            lines = [f"HTTP/1.1 {status} Scripted", "Content-Type: application/json"]
            lines += [f"Content-Length: {length}"] + [f"{k}: {v}" for k, v in headers.items()]
            head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
            for i in range(len(head)):
                self.wfile.write(head[i : i + 1])
                self.wfile.flush()
                if srv._closing.wait(interval):
                    self.close_connection = True
                    return False
            return True

        def _answer(self, reply: ScriptedReply, make_body: Callable[[], Any]) -> None:
            if reply.delay > 0 and srv._closing.wait(reply.delay):
                self.close_connection = True
                return
            if reply.status >= 400:
                body = (
                    reply.body
                    if reply.body is not None
                    else _error_body(reply.status, reply.error_message)
                )
                self._send(reply.status, body, reply.headers)
            else:
                body = make_body() if reply.raw is None else None
                self._send(
                    reply.status,
                    body,
                    reply.headers,
                    raw=reply.raw,
                    byte_interval=reply.byte_interval,
                    head_interval=reply.head_interval,
                )

        def do_GET(self) -> None:
            srv._record(self, None)
            if self.path.rstrip("/").endswith("/models"):
                data = [{"id": m, "object": "model", "owned_by": "scripted"} for m in srv.models]
                self._send(200, {"object": "list", "data": data})
            else:
                self._send(404, _error_body(404, f"no route {self.path}"))

        def do_POST(self) -> None:
            body = self._read_json()
            srv._record(self, body)
            request = body if isinstance(body, dict) else {}
            if self.path.endswith("/chat/completions"):
                reply = srv._next_chat(request)
                self._answer(reply, lambda: srv._chat_body(reply, request))
            elif self.path.endswith("/embeddings"):
                reply = srv._next_embeddings()
                self._answer(reply, lambda: srv._embeddings_body(reply, request))
            else:
                self._send(404, _error_body(404, f"no route {self.path}"))

    return Handler
