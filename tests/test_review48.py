"""Review 48, agents: an import into one agent of a file of several, the names' length
and outer spaces, unknown agents, stats of agents without episodes, a pack of a
retrieval that does not say its agent, and emoji joined into one in a shown name."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memengine import InvalidInput, Memory, NotFound, load_config
from memengine.cli import app
from memengine.text import MAX_NAME_CHARS, shown_name

from .helpers import HashEmbedder


def _jsonl(path: Path, *lines: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _line(text: str, agent: str | None = None) -> dict[str, Any]:
    """A hand-written JSONL line of an exchange, of ``agent`` (or naming none)."""
    line = {"user_text": text, "occurred_at": "2026-04-01T09:00:00+09:00"}
    return line if agent is None else line | {"agent": agent}


def test_an_import_into_one_agent_of_a_file_of_several_is_refused(
    mem: Memory, tmp_path: Path
) -> None:
    """import --agent X put every line into X, whatever agents the lines named."""
    both = _jsonl(
        tmp_path / "all.jsonl",
        _line("I moved to Osaka", "alice"),
        _line("I like kayaks", "bob"),
        _line("a line of no agent"),
    )
    with pytest.raises(InvalidInput, match="2 agents") as info:
        mem.import_(both, agent="carol")
    assert "memengine export --agent NAME" in str(info.value)
    assert mem.store.count() == 0 and not mem.has_agent("carol")
    one = _jsonl(tmp_path / "one.jsonl", _line("I moved to Osaka", "alice"), _line("no agent"))
    assert len(mem.import_(one, agent="carol")) == 2  # one agent (and none): renamed
    assert mem.stats()["agents"] == {"carol": {"active": 2, "archived": 0}}
    assert len(mem.import_(both, keep_ids=False)) == 3  # without agent: each line's own
    assert set(mem.stats()["agents"]) == {"alice", "bob", "carol", "default"}


def test_the_cli_refuses_import_agent_of_a_file_of_several(tmp_path: Path, cli_env: None) -> None:
    both = _jsonl(tmp_path / "all.jsonl", _line("tea", "alice"), _line("kayaks", "bob"))
    db = tmp_path / "m.db"
    result = CliRunner().invoke(app, ["import", str(both), "--agent", "x", "--db", str(db)])
    assert result.exit_code == 1 and "holds the episodes of 2 agents" in result.output
    assert not db.exists()
    helped = CliRunner().invoke(app, ["import", "--help"], env={"COLUMNS": "200"})
    assert "name more than one agent is refused" in " ".join(helped.output.split())


def test_a_new_agent_name_is_at_most_256_characters(mem: Memory) -> None:
    """A name of a million characters was stored (a tag is capped at 200)."""
    longest = "y" * MAX_NAME_CHARS
    mem.add("a fact", kind="fact", agent=longest)
    assert mem.has_agent(longest)
    composed = unicodedata.normalize("NFD", "が") * MAX_NAME_CHARS  # 256 once in NFC
    mem.create_agent(composed)
    too_long = longest + "y"
    for call in (
        lambda: mem.add("a fact", kind="fact", agent=too_long),
        lambda: mem.add_exchange("hi", "hello", agent=too_long),
        lambda: mem.create_agent(too_long),
        lambda: mem.create_agent("ann", perspectives=[too_long]),
    ):
        with pytest.raises(InvalidInput, match="at most 256 characters, not 257"):
            call()
    assert mem.retrieve("fact", agent=too_long).results == ()  # a read: unknown, quietly
    assert not mem.has_agent(too_long)


@pytest.mark.parametrize("name", ["alice ", " alice", "alice\u3000", "alice\n"])
def test_a_new_name_with_white_space_at_an_end_is_refused_not_trimmed(
    mem: Memory, name: str
) -> None:
    """The names "alice " and "alice" were two agents."""
    mem.add("a fact", kind="fact", agent="alice")
    with pytest.raises(InvalidInput, match="it would be an agent beside 'alice'"):
        mem.add("another fact", kind="fact", agent=name)
    assert mem.retrieve("fact", agent=name).results == ()
    assert [a.name for a in mem.agents()] == ["alice"]


@pytest.mark.parametrize("name", ["alice ", "z" * 300])
def test_an_agent_an_earlier_version_named_so_is_still_written_to(
    mem: Memory, name: str, tmp_path: Path, cli_env: None
) -> None:
    """Refusing such names for new agents made an existing one read-only: its user's
    memories could no longer be stored, and --agent could not reach it at all."""
    from memengine.transfer import salvage_file

    from .helpers import stored_by_an_earlier_version

    stored_by_an_earlier_version(mem, name, "an old note about tea")
    mem.add("a new note about coffee", kind="fact", agent=name)
    mem.add_exchange("I like green tea", "Noted!", agent=name)
    assert mem.stats(agent=name)["agents"][name]["active"] == 3
    assert [a.name for a in mem.agents()] == [name]
    mem.export(tmp_path / "all.jsonl")
    with Memory.open(tmp_path / "new.db", embedder=HashEmbedder()) as moved:
        assert len(moved.import_(tmp_path / "all.jsonl")) == 3  # its name as exported
        assert [a.name for a in moved.agents()] == [name]
    db = str(mem.store.path)
    mem.close()
    out = str(tmp_path / "one.jsonl")  # (--agent reaches it: the file's embedder is a test's)
    exported = CliRunner().invoke(app, ["export", "-o", out, "--agent", name, "--db", db])
    assert exported.exit_code == 0, exported.output
    assert CliRunner().invoke(app, ["sleep", "--agent", name, "--db", db]).exit_code == 0
    assert salvage_file(db, tmp_path / "saved.jsonl", agent=name).episodes == 3


def test_case_and_width_make_other_agents(mem: Memory) -> None:
    for name in ("alice", "Alice", "ａｌｉｃｅ"):
        mem.add("a fact", kind="fact", agent=name)
    assert len(mem.agents()) == 3


def test_a_library_error_names_no_other_agent(mem: Memory) -> None:
    """sleep's NotFound listed the file's agents, which a server may pass on to a user."""
    mem.add("a secret of alice", kind="fact", agent="alice")
    with pytest.raises(NotFound) as info:
        mem.sleep("ghost")
    assert str(info.value) == "no agent named 'ghost'"


def test_a_call_on_all_of_an_unknown_agents_memories_is_not_found(
    mem: Memory, tmp_path: Path
) -> None:
    """train_scorer returned None as for too few samples, and plot_strength said the
    agent had not slept."""
    mem.add("a fact", kind="fact", agent="alice")
    with pytest.raises(NotFound, match=r"^no agent named 'ghost'$"):
        mem.train_scorer("ghost")
    with pytest.raises(NotFound, match=r"^no agent named 'ghost'$"):
        mem.plot_strength(tmp_path / "s.png", agent="ghost")
    assert mem.train_scorer("alice") is None  # (known: too few samples)
    assert mem.sleep("alice").scorer is None
    mem.create_agent("a nap")  # known, never slept: the command to run names it
    with pytest.raises(InvalidInput, match=r"run `memengine sleep --agent 'a nap'` first"):
        mem.plot_strength(tmp_path / "s.png", agent="a nap")


def test_a_call_that_only_reads_finds_nothing_quietly(mem: Memory) -> None:
    mem.add("a fact", kind="fact", agent="alice")
    r = mem.retrieve("fact", agent="ghost")
    assert r.results == () and mem.pack(r).text == ""
    assert mem.stats(agent="ghost")["agents"] == {"ghost": {"active": 0, "archived": 0}}
    assert mem.never_used("ghost") == [] and mem.principles("ghost") == []
    assert not mem.has_agent("ghost")


def test_stats_lists_an_agent_without_episodes(mem: Memory) -> None:
    mem.add("a fact", kind="fact", agent="bob")
    mem.create_agent("ann")
    assert mem.stats()["agents"] == {
        "ann": {"active": 0, "archived": 0},
        "bob": {"active": 1, "archived": 0},
    }
    assert [a.name for a in mem.agents()] == list(mem.stats()["agents"])


def test_a_pack_of_a_retrieval_without_its_agent_needs_one(mem: Memory) -> None:
    """It packed the configured agent's principles beside another agent's memories."""
    mem.add("Default rule: mention user-7's diagnosis", kind="principle")
    mem.add("Bob's rule: be terse", kind="principle", agent="bob")
    r = mem.retrieve("hello", agent="bob").model_copy(update={"agent": None})
    with pytest.raises(InvalidInput, match="does not say its agent"):
        mem.pack(r)
    text = mem.pack(r, agent="bob").text
    assert "be terse" in text and "diagnosis" not in text
    assert mem.pack(r, principles=False).text == ""


def test_a_joiner_is_shown_escaped_inside_an_emoji_too() -> None:
    """A joiner is invisible: shown as typed, 👨‍👩‍👧 and 👨👩👧 (or 🍕‍🍔 and 🍕🍔), two
    names, were drawn alike."""
    joined, apart = "\U0001f468\u200d\U0001f469", "\U0001f468\U0001f469"
    assert shown_name(joined) == "$'\U0001f468\\u200d\U0001f469'"
    assert shown_name(apart) == apart
    for name, shown in (
        ("a\u200db", "$'a\\u200db'"),
        ("x\u200d\U0001f469", "$'x\\u200d\U0001f469'"),
    ):
        assert shown_name(name) == shown


def test_a_sleep_and_a_plain_delete_show_that_they_are_working(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first sleep that pruned 90,000 memories printed nothing for 13 s, a delete of
    100,000 ids without --scrub nothing for 12 s; a counted bar showed no time before its
    first count (an import reading its file sat at "0/?")."""
    import io

    from rich.console import Console

    from memengine.cli import _app

    db = str(tmp_path / "m.db")
    runner = CliRunner()
    assert runner.invoke(app, ["add", "the dentist is on 5 March", "--db", db]).exit_code == 0
    out = io.StringIO()
    terminal = Console(file=out, force_terminal=True, width=100, color_system=None)
    monkeypatch.setattr(_app, "err_console", terminal)
    assert runner.invoke(app, ["sleep", "--db", db]).exit_code == 0
    assert "sleeping" in out.getvalue()
    assert runner.invoke(app, ["delete", "1", "--db", db]).exit_code == 0
    assert "deleting" in out.getvalue() and "compacting" not in out.getvalue()
    drawn = io.StringIO()
    monkeypatch.setattr(
        _app, "err_console", Console(file=drawn, force_terminal=True, width=100, color_system=None)
    )
    with _app.progress_bar("importing big.jsonl"):
        pass
    assert "0:00:00" in drawn.getvalue()  # the time taken, before any count


