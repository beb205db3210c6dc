"""Fixes from the session-54 multi-agent review: a configured agent (named on purpose)
scopes the library's export and salvage as it scopes the CLI's, and the CLI's commands by
id (show, life, feedback, delete); stats(agent=…) says the file's totals are the file's;
a name that begins or ends with a character that shows nothing is no new agent's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import Config, InvalidInput, Memory, NotFound, load_config
from memengine.cli import app
from memengine.embed.base import Embedder
from memengine.embed.usem3 import USEM3Embedder

from .helpers import HashEmbedder, stored_by_an_earlier_version

runner = CliRunner()
SECRET = "alice PIN 4921"


def _agents_in(jsonl: str) -> list[str]:
    return sorted(json.loads(line)["agent"] for line in jsonl.splitlines())


def _two_users(path: Path, embedder: Embedder | None = None) -> tuple[int, int]:
    """Alice's secret and bob's note in the file at ``path``; their ids."""
    with Memory.open(path, embedder=embedder or HashEmbedder()) as mem:
        a = mem.add(SECRET, agent="alice", sensitivity=3)
        b = mem.add("bob likes tea", agent="bob")
    return a, b


@pytest.mark.parametrize("how", ["toml", "env", "model"])
def test_an_export_keeps_to_the_agent_the_configuration_names(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """``mem.export(path)`` wrote every agent's episodes, alice's secret too, under a
    configuration naming bob, while ``memengine export`` wrote bob's only."""
    db = tmp_path / "m.db"
    _two_users(db)
    if how == "toml":
        (tmp_path / "memengine.toml").write_text('agent = "bob"\n')
        cfg = load_config()
    elif how == "env":
        monkeypatch.setenv("MEMENGINE_AGENT", "bob")
        cfg = load_config()
    else:
        cfg = Config(agent="bob")
    with Memory.open(db, embedder=HashEmbedder(), config=cfg) as mem:
        assert mem.export(tmp_path / "mine.jsonl") == 1
        assert mem.salvage(tmp_path / "saved.jsonl").episodes == 1
        assert mem.export(tmp_path / "all.jsonl", all_agents=True) == 2
        assert mem.salvage(tmp_path / "all-saved.jsonl", all_agents=True).episodes == 2
        assert mem.export(tmp_path / "hers.jsonl", agent="alice") == 1
        with pytest.raises(InvalidInput, match="not both"):
            mem.export(tmp_path / "no.jsonl", agent="alice", all_agents=True)
        with pytest.raises(InvalidInput, match="all_agents is True or False"):
            mem.export(tmp_path / "no.jsonl", all_agents="yes")  # type: ignore[arg-type]
    assert not (tmp_path / "no.jsonl").exists()
    for name in ("mine", "saved"):
        text = (tmp_path / f"{name}.jsonl").read_text()
        assert _agents_in(text) == ["bob"] and "PIN 4921" not in text  # (not a time's microseconds)
    assert _agents_in((tmp_path / "all.jsonl").read_text()) == ["alice", "bob"]
    assert _agents_in((tmp_path / "all-saved.jsonl").read_text()) == ["alice", "bob"]
    assert _agents_in((tmp_path / "hers.jsonl").read_text()) == ["alice"]
    if how != "model":  # the CLI reads the same rule
        cli = runner.invoke(app, ["export", "--db", str(db)])
        assert cli.exit_code == 0 and _agents_in(cli.stdout) == ["bob"]


def test_an_export_with_the_agent_left_at_its_default_writes_every_agent(
    tmp_path: Path, cli_env: None
) -> None:
    db = tmp_path / "m.db"
    _two_users(db)
    for cfg in (None, Config(), load_config()):
        with Memory.open(db, embedder=HashEmbedder(), config=cfg) as mem:
            out = tmp_path / "all.jsonl"
            assert mem.export(out, overwrite=True) == 2
            assert _agents_in(out.read_text()) == ["alice", "bob"]
    assert Config(agent="default").named_agent() == "default"  # named, even as the default
    assert Config().named_agent() is None


