"""What the session-45 reviews found: times and switches of the wrong type refused, not read
as something else; messages that name what to do."""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from memengine import (
    ConfigError,
    FixedClock,
    InvalidInput,
    Memory,
    NewEpisode,
    NotFound,
    StoreError,
    load_config,
)
from memengine.cli import app

from .helpers import HashEmbedder, another_process_reading


@pytest.mark.parametrize("when", ["20260401", 1e9, 0, True])
def test_an_exchange_time_that_is_not_a_datetime_is_refused(mem: Memory, when: object) -> None:
    """``occurred_at="20260401"`` was stored as 1970-08-23 (pydantic reads digits as a Unix
    timestamp) and ``occurred_at=0`` as now."""
    before = mem.stats()["episodes"]
    with pytest.raises(InvalidInput, match="occurred_at is a datetime, not "):
        mem.add_exchange("I moved to Osaka", "congrats", occurred_at=when)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="occurred_at is a datetime, not "):
        mem.add("I moved to Osaka", occurred_at=when)  # type: ignore[arg-type]
    assert mem.stats()["episodes"] == before


def test_a_new_episodes_time_is_read_as_an_exports_line_reads_it(mem: Memory) -> None:
    """``NewEpisode`` has the fields of an export's line: ``"20260401"`` is a day (it was
    1970-08-23), and a number is refused (it was a Unix timestamp, silently)."""
    day = NewEpisode.model_validate({"user_text": "I moved", "occurred_at": "20260401"})
    assert mem.get(mem.add_many([day])[0]).occurred_at == datetime(2026, 4, 1, tzinfo=timezone.utc)
    for value, words in [
        (1775000000, "not int"),
        ("1775000000", "reads no Unix timestamp"),
        ("next tuesday", "not an ISO 8601 time: 'next tuesday'"),
    ]:
        with pytest.raises(ValidationError, match=words):
            NewEpisode.model_validate({"user_text": "I moved", "occurred_at": value})


def test_switches_of_another_type_are_refused(db_path: Path, clock: FixedClock) -> None:
    """``record="no"`` recorded the turn, ``create="no"`` made the file and
    ``principles="no"`` packed the principles: any value that Python reads as true was."""
    with pytest.raises(InvalidInput, match="create is True or False, not 'no'"):
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock, create="no")  # type: ignore[arg-type]
    assert not db_path.exists()
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("my cat is called Mochi", "cute")
        with pytest.raises(InvalidInput, match="record is True, False or None, not 'no'"):
            mem.retrieve("the cat's name?", record="no")  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="deep is True or False"):
            mem.retrieve("the cat's name?", deep=1)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match=r"not np\.False_"):  # (``is not False``)
            mem.retrieve("the cat's name?", record=np.bool_(False))  # type: ignore[arg-type]
        r = mem.retrieve("the cat's name?", record=False)
        assert mem.retrieve("the cat's name?").turn_id == 1  # the first turn recorded
        with pytest.raises(InvalidInput, match="principles is True or False"):
            mem.pack(r, principles="no")  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="scrub is True or False"):
            mem.delete([1], scrub="yes")  # type: ignore[arg-type]
        assert mem.stats()["episodes"] == 1 and r.turn_id is None


