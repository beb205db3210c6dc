"""Review 52 of the public Python API: ChatClient checks its arguments as ``[llm]`` does,
a backoff never sleeps a negative or NaN time, ``limit`` is capped by ``max_candidates``
(and says so), ``import_episodes`` is typed for the Episodes it takes, and
``dir(memengine)`` lists the lazily imported ``ChatClient``."""

from __future__ import annotations

import math
import typing
from collections.abc import Iterable, Iterator
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

import memengine
from memengine import (
    Config,
    ConfigError,
    Episode,
    FixedClock,
    Memory,
    NewEpisode,
    RetrievalConfig,
)
from memengine.cli import app
from memengine.config import EmbedderConfig, LLMConfig
from memengine.embed.openai import OpenAIEmbedder
from memengine.http_retry import backoff_delay
from memengine.llm import ChatClient
from tests.helpers import HashEmbedder
from tests.openai_server import ScriptedOpenAI

URL = "http://127.0.0.1:9/v1"


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


# -- 1. ChatClient's arguments ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"base_url": 5}, "base_url is a URL's text"),
        ({"api_key": 5}, "api_key is text or None, not int"),
        ({"timeout_s": "5"}, "timeout_s is a number of seconds, not '5'"),
        ({"timeout_s": True}, "timeout_s is a number of seconds, not True"),
        ({"timeout_s": math.nan}, "timeout_s should be a finite number"),
        ({"timeout_s": 10**400}, "timeout_s should be a finite number"),
        ({"timeout_s": 0}, r"timeout_s should be greater than 0 \(as \[llm\] request_timeout_s\)"),
        ({"max_retries": None}, "max_retries is a whole number, not None"),
        ({"max_retries": 2.5}, "max_retries is a whole number"),
        ({"max_retries": Decimal("2.5")}, r"max_retries is a whole number, not Decimal\('2.5'\)"),
        ({"max_retries": "3"}, "max_retries is a whole number, not '3'"),
        ({"timeout_s": Decimal("NaN")}, "timeout_s should be a finite number"),
        ({"max_retries": False}, "max_retries is a whole number, not False"),
        ({"max_retries": -1}, "max_retries should be greater than or equal to 0"),
        ({"backoff_base_s": -1}, r"backoff_base_s should be greater than 0 .*not -1"),
        ({"backoff_max_s": math.inf}, "backoff_max_s should be a finite number"),
        ({"format_memory_s": "x"}, "format_memory_s is a number of seconds from 0"),
        ({"format_memory_s": -1}, "format_memory_s is a number of seconds from 0"),
        ({"default_headers": [("a", "b")]}, "default_headers is a mapping .* not list"),
        ({"default_headers": {"X Title": "app"}}, "'X Title' is not a header's name"),
        ({"default_headers": {"X-Title": 5}}, "the value of X-Title is not text"),
    ],
)
def test_a_wrong_argument_is_a_config_error_naming_it(
    options: dict[str, object], named: str
) -> None:
    """Each was an AttributeError, TypeError or ValueError of its own (or, for a negative
    backoff, accepted, and the first retry raised out of a turn)."""
    given: dict[str, object] = {"base_url": URL, **options}
    with pytest.raises(ConfigError, match=named):
        ChatClient(**given)  # type: ignore[arg-type]


def test_the_bounds_are_those_of_the_llm_section() -> None:
    """The largest ``max_retries`` and ``timeout_s`` the configuration takes are taken, one
    past them refused: the client reads the section's limits, not copies of them."""
    top_retries = next(
        m.le for m in LLMConfig.model_fields["max_retries"].metadata if hasattr(m, "le")
    )
    top_wait = next(
        m.le for m in LLMConfig.model_fields["request_timeout_s"].metadata if hasattr(m, "le")
    )
    with ChatClient(base_url=URL, max_retries=top_retries, timeout_s=top_wait) as client:
        assert (client.max_retries, client.timeout_s) == (top_retries, top_wait)
    with pytest.raises(ConfigError, match="max_retries should be less than or equal"):
        ChatClient(base_url=URL, max_retries=top_retries + 1)
    with pytest.raises(ConfigError, match="timeout_s should be less than or equal"):
        ChatClient(base_url=URL, timeout_s=top_wait + 1)


def test_a_key_in_a_refused_header_is_not_shown() -> None:
    with pytest.raises(ConfigError) as caught:
        ChatClient(base_url=URL, default_headers={"Authorization": "Bearer sk-secret\n"})
    assert "sk-secret" not in str(caught.value)
    assert "Authorization" in str(caught.value)


