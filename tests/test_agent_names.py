"""Agent names an earlier memengine stored that are now refused as new names, and how
agent names are shown and listed."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import Config, FixedClock, InvalidInput, Memory
from memengine.cli import app
from memengine.cli._app import shown_name
from memengine.embed.base import Vectors
from memengine.store.episodes import ensure_agents

from .helpers import T0, HashEmbedder, stored_by_an_earlier_version
from .openai_server import ScriptedOpenAI

FILLER = "\u3164"  # Hangul filler: blank, refused as a new name
ZERO_WIDTH = "\u200b"
SECRET = "quokkapin"


@pytest.mark.parametrize("odd", [FILLER, ZERO_WIDTH])
def test_a_stored_name_now_refused_blocks_no_other_agent(mem: Memory, odd: str) -> None:
    stored_by_an_earlier_version(mem, odd, "an old note")
    mem.add("a note of alice", agent="alice")
    report = mem.forget_agent("alice")
    assert (report.agent, report.episodes) == ("alice", 1)
    assert [a.name for a in mem.agents()] == [odd]


@pytest.mark.parametrize("odd", [FILLER, ZERO_WIDTH])
def test_a_stored_name_now_refused_is_reached_as_stored(mem: Memory, odd: str) -> None:
    stored_by_an_earlier_version(mem, odd, "an old note")
    mem.add("a note of alice", agent="alice")
    assert mem.has_agent(odd)
    for a in mem.agents():  # the README's nightly loop
        mem.sleep(a.name)
    report = mem.forget_agent(odd)
    assert (report.agent, report.episodes) == (odd, 1)
    assert [a.name for a in mem.agents()] == ["alice"]


def test_a_blank_name_not_stored_is_still_refused(mem: Memory) -> None:
    stored_by_an_earlier_version(mem, FILLER, "an old note")
    for new in (ZERO_WIDTH, " ", FILLER + FILLER):
        with pytest.raises(InvalidInput, match="non-empty"):
            mem.add("a note", agent=new)
        with pytest.raises(InvalidInput, match="non-empty"):
            mem.forget_agent(new)
    assert [a.name for a in mem.agents()] == [FILLER]


@pytest.fixture
def srv() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


class _SeenEmbedder(HashEmbedder):
    """The hashing embedder, keeping every text it was asked to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.seen.extend(texts)
        return super().embed(texts)


def test_forgetting_an_agent_drops_the_cached_vectors_of_its_words(
    tmp_path: Path, srv: ScriptedOpenAI
) -> None:
    """The LLM turn's query vectors and the coverage's word vectors are keyed by the
    user's text: after forget_agent the same question is embedded afresh."""
    # (deadlines far past a loaded host's: an expansion cut short searches other texts)
    llm = {"base_url": srv.base_url, "rerank_enabled": False}
    llm |= {"expansion_deadline_s": 30.0, "turn_deadline_s": 60.0}
    cfg = Config.model_validate(
        {"llm": llm, "retrieval": {"coverage_min": 0.1}, "lifecycle": {"record_turns": False}}
    )
    embedder = _SeenEmbedder()
    question = f"what is my {SECRET} code?"
    expansion = {"expanded_queries": ["my code"], "detected_references": []}
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=embedder, clock=FixedClock(T0)) as m:
        for agent in ("alice", "bob"):  # (alice's note gives her search words to cover)
            m.add_exchange(f"my code is {SECRET}", "ok", agent=agent, occurred_at=T0)
        for _ in range(2):
            embedder.seen.clear()
            srv.push_chat(json_data=expansion)
            m.retrieve(question, agent="bob", day_range=None, llm=True)
        assert embedder.seen == []  # the second time, every vector was cached
        m.forget_agent("bob")
        srv.push_chat(json_data=expansion)
        m.retrieve(question, agent="alice", day_range=None, llm=True)
        assert question in embedder.seen  # the query's vector was dropped
        assert SECRET in embedder.seen  # and its words' (the coverage's)