def test_show_life_feedback_and_delete_keep_to_the_configured_agent(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch, usem3: USEM3Embedder
) -> None:
    """With ``agent = "bob"`` configured, ``show 1`` printed alice's secret and ``feedback``
    reinforced alice's memory; now each says not found, and ``--agent`` still reaches her."""
    db = str(tmp_path / "m.db")
    alice, bob = _two_users(Path(db), usem3)  # (feedback opens it with the default embedder)
    with Memory.open(db, embedder=usem3) as mem:
        turn = mem.retrieve("PIN", agent="alice").turn_id
    (tmp_path / "memengine.toml").write_text('agent = "bob"\n')

    shown = runner.invoke(app, ["show", str(alice), "--db", db])
    assert shown.exit_code == 1 and "PIN 4921" not in shown.output
    assert f"no episode with id {alice} of agent 'bob'" in shown.output
    assert "bob likes tea" in runner.invoke(app, ["show", str(bob), "--db", db]).output
    assert "4921" in runner.invoke(app, ["show", str(alice), "--agent", "alice", "--db", db]).output

    life = runner.invoke(app, ["life", str(alice), "--json", "--db", db])
    assert life.exit_code == 1 and "PIN 4921" not in life.output
    assert runner.invoke(app, ["life", str(bob), "--json", "--db", db]).exit_code == 0

    fed = runner.invoke(app, ["feedback", str(turn), "--used", str(alice), "--db", db])
    assert fed.exit_code == 1 and "'bob'" in fed.output, fed.output
    with Memory.open(db, embedder=usem3) as mem:
        assert mem.life_of(alice).episode.access_count == 0  # not reinforced
    ok = runner.invoke(
        app, ["feedback", str(turn), "--used", str(alice), "--agent", "alice", "--db", db]
    )
    assert ok.exit_code == 0, ok.output

    kept = runner.invoke(app, ["delete", str(alice), "--db", db])
    assert kept.exit_code == 1 and "another agent's" in kept.output
    with Memory.open(db, embedder=usem3) as mem:
        assert mem.get(alice).text == SECRET  # still there
    gone = runner.invoke(app, ["delete", str(alice), "--agent", "alice", "--db", db])
    assert gone.exit_code == 0 and "deleted 1 of 1" in gone.output

    (tmp_path / "memengine.toml").unlink()  # none named: any agent's, as before
    assert "bob likes tea" in runner.invoke(app, ["show", str(bob), "--db", db]).output
    monkeypatch.setenv("MEMENGINE_AGENT", "alice")
    other = runner.invoke(app, ["show", str(bob), "--db", db])
    assert other.exit_code == 1 and "tea" not in other.output


def test_stats_of_an_agent_says_the_totals_are_the_files(mem: Memory) -> None:
    """The totals beside one agent's row stay the file's (documented, keys kept)."""
    mem.add(SECRET, agent="alice", sensitivity=3)
    mem.add("bob likes tea", agent="bob")
    mem.add("bob likes cake", agent="bob")
    data = mem.stats(agent="bob")
    assert data["agents"] == {"bob": {"active": 2, "archived": 0}}
    assert data["episodes"] == 3  # the file's, not bob's: a server shows bob his row only
    assert "file's totals stay" in (Memory.stats.__doc__ or "")
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    assert "other agents' counts" in readme


@pytest.mark.parametrize(
    "odd", ["alice\u200b", "\ufeffalice", "alice\u2060", "\u200ealice", "alice\u00ad"]
)
def test_a_name_that_begins_or_ends_with_an_invisible_character_is_no_new_agent(
    mem: Memory, odd: str
) -> None:
    """Python's strip keeps U+200B, U+2060, U+FEFF: "alice\\u200b" became a second alice,
    which forget_agent("alice") left behind."""
    mem.add("a note of alice", agent="alice")
    with pytest.raises(InvalidInput) as caught:
        mem.add("a note", agent=odd)
    said = str(caught.value)
    invisible = next(c for c in (odd[0], odd[-1]) if c != "a" and c != "e")
    assert f"U+{ord(invisible):04X}" in said and "beside 'alice'" in said
    with pytest.raises(InvalidInput):
        mem.create_agent(odd)
    assert [a.name for a in mem.agents()] == ["alice"]
    mem.forget_agent("alice")
    assert mem.agents() == []


@pytest.mark.parametrize(
    "fine",
    [
        "❤️",
        "葛\U000e0100",
        "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
        "\u0600123",
        "a\u200db",
    ],
)
def test_a_name_whose_ends_are_drawn_is_taken(mem: Memory, fine: str) -> None:
    """A variation selector after an emoji, a flag's tags, the Arabic number sign and a
    joiner inside a name are part of what is drawn."""
    mem.add("a note", agent=fine)
    assert [a.name for a in mem.agents()] == [fine]


def test_a_stored_name_with_an_invisible_end_is_still_read_and_written(mem: Memory) -> None:
    """A file an earlier memengine wrote with "alice\\u200b" stays usable, as "alice " does."""
    odd = "alice\u200b"
    stored_by_an_earlier_version(mem, odd, "an old note")
    mem.add("a newer note", agent=odd)
    assert [r.episode.text for r in mem.retrieve("note", agent=odd, record=False).results]
    assert mem.stats(agent=odd)["agents"] == {odd: {"active": 2, "archived": 0}}
    assert mem.forget_agent(odd).episodes == 2
    with pytest.raises(InvalidInput, match="U\\+200B"):
        mem.add("again", agent=odd)  # once forgotten, a new agent of that name is refused
    with pytest.raises(NotFound):
        mem.get(1, agent="alice")