def test_numbers_of_other_kinds_and_good_headers_are_taken() -> None:
    """Not to trigger: an int for seconds, numpy's numbers, no format memory, a header
    whose value has spaces inside, an empty mapping."""
    np = pytest.importorskip("numpy")
    with ChatClient(
        base_url=URL,
        timeout_s=3,
        max_retries=np.int64(1),
        backoff_base_s=np.float32(0.5),
        format_memory_s=0,
        default_headers={"X-Title": "my companion app", "HTTP-Referer": "https://x.example"},
    ) as client:
        assert client.timeout_s == 3.0 and isinstance(client.timeout_s, float)
        assert client.max_retries == 1 and type(client.max_retries) is int
        assert client.backoff_base_s == 0.5
    ChatClient(base_url=None, api_key="sk-test", default_headers={}).close()


def test_numbers_the_llm_section_takes_are_taken_as_it_converts_them() -> None:
    """``max_retries=3.0`` and ``timeout_s=Decimal("5")`` were refused though ``[llm]``
    takes them: a whole float, a Decimal and a Fraction are numbers, converted as the
    section converts them (3 retries an int, 5 seconds a float)."""
    with ChatClient(
        base_url=URL,
        max_retries=3.0,
        timeout_s=Decimal("5"),
        backoff_base_s=Fraction(1, 4),
        backoff_max_s=Decimal("1.5"),
    ) as client:
        assert client.max_retries == 3 and type(client.max_retries) is int
        assert client.timeout_s == 5.0 and type(client.timeout_s) is float
        assert (client.backoff_base_s, client.backoff_max_s) == (0.25, 1.5)
    assert (LLMConfig(max_retries=3.0).max_retries, client.max_retries) == (3, 3)


# -- OpenAIEmbedder's arguments, checked by the same rule --------------------------------------


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"max_retries": "3"}, "max_retries is a whole number, not '3'"),
        ({"max_retries": True}, "max_retries is a whole number, not True"),
        ({"max_retries": 11}, r"max_retries should be less .* \(as \[embedder\] max_retries\)"),
        ({"timeout_s": "5"}, "timeout_s is a number of seconds, not '5'"),
        ({"timeout_s": math.nan}, "timeout_s should be a finite number"),
        ({"timeout_s": 0}, r"greater than 0 \(as \[embedder\] request_timeout_s\)"),
        ({"backoff_base_s": -1}, r"backoff_base_s should be greater than 0 .*not -1"),
        ({"backoff_max_s": None}, "backoff_max_s is a number of seconds, not None"),
        ({"batch_size": 2.5}, "batch_size is a whole number, not 2.5"),
        ({"batch_size": 0}, r"batch_size should be greater .* \(as \[embedder\] batch_size\)"),
        ({"dimensions": "8"}, "dimensions is a whole number, not '8'"),
        ({"dimensions": 0}, "dimensions should be greater than or equal to 1"),
    ],
)
def test_a_wrong_embedder_argument_is_a_config_error_naming_it(
    options: dict[str, object], named: str
) -> None:
    """``max_retries="3"`` and ``timeout_s="5"`` raised a bare TypeError, ``max_retries=True``
    and ``backoff_base_s=-1`` were taken (the first retry raised out of the sleep)."""
    given: dict[str, object] = {"base_url": URL, "model": "m", **options}
    with pytest.raises(ConfigError, match=named):
        OpenAIEmbedder(**given)  # type: ignore[arg-type]


def test_the_embedder_takes_the_embedder_sections_bounds_and_numbers(srv: ScriptedOpenAI) -> None:
    """Not to trigger: the largest ``max_retries`` and ``batch_size`` ``[embedder]`` takes,
    a whole float, a Decimal, numpy's numbers and no dimensions; a 503 is then retried as
    many times as asked (1.0: once) and answered."""
    np = pytest.importorskip("numpy")
    bound = {
        name: next(m.le for m in EmbedderConfig.model_fields[name].metadata if hasattr(m, "le"))
        for name in ("max_retries", "batch_size")
    }
    top = OpenAIEmbedder(base_url=URL, model="m", **bound)
    assert (top.max_retries, top.batch_size) == (bound["max_retries"], bound["batch_size"])
    srv.push_embeddings(status=503, error_message="overloaded")
    srv.push_embeddings(dimension=8)
    embedder = OpenAIEmbedder(
        base_url=srv.base_url,
        model="m",
        max_retries=1.0,
        timeout_s=Decimal("5"),
        batch_size=np.int64(16),
        backoff_base_s=np.float32(0.01),
        backoff_max_s=Fraction(1, 50),
        dimensions=None,
    )
    assert embedder.max_retries == 1 and type(embedder.max_retries) is int
    assert embedder.timeout_s == 5.0 and type(embedder.batch_size) is int
    assert embedder.embed(["hello"]).shape == (1, 8)
    assert embedder.requests == 2