def test_a_close_waits_without_end_and_a_bad_wait_changes_nothing(
    db_path: Path, clock: FixedClock
) -> None:
    """``close(wait_s=math.inf)`` raised OverflowError and left the memory refusing every
    call but open; ``wait_s=None`` a TypeError."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    for wait in (None, "x", -1, math.nan):
        with pytest.raises(InvalidInput, match="wait_s is a number of seconds"):
            mem.close(wait_s=wait)  # type: ignore[arg-type]
    mem.add_exchange("still open", "yes")
    mem.close(wait_s=math.inf)
    assert mem.store.closed


class _BytesPath:
    """A path-like object whose path is bytes (``os.fspath`` returns them as given)."""

    def __init__(self, path: bytes) -> None:
        self.path = path

    def __fspath__(self) -> bytes:
        return self.path


def test_arguments_of_the_wrong_type_are_errors_of_the_tree(
    db_path: Path, clock: FixedClock
) -> None:
    """A clock that returns a number, ``load_config`` given a number or a list, and
    ``train_after_sleep(None)`` raised AttributeError or TypeError."""
    with pytest.raises(InvalidInput, match="the clock's time is a datetime, not int"):
        Memory.open(db_path, embedder=HashEmbedder(), clock=lambda: 5)  # type: ignore[arg-type,return-value]
    for kwargs, words in [
        ({"path": 5}, "a config file is a path, not int"),
        ({"overrides": ["a"]}, "overrides is a mapping of names to values, not list"),
        ({"environ": 5}, "environ is a mapping of names to values, not int"),
        ({"environ": {"MEMENGINE_DB": 5}}, "environ['MEMENGINE_DB'] is text"),
        ({"path": _BytesPath(b"m.toml")}, "a config file is a path of text, not of bytes"),
        ({"path": _BytesPath(5)}, "a config file is a path: expected _BytesPath.__fspath__()"),  # type: ignore[arg-type]
    ]:
        with pytest.raises(ConfigError, match=re.escape(words)):
            load_config(**kwargs)  # type: ignore[arg-type]
    # a PathLike whose path is bytes: os.fspath gives bytes, which the path's checks
    # compared with text (a raw TypeError, "endswith first arg must be bytes")
    with pytest.raises(InvalidInput, match="a memory file is a path of text, not of bytes"):
        Memory.open(_BytesPath(bytes(db_path)), embedder=HashEmbedder())  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match=r"a memory file is a path: .* not int"):
        Memory.open(_BytesPath(5), embedder=HashEmbedder())  # type: ignore[arg-type]
    assert not db_path.exists()
    with (
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem,
        pytest.raises(InvalidInput, match="takes what sleep returned, not None"),
    ):
        mem.train_after_sleep(None)  # type: ignore[arg-type]


@pytest.mark.skipif(sys.platform == "win32", reason="resource limits are POSIX")
def test_a_process_out_of_file_descriptors_is_told_so(tmp_path: Path) -> None:
    """The advice to use fewer threads came only past 64 connections: a server whose own
    sockets took the descriptors got SQLite's bare "unable to open database file"."""
    script = f"""
import resource, sys, threading
sys.path.insert(0, {str(Path(__file__).parent)!r})
from helpers import HashEmbedder
from memengine import Memory, StoreError
mem = Memory.open({str(tmp_path / "fd.db")!r}, embedder=HashEmbedder())
mem.add_exchange("my cat is Mochi", "cute")
resource.setrlimit(resource.RLIMIT_NOFILE, (40, 40))
said = []
start, end = threading.Barrier(30, timeout=60), threading.Barrier(30, timeout=60)
def work():  # (all at once, each holding its connection until all are done)
    start.wait()
    try:
        mem.retrieve("cat?")
    except StoreError as exc:
        said.append(str(exc))
    end.wait()
threads = [threading.Thread(target=work) for _ in range(30)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sum("out of file descriptors" in s for s in said), len(said))
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    ).stdout.split()
    told, failed = int(out[0]), int(out[1])
    assert failed > 0 and told >= failed - 1, out  # (one may race a descriptor freed)


def test_the_repr_of_a_retrieval_does_not_write_the_memories_out_in_full(mem: Memory) -> None:
    """Logging a retrieval (``repr``/``str``, pydantic's default) wrote every text whole:
    28 KB for one exchange of 25 KB."""
    paste = "the quarterly figures were " + "very " * 5000 + "good"
    mem.add_exchange(paste, "noted")
    r = mem.retrieve("the quarterly figures?")
    assert r.results and len(repr(r)) < 4000 and len(str(r)) < 4000
    assert "(25,031 characters)" in repr(r.results[0].episode)
    assert r.results[0].episode.user_text == paste  # (the text itself is whole)
    long_query = mem.retrieve("my diary says " + "secret " * 80, record=False)
    assert "secret " * 20 not in repr(long_query)  # (in its queries, a tuple, too)
    kana = NewEpisode(user_text="x" * 59 + "ｶﾞ" + "y" * 20, occurred_at=datetime.now(timezone.utc))
    assert "xｶ…" not in repr(kana) and "x… (81 characters)" in repr(kana)


def test_a_forget_whose_log_a_reader_kept_exits_1_and_says_what_to_run(
    tmp_path: Path, cli_env: None, clock: FixedClock
) -> None:
    """Another process reading the file keeps the compacted copy in the log, so the file
    itself still held the forgotten words: the command said copies "may remain there" and
    exited 0, without the command that finishes the job."""
    db = tmp_path / "forget.db"
    with Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("zorbaxquilt is my secret", "kept", agent="alice")
        mem.add_exchange("bob trains on tuesdays", "ok", agent="bob")
    # another process (a lock of this one's own would not stop its SQLite)
    with another_process_reading(db):
        out = CliRunner().invoke(app, ["agent", "forget", "alice", "--yes", "--db", str(db)])
    assert out.exit_code == 1, out.output
    said = " ".join(out.output.split())
    assert "2 episodes" not in said and "forgot agent alice: 1 episode" in said
    assert "the file and its log may still hold copies" in said
    assert f"memengine optimize --scrub --db {db}" in said
    done = CliRunner().invoke(app, ["optimize", "--scrub", "--db", str(db)])
    assert done.exit_code == 0, done.output
    assert b"zorbaxquilt" not in db.read_bytes()


def test_a_cut_does_not_part_half_width_kana_from_its_voicing_mark() -> None:
    """ﾞ and ﾟ are letters (Lm), not combining marks, so a heading cut between ｸ and ﾞ
    turned ﾄﾞｯｸﾞ (dog) into ﾄﾞｯｸ (dock)."""
    from memengine.text import cut_at

    text = "ﾄﾞｯｸﾞﾌｰﾄﾞ"
    assert text[: cut_at(text, 4)] == "ﾄﾞｯ" and text[: cut_at(text, 5)] == "ﾄﾞｯｸﾞ"
    assert "ﾎﾟﾁ"[: cut_at("ﾎﾟﾁ", 1)] == ""


def test_a_forgotten_agents_vectors_leave_this_process_at_once(mem: Memory) -> None:
    """The in-process vector index kept the user's vectors until its next search of any
    agent: an idle server held them in memory after the forget."""
    mem.add_exchange("my cat is called Mochi", "cute", agent="alice")
    mem.add_exchange("I train on tuesdays", "ok", agent="bob")
    mem.warm("alice")
    mem.warm("bob")
    assert {"alice", "bob"} <= set(mem.store.vector_index.loaded())
    mem.forget_agent("alice")
    assert set(mem.store.vector_index.loaded()) == {"bob"}
    assert mem.retrieve("what do I do on tuesdays?", agent="bob").results


def test_one_episode_is_read_by_id_only_for_its_own_agent_when_one_is_named(
    tmp_path: Path, cli_env: None, clock: FixedClock
) -> None:
    """``delete`` and ``feedback`` checked the owner; ``get``, ``life_of``, ``show`` and
    ``life`` took no agent, so a server passing a client's id on had to check it itself."""
    db = tmp_path / "owners.db"
    with Memory.open(db, embedder=HashEmbedder(), clock=clock) as mem:
        secret = mem.add_exchange("my PIN is 4821", "noted", agent="alice")
        assert mem.get(secret, agent="alice").user_text == "my PIN is 4821"
        assert mem.life_of(secret, agent="alice").episode.id == secret
        for read in (mem.get, mem.life_of):
            with pytest.raises(NotFound, match=f"no episode with id {secret} of agent 'bob'"):
                read(secret, agent="bob")
    for command in ("show", "life"):
        out = CliRunner().invoke(app, [command, str(secret), "--agent", "bob", "--db", str(db)])
        assert out.exit_code == 1 and "of agent 'bob'" in out.output
        assert "4821" not in out.output
        mine = CliRunner().invoke(app, [command, str(secret), "-a", "alice", "--db", str(db)])
        assert mine.exit_code == 0, mine.output


def test_an_eval_writes_its_json_before_its_tables_and_as_strict_json(tmp_path: Path) -> None:
    """``eval … --json out.json | head -2`` lost the whole run (the JSON came after the
    tables, and the closed pipe ended the command); an uncapped setting was written as
    ``Infinity``, which strict JSON readers refuse."""
    data = tmp_path / "set.json"
    conversation = {
        "id": "c1",
        "sessions": [
            {
                "id": "s1",
                "exchanges": [
                    {"id": "e1", "at": "2026-05-01T09:00:00Z", "user": "I got a cat.",
                     "partner": "Nice!"},
                    {"id": "e2", "at": "2026-05-01T09:05:00Z", "user": "I parked on level 4.",
                     "partner": "Noted"},
                ],
            }
        ],
        "questions": [
            {"id": "q1", "type": "direct", "asked_at": "2026-05-02T09:00:00Z", "recent": [],
             "query": "What pet do I have?", "evidence": ["e1"]},
        ],
    }  # fmt: skip
    data.write_text(json.dumps({"conversations": [conversation]}))
    (tmp_path / "cfg.toml").write_text("[lifecycle]\nmax_weighted_total = inf\n")
    out = tmp_path / "out.json"
    command = (
        f"{shlex.quote(sys.executable)} -m memengine eval memset {data} -m bm25 -q "
        f"--config {tmp_path / 'cfg.toml'} --json {out} | head -c 1 > /dev/null"
    )
    subprocess.run(["sh", "-c", command], check=True, timeout=300, cwd=tmp_path)
    written = json.loads(out.read_text(), parse_constant=lambda c: pytest.fail(c))
    assert written["settings"]["lifecycle.max_weighted_total"] is None
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.json")]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc")
def test_an_output_file_that_cannot_be_made_is_refused_before_the_run() -> None:
    """``os.access`` says yes to root everywhere: ``--json /proc/out.json`` failed after the
    whole run, with a raw ``[Errno 2]``."""
    from memengine.cli._app import check_output

    with pytest.raises(InvalidInput, match=r"cannot write /proc/out\.json"):
        check_output(Path("/proc/out.json"))


