"""Fixes from the session-46 reviews: configuration limits and messages, and the rest."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memengine import (
    Config,
    ConfigError,
    FixedClock,
    InvalidInput,
    LifecycleConfig,
    Memory,
    StoreError,
    load_config,
)
from memengine.config import MAX_RATE, MAX_WEIGHT

from .helpers import HashEmbedder, another_process_reading


@pytest.mark.parametrize(
    ("section", "key", "limit"),
    [
        ("retrieval", "context_weight", MAX_WEIGHT),
        ("retrieval", "bm25_weight", MAX_WEIGHT),
        ("retrieval", "spread_boost", MAX_WEIGHT),
        ("retrieval", "answer_type_weight", MAX_WEIGHT),
        ("retrieval", "rrf_k", MAX_RATE),
        ("lifecycle", "expected_tasks_per_day", MAX_RATE),
        ("lifecycle", "failure_weight", MAX_WEIGHT),
        ("lifecycle", "recency_half_life_days", 365 * 200),
    ],
)
def test_a_weight_near_the_largest_float_is_refused(
    tmp_path: Path, section: str, key: str, limit: float
) -> None:
    """1e308 made FTS5's bm25() NaN (a TypeError in the search) or a sleep's task
    boundary infinite (an OverflowError); the largest allowed value still loads."""
    env = {f"MEMENGINE_{section.upper()}__{key.upper()}": "1e308"}
    with pytest.raises(ConfigError, match=rf"{section}\.{key} .*less than or equal to"):
        load_config(environ=env)
    ok = load_config(environ={f"MEMENGINE_{section.upper()}__{key.upper()}": str(limit)})
    assert getattr(getattr(ok, section), key) == limit


def test_list_weights_are_bounded_too() -> None:
    env = {"MEMENGINE_LIFECYCLE__CAPACITY_WEIGHTS": "1,2,4,8,16,1e308"}
    with pytest.raises(ConfigError, match="capacity_weights"):
        load_config(environ=env)
    env = {"MEMENGINE_LIFECYCLE__LINEAR_WEIGHTS": "0.5,0.5,1e300"}
    with pytest.raises(ConfigError, match="linear_weights"):
        load_config(environ=env)


def test_one_error_names_every_wrong_list(tmp_path: Path) -> None:
    conf = tmp_path / "m.toml"
    conf.write_text("[lifecycle]\nlinear_weights = [0.5, 0.5]\nlevel_thresholds = [0, 1]\n")
    env = {"MEMENGINE_LIFECYCLE__DAILY_RETENTION": "0.9,0.9"}
    with pytest.raises(ConfigError) as caught:
        load_config(conf, environ=env)
    message = str(caught.value)
    assert "lifecycle.linear_weights" in message
    assert "lifecycle.level_thresholds (config file" in message
    assert "level_thresholds needs 6 values" in message
    assert "daily_retention needs 6 values" in message
    assert "MEMENGINE_LIFECYCLE__DAILY_RETENTION" in message
    with pytest.raises(ConfigError, match="ascending from 0"):
        load_config(environ={"MEMENGINE_LIFECYCLE__LEVEL_THRESHOLDS": "0,5,4,30,60,100"})
    with pytest.raises(ConfigError, match=r"daily_retention values must be in \(0, 1\]"):
        load_config(environ={"MEMENGINE_LIFECYCLE__DAILY_RETENTION": "1,1,1,1,1,1.5"})


def test_an_empty_embedding_model_is_blamed_on_where_it_came_from(tmp_path: Path) -> None:
    """An empty model in the file is refused, naming the file; an empty variable is unset
    (every MEMENGINE_* variable is), so the file's or the default model holds."""
    conf = tmp_path / "b.toml"
    conf.write_text('[embedder]\nname = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = ""\n')
    with pytest.raises(ConfigError) as caught:
        load_config(conf)
    assert str(conf) in str(caught.value) and "model" in str(caught.value)
    env = {
        "MEMENGINE_EMBEDDER__NAME": "openai",
        "MEMENGINE_EMBEDDER__BASE_URL": "http://127.0.0.1:9/v1",
        "MEMENGINE_EMBEDDER__MODEL": "",
    }
    assert load_config(environ=env).embedder.model == load_config(environ={}).embedder.model


@pytest.mark.parametrize("url", ["http://localhost:99999/v1", "http://localhost:11434x/v1"])
def test_a_bad_port_is_named_as_such(url: str) -> None:
    with pytest.raises(ConfigError, match="the port after the host's ':'") as caught:
        load_config(environ={"MEMENGINE_LLM_BASE_URL": url})
    assert "password" not in str(caught.value)
    with pytest.raises(ConfigError, match="a name or password in it"):
        load_config(environ={"MEMENGINE_LLM_BASE_URL": "http://me:p/ss@host:8/v1"})
    with pytest.raises(ConfigError, match="the port after the host's ':'"):
        load_config(environ={"MEMENGINE_LLM_BASE_URL": "http://me@host:x/v1"})


def test_a_config_link_to_nothing_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "memengine.toml").symlink_to(tmp_path / "gone.toml")
    with pytest.raises(ConfigError, match=r"symbolic link to .*gone.toml, which does not exist"):
        load_config(environ={})


