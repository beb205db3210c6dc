"""The README's Python examples run as written, on a real file with the default embedder,
and the output it copies is the command's.

Each ```python block of README.md is run in an empty working folder (no memengine.toml,
no ``MEMENGINE_*`` variables); what it shows is checked, so an example that drifts from
the API, or stops finding what it says it finds, fails here rather than for a reader. The
copy of ``memengine simulate --tasks 600`` is compared with its output line for line.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    """The README's ```python blocks, in order."""
    return re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def _output_after(command: str) -> str:
    """The text of the first plain ``` block after the paragraph that starts with
    ``command`` in backquotes (what the README says the command prints)."""
    text = README.read_text(encoding="utf-8")
    found = re.search(rf"^`{re.escape(command)}`.*?^```\n(.*?)^```", text, re.M | re.S)
    assert found, f"no output of {command} in the README"
    return found.group(1)


def _run(code: str, names: dict[str, Any] | None = None) -> tuple[dict[str, Any], str]:
    """``code`` run as a module of its own, with its namespace and what it printed."""
    namespace: dict[str, Any] = {"__name__": "readme_example", **(names or {})}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(README), "exec"), namespace)  # (the README's own code)
    return namespace, printed.getvalue()


def test_the_readme_shows_two_python_examples() -> None:
    """The checks below are written for these two: a new one needs its own check."""
    assert len(_python_blocks()) == 2


@pytest.mark.usefixtures("cli_env")
def test_the_first_example_finds_the_cats_name_and_packs_it() -> None:
    """「あの子の名前なんだっけ？」 with the cat in ``recent`` finds 「きなこ」 first, as
    ``high``, and the pack quotes it; the tender is not packed."""
    namespace, printed = _run(_python_blocks()[0])
    lines = printed.splitlines()
    assert lines[0].startswith("1 high うちの猫、きなこって名前にしたよ")
    assert "[EPISODE_EVIDENCE]" in lines
    assert "User: うちの猫、きなこって名前にしたよ" in lines
    assert not any("Fenwick" in line for line in lines[lines.index("[EPISODE_EVIDENCE]") :])
    assert namespace["mem"].closed  # (the with block closed it)
    assert Path("companion.db").is_file()


@pytest.mark.usefixtures("cli_env")
def test_the_companion_turn_example_stores_each_turn_and_recalls_it() -> None:
    """The backend's ``turn`` runs with a stand-in for the LLM that echoes the pack: the
    first turn has nothing to recall (no turn id to give feedback on), a later one packs
    what the first stored, and every exchange is stored under the user's agent."""
    packs: list[str] = []

    def call_your_llm(pack: str, recent: list[dict[str, object]], text: str) -> str:
        packs.append(pack)
        return f"(reply to: {text})"

    namespace, _ = _run(_python_blocks()[1], {"call_your_llm": call_your_llm})
    turn, mem = namespace["turn"], namespace["mem"]
    try:
        assert turn("42", "My dog Mochi turned three today!", []) == (
            "(reply to: My dog Mochi turned three today!)"
        )
        assert packs[0] == ""  # an agent's first turn: nothing stored yet
        recent = [{"role": "user", "text": "I'm buying a birthday cake for my dog"}]
        turn("42", "How old is Mochi now?", recent)
        assert "Mochi turned three" in packs[1]
        assert turn("7", "How old is Mochi now?", []) and "Mochi" not in packs[2]  # another user
        stored = [e.text for batch in mem.store.iter_episodes("user-42") for e in batch]
        assert len(stored) == 2 and "My dog Mochi turned three today!" in stored[0]
    finally:
        mem.close()


@pytest.mark.usefixtures("cli_env")
def test_the_simulate_output_the_readme_shows_is_the_commands() -> None:
    """The README's copy had lost the rule under the table's header: every line is the
    command's, with the default settings."""
    from typer.testing import CliRunner

    from memengine.cli import app

    result = CliRunner().invoke(app, ["simulate", "--tasks", "600"])
    assert result.exit_code == 0, result.output
    shown = _output_after("memengine simulate --tasks 600")
    assert shown.splitlines() == result.stdout.splitlines()
    assert set(shown.splitlines()[10]) == {"-"}  # (the rule under the header)