def test_a_write_to_a_file_deleted_under_the_memory_is_an_error_not_lost(
    db_path: Path, clock: FixedClock
) -> None:
    """A file deleted while open: the next thread's connection made a new empty file (whose
    reads said "no such table: meta"), and an add through an older connection returned an
    id for an exchange stored in the deleted file, lost at close."""
    mem = Memory.open(db_path, embedder=HashEmbedder(), clock=clock)
    mem.add_exchange("my cat is called Mochi", "cute")
    for side in ("", "-wal", "-shm"):
        Path(f"{db_path}{side}").unlink(missing_ok=True)
    with pytest.raises(StoreError, match="was deleted or moved while this memory had it open"):
        mem.add_exchange("I moved to Osaka", "congrats")
    found: list[BaseException] = []

    def other_thread() -> None:
        try:
            mem.retrieve("the cat?")
        except StoreError as exc:
            found.append(exc)

    worker = threading.Thread(target=other_thread)
    worker.start()
    worker.join()
    assert found and f"{db_path} was deleted or moved" in str(found[0])
    mem.close()
    assert not db_path.exists()  # (no new empty file made in its place)


def test_a_backup_or_export_over_a_file_takes_overwrite_as_a_switch(
    mem: Memory, tmp_path: Path
) -> None:
    """``backup(dest, overwrite="no")`` replaced the file: any true value did."""
    mem.add_exchange("my cat is called Mochi", "cute")
    keep = tmp_path / "keep.db"
    keep.write_text("mine")
    with pytest.raises(InvalidInput, match="overwrite is True or False, not 'no'"):
        mem.backup(keep, overwrite="no")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="overwrite is True or False, not 'no'"):
        mem.export(keep, overwrite="no")  # type: ignore[arg-type]
    assert keep.read_text() == "mine"


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX links, modes and /dev/stdout")
def test_a_json_result_is_written_as_an_export_is(tmp_path: Path) -> None:
    """The JSON file written before the tables replaced a symbolic link with a file, gave
    the result mode 0600, and ``--json /dev/stdout`` failed (a rename onto a device)."""
    command = [sys.executable, "-m", "memengine", "bench-llm", "--delays", "1", "--turns", "1"]
    real, link = tmp_path / "real.json", tmp_path / "link.json"
    subprocess.run([*command, "--json", str(real)], check=True, timeout=120, capture_output=True)
    real.chmod(0o640)
    link.symlink_to(real.name)
    before = real.stat().st_mtime_ns
    subprocess.run([*command, "--json", str(link)], check=True, timeout=120, capture_output=True)
    assert link.is_symlink() and real.stat().st_mtime_ns > before
    assert real.stat().st_mode & 0o777 == 0o640 and json.loads(real.read_text())
    out = subprocess.run(
        [*command, "--json", "/dev/stdout"], check=True, timeout=120, capture_output=True, text=True
    ).stdout
    table, _, rest = out.partition("\n[")
    assert "latency" in table and json.loads("[" + rest)  # the tables, then the JSON


