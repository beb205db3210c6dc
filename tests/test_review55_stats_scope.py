"""Fixes from the session-55 review of what `stats --agent` shows: the agent's own totals
beside the file's, each line saying whose numbers it holds (table and JSON), and the
status of an archived memory in `never-used`'s table (its JSON had it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import Memory
from memengine.cli import app
from memengine.cli._app import console

from .helpers import HashEmbedder

runner = CliRunner()


@pytest.fixture
def two_agents(tmp_path: Path, cli_env: None) -> str:
    """A file where alice has one exchange and bob a fact, an exchange and one turn."""
    db = tmp_path / "two.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add_exchange("my PIN is 4921", "Noted.", agent="alice")
        mem.add("bob likes tea", kind="fact", agent="bob")
        mem.add_exchange("bob's cake is on Friday", "Noted.", agent="bob")
        mem.retrieve("tea", agent="bob")
    return str(db)


def test_stats_of_an_agent_holds_its_own_totals_beside_the_files(two_agents: str) -> None:
    """``agent`` holds the agent's own counts; the file's keys keep the file's."""
    with Memory.open(two_agents, embedder=HashEmbedder()) as mem:
        bob = mem.stats(agent="bob")
        whole = mem.stats()
        ghost = mem.stats(agent="ghost")
    own = bob["agent"]
    assert own is not None and own["name"] == "bob"
    assert (own["episodes"], own["kinds"], own["turns"]) == (2, {"exchange": 1, "fact": 1}, 1)
    assert own["first"] is not None and own["last"] is not None and own["first"] <= own["last"]
    assert bob["episodes"] == 3 and bob["agent_count"] == 2  # (the file's, keys kept)
    assert bob["kinds"] == {"exchange": 2, "fact": 1}
    assert whole["agent"] is None and whole["agent_count"] == 2
    assert ghost["agent"] == {
        "name": "ghost",
        "episodes": 0,
        "kinds": {},
        "first": None,
        "last": None,
        "turns": 0,
    }


def test_stats_table_of_an_agent_says_which_numbers_are_the_files(two_agents: str) -> None:
    """The title over bob's row said "3 episodes": alice's too, untold."""
    out = runner.invoke(app, ["stats", "--agent", "bob", "--db", two_agents])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0].strip() == "bob: 2 episodes, 1 turn"
    assert "bob's kinds: exchange 1, fact 1" in lines
    (file_line,) = [line for line in lines if line.startswith("the file ")]
    assert "(every agent's): 3 episodes across 2 agents" in file_line
    assert "kinds: exchange 2, fact 1" in file_line and "embedder: hash:64" in file_line
    assert "alice" not in out.stdout  # (her row stays out, as before)
    whole = runner.invoke(app, ["stats", "--db", two_agents]).stdout
    assert "two.db: 3 episodes, " in whole.splitlines()[0]
    assert "alice" in whole and "the file " not in whole


def test_stats_json_of_an_agent_keeps_its_keys_and_adds_the_agents(two_agents: str) -> None:
    """Top-level keys stay the file's (as documented); the agent's own are under ``agent``."""
    out = runner.invoke(app, ["stats", "--agent", "bob", "--db", two_agents, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["episodes"] == 3 and data["agent_count"] == 2
    assert data["agents"] == {"bob": {"active": 2, "archived": 0}}
    assert data["agent"]["episodes"] == 2 and data["agent"]["turns"] == 1
    assert data["agent"]["kinds"] == {"exchange": 1, "fact": 1}
    whole = json.loads(runner.invoke(app, ["stats", "--db", two_agents, "--json"]).stdout)
    assert whole["agent"] is None and set(whole["agents"]) == {"alice", "bob"}


NAME = "user-550e8400-e29b-41d4-a716-446655440000"


@pytest.fixture
def archived_db(tmp_path: Path, cli_env: None) -> str:
    """An agent of a long name whose one memory was retrieved, never used, and archived."""
    db = tmp_path / "archived.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        old = mem.add("the boiler was serviced in march", kind="fact", agent=NAME)
        mem.retrieve("boiler serviced", agent=NAME)
        mem.sleep(tasks=600, agent=NAME)  # decayed below the archive threshold
        assert mem.get(old).status == "archived"
    return str(db)


@pytest.mark.parametrize("width", [30, 60, 120])
def test_never_used_table_shows_an_archived_memorys_status(
    archived_db: str, monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """The table left out the status its JSON has; on a narrow terminal it is a named
    field of the row's line, and no cell is cut."""
    monkeypatch.setattr(type(console), "is_terminal", property(lambda self: True))
    monkeypatch.setattr(console, "_width", width)
    args = ["never-used", "--min-candidates", "0", "--agent", NAME, "--db", archived_db]
    out = runner.invoke(app, args)
    assert out.exit_code == 0, out.output
    assert "archived" in out.stdout and "…" not in out.stdout
    assert "boiler" in out.stdout and NAME not in out.stdout  # (the table has no agent column)
    if width < 60:
        assert any("status: archived" in line for line in out.stdout.splitlines())
    elif width > 100:
        assert "┃ status " in out.stdout and "│ archived │" in out.stdout
