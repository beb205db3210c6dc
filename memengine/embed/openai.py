"""An :class:`~memengine.embed.base.Embedder` over any OpenAI-compatible ``/embeddings`` endpoint.

Works with OpenAI, Ollama, llama.cpp server, vLLM, LM Studio, … through the
real ``openai`` client. Inputs are de-duplicated and sent in batches; the
vectors come back L2-normalised float32. They are asked for as base64 (their
float32 bytes: reading a batch of floats written in JSON took most of the
client's time for a local endpoint); an endpoint that refuses that format
(HTTP 400 or 422) is asked again for JSON floats, which it is then asked for
from then on, and one that sends floats anyway is read as it sends them.
Nothing here reads the environment: every value is passed in.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections.abc import Sequence
from typing import Any, Literal

import httpx2
import numpy as np
import openai

from ..config import EmbedderConfig, LLMConfig, masked_url
from ..errors import ConfigError, EmbedderMismatch, EmbeddingError, InvalidInput
from ..http_deadline import MAX_REPLY_BYTES, ReplyTooLarge, http_client, proxy_for
from ..http_retry import (
    PLACEHOLDER_API_KEY,
    backoff_delay,
    client_endpoint,
    has_cause,
    hides_secrets,
    retry_after,
    secrets_of,
    server_message,
    setting_argument,
)
from .base import Vectors, normalize

__all__ = ["OpenAIEmbedder", "recorded_dimension"]

_PROBE_TEXT = "dimension probe"


def recorded_dimension(embedder_id: str | None, model: str) -> int | None:
    """The dimension in a recorded embedder id ``openai:<model>:<n>`` of ``model``, else
    None: a file made with this model tells its dimension without asking the endpoint."""
    prefix = f"openai:{model}:"
    if embedder_id is None or not embedder_id.startswith(prefix):
        return None
    tail = embedder_id[len(prefix) :]
    return int(tail) if tail.isascii() and tail.isdigit() and int(tail) > 0 else None


class OpenAIEmbedder:
    """Embeds texts with an OpenAI-compatible embeddings endpoint; thread-safe.

    ``id`` is ``openai:<model>:<dimension>``. The dimension is ``dimensions``
    when given (and then also sent to the API), else ``recorded_dimension`` (what
    a memory file records for this model, see :func:`recorded_dimension`; not
    sent, and the first embedding must match it), else learned from the first
    embedding (a one-text probe if it is asked for before any embedding).
    :meth:`confirm_dimension` asks the endpoint even when ``dimensions`` is given.
    """

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None = None,
        model: str,
        dimensions: int | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        max_retries: int = 3,
        backoff_base_s: float = 0.2,
        backoff_max_s: float = 5.0,
        recorded_dimension: int | None = None,
    ) -> None:
        """Create an embedder for ``model`` at ``base_url`` (None means api.openai.com).

        ``api_key`` None sends a placeholder (fine for local servers); 429 and
        5xx answers are retried up to ``max_retries`` times with backoff. Each number is
        checked and converted as the ``[embedder]`` setting it stands for is
        (``timeout_s`` as ``request_timeout_s``; the waits as ``[llm] backoff_base_s``),
        as :class:`~memengine.llm.ChatClient`'s are: "5", True or -1 is a ConfigError
        naming it.
        """
        if not model:
            raise ConfigError("an embedding model name is needed ([embedder] model)")
        checked = {
            name: setting_argument(name, given, section, setting)
            for name, given, section, setting in (
                ("dimensions", dimensions, EmbedderConfig, "dimensions"),
                ("batch_size", batch_size, EmbedderConfig, "batch_size"),
                ("timeout_s", timeout_s, EmbedderConfig, "request_timeout_s"),
                ("max_retries", max_retries, EmbedderConfig, "max_retries"),
                # (no [embedder] setting: a wait, as the chat client's first one)
                ("backoff_base_s", backoff_base_s, LLMConfig, "backoff_base_s"),
                ("backoff_max_s", backoff_max_s, LLMConfig, "backoff_base_s"),
            )
            if given is not None or name != "dimensions"  # (None: the endpoint's own)
        }
        self.base_url, api_key = client_endpoint(base_url, api_key)
        self.shown_url = masked_url(self.base_url)
        """``base_url`` as messages show it (without a name and password in it)."""
        self.model = model
        self.dimensions: int | None = checked.get("dimensions")
        self.batch_size: int = checked["batch_size"]
        self.timeout_s: float = checked["timeout_s"]
        self.max_retries: int = checked["max_retries"]
        self.backoff_base_s: float = checked["backoff_base_s"]
        self.backoff_max_s: float = checked["backoff_max_s"]
        self._secrets = secrets_of(self.base_url, api_key)
        self._client = openai.OpenAI(
            base_url=self.base_url,
            api_key=api_key or PLACEHOLDER_API_KEY,
            timeout=self.timeout_s,
            max_retries=0,
            # a reply ends at its deadline, and at a size no batch of floats in JSON reaches
            http_client=http_client(self.base_url, max_bytes=self._reply_cap),
        )
        self._dimension: int | None = self.dimensions or recorded_dimension
        self._from_file = dimensions is None and recorded_dimension is not None
        self._lock = threading.Lock()
        self._requests = 0
        self._format: Literal["float", "base64"] = "base64"  # until the endpoint refuses it

    @property
    def id(self) -> str:
        """``openai:<model>:<dimension>`` (may send one probe request to learn the dimension)."""
        return f"openai:{self.model}:{self.dimension}"

    @property
    def dimension(self) -> int:
        """Length of every vector; probed from the server on first access if not configured."""
        if self._dimension is None:
            vectors = self._embed_batch([_PROBE_TEXT])
            with self._lock:
                if self._dimension is None:
                    self._dimension = int(vectors.shape[1])
        return self._dimension

    @hides_secrets
    def confirm_dimension(self) -> int:
        """The dimension, asked of the endpoint with one vector even when ``dimensions`` is
        configured: a new memory file is made with it, and a server that ignores the setting
        (Ollama and llama.cpp do) would get a file none of its vectors fit (a ConfigError)."""
        if self.dimensions is None:
            return self.dimension  # (learned from the endpoint, unless already)
        made = int(self._embed_batch([_PROBE_TEXT], checked=False).shape[1])
        if made != self.dimensions:
            raise ConfigError(
                f"embedding model {self.model!r} at {self.shown_url} returns vectors of "
                f"dimension {made} though it is sent [embedder] dimensions = {self.dimensions}: "
                "the server ignores the setting (Ollama and llama.cpp do). Remove dimensions, "
                f"or set it to {made}"
            )
        return made

    @property
    def requests(self) -> int:
        """Number of HTTP requests sent so far (retries included)."""
        with self._lock:
            return self._requests

    def _reply_cap(self, request: httpx2.Request) -> int:
        """The most bytes of the reply to ``request`` read: room for its texts' vectors in
        JSON (24 bytes a number, 4,096 numbers a vector at least) and 64 KiB more; parsing
        megabytes more, for one query, would hold a turn past its deadline."""
        try:
            texts = json.loads(request.content or b"{}").get("input")
        except (ValueError, AttributeError, httpx2.RequestNotRead):
            return MAX_REPLY_BYTES
        n = len(texts) if isinstance(texts, list) else 1
        return n * max(self._dimension or 0, 4096) * 24 + 2**16

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` in order: shape ``(len(texts), dimension)``, float32, unit rows."""
        if isinstance(texts, str):
            raise InvalidInput("embed() takes a sequence of strings, not a single string")
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique: dict[str, int] = {}
        for text in texts:
            if not isinstance(text, str):
                raise InvalidInput(f"embed() takes strings, got {type(text).__name__}")
            unique.setdefault(text, len(unique))
        distinct = list(unique)
        parts = [
            self._embed_batch(distinct[i : i + self.batch_size])
            for i in range(0, len(distinct), self.batch_size)
        ]
        table = np.concatenate(parts, axis=0)
        rows = np.fromiter((unique[t] for t in texts), dtype=np.intp, count=len(texts))
        return np.ascontiguousarray(table[rows])

    def close(self) -> None:
        """Close the underlying HTTP connection pool."""
        self._client.close()

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(base_url={self.shown_url!r}, model={self.model!r})"

    # -- internals ------------------------------------------------------------------

    @hides_secrets
    def _embed_batch(self, batch: list[str], *, checked: bool = True) -> Vectors:
        """One embeddings request (with retries), checked and normalised; ``checked`` False
        leaves their length unchecked (:meth:`confirm_dimension` says what it is)."""
        response = self._request(batch)
        data = getattr(response, "data", None)
        if not isinstance(data, list):
            raise EmbeddingError(
                f"embedding endpoint {self.shown_url} did not answer with a list of embeddings "
                f"({_what_came(response, data)}; model {self.model!r})"
            )
        if len(data) != len(batch):
            raise EmbeddingError(
                f"embedding endpoint {self.shown_url} returned {len(data)} vectors "
                f"for {len(batch)} inputs (model {self.model!r})"
            )
        indexes = [
            getattr(item, "index", None) if not isinstance(item, str) else None for item in data
        ]
        numbered = [i for i in indexes if type(i) is int]
        if len(numbered) != len(indexes) or sorted(numbered) != list(range(len(batch))):
            shown = ", ".join(map(repr, indexes[:8])) + (", …" if len(indexes) > 8 else "")
            raise EmbeddingError(
                f"embedding endpoint {self.shown_url} numbered its vectors [{shown}], not each "
                f"of 0…{len(batch) - 1} once (model {self.model!r})"
            )
        data = sorted(data, key=lambda item: item.index)
        try:
            matrix = np.asarray(
                [_floats(getattr(item, "embedding", None)) for item in data], dtype=np.float32
            )
        except (TypeError, ValueError, binascii.Error) as exc:
            raise EmbeddingError(
                f"embedding endpoint {self.shown_url} returned vectors of uneven length "
                f"or non-numbers (model {self.model!r})"
            ) from exc
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            raise EmbeddingError(
                f"embedding endpoint {self.shown_url} returned malformed vectors "
                f"(model {self.model!r})"
            )
        expected = self._dimension if checked else None
        made = matrix.shape[1]
        if expected is not None and made != expected:
            if self._from_file:  # a setting to change, not an endpoint to wait for
                raise EmbedderMismatch(
                    f"embedding model {self.model!r} at {self.shown_url} returns vectors of "
                    f"dimension {made}, but the memory file's vectors of this model have "
                    f"{expected}: re-embed the file with the model's own {made} (memengine "
                    "reembed, with this configuration); or, only if the server honours "
                    "[embedder] dimensions (OpenAI's does; Ollama and llama.cpp ignore it), "
                    f"set [embedder] dimensions = {expected} (the file was made with it)"
                )
            if self.dimensions is not None:
                fix = (
                    f"it does not make the [embedder] dimensions = {expected} it is sent (Ollama "
                    "and llama.cpp ignore the setting): remove dimensions, then re-embed the "
                    f"memory file made with it to the model's own {made} (memengine reembed)"
                )
            else:
                fix = (
                    f"another model answers under its name than the one that made {expected}: "
                    "serve that one again, or re-embed a memory file made with it (memengine "
                    "reembed)"
                )
            mismatch = EmbeddingError(
                f"embedding model {self.model!r} at {self.shown_url} returned vectors of "
                f"dimension {made}, expected {expected}: {fix}"
            )
            mismatch.lasting = True  # (asked again, the endpoint answers the same)
            raise mismatch
        if not np.isfinite(matrix).all():
            raise EmbeddingError(
                f"embedding model {self.model!r} at {self.shown_url} returned NaN or infinite values"
            )
        zero = np.flatnonzero(~np.abs(matrix).any(axis=1))
        if len(zero):  # it has no direction: no cosine to anything
            raise EmbeddingError(
                f"embedding model {self.model!r} at {self.shown_url} returned a zero vector "
                f"for input {int(zero[0])}"
            )
        if expected is None:
            with self._lock:
                if self._dimension is None:
                    self._dimension = int(made)
        return normalize(matrix)

    def _request(self, batch: list[str]) -> Any:
        """POST /embeddings, retrying 429/5xx/timeouts with exponential backoff and jitter."""
        retries = 0
        while True:
            with self._lock:
                self._requests += 1
            try:
                return self._create_in_format(batch)
            except (
                openai.RateLimitError,
                openai.InternalServerError,
                openai.APITimeoutError,
            ) as exc:
                if retries >= self.max_retries:
                    raise EmbeddingError(self._failure(exc, retries + 1)) from exc
                delay = backoff_delay(retries, self.backoff_base_s, self.backoff_max_s)
                if isinstance(exc, openai.APIStatusError):
                    delay = max(delay, min(retry_after(exc.response.headers), self.backoff_max_s))
                time.sleep(delay)
                retries += 1
            except openai.APIConnectionError as exc:
                raise EmbeddingError(self._failure(exc, retries + 1)) from exc
            except openai.APIStatusError as exc:
                raise EmbeddingError(self._failure(exc, retries + 1)) from exc
            except openai.APIError as exc:
                raise EmbeddingError(
                    f"embedding request to {self.shown_url} failed: {exc}"
                ) from exc
            except (UnicodeDecodeError, ValueError, RecursionError, OverflowError) as exc:
                # a page, a cut reply, JSON nested past the stack, a number past the digits,
                # a whole number past any float (the client makes a float of it)
                raise EmbeddingError(
                    f"embedding endpoint {self.shown_url} sent a reply that is not JSON in "
                    f"UTF-8 that can be read ({type(exc).__name__}: {str(exc)[:200]})"
                ) from exc

    def _create_in_format(self, batch: list[str]) -> Any:
        """One request, for base64 vectors until the endpoint refuses them (a 400 or a
        422), then for floats (which the endpoint is asked for from then on)."""
        if self._format == "base64":
            try:
                return self._create(batch, "base64")
            except (openai.BadRequestError, openai.UnprocessableEntityError):
                pass  # asked again for floats below; a refusal of those, too, is the error
        reply = self._create(batch, "float")
        with self._lock:
            self._format = "float"
        return reply

    def _create(self, batch: list[str], fmt: Literal["float", "base64"]) -> Any:
        if self.dimensions is not None:
            return self._client.embeddings.create(
                input=batch, model=self.model, dimensions=self.dimensions, encoding_format=fmt
            )
        return self._client.embeddings.create(input=batch, model=self.model, encoding_format=fmt)

    def _failure(self, exc: openai.APIError, attempts: int) -> str:
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        if isinstance(exc, openai.APITimeoutError):
            return (
                f"embedding endpoint {self.shown_url} timed out ({self.timeout_s:g}s){tries} "
                f"(model {self.model!r})"
            )
        if isinstance(exc, openai.APIConnectionError):
            if has_cause(exc, ReplyTooLarge):
                cause = exc.__cause__ or exc.__context__
                return f"embedding endpoint {self.shown_url} sent a reply it cannot read: {cause}"
            proxy = proxy_for(self.base_url)
            via = f" (through the proxy {proxy}, which the environment names)" if proxy else ""
            if has_cause(exc, ConnectionRefusedError):
                return f"embedding endpoint {self.shown_url}{via} refused the connection"
            cause = exc.__cause__ or exc.__context__
            return f"cannot connect to embedding endpoint {self.shown_url}{via}: {cause or exc}"
        if isinstance(exc, openai.APIStatusError):
            return (
                f"embedding endpoint {self.shown_url} returned HTTP {exc.status_code}{tries} "
                f"for model {self.model!r}: {server_message(exc, self._secrets)}"
            )
        return f"embedding request to {self.shown_url} failed: {exc}"


def _what_came(response: Any, data: Any) -> str:
    """What an embeddings reply held instead of its list: no ``data`` at all (the openai
    client still builds its response type), or ``data`` of another kind, or another reply."""
    if isinstance(response, str):
        return "the reply is text, not a JSON object"
    if data is None:
        return "the reply has no 'data'"
    return f"its 'data' is a {type(data).__name__}, not a list"


def _floats(embedding: Any) -> Any:
    """A vector as the endpoint sent it: base64 of little-endian float32 bytes, or floats."""
    if isinstance(embedding, str):
        raw = base64.b64decode(embedding, validate=True)
        if len(raw) % 4:
            raise ValueError("base64 of a whole number of float32 values expected")
        return np.frombuffer(raw, dtype="<f4")
    if isinstance(embedding, list) and not all(
        isinstance(x, int | float) and not isinstance(x, bool) for x in embedding
    ):  # ("0.1" and true would be read as numbers)
        raise TypeError("a vector holds numbers only")
    return embedding
