"""Fixes from the second session-56 review of an agent named on purpose: the README's
turn() broke under one (its feedback by id named no agent), a call by id scoped by the
configuration said so nowhere, and an import's refusals sent the user from --agent to "no
agent configured" and back (``import --all-agents`` now imports an ``export --all-agents``).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memengine import Config, InvalidInput, Memory, NotFound
from memengine.cli import app
from memengine.importers import read_file

from .helpers import HashEmbedder

runner = CliRunner()
README = Path(__file__).resolve().parent.parent / "README.md"
AT = "2026-03-01T09:00:00+00:00"
HINT = "the agent this memory's configuration names"


def _readme_turn(mem: Memory) -> Any:
    """The README's ``turn()``, as written there, bound to ``mem`` and a stand-in LLM."""
    source = re.search(r"^def turn\(.*?^    return reply$", README.read_text(), re.M | re.S)
    assert source is not None, "README.md no longer holds def turn(…)"
    space: dict[str, Any] = {"mem": mem, "call_your_llm": lambda pack, recent, text: "ok"}
    exec(source.group(0), space)  # (the README's own code: what a reader copies)
    return space["turn"]


@pytest.mark.parametrize("named", ["default", "user-7"])
def test_the_readme_turn_works_under_a_named_agent(tmp_path: Path, named: str) -> None:
    """Under ``agent = "default"`` (or MEMENGINE_AGENT) the second turn raised ``NotFound:
    no turn with id 1 of agent 'default'``: the feedback passed no agent."""
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), config=Config(agent=named)) as mem:
        turn = _readme_turn(mem)
        assert turn("42", "I moved to Lyon", []) == "ok"
        assert turn("42", "where do I live?", []) == "ok"
        assert turn("42", "and my cello?", []) == "ok"
        turns = mem.store.connections  # the turns of user-42 took their feedback
        with turns.read() as cur:
            rows = cur.execute("SELECT agent, used IS NOT NULL FROM turns").fetchall()
    assert rows and all(tuple(r) == ("user-42", 1) for r in rows)


def _two_users(path: Path, *, cli: bool = False) -> tuple[int, int, int]:
    """A fact of alice's and of bob's, and a turn of alice's; their ids (``cli``: embedded
    with the configured embedder, as the CLI opens it)."""
    with Memory.open(path, **({} if cli else {"embedder": HashEmbedder()})) as mem:
        hers = mem.add("alice keeps her passport in the drawer", kind="fact", agent="alice")
        mine = mem.add("bob plays the cello", kind="fact", agent="bob")
        turn = mem.retrieve("passport", agent="alice", record=True).turn_id
    assert turn is not None
    return hers, mine, turn