def test_a_late_retry_waits_the_cap_rather_than_overflowing() -> None:
    """``float(2**2000)`` raised an OverflowError out of the 2,000th retry's wait; the
    doublings stop past every cap, and an early retry is unchanged."""
    for retry in (1023, 1024, 2000, 10**6):
        assert 1.0 <= backoff_delay(retry, 0.05, 2.0) <= 2.0
    assert 0.1 <= backoff_delay(2, 0.05, 2.0) <= 0.2


@pytest.mark.parametrize("base", [-1.0, math.nan, -math.inf])
def test_a_backoff_is_never_negative_nor_nan(base: float) -> None:
    for delay in (backoff_delay(0, base, 2.0), backoff_delay(3, 0.05, base)):
        assert 0.0 <= delay <= 2.0  # (NaN is neither: the sleep would raise)
    assert 0.025 <= backoff_delay(0, 0.05, 2.0) <= 0.05  # (a good one stays as it was)


@pytest.mark.parametrize("base", [-1.0, math.nan])
def test_a_negative_backoff_set_later_retries_rather_than_raising(
    srv: ScriptedOpenAI, base: float
) -> None:
    """A backoff made negative after the constructor checked it (the attributes are
    public) waits no time: the 503 is retried and answered, no ValueError from the sleep."""
    srv.push_chat(status=503, error_message="overloaded")
    srv.push_chat(json_data={"ok": 1})
    with ChatClient(base_url=srv.base_url, timeout_s=2.0, max_retries=2) as client:
        client.backoff_base_s = base
        reply = client.complete_json(
            model="m", system="s", user="u", schema=None, max_tokens=10, deadline_s=3.0
        )
    assert reply.data == {"ok": 1} and reply.attempts == 2


def test_a_retry_after_of_nan_waits_no_time(srv: ScriptedOpenAI) -> None:
    srv.push_chat(status=429, headers={"Retry-After": "nan"})
    srv.push_chat(json_data={"ok": 2})
    with ChatClient(base_url=srv.base_url, timeout_s=2.0, max_retries=1) as client:
        reply = client.complete_json(
            model="m", system="s", user="u", schema=None, max_tokens=10, deadline_s=3.0
        )
    assert reply.data == {"ok": 2} and reply.attempts == 2
    assert srv.pending == 0


# -- 2. limit and max_candidates -------------------------------------------------------------

CATS = [
    "My cat Mochi likes tuna.",
    "Mochi slept on the sofa all day.",
    "Mochi went to the vet on Monday.",
    "猫のモチは魚が好き。Mochi loves fish.",
    "Mochi knocked a cup off the table.",
    "Mochi weighs five kilograms.",
    "Mochi chased a moth at night.",
]


def _cats(path: Path, clock: FixedClock, candidates: int) -> Memory:
    retrieval = RetrievalConfig(
        max_candidates=candidates, spread_k=min(candidates, 10), relevance_threshold=0
    )  # (a spread_k past max_candidates is refused: the spread could never be read)
    config = Config(retrieval=retrieval)
    mem = Memory.open(path, embedder=HashEmbedder(), clock=clock, config=config)
    for text in CATS:
        mem.add(text, kind="fact")
    return mem


def test_a_limit_past_max_candidates_returns_max_candidates(
    tmp_path: Path, clock: FixedClock
) -> None:
    with _cats(tmp_path / "few.db", clock, candidates=3) as mem:
        assert len(mem.retrieve("Mochi", limit=6, record=False).results) == 3
    with _cats(tmp_path / "many.db", clock, candidates=40) as mem:  # not capped below it
        assert len(mem.retrieve("Mochi", limit=6, record=False).results) == 6
    doc = Memory.retrieve.__doc__ or ""
    assert "max_candidates" in doc


def test_the_cli_limit_says_max_candidates_caps_it() -> None:
    for command in ("search", "retrieve"):
        shown = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
        assert "max_candidates" in shown, command


# -- 3. import_episodes' type ----------------------------------------------------------------


def test_import_episodes_is_typed_for_the_episodes_it_takes(mem: Memory) -> None:
    """It takes an Episode (what ``get`` returns) as ``add_many`` does, and says so."""
    taken = Iterable[NewEpisode | Episode]
    assert typing.get_type_hints(Memory.import_episodes)["episodes"] == taken
    assert typing.get_type_hints(Memory.add_many)["episodes"] == taken
    first = mem.add_exchange("My cat is Mochi", "Cute")
    copy = mem.get(first).model_copy(update={"id": 900})
    assert mem.import_episodes([copy]) == [900]
    assert mem.get(900).text == mem.get(first).text


# -- 4. dir(memengine) -----------------------------------------------------------------------


def test_dir_lists_the_lazily_imported_chat_client() -> None:
    listed = dir(memengine)
    assert "ChatClient" in listed
    assert set(memengine.__all__) <= set(listed)
    assert {"__version__", "__getattr__", "Memory"} <= set(listed)  # the module's own names
    assert listed == sorted(listed)
    assert "NotAName" not in listed  # (nothing made up)
