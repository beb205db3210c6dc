"""Review 61 (the library from a Python developer's seat): a setting no check saw is a
ConfigError at ``Memory.open``; a retrieval names no episode above its ``max_sensitivity``,
not even one ``recent`` repeats; ``from memengine import *`` loads no ``openai``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import memengine
from memengine import Config, ConfigError, FixedClock, MemEngineError, Memory
from memengine.config import LLMConfig

from .helpers import HashEmbedder, last_line_printed
from .openai_server import ScriptedOpenAI, ScriptedReply


def _with_five_weights() -> Config:
    cfg = Config()
    cfg.lifecycle.linear_weights.append(0.1)  # (a list changed in place: checked by nothing)
    cfg.lifecycle.life_ranking = True
    return cfg


@pytest.mark.parametrize(
    ("make", "named"),
    [
        (lambda: Config().model_copy(update={"time_zone": "Mars/Olympus"}), r"time_zone"),
        (
            lambda: Config().model_copy(update={"retrieval": {"coverage_min": 2.0}}),
            r"retrieval\.coverage_min = 2\.0",
        ),
        (lambda: Config().model_copy(update={"write_wait_s": -1.0}), r"write_wait_s = -1\.0"),
        (_with_five_weights, r"lifecycle\.linear_weights: List should have at most 3 items"),
        (
            lambda: Config().model_copy(update={"retrieval": LLMConfig()}),
            r"invalid setting retrieval",
        ),
    ],
)
def test_a_setting_no_check_saw_is_a_config_error_when_the_file_opens(
    tmp_path: Path, make: Any, named: str
) -> None:
    """``model_copy(update=…)`` (the README's way to change a setting) checks nothing, nor
    does a list changed in place: the file opened, and every add_exchange then raised
    ZoneInfoNotFoundError, a retrieve AttributeError ('dict' object has no attribute
    'coverage_min'), a life ranking 'too many values to unpack' (a negative write_wait_s
    was taken without a word), none of them a MemEngineError."""
    db = tmp_path / "m.db"
    with pytest.raises(ConfigError, match=named) as caught:
        Memory.open(db, config=make(), embedder=HashEmbedder())
    assert isinstance(caught.value, MemEngineError)
    assert not db.exists()  # (refused before the file was made)


def test_a_section_given_as_a_dict_is_read_as_the_section_it_names(tmp_path: Path) -> None:
    """A right setting given the unchecked way is taken as ``Config(…)`` takes it, and the
    settings the caller chose stay the ones chosen (the agent left unnamed, the others at
    their defaults: what ``named_agent`` and the diagnostics read)."""
    cfg = Config().model_copy(update={"retrieval": {"max_results": 1}, "time_zone": "Asia/Tokyo"})
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=HashEmbedder()) as mem:
        for i in range(3):
            mem.add_exchange(f"I paddled the kayak to island {i}", "Nice.")
        assert mem.config.retrieval.max_results == 1
        assert mem.config.retrieval.model_fields_set == {"max_results"}
        assert mem.config.named_agent() is None
        assert len(mem.retrieve("Where did I paddle the kayak?").results) == 1
        assert mem.retrieve("kayak").now is not None
        assert str(mem.retrieve("kayak").now.tzinfo) == "Asia/Tokyo"


PIN = ("My bank PIN is 9876", "I'll keep it safe")
RECENT = [{"role": "user", "content": PIN[0]}, {"role": "assistant", "content": PIN[1]}]


def _stored(mem: Memory) -> int:
    mem.add_exchange("I paddled the kayak around the bay", "Sounds fun")
    return mem.add_exchange(*PIN, sensitivity=3)


def test_a_secret_that_recent_repeats_is_not_named_above_max_sensitivity(
    db_path: Path, clock: FixedClock
) -> None:
    """``in_recent`` listed the secret's id to a retrieval that asked for nothing above 0;
    it is still held out of the results (``recent`` shows it), and named when allowed."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        secret = _stored(mem)
        shy = mem.retrieve("What's my bank PIN?", max_sensitivity=0, recent=RECENT)
        assert shy.in_recent == ()
        assert secret not in [r.episode.id for r in shy.results]
        assert f'"in_recent":[{secret}]' not in shy.model_dump_json()
        told = mem.retrieve("What's my bank PIN?", recent=RECENT)
        assert told.in_recent == (secret,)
        assert secret not in [r.episode.id for r in told.results]


def test_the_llm_turn_names_no_secret_that_recent_repeats_either(
    db_path: Path, clock: FixedClock
) -> None:
    """The same through the LLM turn, which fills ``in_recent`` itself."""

    def reply(body: dict[str, Any]) -> ScriptedReply:
        if "expanded_queries" in body["messages"][0]["content"]:
            return ScriptedReply(content='{"expanded_queries": [], "detected_references": []}')
        none = {"relevant_episodes": [], "injection_strategy": "quote_key_parts"}
        return ScriptedReply(content=json.dumps(none))

    with ScriptedOpenAI() as server:
        server.chat_handler = reply
        cfg = Config.model_validate({"llm": {"base_url": server.base_url}})
        with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
            secret = _stored(mem)
            shy = mem.retrieve("What's my bank PIN?", max_sensitivity=0, recent=RECENT, llm=True)
            told = mem.retrieve("What's my bank PIN?", max_sensitivity=3, recent=RECENT, llm=True)
    assert shy.in_recent == () and told.in_recent == (secret,)
    assert secret not in [r.episode.id for r in (*shy.results, *told.results)]


def test_a_star_import_loads_no_openai_client() -> None:
    """``ChatClient`` and ``OpenAIEmbedder`` were in ``__all__``, so ``from memengine import
    *`` imported them, and with them ``openai`` (0.6 s; an offline program needed it
    installed). Named, they are still there."""
    probe = (
        "import sys\nfrom memengine import *\nfrom memengine.embed import *\n"
        "before = 'openai' in sys.modules\n"
        "from memengine import ChatClient, OpenAIEmbedder\n"
        "print('Memory' in dir(), before, 'openai' in sys.modules)"
    )
    assert last_line_printed(probe).split() == ["True", "False", "True"]
    assert {"ChatClient", "OpenAIEmbedder"}.isdisjoint(memengine.__all__)
    assert {"ChatClient", "OpenAIEmbedder"} <= set(dir(memengine))