def test_a_warning_names_a_few_agents_of_thousands(db_path: Path, cli_env: None) -> None:
    with Memory.open(db_path, embedder=HashEmbedder()) as m, m.store.connections.write() as cur:
        ensure_agents(cur, [f"user{i:04d}" for i in range(3000)], T0)
    result = CliRunner().invoke(app, ["stats", "--agent", "user12345", "--db", str(db_path)])
    assert result.exit_code == 0 and "no agent 'user12345'" in result.stderr
    assert "and 2,995 more; `memengine agent list`" in result.stderr
    assert len(result.stderr) < 1000
    shown = result.stderr.split("(agents: ")[1].split(" and ")[0].split(", ")
    assert len(shown) == 5 and "'user1234'" in shown  # the closest names first


def test_a_warning_quotes_each_agent_it_lists(db_path: Path, cli_env: None) -> None:
    """The agents were listed unquoted: "O'Brien, Smith, John, buyer" read as four agents,
    while a warning quotes a name as a shell reads it back."""
    with Memory.open(db_path, embedder=HashEmbedder()) as m:
        for name in ("O'Brien", "Smith, John", "buyer", "default"):
            m.add("a note", agent=name)
    for command in (["stats"], ["export", "-o", "-"]):
        result = CliRunner().invoke(app, [*command, "--agent", "nobody", "--db", str(db_path)])
        assert result.exit_code == 0, result.output
        said = " ".join(result.stderr.split())
        assert "(agents: $'O\\'Brien', 'Smith, John', 'buyer', 'default')" in said


def test_an_agents_perspectives_are_each_quoted_in_a_line(db_path: Path, cli_env: None) -> None:
    """A perspective may hold ", ": "perspectives cost, time, speed" was three or two."""

    def run(*words: str) -> str:
        result = CliRunner().invoke(app, [*words, "--db", str(db_path)])
        assert result.exit_code == 0, result.output
        return " ".join(result.output.split())

    created = run("agent", "create", "bob", "-p", "cost, time", "-p", "speed")
    assert "agent bob: perspectives 'cost, time', 'speed'" in created
    assert "'cost, time', 'speed'" in run("agent", "list")


def test_a_stored_name_with_spaces_at_an_end_is_told_from_the_trimmed_one(
    db_path: Path, cli_env: None
) -> None:
    """A new name with spaces at an end is refused; one an earlier version stored is still
    listed, told from the trimmed one and forgotten by its name."""

    def run(*words: str, code: int = 0) -> str:
        result = CliRunner().invoke(app, [*words, "--db", str(db_path)])
        assert result.exit_code == code, result.output
        return result.output

    with Memory.open(db_path, embedder=HashEmbedder()) as m:
        stored_by_an_earlier_version(m, "alice ", "an old note")
    run("agent", "create", "alice")
    assert "begins or ends with white space" in run("agent", "create", "bob ", code=1)
    listed = run("agent", "list")
    assert "'alice '" in listed and "alice" in listed.replace("'alice '", "")
    assert run("agent", "forget", "alice ", "--yes").startswith("forgot agent 'alice ': ")
    assert run("agent", "forget", "alice", "--yes").startswith("forgot agent alice: ")


def test_shown_names_that_would_look_alike_differ() -> None:
    names = ["alice", "alice ", " alice", "'alice '", "alice\u3000", FILLER, "o'neil"]
    shown = [shown_name(n) for n in names]
    assert len(set(shown)) == len(shown)
    assert shown[:3] == ["alice", "'alice '", "' alice'"] and shown[-1] == "o'neil"


def test_an_unknown_agent_with_a_perspective_finds_nothing_quietly(mem: Memory) -> None:
    mem.create_agent("seller", perspectives=[" 品質 "])  # declared without its outer spaces
    assert mem.agents()[0].perspectives == ("品質",)
    mem.add("bolts from supplier X failed the quality check", kind="fact", agent="seller")
    found = mem.retrieve("bolts quality", agent="ghost", perspective="コスト")
    assert found.results == () and found.turn_id is None  # a new user's first turn
    assert not mem.pack(found).injected
    assert not mem.has_agent("ghost")  # the read created no agent
    with pytest.raises(InvalidInput, match="agent 'seller' has no perspective 'コスト'"):
        mem.retrieve("bolts", agent="seller", perspective="コスト")  # a known agent's typo
    mem.add("a note of bob", agent="bob")  # known, having declared none
    with pytest.raises(InvalidInput, match="it declared none"):
        mem.retrieve("a note", agent="bob", perspective="コスト")
    assert mem.retrieve("bolts", agent="seller", perspective=" 品質").results
