"""A model swapped behind the file's embedder id is noticed by the file's probe vector.

Real HTTP through the real openai client, against the scripted server, whose
``embed_fn`` plays the model behind the name.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memengine import (
    Config,
    EmbedderChanged,
    EmbedderMismatch,
    EmbeddingError,
    FixedClock,
    Memory,
)
from memengine.diagnostics import diagnose
from memengine.embed.probe import PROBE_TEXT, RECHECK_S, ProbedEmbedder
from tests.helpers import HashEmbedder
from tests.openai_server import ScriptedOpenAI, deterministic_vector

NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)
DIM = 16
FACTS = [
    ("The dentist appointment is on Friday at 3pm", "Noted, Friday at 3pm."),
    ("My cat Miso loves the blue blanket", "How sweet!"),
]


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI(embedding_dim=DIM) as server:
        yield server


def _config(srv: ScriptedOpenAI, db: Path) -> Config:
    remote = {"name": "openai", "base_url": srv.base_url, "model": "e", "max_retries": 0}
    return Config.model_validate({"db": str(db), "embedder": remote})


def _swapped(text: str) -> list[float]:
    """Another model under the same name: vectors of the same length from another space."""
    return deterministic_vector("another model: " + text, DIM)


def _sent(srv: ScriptedOpenAI) -> list[str]:
    """Every text the embeddings endpoint was sent, in order."""
    texts: list[str] = []
    for body in srv.embedding_requests:
        inputs = body["input"]
        texts.extend([inputs] if isinstance(inputs, str) else inputs)
    return texts


def test_a_swapped_model_is_refused_on_add_and_searched_around(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    db = tmp_path / "m.db"
    cfg = _config(srv, db)
    with Memory.open(db, config=cfg, clock=FixedClock(NOW)) as mem:
        ids = [mem.add_exchange(text, reply) for text, reply in FACTS]
        assert _sent(srv).count(PROBE_TEXT) == 1
        first = srv.embedding_requests[1]["input"]  # (the one before asks the dimension)
        assert first == [f"{FACTS[0][0]}\n{FACTS[0][1]}", PROBE_TEXT]  # no request of its own
        kept = mem.store.embedder_probe()
        assert kept is not None and kept.shape == (DIM,)
        assert np.allclose(kept, deterministic_vector(PROBE_TEXT, DIM), atol=1e-6)
    assert diagnose(cfg)["checks"]["embedder"][0]

    srv.embed_fn = _swapped
    with Memory.open(db, config=cfg, clock=FixedClock(NOW)) as mem:
        with pytest.raises(EmbedderChanged, match="no longer makes the vectors") as err:
            mem.add_exchange("I moved the dentist to Monday", "Got it.")
        assert isinstance(err.value, EmbedderMismatch) and isinstance(err.value, EmbeddingError)
        assert "nothing was stored" in str(err.value) and "memengine reembed" in str(err.value)
        assert mem.stats()["episodes"] == 2 and mem.check().ok
        r = mem.retrieve("when is the dentist appointment?")  # the turn still gets an answer
        assert r.results[0].episode.id == ids[0]
        assert "cosine" not in r.results[0].components
        note = next(d for d in r.degraded if d.startswith("vector search skipped"))
        assert "no longer makes the vectors" in note and "vector" in r.degraded_parts
    ok, detail = diagnose(cfg)["checks"]["embedder"]
    assert not ok and "no longer makes the file's vectors" in detail

    srv.embed_fn = None  # the file's model is served again
    with Memory.open(db, config=cfg, clock=FixedClock(NOW)) as mem:
        mem.add_exchange("I moved the dentist to Monday", "Got it.")
        assert not mem.retrieve("dentist Monday").degraded


def test_a_reembed_takes_the_new_model_and_its_probe(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    db = tmp_path / "m.db"
    cfg = _config(srv, db)
    with Memory.open(db, config=cfg, clock=FixedClock(NOW)) as mem:
        mem.add_exchange(*FACTS[0])
    srv.embed_fn = _swapped
    with Memory.open(db, config=cfg, clock=FixedClock(NOW)) as mem:
        assert mem.reembed() == 1  # the same name: re-embedded all the same
        kept = mem.store.embedder_probe()
        assert kept is not None and np.allclose(kept, _swapped(PROBE_TEXT), atol=1e-6)
        mem.add_exchange(*FACTS[1])  # the swapped model is now the file's
        assert not mem.retrieve("Miso's blanket").degraded
    assert diagnose(cfg)["checks"]["embedder"][0]


def test_a_reembed_by_another_process_under_the_same_id_is_noticed_before_a_write(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """A memory open on the file while another re-embeds it with another model under the
    same id (another endpoint, or the same one swapped): its next add stores none of its
    old model's vectors in the file, and once its endpoint serves the file's model it goes
    on as before."""
    db = tmp_path / "m.db"
    with ScriptedOpenAI(embedding_dim=DIM) as other:
        other.embed_fn = _swapped  # the model the other process re-embeds with
        with Memory.open(db, config=_config(srv, db), clock=FixedClock(NOW)) as mem:
            mem.add_exchange(*FACTS[0])
            with Memory.open(db, config=_config(other, db), clock=FixedClock(NOW)) as theirs:
                assert theirs.reembed() == 1
            # its next embedding checks the model again: the file's probe changed
            with pytest.raises(EmbedderChanged, match="no longer makes the vectors stored"):
                mem.add_exchange(*FACTS[1])
            assert mem.stats()["episodes"] == 1 and mem.check().ok
            r = mem.retrieve("when is the dentist appointment?")  # full text, said so
            assert any(d.startswith("vector search skipped") for d in r.degraded)
            srv.embed_fn = _swapped  # its endpoint now serves the file's model
            added = mem.add_exchange(*FACTS[1])
            assert not mem.retrieve("Miso's blanket").degraded
        with Memory.open(db, config=_config(other, db), clock=FixedClock(NOW)) as fresh:
            made = np.asarray(_swapped("\n".join(FACTS[1])), dtype=np.float32)
            assert fresh.store.similarities(made, [added])[added] > 0.99  # the file's model


def test_the_same_model_a_little_off_still_passes(tmp_path: Path, srv: ScriptedOpenAI) -> None:
    """Another precision or quantization of the same model moves its vectors a little."""
    db = tmp_path / "m.db"
    cfg = _config(srv, db)
    with Memory.open(db, config=cfg, clock=FixedClock(NOW)) as mem:
        mem.add_exchange(*FACTS[0])

    def quantized(text: str) -> list[float]:
        vec = np.asarray(deterministic_vector(text, DIM))
        return list(np.round(vec * 16) / 16)  # 4 bits a component, roughly

    srv.embed_fn = quantized
    with Memory.open(db, config=cfg, clock=FixedClock(NOW)) as mem:
        mem.add_exchange(*FACTS[1])
        assert mem.stats()["episodes"] == 2


def test_a_file_without_a_probe_gets_one_with_its_next_episodes(tmp_path: Path) -> None:
    """A file written before the probe (or whose re-embed was interrupted after the swap)
    takes the embedder's probe when it next stores episodes; a search writes nothing."""
    db = tmp_path / "m.db"
    with Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(NOW)) as mem:
        mem.add("the dentist is on Friday")
        with mem.store.connections.write() as cur:
            cur.execute("DELETE FROM meta WHERE key = 'embedder_probe'")
    with Memory.open(db, embedder=HashEmbedder(), clock=FixedClock(NOW)) as mem:
        mem.retrieve("dentist", record=False)
        assert mem.store.embedder_probe() is None
        mem.add("the vet is on Monday")
        kept = mem.store.embedder_probe()
        assert kept is not None and np.allclose(kept, HashEmbedder().embed([PROBE_TEXT])[0])