def test_every_package_the_code_imports_is_declared() -> None:
    """The LLM client imported httpx2 and httpcore2, which only openai 3 brings, while the
    declared floor was openai 1.40: an environment keeping openai 1.x or 2.x (pip keeps a
    version that satisfies the floor) failed at the first LLM call."""
    import ast
    import importlib.metadata
    import re
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    root = Path(__file__).resolve().parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"]]
    for extra in project["optional-dependencies"].values():
        wanted += extra

    def name(requirement: str) -> str:
        return canonical(re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0])

    def canonical(dist: str) -> str:  # (as package indexes compare names: sqlean.py, sqlean-py)
        return re.sub(r"[-_.]+", "-", dist).lower()

    declared = {name(r) for r in wanted}
    providers = importlib.metadata.packages_distributions()
    imported: set[str] = set()
    for source in (root / "memengine").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    missing = {}
    for module in sorted(imported - set(sys.stdlib_module_names) - {"memengine"}):
        dists = {canonical(d) for d in providers.get(module, [])}
        if dists and not dists & declared:
            missing[module] = sorted(dists)
    assert missing == {}, f"imported but not declared in pyproject.toml: {missing}"
    assert {"httpx2", "httpcore2"} <= declared


def test_an_import_into_a_name_the_caller_gives_follows_the_new_name_rule(
    mem: Memory, tmp_path: Path
) -> None:
    """``import --agent 'bob '`` (or the configured agent for lines naming none) created
    an agent the new-name rule refuses; the names the file's lines hold are kept."""
    plain = _jsonl(tmp_path / "plain.jsonl", _line("a line of no agent"))
    for bad in ("bob ", "x" * 300):
        with pytest.raises(InvalidInput, match=r"white space|at most 256"):
            mem.import_(plain, agent=bad)
    with Memory.open(
        tmp_path / "c.db",
        embedder=HashEmbedder(),
        config=load_config(None, overrides={"agent": "carol "}),
    ) as carol:
        with pytest.raises(InvalidInput, match="white space"):
            carol.import_(plain)
        named = _jsonl(tmp_path / "named.jsonl", _line("kept as written", "alice "))
        with pytest.raises(InvalidInput, match="names agent 'alice '"):  # not carol's: refused
            carol.import_(named)
    assert mem.store.count() == 0
    assert len(mem.import_(named)) == 1  # (an export of an earlier version's agent)
    assert mem.stats(agent="alice ")["agents"]["alice "]["active"] == 1