def test_a_table_preview_keeps_a_character_whole() -> None:
    """``search``'s table cut its text at 160 characters wherever that fell: between the
    halves of a flag, or a kana and its voicing mark."""
    from memengine.text import preview

    assert preview("a" * 159 + "🇯🇵" + "b", 160) == "a" * 159 + "…"
    assert preview("x" * 159 + "ｶﾞ", 160) == "x" * 159 + "…"
    assert preview("short", 160) == "short"


def test_a_haystack_is_read_as_a_data_set_is_utf16_too(tmp_path: Path) -> None:
    """A data set saved as UTF-16 (PowerShell 5's ``>``) was read, but the same file as
    ``--haystack`` was "not a JSON or JSONL file"."""
    from memengine.evaluation.padding import load_haystack
    from memengine.sample import __file__ as samples

    text = (Path(samples).parent / "companion_en.json").read_text(encoding="utf-8")
    wide = tmp_path / "wide.json"
    wide.write_text(text, encoding="utf-16")
    assert load_haystack(wide).format == "memsets" and load_haystack(wide).conversations


def test_a_memory_dated_after_the_clock_is_not_found(db_path: Path) -> None:
    """The search reached up to two seconds past the clock (``int(now) + 1``, inclusive):
    "a memory dated after the clock is found only once the clock has reached it"."""
    now = datetime(2026, 3, 9, 10, 0, 0, tzinfo=timezone.utc)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=FixedClock(now)) as mem:
        for seconds in (0, 1, 1.9, 60):
            when = now + timedelta(seconds=seconds)
            mem.add(f"zebra crossing plus {seconds}s", occurred_at=when)
        found = {r.episode.text for r in mem.retrieve("zebra crossing", record=False).results}
    assert found == {"zebra crossing plus 0s"}