def test_a_section_in_capitals_gets_a_suggestion(tmp_path: Path) -> None:
    conf = tmp_path / "d.toml"
    conf.write_text('[LLM]\nbase_url = "http://x/v1"\n[retrieval]\nMAX_RESULTS = 3\n')
    with pytest.raises(ConfigError) as caught:
        load_config(conf, environ={})
    assert "unknown setting LLM (config file" in str(caught.value)
    assert "did you mean llm?" in str(caught.value)
    assert "did you mean retrieval.max_results?" in str(caught.value)


def test_the_driver_variable_drops_a_final_carriage_return(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memengine.store import driver

    monkeypatch.setenv("MEMENGINE_SQLITE_DRIVER", "sqlean\r")
    driver.sqlite_module.cache_clear()
    try:
        assert driver.sqlite_module().__name__ == "sqlean"
        assert "forced by MEMENGINE_SQLITE_DRIVER=sqlean" in driver.driver_info().reason
    finally:
        monkeypatch.delenv("MEMENGINE_SQLITE_DRIVER")
        driver.sqlite_module.cache_clear()
    assert os.environ.get("MEMENGINE_SQLITE_DRIVER") is None


def test_a_sleep_that_deletes_active_memories_says_how_many(
    db_path: Path, clock: FixedClock
) -> None:
    """Past the capacity a sleep deletes active memories too: its notes say so, with the
    setting that keeps them; deleting archived ones alone adds no such note."""
    cfg = Config(lifecycle=LifecycleConfig(max_weighted_total=3))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        facts = [mem.add(f"fact number {i}", kind="fact") for i in range(5)]
        report = mem.sleep(train=False)
        assert report.pruned == 2 and report.active == 3
        assert any(
            "2 active memories (not archived) were deleted" in n
            and "max_weighted_total 3" in n
            and "inf" in n
            for n in report.notes
        ), report.notes
        kept = [f for f in facts if f not in report.pruned_ids]
        assert len(kept) == 3
    roomy = Config(lifecycle=LifecycleConfig(max_weighted_total=10))
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=roomy) as mem:
        mem.add("one more fact", kind="fact")
        again = mem.sleep(train=False)
        assert again.pruned == 0 and not any("active memor" in n for n in again.notes)


def test_simulate_starts_from_the_configured_strengths() -> None:
    """simulate's "same rules as the engine" held only at the default starting strengths."""
    from memengine.lifecycle.simulate import simulate

    cfg = LifecycleConfig(initial_strength=2.0, read_only_strength=0.2)
    result = simulate(cfg, tasks=100)
    per_day = 0.95  # level 0 for a day of 10 tasks
    assert result.strengths["never used"][0] == pytest.approx(2.0 * per_day)
    read_only = result.strengths["read only (education), never used"]
    assert read_only[0] == pytest.approx(0.2 * per_day)
    assert result.final["principle"].strength == 2.0
    default = simulate(LifecycleConfig(), tasks=100)
    assert default.strengths["never used"][0] == pytest.approx(per_day)


def test_an_archived_principle_is_refused_or_imported_active(mem: Memory, tmp_path: Path) -> None:
    """Principles are always packed and never archived: an import stored one archived,
    never packed again and never revived by a sleep. A new one is refused; one copied from
    an export (an older file's sleep archived a memory tagged "Principle") comes in active."""
    from memengine import InvalidInput, NewEpisode

    lines = tmp_path / "p.jsonl"
    lines.write_text(
        '{"agent":"u","kind":"principle","content":"Always be kind",'
        '"occurred_at":"2026-01-01T00:00:00Z","status":"archived"}\n'
    )
    (principle,) = mem.import_(lines)  # an older file's export: imported active
    assert mem.get(principle).status == "active"
    assert [p.id for p in mem.principles("u")] == [principle]
    tagged = NewEpisode(
        agent="u",
        kind="fact",
        content="Answer in Japanese",
        tags=("Principle",),
        status="archived",
        occurred_at="2026-01-01T00:00:00Z",
    )
    with pytest.raises(InvalidInput, match="never archived"):
        mem.add_many([tagged])
    kept = mem.add_many([tagged.model_copy(update={"status": "active"})])
    assert [p.id for p in mem.principles("u")] == [principle, *kept]