def test_the_probe_rides_along_once_per_interval(tmp_path: Path) -> None:
    now = [0.0]
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(NOW)) as mem:
        inner = HashEmbedder()
        probed = ProbedEmbedder(inner, mem.store.embedder_probe, "m.db", clock=lambda: now[0])
        mem.add("the dentist is on Friday")  # the file's probe is written here
        assert probed.embed(["one"]).shape == (1, 64) and inner.calls == [2]
        probed.embed(["two", "three"])
        now[0] += RECHECK_S - 1
        probed.embed(["four"])
        assert inner.calls == [2, 2, 1]  # checked once, then held
        now[0] += 1
        assert probed.embed(["five"]).shape == (1, 64) and inner.calls[-1] == 2
        assert probed.embed([]).shape == (0, 64)


def test_a_reembed_between_an_embedding_and_its_write_stores_nothing(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """The window the embedding's own check cannot see: another process re-embeds the file
    (another model, the same id) after this one embedded an exchange and before it writes
    it. The write finds the file's probe changed and refuses the old model's vector."""
    db = tmp_path / "m.db"
    with ScriptedOpenAI(embedding_dim=DIM) as other:
        other.embed_fn = _swapped
        with Memory.open(db, config=_config(srv, db), clock=FixedClock(NOW)) as mem:
            mem.add_exchange(*FACTS[0])
            inner = mem._embedder
            embed = inner.embed

            def then_reembedded(texts: list[str]) -> Any:
                vectors = embed(texts)
                with Memory.open(db, config=_config(other, db), clock=FixedClock(NOW)) as theirs:
                    theirs.reembed()
                return vectors

            inner.embed = then_reembedded  # type: ignore[method-assign]
            with pytest.raises(EmbedderChanged, match="re-embedded by another process"):
                mem.add_exchange(*FACTS[1])
            assert mem.stats()["episodes"] == 1 and mem.check().ok


def test_a_reembed_between_a_querys_embedding_and_its_search_leaves_the_full_text(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """The same window for a turn: its query was embedded by the old model, the file's
    vectors are the new one's by the time it searches. The turn answers from the full
    text, saying why, and holds nothing that keeps a closed memory's model alive."""
    import gc
    import weakref

    db = tmp_path / "m.db"
    with ScriptedOpenAI(embedding_dim=DIM) as other:
        other.embed_fn = _swapped
        mem = Memory.open(db, config=_config(srv, db), clock=FixedClock(NOW))
        dentist = mem.add_exchange(*FACTS[0])
        inner = mem._embedder
        original = {"embed": inner.embed}

        def then_reembedded(texts: list[str]) -> Any:
            vectors = original["embed"](texts)
            with Memory.open(db, config=_config(other, db), clock=FixedClock(NOW)) as theirs:
                theirs.reembed()
            return vectors

        inner.embed = then_reembedded  # type: ignore[method-assign]
        gc.disable()
        try:
            r = mem.retrieve("when is the dentist appointment?", record=False)
            assert r.results[0].episode.id == dentist
            assert any("re-embedded by another process" in d for d in r.degraded)
            held = weakref.ref(mem._embedder)
            mem.close()
            original.clear()  # (the test's own hold on it)
            del mem, inner, then_reembedded, r
            assert held() is None
        finally:
            gc.enable()


def test_a_reembed_between_a_search_and_its_cosines_leaves_the_full_text(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """Later still: the vector search ran on the old vectors, the exact cosines would read
    the new ones. The turn answers from the full text all the same."""
    db = tmp_path / "m.db"
    with ScriptedOpenAI(embedding_dim=DIM) as other:
        other.embed_fn = _swapped
        with Memory.open(db, config=_config(srv, db), clock=FixedClock(NOW)) as mem:
            dentist = mem.add_exchange(*FACTS[0])
            original = {"knn_many": mem.store.knn_many}

            def then_reembedded(*args: Any, **kwargs: Any) -> Any:
                found = original["knn_many"](*args, **kwargs)
                with Memory.open(db, config=_config(other, db), clock=FixedClock(NOW)) as theirs:
                    theirs.reembed()
                return found

            mem.store.knn_many = then_reembedded  # type: ignore[method-assign]
            r = mem.retrieve("when is the dentist appointment?", record=False)
            assert r.results[0].episode.id == dentist
            assert any("re-embedded by another process" in d for d in r.degraded)
            original.clear()