def test_a_pack_marks_what_a_quote_leaves_out_and_says_who_spoke(mem: Memory) -> None:
    """A quote of one sentence of a long memory was shown as if it were all the user said
    (no "…"); a ``message``'s speaker in its metadata was never shown; a side made of
    control characters packed as an empty ``User:`` line and an empty heading."""
    from .helpers import shown_quote

    story = (
        "I woke up early. I went to the clinic. The dentist said my teeth are fine. "
        "The dentist wants to see me in June. Then I had lunch with Sam near the station. "
    ) * 2
    quote = shown_quote(story, "quote_key_parts", ["dentist"], 240)
    assert quote.startswith("… The dentist said") and quote.endswith(" …")
    assert "are fine. The dentist wants" in quote  # (next sentences: no "…" between)
    assert shown_quote(story, "summarize", [], 240) == "I woke up early. …"
    mem.add(
        "I'll bring the cake to the party on Friday", kind="message", metadata={"speaker": "Ken"}
    )
    mem.add_exchange("\x1b[31m\x1b[0m", "the cake for the party is chocolate")
    r = mem.retrieve("who brings the cake to the party?")
    text = mem.pack(r).text
    assert "Message (Ken): I'll bring the cake" in text
    assert "User: \n" not in text + "\n" and "— \n" not in text
    assert "Partner: the cake for the party is chocolate" in text