_DATE = '"session_1_date_time": "1:56 pm on 8 May, 2023"'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            '[{"sample_id": "s1", "conversation": {"session_1": [{"dia_id": "D1:1", '
            f'"speaker": "A"}}], {_DATE}}}}}]',
            "sample s1: session_1 turn 1: has no 'text'",
        ),
        (
            '[{"sample_id": "s1", "conversation": {"session_1": [{"dia_id": "D1:1", '
            f'"speaker": null, "text": "hello"}}], {_DATE}}}}}]',
            "speaker is text, not NoneType",
        ),
        (
            '[{"sample_id": "s1", "conversation": {"session_1": [{"dia_id": "D1:1", '
            f'"speaker": "A", "text": ["x"]}}], {_DATE}}}}}]',
            "text is text, not list",
        ),
        (
            '[{"sample_id": "s1", "conversation": {"session_1": [{"dia_id": "D1:1", '
            f'"speaker": " ", "text": "hi"}}], {_DATE}}}}}]',
            "speaker is empty",
        ),
        (
            '[{"sample_id": "s1", "conversation": {"session_1": [{"dia_id": "D1:1", '
            f'"speaker": "A", "text": "hi"}}], {_DATE}}}}}, '
            '{"sample_id": "s2", "conversation": "oops"}]',
            "sample s2: conversation is an object, not a str",
        ),
        ('[{"sample_id": "s1", "conversation": {"session_x": []}}]', "session_x: a session is"),
        ('[{"sample_id": "s1", "conversation": {"session_01": []}}]', "session_01: a session"),
        (
            '[{"sample_id": "s1", "conversation": {"session_1": [{"dia_id": "D1:1", '
            f'"speaker": "A", "text": "hi"}}], {_DATE}}}}}, 7]',
            "not a valid locomo file: sample 2: not an object but a int",
        ),
        (
            '{"conversations": {"a": 1}}',
            "not a valid memsets file: conversations is a list, not a dict",
        ),
        (
            '{"conversations": ["x"]}',
            "not a valid memsets file: conversation 1: not an object but a str",
        ),
        (
            '{"conversations": [{"id": "c1", "sessions": [{"id": "s1", "exchanges": [{"id": '
            '"e1", "at": "2026-01-01T00:00:00Z", "user": "", "partner": ""}]}]}]}',
            "agent default, exchange e1: an exchange needs",
        ),
    ],
)
def test_a_malformed_conversation_file_is_named_and_imports_nothing(
    mem: Memory, tmp_path: Path, body: str, message: str
) -> None:
    """A LoCoMo turn without text, or with a speaker None, was stored as "A: " or
    "None: hello"; a sample whose conversation was text vanished without a word; some
    files got Python's own messages ("string indices must be integers")."""
    from memengine import InvalidInput

    path = tmp_path / "bad.json"
    path.write_text(body)
    with pytest.raises(InvalidInput) as caught:
        mem.import_(path)
    assert message in str(caught.value)
    assert "string indices" not in str(caught.value)
    assert mem.stats()["episodes"] == 0


def test_a_jsonl_line_without_an_agent_goes_to_the_configured_one(
    db_path: Path, clock: FixedClock, tmp_path: Path
) -> None:
    lines = tmp_path / "ag.jsonl"
    lines.write_text(
        '{"user_text": "I moved to Osaka", "occurred_at": "2026-04-01T09:00:00+09:00"}\n'
        '{"agent": "bob", "user_text": "I moved to Kyoto", "occurred_at": "2026-04-02T09:00:00Z"}\n'
    )
    cfg = Config(agent="alice")
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        # (session 56: a line naming another agent than the one named on purpose is refused)
        with pytest.raises(InvalidInput, match=r"ag\.jsonl: line 2 names agent 'bob'"):
            mem.import_(lines)
        assert mem.store.count() == 0
        forced = mem.import_(lines, agent="carol", keep_ids=False)
        assert {mem.get(i, agent="carol").agent for i in forced} == {"carol"}
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:  # none named
        osaka, kyoto = mem.import_(lines)
        assert mem.get(osaka).agent == "default" and mem.get(kyoto).agent == "bob"
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as mem:
        mine = tmp_path / "mine.jsonl"
        mine.write_text(lines.read_text().replace('"bob"', '"alice"'))
        osaka, kyoto = mem.import_(mine, keep_ids=False)
        assert mem.get(osaka).agent == "alice" and mem.get(kyoto).agent == "alice"
        found = [r.episode.id for r in mem.retrieve("moved to Osaka").results]
        assert osaka in found and set(found) <= {osaka, kyoto}  # alice's only


def test_a_command_whose_output_cannot_be_written_does_its_work_and_says_so(
    tmp_path: Path,
) -> None:
    """`memengine … >&-` gave an AttributeError traceback from a JSON print; `--help` into
    a full disk an OSError traceback; an `add` into a full disk said "No space left on
    device", which reads as the memory's own write having failed."""
    import subprocess

    from .test_cli_shell import _cli, _env

    db = str(tmp_path / "c.db")
    closed = "standard output is closed (`>&-`), so nothing could be printed"
    for args in (("add", "hello", "--db", db), ("stats", "--db", db, "--json"), ("--version",)):
        done = subprocess.run(
            _cli(*args), env=_env(), stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1)
        )
        said = done.stderr.decode()
        assert done.returncode == 1 and closed in said and "Traceback" not in said
        assert len(said.strip().splitlines()) == 1
    with Memory.open(db, embedder=HashEmbedder(), allow_embedder_change=True) as mem:
        assert mem.get(1).user_text == "hello"  # the work was done
    if Path("/dev/full").exists():
        with open("/dev/full", "w") as full:
            helped = subprocess.run(_cli("--help"), env=_env(), stdout=full, stderr=subprocess.PIPE)
            added = subprocess.run(
                _cli("add", "tea", "--db", db), env=_env(), stdout=full, stderr=subprocess.PIPE
            )
        assert helped.returncode == 1
        assert helped.stderr.decode().strip() == "error: cannot print: No space left on device"
        assert added.returncode == 1
        assert added.stderr.decode().strip() == (
            "error: could not print the output: No space left on device; it is lost (a change "
            "the command made to the memory, if any, is saved)"
        )


