"""OpenAIEmbedder through real HTTP, with the real openai client, against the scripted server."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from memengine.embed.base import Embedder
from memengine.embed.openai import OpenAIEmbedder
from memengine.errors import ConfigError, EmbeddingError, InvalidInput
from tests.helpers import stale_certificate_file
from tests.openai_server import ScriptedOpenAI, deterministic_vector


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(embedding_dim=8) as server:
        yield server


def make(srv: ScriptedOpenAI, **kwargs: object) -> OpenAIEmbedder:
    options: dict[str, object] = {
        "base_url": srv.base_url,
        "api_key": None,
        "model": "test-embed",
        "batch_size": 3,
        "timeout_s": 2.0,
        "max_retries": 2,
        "backoff_base_s": 0.01,
    }
    options.update(kwargs)
    return OpenAIEmbedder(**options)  # type: ignore[arg-type]


def test_is_an_embedder(srv: ScriptedOpenAI) -> None:
    assert isinstance(make(srv), Embedder)


def test_embeds_in_order_normalized_float32(srv: ScriptedOpenAI) -> None:
    emb = make(srv)
    texts = ["alpha", "beta", "gamma"]
    out = emb.embed(texts)
    assert out.shape == (3, 8)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, rtol=1e-6)
    for row, text in zip(out, texts, strict=True):
        np.testing.assert_allclose(row, deterministic_vector(text, 8), rtol=1e-5, atol=1e-6)
    (body,) = srv.embedding_requests
    assert body["model"] == "test-embed"
    assert body["input"] == texts
    assert body["encoding_format"] == "base64"  # float32 bytes, not floats in JSON
    assert "dimensions" not in body


@pytest.mark.parametrize("status", [400, 422])
def test_an_endpoint_refusing_base64_is_asked_for_floats_from_then_on(
    srv: ScriptedOpenAI, status: int
) -> None:
    srv.push_embeddings(status=status, error_message="encoding_format: 'base64' unsupported")
    emb = make(srv, batch_size=2)
    out = emb.embed(["alpha", "beta", "gamma"])
    for row, text in zip(out, ["alpha", "beta", "gamma"], strict=True):
        np.testing.assert_allclose(row, deterministic_vector(text, 8), rtol=1e-5, atol=1e-6)
    formats = [b["encoding_format"] for b in srv.embedding_requests]
    assert formats == ["base64", "float", "float"]  # the refusal, its batch again, the next


def test_a_refusal_of_floats_too_is_the_error(srv: ScriptedOpenAI) -> None:
    srv.push_embeddings(status=400, error_message="input too long")
    srv.push_embeddings(status=400, error_message="input too long")
    with pytest.raises(EmbeddingError, match=r"HTTP 400.*input too long"):
        make(srv).embed(["alpha"])


def test_a_key_the_server_echoes_is_not_repeated(srv: ScriptedOpenAI) -> None:
    key = "sk-embed-SECRET0987654321"
    srv.push_embeddings(status=401, error_message=f"Incorrect API key provided: {key}")
    with pytest.raises(EmbeddingError, match=r"HTTP 401.*provided: \*\*\*") as err:
        make(srv, api_key=key, max_retries=0).embed(["alpha"])
    assert key not in str(err.value)


@pytest.mark.parametrize("value", [3e19, -2e30, 1e-23])
def test_values_near_float32s_limits_keep_their_direction(
    srv: ScriptedOpenAI, value: float
) -> None:
    """A norm taken in float32 overflowed (3e19 squared) to a silent zero vector, or
    underflowed (1e-23) to a refused one: each is a direction like any other."""
    dim = srv.embedding_dim
    srv.embed_fn = lambda text: [value] * (dim - 1) + [2 * value]
    vec = make(srv).embed(["alpha"])[0]
    assert np.isfinite(vec).all() and abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5
    assert vec[-1] == pytest.approx(2 * vec[0])


def test_floats_sent_when_base64_was_asked_for_are_read(srv: ScriptedOpenAI) -> None:
    body = {
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": [3.0, 4.0]}],
        "model": "test-embed",
    }
    srv.push_embeddings(body=body)
    np.testing.assert_allclose(make(srv).embed(["a"]), [[0.6, 0.8]], rtol=1e-6)


@pytest.mark.parametrize("vector", ["not base64!", "AAAAAAA=", ""])
def test_broken_base64_vectors_are_an_embedding_error(srv: ScriptedOpenAI, vector: str) -> None:
    body = {
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": vector}],
        "model": "test-embed",
    }
    srv.push_embeddings(body=body)
    with pytest.raises(EmbeddingError, match=r"malformed|uneven|non-numbers"):
        make(srv).embed(["a"])


def test_normalizes_unnormalized_server_vectors(srv: ScriptedOpenAI) -> None:
    srv.embed_fn = lambda text: [3.0, 4.0] if text == "a" else [0.0, 2.0]
    out = make(srv).embed(["a", "b"])
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 1.0]], rtol=1e-6)
    assert out.dtype == np.float32


def test_batching(srv: ScriptedOpenAI) -> None:
    emb = make(srv, batch_size=3)
    texts = [f"text {i}" for i in range(8)]
    out = emb.embed(texts)
    assert out.shape == (8, 8)
    sizes = [len(b["input"]) for b in srv.embedding_requests]
    assert sizes == [3, 3, 2]
    sent = [t for b in srv.embedding_requests for t in b["input"]]
    assert sent == texts


def test_duplicates_are_embedded_once(srv: ScriptedOpenAI) -> None:
    emb = make(srv, batch_size=10)
    texts = ["x", "y", "x", "z", "y", "x"]
    out = emb.embed(texts)
    (body,) = srv.embedding_requests
    assert body["input"] == ["x", "y", "z"]
    assert out.shape == (6, 8)
    np.testing.assert_array_equal(out[0], out[2])
    np.testing.assert_array_equal(out[0], out[5])
    np.testing.assert_array_equal(out[1], out[4])
    assert not np.array_equal(out[0], out[1])


def test_dimension_probe_is_lazy_and_once(srv: ScriptedOpenAI) -> None:
    emb = make(srv)
    assert srv.embedding_requests == []
    assert emb.dimension == 8
    assert emb.id == "openai:test-embed:8"
    assert len(srv.embedding_requests) == 1
    emb.embed(["one"])
    assert len(srv.embedding_requests) == 2


def test_dimension_learned_from_first_embed_without_probe(srv: ScriptedOpenAI) -> None:
    emb = make(srv)
    emb.embed(["one", "two"])
    assert emb.dimension == 8
    assert len(srv.embedding_requests) == 1


def test_configured_dimensions_are_sent_and_no_probe(srv: ScriptedOpenAI) -> None:
    emb = make(srv, dimensions=5)
    assert emb.id == "openai:test-embed:5"
    assert srv.embedding_requests == []
    out = emb.embed(["q"])
    assert out.shape == (1, 5)
    assert srv.embedding_requests[0]["dimensions"] == 5


def test_confirm_dimension_asks_even_when_dimensions_is_configured(srv: ScriptedOpenAI) -> None:
    honoured = make(srv, dimensions=5)
    assert honoured.confirm_dimension() == 5
    assert [r["dimensions"] for r in srv.embedding_requests] == [5]
    srv.embed_fn = lambda text: deterministic_vector(text, 16)  # ignores it, as Ollama does
    ignored = make(srv, dimensions=5)
    with pytest.raises(ConfigError) as info:
        ignored.confirm_dimension()
    assert "returns vectors of dimension 16 though it is sent [embedder] dimensions = 5" in str(
        info.value
    )
    assert "Remove dimensions, or set it to 16" in str(info.value)
    assert len(srv.embedding_requests) == 2
    learned = make(srv)  # (no dimensions: the one probe learns it)
    assert learned.confirm_dimension() == 16 and learned.dimension == 16
    assert len(srv.embedding_requests) == 3


def test_empty_input(srv: ScriptedOpenAI) -> None:
    out = make(srv, dimensions=4).embed([])
    assert out.shape == (0, 4)
    assert out.dtype == np.float32
    assert srv.embedding_requests == []


def test_wrong_dimension_raises(srv: ScriptedOpenAI) -> None:
    emb = make(srv, dimensions=5)
    srv.push_embeddings(dimension=7)
    with pytest.raises(EmbeddingError, match="dimension 7, expected 5") as info:
        emb.embed(["q"])
    assert info.value.lasting  # asked again, the endpoint answers the same
    assert "remove dimensions, then re-embed" in str(info.value)


def test_dimension_change_between_calls_raises(srv: ScriptedOpenAI) -> None:
    emb = make(srv)
    emb.embed(["first"])
    srv.push_embeddings(dimension=16)
    with pytest.raises(EmbeddingError, match="dimension 16, expected 8"):
        emb.embed(["second"])


def test_wrong_vector_count_raises(srv: ScriptedOpenAI) -> None:
    srv.push_embeddings(vectors=[[1.0, 0.0]])
    with pytest.raises(EmbeddingError, match="1 vectors for 2 inputs"):
        make(srv).embed(["a", "b"])


def test_429_then_success(srv: ScriptedOpenAI) -> None:
    srv.push_embeddings(status=429, error_message="slow down")
    out = make(srv).embed(["a"])
    assert out.shape == (1, 8)
    assert len(srv.embedding_requests) == 2


def test_5xx_exhausts_retries(srv: ScriptedOpenAI) -> None:
    for _ in range(3):
        srv.push_embeddings(status=502, error_message="bad gateway")
    emb = make(srv, max_retries=2)
    with pytest.raises(EmbeddingError, match=r"HTTP 502 after 3 attempts.*bad gateway"):
        emb.embed(["a"])
    assert emb.requests == 3


def test_http_error_raises_embedding_error(srv: ScriptedOpenAI) -> None:
    srv.push_embeddings(status=404, error_message="model 'test-embed' not found")
    with pytest.raises(EmbeddingError, match=r"HTTP 404.*not found"):
        make(srv).embed(["a"])
    assert len(srv.embedding_requests) == 1


def test_timeout_raises_embedding_error(srv: ScriptedOpenAI) -> None:
    srv.push_embeddings(delay=2.0)
    srv.push_embeddings(delay=2.0)
    emb = make(srv, timeout_s=0.2, max_retries=1)
    start = time.monotonic()
    with pytest.raises(EmbeddingError, match="timed out"):
        emb.embed(["a"])
    assert time.monotonic() - start < 1.0


def test_a_proxy_that_refuses_is_named(monkeypatch: pytest.MonkeyPatch, refused_port: int) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    port = refused_port
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    emb = OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", model="m", max_retries=0)
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["a"])
    assert str(info.value) == (
        f"embedding endpoint http://127.0.0.1:9/v1 (through the proxy http://127.0.0.1:{port}, "
        "which the environment names) refused the connection"
    )


def test_connection_refused(refused_port: int) -> None:
    url = f"http://127.0.0.1:{refused_port}/v1"
    emb = OpenAIEmbedder(base_url=url, model="m", max_retries=3)
    start = time.monotonic()
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["a"])
    assert time.monotonic() - start < 0.5
    assert str(info.value) == f"embedding endpoint {url} refused the connection"


def test_rejects_single_string(srv: ScriptedOpenAI) -> None:
    with pytest.raises(InvalidInput):
        make(srv).embed("not a list")


def test_a_number_past_floats_is_an_embedding_error(srv: ScriptedOpenAI) -> None:
    """JSON reads a whole number of 401 digits (under Python's 4,300-digit limit) as an int
    that no float holds, and the openai client's float() of it raised an OverflowError."""
    body = {
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": [10**400, 1.0]}],
        "model": "test-embed",
    }
    srv.push_embeddings(body=body)
    with pytest.raises(EmbeddingError, match=r"can be read \(OverflowError: int too large"):
        make(srv).embed(["a"])


@pytest.mark.parametrize("certificates", ["missing", "not PEM"])
def test_a_certificate_file_that_cannot_be_read_stops_no_plain_http_endpoint(
    srv: ScriptedOpenAI, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, certificates: str
) -> None:
    """A stale SSL_CERT_FILE refused the embedder of a local server over plain HTTP, which
    reads no certificate; an https endpoint is still refused, naming the variable."""
    stale_certificate_file(monkeypatch, tmp_path, certificates)
    vectors = make(srv).embed(["a", "b"])
    assert vectors.shape == (2, 8) and len(srv.embedding_requests) == 1
    with pytest.raises(ConfigError, match=r"TLS settings failed .*SSL_CERT_FILE in the env"):
        make(srv, base_url=srv.base_url.replace("http://", "https://", 1))
