"""The LLM's extra queries fail to embed: the turn keeps what the message's own search found.

An LLM turn with the API embedder embeds twice: the message (the fast path's search),
then the queries the LLM adds (Phase 2). When that second call fails, the message's
queries keep their vectors (cached from the first), the LLM's lose theirs, the notes say
which, and a time window whose search failed is not called empty. Real HTTP through the
real openai client, against the scripted server; a real store.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memengine import Config, FixedClock, Memory
from memengine.embed.openai import OpenAIEmbedder
from tests.openai_server import ScriptedOpenAI, deterministic_vector

NOW = datetime(2026, 6, 3, 12, tzinfo=UTC)
DIM = 16
WEEK = {"type": "temporal", "surface": "last week", "resolved": "2026-05-25/2026-05-31"}
VET = ("vet", "greyhound", "teeth", "juno", "cleaning", "appointment")


def _meaning(text: str) -> list[float]:
    """A model that knows a vet visit by its meaning: every text about Juno's teeth or the
    vet lies near one direction, whatever its words; the rest anywhere."""
    vec = np.asarray(deterministic_vector(text, DIM))
    if any(w in text.lower() for w in VET):
        vec = 0.1 * vec
        vec[0] += 1.0
    return [float(x) for x in vec / np.linalg.norm(vec)]


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(embedding_dim=DIM) as server:
        server.embed_fn = _meaning
        yield server


def _open(path: Path, srv: ScriptedOpenAI, **deadlines: float) -> Memory:
    llm = {"base_url": srv.base_url, "rerank_enabled": False, "cache_expansions": False}
    llm |= deadlines
    cfg = Config.model_validate({"llm": llm, "lifecycle": {"record_turns": False}})
    embedder = OpenAIEmbedder(base_url=srv.base_url, model="e", timeout_s=2.0, max_retries=0)
    return Memory.open(path, config=cfg, embedder=embedder, clock=FixedClock(NOW))


def _store(mem: Memory) -> int:
    mem.add_exchange("The plumber fixed the kitchen sink", "Good to hear.")
    mem.add_exchange("I started learning the cello in April", "Good luck with it!")
    return mem.add_exchange(
        "Greyhound teeth cleaning booked for Tuesday",
        "Noted.",
        occurred_at=datetime(2026, 5, 27, 10, tzinfo=UTC),
    )


FAILURES: dict[str, dict[str, Any]] = {  # how the second call fails, and its note says so
    "HTTP 429": {"status": 429, "headers": {"Retry-After": "20"}, "error_message": "slow down"},
    "HTTP 502": {"status": 502, "error_message": "bad gateway"},
    "NaN": {"vectors": [[float("nan")] * DIM]},
    "dimension 17": {"vectors": [[0.25] * (DIM + 1)]},
}


@pytest.mark.parametrize("failure", FAILURES)
def test_the_message_keeps_its_vectors_when_the_llms_queries_fail_to_embed(
    tmp_path: Path, srv: ScriptedOpenAI, failure: str
) -> None:
    with _open(tmp_path / "m.db", srv) as mem:
        vet = _store(mem)
        srv.push_chat(json_data={"expanded_queries": ["vet visit date"], "detected_references": []})
        srv.push_embeddings()  # the message's own queries
        srv.push_embeddings(**FAILURES[failure])
        asked = len(srv.embedding_requests)
        r = mem.retrieve("When is Juno's vet appointment?")
        assert len(srv.embedding_requests) == asked + 2  # nothing asked again
        assert srv.embedding_requests[-1]["input"] == ["vet visit date"]  # the rest cached
        assert [x.episode.id for x in r.results][:1] == [vet]
        assert "cosine" in r.results[0].components
        assert not any(d.startswith("vector search skipped, the full-text") for d in r.degraded)
        note = next(d for d in r.degraded if d.startswith("vector search skipped for"))
        assert "'vet visit date'" in note and "(1 of 2 queries;" in note
        assert failure in note
        assert "Juno" not in note  # the message's queries were searched by their vectors


def test_a_window_whose_search_failed_is_not_called_empty(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    expansion = {"expanded_queries": ["vet visit date"], "detected_references": [WEEK]}
    with _open(tmp_path / "m.db", srv) as mem:
        vet = _store(mem)
        srv.push_chat(json_data=expansion)
        srv.push_embeddings()
        srv.push_embeddings(status=503, error_message="overloaded")
        r = mem.retrieve("Did Juno see the vet last week?")
        assert [x.episode.id for x in r.results][:1] == [vet]
        assert r.time_window is not None and r.time_window[0] == datetime(2026, 5, 25, tzinfo=UTC)
        assert not any("no candidates" in d for d in r.degraded)
        assert any("HTTP 503" in d and "'vet visit date'" in d for d in r.degraded)


@pytest.mark.parametrize("window", [False, True])
def test_a_phase_2_with_no_vector_keeps_what_the_first_search_found_by_meaning(
    tmp_path: Path, srv: ScriptedOpenAI, window: bool
) -> None:
    """An agent forgotten while the LLM expands drops every cached query vector (they are
    keyed by its messages): Phase 2 then has to embed the message again, and that fails
    too. The first search's vectors found the memory; it stays, and the note says the
    expanded search alone lost its vectors. Its window, in which the full text found
    nothing, is kept: nothing in it was searched by meaning."""
    slow = {"expansion_deadline_s": 4.0, "turn_deadline_s": 6.0}  # (time to forget in)
    with _open(tmp_path / "m.db", srv, **slow) as mem:
        vet = _store(mem)
        mem.add_exchange("Call me Sam", "Hi Sam!", agent="other")
        refs = [WEEK] if window else []
        srv.push_chat(
            json_data={"expanded_queries": ["vet visit date"], "detected_references": refs},
            delay=1.5,
        )
        srv.push_embeddings()
        srv.push_embeddings(status=429, headers={"Retry-After": "20"}, error_message="slow down")
        asked = len(srv.embedding_requests)
        with ThreadPoolExecutor(1) as pool:
            message = (
                "Did Juno see the vet last week?" if window else "When is Juno's vet appointment?"
            )
            turn = pool.submit(mem.retrieve, message)
            waited = time.monotonic() + 5
            while len(srv.embedding_requests) == asked and time.monotonic() < waited:
                time.sleep(0.01)  # the first search's embedding, answered
            mem.forget_agent("other")
            assert not turn.done()  # forgotten while the LLM expands
            r = turn.result()
        assert len(srv.embedding_requests) == asked + 2
        assert len(srv.embedding_requests[-1]["input"]) > 1  # the message's again, not cached
        assert [x.episode.id for x in r.results][:1] == [vet]
        assert "cosine" in r.results[0].components
        note = next(d for d in r.degraded if d.startswith("vector search skipped"))
        assert note.startswith("vector search skipped for the expanded search's queries")
        assert "'vet visit date'" in note and "HTTP 429" in note
        assert not any(d.startswith("time window") for d in r.degraded)
        assert (r.time_window is not None) == window