def test_a_memory_path_ending_in_a_separator_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--db nd/` made a file named nd (Path drops the slash), where export and backup
    refuse such a path."""
    from memengine import InvalidInput

    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidInput, match="ends in a separator"):
        Memory.open("nd/", embedder=HashEmbedder())
    with pytest.raises(ConfigError, match=r"invalid setting db = 'nd/'.*ends in a separator"):
        load_config(environ={}, overrides={"db": "nd/"})
    with pytest.raises(ConfigError, match="MEMENGINE_DB"):
        load_config(environ={"MEMENGINE_DB": "nd/"})
    with pytest.raises(InvalidInput, match="ends in a separator"):
        Memory.open("nd/.", embedder=HashEmbedder())
    with pytest.raises(ConfigError, match="ends in a separator"):
        load_config(environ={"MEMENGINE_DB": "nd/.."})
    assert not (tmp_path / "nd").exists()
    (tmp_path / "real").mkdir()
    with pytest.raises(StoreError, match="is a directory"):
        Memory.open("real/", embedder=HashEmbedder())


def test_a_suggested_command_quotes_the_path_as_a_shell_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError) as caught:
        Memory.open("my mem.db", embedder=HashEmbedder(), create=False)
    assert "`memengine init --db 'my mem.db'`" in str(caught.value)
    with Memory.open("my mem.db", embedder=HashEmbedder()) as mem:
        mem.add("a note", kind="fact")
    from memengine import EmbedderMismatch

    with pytest.raises(EmbedderMismatch, match=r"memengine reembed --db '/.*/my mem.db' \(with"):
        Memory.open("my mem.db", embedder=HashEmbedder(name="other"))


def test_stats_give_both_statuses_of_every_agent(mem: Memory) -> None:
    """`jq .agents.default.archived` read null where the table said 0."""
    mem.add("a note", kind="fact")
    assert mem.stats()["agents"] == {"default": {"active": 1, "archived": 0}}
    assert mem.stats(agent="nobody")["agents"] == {"nobody": {"active": 0, "archived": 0}}


def test_the_results_table_says_whose_times_it_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_env: None
) -> None:
    """The table shows times in the configured zone, bare, while `show` prints the offset a
    memory was stored with: one memory read 14:45 there and 23:45 here, and nothing said
    which zone either was."""
    from typer.testing import CliRunner

    from memengine.cli import app

    db = str(tmp_path / "z.db")
    runner = CliRunner()
    added = ["add", "I bought a bike", "--at", "2026-12-06T14:45Z", "--db", db]
    assert runner.invoke(app, added).exit_code == 0
    monkeypatch.setenv("MEMENGINE_TIME_ZONE", "Asia/Tokyo")
    out = runner.invoke(app, ["search", "bike", "--db", db]).stdout
    assert "1 result (times in Asia/Tokyo)" in out and "2026-12-06 23:45" in out
    assert (
        "occurred_at: 2026-12-06T14:45:00Z" in runner.invoke(app, ["show", "1", "--db", db]).stdout
    )


def test_an_add_dated_after_the_clock_says_when_searches_will_find_it(
    tmp_path: Path, cli_env: None
) -> None:
    """A local time typed without its offset, with no time_zone set, is read as UTC: the
    memory, dated hours ahead, was silently missing from every search until then."""
    from datetime import datetime, timedelta, timezone

    from typer.testing import CliRunner

    from memengine.cli import app

    db = str(tmp_path / "a.db")
    runner = CliRunner()
    later = (datetime.now(timezone.utc) + timedelta(hours=9)).strftime("%Y-%m-%dT%H:%M:%S")
    ahead = runner.invoke(app, ["add", "I adopted a cat", "--at", later, "--db", db, "--json"])
    assert ahead.exit_code == 0 and json.loads(ahead.stdout) == {"id": 1}  # (stdout: JSON)
    assert "note: episode 1 is dated" in ahead.stderr and "hours after now" in ahead.stderr
    assert "a time without an offset is read as UTC" in ahead.stderr
    past = runner.invoke(app, ["add", "I adopted a dog", "--at", "2026-01-01T10:00", "--db", db])
    assert past.exit_code == 0 and past.stderr == ""


def test_a_narrow_terminal_gets_lines_not_a_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_env: None
) -> None:
    """At 40 columns the results table cut the date and score to "…" (at 20, every cell
    was empty); `show` folded values to four columns."""
    from typer.testing import CliRunner

    from memengine.cli import app
    from memengine.cli._app import console

    db = str(tmp_path / "n.db")
    runner = CliRunner()
    assert runner.invoke(app, ["add", "the dentist is on 5 March", "--db", db]).exit_code == 0
    monkeypatch.setattr(type(console), "is_terminal", property(lambda self: True))
    monkeypatch.setattr(console, "_width", 40)
    out = runner.invoke(app, ["search", "dentist", "--db", db]).stdout
    lines = out.splitlines()
    assert lines[0] == "1 result (times in UTC)"  # (show prints each memory's own offset)
    assert lines[1].startswith("1. id 1 · ") and lines[1].count("·") == 3
    assert "the dentist is on 5 March" in " ".join(lines[2:])
    assert "…" not in out
    shown = runner.invoke(app, ["show", "1", "--db", db]).stdout
    assert "user_text: the dentist is on 5 March" in shown
    monkeypatch.setattr(console, "_width", 120)
    wide = runner.invoke(app, ["search", "dentist", "--db", db]).stdout
    assert "┏" in wide and "the dentist is on 5 March" in wide


def test_add_many_stopped_part_way_says_how_many_were_stored(
    db_path: Path, clock: FixedClock
) -> None:
    """A close from another thread stopped add_many with a bare "the memory has been
    closed": a caller that retried the whole list stored its first batches twice."""
    import threading

    from memengine import MemoryClosed

    from .helpers import until, word_episodes

    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    started = threading.Event()
    caught: list[BaseException] = []

    def progress(done: int, total: int) -> None:
        if done >= 128:
            started.set()
            until(lambda: mem._gate.closing)  # (the close comes between batches, not after all)

    def load() -> None:
        try:
            mem.add_many(word_episodes(2000, "alice"), batch_size=64, progress=progress)
        except MemoryClosed as exc:
            caught.append(exc)

    worker = threading.Thread(target=load)
    worker.start()
    assert started.wait(30)
    mem.close()
    worker.join(30)
    assert len(caught) == 1
    said = str(caught[0])
    assert said.startswith("the memory has been closed (the first ")
    assert "episodes to store were stored, in the order given, the rest not: go on from" in said
    stored = int(said.split("the first ")[1].split(" ")[0].replace(",", ""))
    assert caught[0].stored == stored  # (without reading the message)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as again:
        assert again.stats()["episodes"] == stored and 128 <= stored < 2000


def test_a_forget_whose_log_a_reader_kept_is_done_once_every_process_closed(
    tmp_path: Path, cli_env: None, clock: FixedClock
) -> None:
    """The compaction had finished and only the log kept copies; once every process closed,
    the log was gone and the file held no copy, yet doctor kept failing with "the
    compaction … did not finish … copies may remain in free pages"."""

    from typer.testing import CliRunner

    from memengine.cli import app

    db = tmp_path / "forget.db"
    with Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("zorbaxquilt is my secret", "kept", agent="alice")
        mem.add_exchange("bob trains on tuesdays", "ok", agent="bob")
    with (
        another_process_reading(db),
        Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem,
    ):
        report = mem.forget_agent("alice")
        assert report.vacuumed and not report.wal_truncated
        assert mem.store.scrub_pending() == "a forgotten agent"  # the log holds copies
    assert b"zorbaxquilt" not in db.read_bytes()  # every process closed: the log went in
    doctor = CliRunner().invoke(app, ["doctor", "--db", str(db), "--json"])
    assert "scrub" not in json.loads(doctor.stdout)["checks"], doctor.stdout
    with Memory.open(db, embedder=HashEmbedder(), clock=clock, read_only=True) as mem:
        assert mem.store.scrub_pending() is None  # (the note itself went at the open)
        from memengine.store import meta

        with mem.store.connections.read() as cur:
            assert meta.get(cur, "scrub_pending") is None


def test_a_bulk_load_whose_merge_fails_says_every_episode_is_in(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memengine import DatabaseLocked
    from memengine.store.database import Store

    from .helpers import word_episodes

    def locked(self: Store, **kwargs: object) -> None:
        raise DatabaseLocked("database is locked: another process kept writing for 10 s")

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        monkeypatch.setattr(Store, "optimize", locked)
        with pytest.raises(DatabaseLocked, match="all 3 episodes stored; only the full"):
            mem.add_many(word_episodes(3, "alice"), optimize=True)
        assert mem.stats()["episodes"] == 3


def test_a_table_wider_than_the_terminal_becomes_lines_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_env: None
) -> None:
    """At 60–67 columns, long ids and "medium" cropped the table's right edge."""
    from typer.testing import CliRunner

    from memengine import NewEpisode
    from memengine.cli import app
    from memengine.cli._app import console

    db = tmp_path / "w.db"
    with Memory.open(db) as mem:  # (the command line's embedder)
        mem.add_many(
            [
                NewEpisode(
                    id=1234561 + i,
                    kind="fact",
                    content=f"greyhound Juno note {i}",
                    occurred_at="2026-04-01T00:00:00Z",
                )
                for i in range(12)
            ]
        )
    monkeypatch.setattr(type(console), "is_terminal", property(lambda self: True))
    monkeypatch.setattr(console, "_width", 64)
    out = CliRunner().invoke(app, ["search", "greyhound Juno", "--db", str(db), "-k", "12"])
    assert out.stdout.splitlines()[1].startswith("1. id 12345"), out.stdout
    monkeypatch.setattr(console, "_width", 100)
    wide = CliRunner().invoke(app, ["search", "greyhound Juno", "--db", str(db), "-k", "12"])
    assert all(len(line) <= 100 for line in wide.stdout.splitlines()) and "┏" in wide.stdout


def test_add_of_an_exchange_points_to_add_exchange(mem: Memory) -> None:
    from memengine import InvalidInput

    with pytest.raises(InvalidInput, match=r"add_exchange\(user, reply\)"):
        mem.add("hello", kind="exchange")
    assert mem.stats()["episodes"] == 0


def test_doctor_names_an_eval_command_that_runs() -> None:
    from memengine import Config
    from memengine.diagnostics import _cosine_constants_check

    cfg = Config.model_validate({"embedder": {"name": "openai", "base_url": "http://x/v1"}})
    ok, said = _cosine_constants_check(cfg)
    assert not ok and "`memengine eval memset FILE --embedder openai`" in said


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("丸山製菓のパンフの締切はいつでしょう", True),
        ("これは何でしょう", True),
        ("何でしょうね、この暑さは", False),
        ("まあ、どうでしょうね。", False),
        ("こむぎって今いくつ", True),
        ("幾らだった", True),
        ("いつでも大丈夫", False),
        ("何でもいいよ", False),
        ("どこでもいい", False),
    ],
)
def test_japanese_questions_that_end_in_deshou_ask(text: str, asks: bool) -> None:
    """「いつでしょう」 was read as いつでも (the indefinite), so it asked nothing and the
    pack stayed empty, where "When would the tender be due" injected."""
    from memengine.retrieve.signals import asks_something

    assert asks_something(text) is asks


def test_a_japanese_sentence_around_an_english_word_is_japanese() -> None:
    from memengine.text import guess_language

    assert guess_language("Pythonのdeadlineいつ？") == "ja"
    assert guess_language("When is the Python deadline?") == "en"
    said = "My dog さくら went to the vet today and the vet said さくら is a healthy girl"
    assert guess_language(said) == "en"  # (two hiragana words, spaced: English)
    assert guess_language("What does ねこ mean, and is いぬ a dog?") == "en"


def test_an_emoji_drawn_with_a_variation_selector_is_stripped_from_a_repeat() -> None:
    from memengine.retrieve.recent import repeat_key

    assert repeat_key("おはよう☀️") == repeat_key("おはよう😊") == repeat_key("おはよう！")
    assert repeat_key("Morning ☀️") == "morning"
    assert repeat_key("नमस्ते") == "नमस्ते"  # (a vowel sign at the end is no emoji's)


def test_a_shift_jis_file_is_named_as_not_utf8(mem: Memory, tmp_path: Path) -> None:
    from memengine import InvalidInput

    path = tmp_path / "sjis.json"
    path.write_bytes('{"conversations": [], "x": "猫"}'.encode("cp932"))
    with pytest.raises(InvalidInput, match=r"not UTF-8 text .*save it as UTF-8"):
        mem.import_(path)


def test_a_query_in_another_encoding_is_refused_on_the_command_line(tmp_path: Path) -> None:
    import subprocess

    from .test_cli_shell import _cli, _env

    db = str(tmp_path / "q.db")
    subprocess.run(_cli("add", "hello", "--db", db), env=_env(), check=True, capture_output=True)
    sjis = "猫の名前".encode("cp932")
    done = subprocess.run(
        [*(a.encode() for a in _cli("retrieve")), sjis, b"--db", db.encode()],
        env=_env(),
        capture_output=True,
    )
    assert done.returncode == 1
    assert done.stderr.decode().strip() == "error: the text is not UTF-8 text: give it in UTF-8"
    recent = subprocess.run(
        [*(a.encode() for a in _cli("pack", "hello", "-r")), sjis, b"--db", db.encode()],
        env=_env(),
        capture_output=True,
    )
    assert b"the --recent message 1 is not UTF-8 text" in recent.stderr


def test_add_at_takes_a_full_width_time(tmp_path: Path, cli_env: None) -> None:
    from typer.testing import CliRunner

    from memengine.cli import app

    db = str(tmp_path / "fw.db")
    runner = CliRunner()
    done = runner.invoke(
        app, ["add", "全角の日付", "--at", "２０２６－１２－０１Ｔ０９：００Ｚ", "--db", db]
    )
    assert done.exit_code == 0, done.output
    shown = json.loads(runner.invoke(app, ["show", "1", "--db", db, "--json"]).stdout)
    assert shown["occurred_at"] == "2026-12-01T09:00:00Z"


def test_a_perspective_typed_in_half_width_names_the_declared_one(mem: Memory) -> None:
    mem.create_agent("buyer", perspectives=["コスト"])
    assert mem.create_agent("buyer", perspectives=["ｺｽﾄ", "納期"]).perspectives == (
        "コスト",
        "納期",
    )
    fact = mem.add("the supplier raised prices by 5%", agent="buyer", kind="fact")
    r = mem.retrieve("supplier prices", agent="buyer", perspective="ｺｽﾄ")
    assert fact in [x.episode.id for x in r.results]
    mem.feedback(r.turn_id, used=[fact], agent="buyer", perspective="ｺｽﾄ")
    assert mem.life_of(fact, agent="buyer").strength_by_perspective == {"コスト": 0.15}


def test_a_bad_episode_part_way_names_its_place_and_what_was_stored(
    db_path: Path, clock: FixedClock
) -> None:
    from memengine import InvalidInput, NewEpisode

    from .helpers import word_episodes

    bad = NewEpisode(kind="principle", content="be kind", status="archived", occurred_at=clock.now)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        with pytest.raises(InvalidInput) as caught:
            mem.add_many([*word_episodes(300, "a"), bad], batch_size=256)
        said = str(caught.value)
        assert said.startswith("episode 301 of those given: a principle")
        assert "(the first 256 episodes to store were stored, in the order given" in said
        assert mem.stats()["episodes"] == 256


def test_a_tag_or_an_answer_in_another_encoding_is_refused(tmp_path: Path) -> None:
    import subprocess

    from .test_cli_shell import _cli, _env

    db = str(tmp_path / "t.db")
    latin1 = "café".encode("latin-1")
    tagged = subprocess.run(
        [*(a.encode() for a in _cli("add", "hello", "--db", db, "--tag")), latin1],
        env=_env(),
        capture_output=True,
    )
    assert tagged.returncode == 1
    assert b"the --tag is not UTF-8 text" in tagged.stderr and not Path(db).exists()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_a_forked_child_does_not_keep_a_dead_parents_write_lock(tmp_path: Path) -> None:
    """The lock file's flock belongs to the open file, which a forked child shares: a
    helper forked during a write kept the lock after its parent was killed, and every
    writer waited write_wait_s and failed."""
    import signal
    import subprocess
    import sys
    import time

    db = tmp_path / "f.db"
    script = f"""
import os, sys, threading, time
sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
from memengine import Memory
from memengine.store.process_lock import process_lock_for
from tests.helpers import HashEmbedder
mem = Memory.open({str(db)!r}, embedder=HashEmbedder())
lock = process_lock_for({str(db)!r})
with lock.held(5):
    child = os.fork()
    if child == 0:  # a helper that never touches memengine
        time.sleep(30)
        os._exit(0)
    print(child, flush=True)
    time.sleep(30)
"""
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        cfg = Config(write_wait_s=2.0)
        t0 = time.monotonic()
        with Memory.open(db, embedder=HashEmbedder(), config=cfg) as mem:
            mem.add("written after the parent died", kind="fact")
        assert time.monotonic() - t0 < 2.0
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_forget_whose_last_note_meets_a_lock_reports_the_agent_forgotten(
    mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the delete and the compaction, dropping the scrub note met another writer
    past write_wait_s: a bare DatabaseLocked told the caller nothing had happened."""
    from memengine import DatabaseLocked
    from memengine.store.database import Store

    mem.add_exchange("zorbaxquilt is my secret", "kept", agent="alice")
    mem.add_exchange("bob trains on tuesdays", "ok", agent="bob")

    def locked(self: Store, note: str | None) -> bool:
        raise DatabaseLocked("database is locked: another process kept writing for 10 s")

    monkeypatch.setattr(Store, "_scrubbed", locked)
    report = mem.forget_agent("alice")
    assert report.episodes == 1 and report.vacuumed and report.wal_truncated  # (as it was)
    assert [a.name for a in mem.agents()] == ["bob"]
    assert mem.store.scrub_pending() == "a forgotten agent"  # doctor says so


def test_a_turn_on_a_huge_message_is_read_within_its_bounds(mem: Memory) -> None:
    """Checks around the search (is it a question, its language, its repeats) read the
    whole message: a million combining marks took 2.4 s, past an LLM turn's deadline;
    principles far over their budget were read whole at every pack."""
    import time

    from memengine.text import near_cut

    marks = "a" + "\u0301" * 200_000
    t0 = time.thread_time()  # (this thread's CPU: a loaded machine's waits not counted)
    assert near_cut(marks, 100_000) == 100_000  # (not walked back to the run's start)
    assert time.thread_time() - t0 < 0.05
    mem.add_exchange("the dentist is on friday", "ok")
    for _ in range(5):
        mem.add("be kind " * 24_000, kind="principle")
    huge = "x" * 2_000_000 + "\nwhen is the dentist?"
    r = mem.retrieve(huge)
    assert r.results and r.results[0].episode.user_text == "the dentist is on friday"
    assert len(r.queries[0]) <= mem.config.retrieval.max_query_chars
    pack = mem.pack(r)
    assert pack.truncated and "be kind" not in pack.text


def test_a_long_paste_repeated_is_found_as_its_own_copy(mem: Memory) -> None:
    """Reading a message within bounds must not hide its stored copy (a first fix cut the
    message itself, and its key no longer matched the copy's). Since session 49 a paste
    told again is no small talk: its copy is the first result, not a ``repeat`` (its
    reply may hold the fix it got)."""
    log = "\n".join(f"build step {i} ok compiled module_{i}.o" for i in range(700))
    assert len(log) > 20_000
    copy = mem.add_exchange(log, "noted")
    mem.add_exchange("Lunch was great", "Nice!")
    r = mem.retrieve(log)
    assert r.results[0].episode.id == copy
    assert all("repeat" not in x.components for x in r.results)


def test_a_cut_in_a_run_of_flags_keeps_their_pairs() -> None:
    from memengine.text import near_cut

    flags = "🇯🇵" * 10
    assert [near_cut(flags, n) for n in (10, 11, 12)] == [10, 10, 12]


def test_a_principle_an_older_sleep_archived_is_packed_and_made_active(mem: Memory) -> None:
    """Earlier versions' sleeps archived memories tagged "Principle" (then not a
    principle in that case); after the upgrade they were never packed again."""
    rule = mem.add("Never reveal the user's address", kind="fact", tags=["Principle"])
    mem.add_exchange("I live near the station", "ok")
    with mem.store.connections.write() as cur:  # as an earlier version's sleep left it
        cur.execute("UPDATE episodes SET status = 'archived' WHERE id = ?", (rule,))
    assert [p.id for p in mem.principles()] == [rule]
    assert "Never reveal the user's address" in mem.pack(mem.retrieve("where do I live?")).text
    report = mem.sleep(train=False)
    assert mem.get(rule).status == "active"
    assert any("1 archived principle" in n for n in report.notes)
    assert (report.active, report.archived_total) == (2, 0)  # counted after it


def test_the_id_mark_of_an_older_file_starts_above_the_ids_its_turns_name(
    mem: Memory,
) -> None:
    """Migration 6 seeded the mark from the largest stored id: a deleted top id an old
    turn named was given out again, and a feedback on that turn credited the new memory."""
    from memengine.store import meta
    from memengine.store.migrate import schema_sql

    mem.add("likes green tea", kind="fact")
    top = mem.add("dentist on Monday", kind="fact")
    r = mem.retrieve("dentist appointment")
    assert top in [x.episode.id for x in r.results] and r.turn_id is not None
    mem.delete([top])
    text = schema_sql("0006_episode_ids.sql")
    seed = text[text.index("INSERT INTO meta") : text.index("CREATE TRIGGER")].strip()
    with mem.store.connections.write() as cur:  # as a file of version 5 had it: no mark
        meta.drop(cur, "episode_id_high")
        cur.execute(seed.rstrip(";"))
        assert int(meta.get(cur, "episode_id_high")) == top


def test_opt_in_settings_and_rows_that_cannot_work_are_named(mem: Memory) -> None:
    from memengine import DamagedDatabase, InvalidInput

    with pytest.raises(ConfigError, match="scorer could never train"):
        load_config(environ={"MEMENGINE_LIFECYCLE__SCORER_MAX_SAMPLES": "50"})
    with pytest.raises(InvalidInput, match="a plot goes to a file's path"):
        mem.plot_strength(123)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="rank must be"):
        mem.retrieve("tea", rank="")  # type: ignore[arg-type]
    mem.add("tea at noon", kind="fact")
    with mem.store.connections.write() as cur:  # a scorer row that no longer reads
        cur.execute(
            "INSERT INTO scorers (agent, weights, trained_at, samples, last_turn, auc) "
            "VALUES ('default', ?, '2026-01-01T00:00:00Z', 500, 0, 0.5)",
            ('{"w1": [[1, 2]]}',),
        )
    r = mem.retrieve("tea", rank="life")  # ranked by the linear formula, saying why
    assert r.results and any("linear formula" in d for d in r.degraded)
    with mem.store.connections.write() as cur:
        cur.execute("UPDATE scorers SET weights = 'not json'")
    r = mem.retrieve("tea", rank="life")
    assert any("is not JSON" in d for d in r.degraded)
    assert mem.train_scorer() is None  # too few samples: nothing to train, and no crash
    with pytest.raises(DamagedDatabase):
        from memengine.lifecycle.ranking import load_agent_scorer

        load_agent_scorer(mem.store, "default", mem.config.lifecycle)


def test_a_memory_used_then_deleted_stays_used_in_the_turns_record(mem: Memory) -> None:
    """It was stored as unused: the scorer learnt the opposite of what the caller said."""
    import json as _json

    mem.add("tea at noon", kind="fact")
    r = mem.retrieve("tea")
    used = r.results[0].episode.id
    mem.delete([used])
    result = mem.feedback(r.turn_id, [used])
    assert result.used == () and any("deleted after the turn" in d for d in result.degraded)
    with mem.store.connections.read() as cur:
        row = cur.execute("SELECT used FROM turns WHERE id = ?", (r.turn_id,)).fetchone()
    assert _json.loads(row[0]) == [used]


def test_forgetting_an_agent_empties_the_packs_patterns(mem: Memory) -> None:
    from memengine.quote import _fold, query_patterns

    query_patterns(("plumbus",))  # (as a pack of a long memory compiles them)
    _fold("Plumbus notes")  # (and folds its sentences)
    assert query_patterns.cache_info().currsize >= 1 and _fold.cache_info().currsize >= 1
    mem.add("plumbus notes", kind="fact", agent="alice")
    mem.forget_agent("alice")
    assert query_patterns.cache_info().currsize == 0 and _fold.cache_info().currsize == 0


def test_a_development_file_without_neighbour_words_is_refused_before_any_step(
    tmp_path: Path,
) -> None:
    """Files of the first commits (schema 1 before 0001_init.sql gained context_text) failed
    migration 4 after steps 2 and 3 were committed: neither version could open them again."""
    import sqlite3

    from memengine.store.migrate import APPLICATION_ID

    db = tmp_path / "early.db"  # (its episodes table as those commits made it, in short)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE episodes (id INTEGER PRIMARY KEY, agent TEXT, search_text TEXT)")
    con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match=r"development version .* export --all-agents --salvage"):
        Memory.open(db, embedder=HashEmbedder())
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 1  # no step was taken
    con.close()