def test_a_pack_takes_no_other_agents_principles(mem: Memory) -> None:
    """``pack(retrieval, agent="bob")`` put bob's principles beside the default agent's
    memories (and its own principle shown as plain evidence)."""
    mem.add("bob likes bank jokes", kind="principle", agent="bob")
    mem.add_exchange("My PIN for the bank card is 4711", "noted")
    r = mem.retrieve("what is my bank PIN?")
    with pytest.raises(InvalidInput, match="pack's agent 'bob' is not the retrieval's"):
        mem.pack(r, agent="bob")
    assert "bank jokes" not in mem.pack(r).text


def test_the_why_line_names_what_the_quote_shares_far_into_a_long_memory(mem: Memory) -> None:
    """The phrases shared were read from a memory's first 2,000 characters: a paste whose
    quoted sentence said "dentist appointment" was explained by a cosine alone."""
    paste = "Notes from the week. " * 2000 + "Also: my dentist appointment is on June 3 at 10am."
    mem.add_exchange(paste, "noted")
    r = mem.retrieve("when is my dentist appointment?")
    text = mem.pack(r).text
    assert "dentist appointment is on June 3" in text
    why = next(line for line in text.splitlines() if line.startswith("→ why:"))
    assert 'shares "appointment", "dentist"' in why, why


def test_a_share_before_no_is_not_read_as_a_day() -> None:
    """1/3の確率, 2/3の人 and 1/4まで were days (Jan 3, Feb 3, Jan 4): the LLM turn, told
    by its model that the message names no time, searched only that day."""
    from memengine.retrieve.temporal import parse_time_window

    now = datetime(2026, 10, 15, tzinfo=timezone.utc)
    for share in (
        "1/3の確率で当たる",
        "クラスの2/3の人が賛成した話",
        "全体の1/2は何",
        "1/4まで減らした",
    ):
        assert parse_time_window(share, now) is None, share
    for day, start in (("3/11の震災のこと", (3, 11)), ("on 1/3 what did I do", (1, 3))):
        window = parse_time_window(day, now)
        assert window is not None and (window[0].month, window[0].day) == start, day


def test_pack_quotes_after_a_second_look(mem: Memory) -> None:
    """A second review: "！？" and "?!" were split into a lone mark (the quote then said
    something was left out between them); a log's next line was run on with a space ("at
    10 Mar 5"); the speaker was dropped when the content, not the quote, began with the
    name, and doubled for "ケン：" or another case; a memory of control characters alone
    packed as an empty block with a reason."""
    from .helpers import shown_quote

    for said, term, kept in (
        ("えっ、歯医者の予約って明日だったの！？歯医者さんに電話しなきゃ！！", "歯医者",
         "明日だったの！？歯医者さんに電話しなきゃ！！"),
        ("The dentist is tomorrow?! I need to call the dentist!! ", "dentist",
         "tomorrow?! I need to call the dentist!!"),
    ):  # fmt: skip
        around = ("今日は雨。", "晴れ。") if term == "歯医者" else ("It rained. ", "Sunny. ")
        text = around[0] * 30 + said + around[1] * 30
        assert kept in shown_quote(text, "quote_key_parts", [term], 240)
    log = "Mar 3: lunch with Sam\nMar 4: dentist checkup at 10\nMar 5: dentist follow-up at 3pm\n"
    log += "Mar 6: gym\n" * 40
    quote = shown_quote(log, "quote_key_parts", ["dentist"], 240)
    assert "checkup at 10 / Mar 5: dentist follow-up" in quote
    long = (
        "Ken: Hey everyone, " + "so many plans this week. " * 12 + "I'll bring the cake on Friday."
    )
    mem.add(long, kind="message", tags=["party"], metadata={"speaker": "Ken"})
    mem.add("ケン：ケーキは僕が持っていくよ", kind="message", metadata={"speaker": "ケン"})
    mem.add_exchange("\x1b]0;zebra title\x07", None)
    text = mem.pack(mem.retrieve("who brings the cake on Friday?")).text
    assert "Message (Ken): … I'll bring the cake on Friday." in text  # (past "Ken:")
    text = mem.pack(mem.retrieve("ケーキは誰が持ってくる？")).text
    assert "Message: ケン：ケーキは僕が持っていくよ" in text
    text = mem.pack(mem.retrieve("zebra title?")).text
    assert "— \n" not in text + "\n" and 'shares "title"' not in text