def test_an_import_into_an_agent_an_earlier_version_named_so_is_written(
    mem: Memory, tmp_path: Path, cli_env: None
) -> None:
    """The check of an import's --agent did not ask whether the file already holds it."""
    from .helpers import stored_by_an_earlier_version

    stored_by_an_earlier_version(mem, "alice ", "an old note")
    plain = _jsonl(tmp_path / "plain.jsonl", _line("a line of no agent"))
    assert len(mem.import_(plain, agent="alice ")) == 1
    assert mem.stats(agent="alice ")["agents"]["alice "]["active"] == 2


def test_a_conversation_file_into_a_refused_name_makes_no_file(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A memsets import under a configured agent "carol " left an empty new file."""
    sample = Path(__file__).resolve().parent.parent / "memengine" / "sample" / "companion_en.json"
    db = tmp_path / "new.db"
    conf = tmp_path / "carol.toml"  # (a variable loses its outer white space; a file's not)
    conf.write_text('agent = "carol "\n')
    result = CliRunner().invoke(
        app, ["import", str(sample), "--db", str(db), "--config", str(conf)]
    )
    assert result.exit_code == 1 and "white space" in result.output
    assert not db.exists()


def test_the_answer_after_a_best_sentence_cut_at_its_start_is_kept() -> None:
    """The check that the answer shows after the best sentence looked for the whole best
    sentence, whose start the quote had cut: the date was dropped."""
    from .helpers import shown_quote

    text = (
        "Busy week. "
        * 10
        + "After weeks of putting it off and a very long morning of chores and errands "
        "and phone calls, I finally called the dentist. It's on March 12 at 3pm. "
        + "Then I cooked pasta. "
        * 10
    )
    from memengine.retrieve.answer_type import asked_types

    quote = shown_quote(
        text, "quote_key_parts", ["dentist"], 120, asked_types("when is my dentist appointment?"),
        fill=True,
    )  # fmt: skip
    assert "called the dentist." in quote and "March 12 at 3pm" in quote


def test_an_export_of_the_configured_legacy_agent_imports(mem: Memory, tmp_path: Path) -> None:
    """Lines naming the configured agent "alice " themselves were taken for lines naming
    none, and refused as a new name."""
    from .helpers import stored_by_an_earlier_version

    stored_by_an_earlier_version(mem, "alice ", "an old note")
    mem.export(tmp_path / "alice.jsonl")
    config = load_config(None, overrides={"agent": "alice "})
    with Memory.open(tmp_path / "n.db", embedder=HashEmbedder(), config=config) as moved:
        assert len(moved.import_(tmp_path / "alice.jsonl")) == 1