def test_a_call_by_id_scoped_by_the_configuration_says_so(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    hers, _, turn = _two_users(db)
    with Memory.open(db, embedder=HashEmbedder(), config=Config(agent="bob")) as mem:
        for call in (mem.get, mem.life_of):
            with pytest.raises(NotFound) as found:
                call(hers)
            assert f"of agent 'bob' ({HINT}; pass agent=… for another" in str(found.value)
            assert "all_agents=True" in str(found.value)
        with pytest.raises(NotFound, match=f"no turn with id {turn} of agent 'bob' .{HINT}"):
            mem.feedback(turn, answer="the drawer")
        # the advice followed: agent= or all_agents=True reaches it
        assert mem.get(hers, agent="alice").agent == "alice"
        assert mem.life_of(hers, all_agents=True).episode.agent == "alice"
        assert mem.feedback(turn, answer="the drawer", agent="alice").turn_id == turn
        # an agent given: the message names it, with no hint about the configuration
        for call in (mem.get, mem.life_of):
            with pytest.raises(NotFound) as found:
                call(hers, agent="bob")
            assert str(found.value) == f"no episode with id {hers} of agent 'bob'"
    with Memory.open(db, embedder=HashEmbedder(), config=Config(agent="nobody")) as mem:
        with pytest.raises(NotFound, match=f"no agent named 'nobody' .{HINT}"):
            mem.delete([hers])
        with pytest.raises(NotFound) as found:
            mem.delete([hers], agent="nobody")
        assert str(found.value) == "no agent named 'nobody'"
    with Memory.open(db, embedder=HashEmbedder()) as mem:  # no agent named: no scope, no hint
        with pytest.raises(NotFound) as found:
            mem.get(hers + 100)
        assert str(found.value) == f"no episode with id {hers + 100}"


def test_the_cli_by_id_shows_no_python_hint(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    hers, _, turn = _two_users(db, cli=True)
    monkeypatch.setenv("MEMENGINE_AGENT", "bob")
    for args in (["show", str(hers)], ["life", str(hers)], ["feedback", str(turn), "--helpful"]):
        result = runner.invoke(app, [*args, "--db", str(db)])
        said = " ".join(result.output.split())
        assert result.exit_code == 1 and "of agent 'bob'" in said, said
        assert "all_agents" not in said and "agent=" not in said


def _export_all(db: Path, out: Path) -> list[dict[str, Any]]:
    result = runner.invoke(app, ["export", "--all-agents", "-o", str(out), "--db", str(db)])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in out.read_text().splitlines()]


def _agents_of(db: Path) -> dict[str, int]:
    """How many episodes each agent of the file at ``db`` holds."""
    with Memory.open(db, embeds=False) as mem:
        return {a: s["active"] + s["archived"] for a, s in mem.stats()["agents"].items()}


def test_the_cli_imports_its_own_export_of_all_agents_under_a_named_agent(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MEMENGINE_AGENT=bob: ``export --all-agents`` then ``import`` was refused, its advice
    (--agent) refused again, and that advice (without --agent) was the first refusal."""
    db = tmp_path / "m.db"
    _two_users(db, cli=True)
    monkeypatch.setenv("MEMENGINE_AGENT", "bob")
    lines = _export_all(db, tmp_path / "all.jsonl")
    assert {line["agent"] for line in lines} == {"alice", "bob"}
    new = tmp_path / "new.db"
    refused = runner.invoke(app, ["import", "all.jsonl", "--db", str(new)])
    said = " ".join(refused.output.split())
    assert refused.exit_code == 1 and "memengine import --all-agents" in said
    assert "--agent " not in said and "no agent configured" not in said
    merged = runner.invoke(app, ["import", "--agent", "bob", "all.jsonl", "--db", str(new)])
    said = " ".join(merged.output.split())
    assert merged.exit_code == 1 and "import it with --all-agents instead" in said
    assert "without it" not in said and not new.exists()
    both = runner.invoke(app, ["import", "-a", "bob", "--all-agents", "all.jsonl"])
    assert both.exit_code == 2 and "either --agent or --all-agents" in both.output
    done = runner.invoke(app, ["import", "--all-agents", "all.jsonl", "--db", str(new), "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["imported"] == len(lines)
    assert _agents_of(new) == _agents_of(db) == {"alice": 1, "bob": 1}


def test_a_refusal_of_one_agents_file_is_advice_that_works(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal's own command, run as it is written (with the file), imports it."""
    hers = tmp_path / "alice.jsonl"
    hers.write_text(
        json.dumps({"agent": "alice", "kind": "fact", "content": "alice's note", "occurred_at": AT})
        + "\n"
    )
    monkeypatch.setenv("MEMENGINE_AGENT", "bob")
    db = tmp_path / "m.db"
    refused = runner.invoke(app, ["import", str(hers), "--db", str(db)])
    said = " ".join(refused.output.split())
    assert refused.exit_code == 1, said
    command = re.search(r"memengine (import --agent '[^']+')", said)
    assert command is not None, said
    done = runner.invoke(app, [*shlex.split(command.group(1)), str(hers), "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert _agents_of(db) == {"bob": 1}
    other = tmp_path / "other.db"
    done = runner.invoke(app, ["import", "--all-agents", str(hers), "--db", str(other)])
    assert done.exit_code == 0 and _agents_of(other) == {"alice": 1}


def test_the_library_import_takes_all_agents(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    _two_users(db)
    every = tmp_path / "all.jsonl"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.export(every, all_agents=True)
    new = tmp_path / "new.db"
    with Memory.open(new, embedder=HashEmbedder(), config=Config(agent="bob")) as mem:
        with pytest.raises(InvalidInput, match=r"import_\(…, all_agents=True\)"):
            mem.import_(every)
        with pytest.raises(InvalidInput, match="either an agent or all_agents, not both"):
            mem.import_(every, agent="bob", all_agents=True)
        read = read_file(every)  # (without keep_to: add_imported refuses it, and says how)
        with pytest.raises(InvalidInput, match=r"add_imported\(read, all_agents=True\)"):
            mem.add_imported(read)
        assert len(mem.add_imported(read, all_agents=True)) == 2
    assert _agents_of(new) == {"alice": 1, "bob": 1}
    again = tmp_path / "again.db"
    with Memory.open(again, embedder=HashEmbedder(), config=Config(agent="bob")) as mem:
        assert len(mem.import_(every, all_agents=True)) == 2
    assert _agents_of(again) == {"alice": 1, "bob": 1}


SAMPLE = Path(__file__).resolve().parent.parent / "memengine" / "sample" / "companion_en.json"


def test_a_file_read_per_conversation_without_an_agent_is_prefixed_by_the_storing_agent(
    tmp_path: Path,
) -> None:
    """``read_file(path, per_conversation=True)`` named the conversations "default/<id>",
    while ``import_(…, per_conversation=True)`` under bob named them "bob/<id>"."""
    read = read_file(SAMPLE, per_conversation=True)
    assert read.episodes and all(e.agent.startswith("default/") for e in read.episodes)
    with Memory.open(tmp_path / "a.db", embedder=HashEmbedder(), config=Config(agent="bob")) as mem:
        mem.add_imported(read)
        stored = set(mem.stats()["agents"])
    with Memory.open(tmp_path / "b.db", embedder=HashEmbedder(), config=Config(agent="bob")) as mem:
        mem.import_(SAMPLE, per_conversation=True)
        imported = set(mem.stats()["agents"])
    assert stored == imported and all(a.startswith("bob/") for a in stored)
    with Memory.open(tmp_path / "c.db", embedder=HashEmbedder()) as mem:  # none configured
        mem.add_imported(read)
        assert {a.split("/")[0] for a in mem.stats()["agents"]} == {"default"}
    long = "x" * 254  # (a name holds at most 256 characters)
    with Memory.open(
        tmp_path / "d.db", embedder=HashEmbedder(), config=Config(agent=long)
    ) as mem:  # a prefix too long for an agent's name: refused, as the reader refuses it
        with pytest.raises(InvalidInput, match="an agent name is at most 256 characters"):
            mem.add_imported(read)
        assert mem.stats()["agents"] == {}