def test_a_memory_stored_at_the_clock_before_1970_is_found(db_path: Path) -> None:
    """The bound floor(now) was a second below a stored time cut toward zero (int)."""
    now = datetime(1969, 12, 31, 23, 59, 58, 500000, tzinfo=timezone.utc)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=FixedClock(now)) as mem:
        mem.add_exchange("the zebra crossing by the school", "ok")
        assert mem.retrieve("zebra crossing", record=False).results


def test_pack_says_nothing_did_not_fit_when_the_relevant_memory_is_a_principle(
    tmp_path: Path, cli_env: None
) -> None:
    """A long rule cut by the principles' own budget made the pack "truncated", and the
    command said the relevant memories did not fit though the one asked for was packed."""
    db, toml = str(tmp_path / "p.db"), tmp_path / "p.toml"
    toml.write_text("[lifecycle]\nprinciple_token_budget = 40\n")
    runner = CliRunner()
    for args in (
        ["add", "Never say the user's bank PIN out loud", "--kind", "principle"],
        [
            "add",
            "Always " + "double check everything before you answer " * 8,
            "--kind",
            "principle",
        ],
        ["add", "I had pasta for dinner"],
    ):
        assert runner.invoke(app, [*args, "--db", db]).exit_code == 0
    out = runner.invoke(app, ["pack", "what is my bank PIN?", "--db", db, "--config", str(toml)])
    assert "- Never say the user's bank PIN out loud" in out.output
    assert "did not fit" not in out.output


def test_a_retry_after_given_as_a_date_is_honoured() -> None:
    """``Retry-After: <HTTP date>`` counted as 0 s: three attempts at once."""
    import httpx2

    from memengine.http_retry import retry_after

    later = (datetime.now(timezone.utc) + timedelta(seconds=30)).strftime(
        "%a, %d %b %Y %H:%M:%S GMT"
    )
    assert 25 < retry_after(httpx2.Headers({"retry-after": later})) <= 30
    assert retry_after(httpx2.Headers({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0
    assert retry_after(httpx2.Headers({"retry-after": "soon"})) == 0


def test_a_memory_too_long_for_the_budget_goes_in_without_its_arrow_line(mem: Memory) -> None:
    """The shorter block kept its arrow line, most of a short block: where it did not fit,
    the memory was dropped (and a lower one could go in instead)."""
    mem.add_exchange(
        "So much happened this week with the kids and the car and work. " * 4
        + "The dentist appointment is on June 3 at the clinic near the station, at ten.",
        "Noted, good luck at the dentist appointment on June 3!",
    )
    r = mem.retrieve("when is my dentist appointment?", record=False)
    fits = [b for b in range(20, 120) if mem.pack(r, budget_tokens=b, principles=False).episode_ids]
    tight = mem.pack(r, budget_tokens=fits[0], principles=False)
    assert "June 3" in tight.text and "→ why:" not in tight.text and tight.truncated
    assert tight.tokens <= fits[0]
    roomy = mem.pack(r, budget_tokens=400, principles=False)
    assert "→ why:" in roomy.text and not roomy.truncated
