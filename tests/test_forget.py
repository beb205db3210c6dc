"""Forgetting a user: the agent and everything of it goes, and its words are no longer
anywhere in the file's bytes (episodes, full-text index, turn log, write-ahead log)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from memengine import (
    Config,
    DatabaseLocked,
    FixedClock,
    InvalidInput,
    Memory,
    NewEpisode,
    NotFound,
    quote,
)
from memengine.cli import app
from memengine.diagnostics import diagnose
from memengine.store.episodes import NEIGHBOUR_CHARS

from .helpers import T0, WORDS, HashEmbedder, another_process_reading

SECRET = "quokkapin4321"


def _file_bytes(path: Path) -> bytes:
    return b"".join(p.read_bytes() for p in (path, Path(f"{path}-wal")) if p.exists())


def _two_users(path: Path, clock: FixedClock) -> None:
    with Memory.open(path, embedder=HashEmbedder(), clock=clock) as m:
        for i in range(50):
            m.add_exchange(f"alice note {i} about her garden", "ok", agent="alice", occurred_at=T0)
            m.add_exchange(f"bob note {i}: my code is {SECRET}", "ok", agent="bob", occurred_at=T0)
        turn = m.retrieve(f"what is my {SECRET} code?", agent="bob", day_range=None)
        assert turn.turn_id is not None and turn.results
        m.feedback(turn.turn_id, [turn.results[0].episode.id])
        m.sleep(agent="bob")
        m.create_agent("bob", perspectives=["privacy"])
        m.retrieve("garden", agent="alice", day_range=None)


def test_forget_agent_deletes_it_and_leaves_none_of_its_words(
    db_path: Path, clock: FixedClock
) -> None:
    _two_users(db_path, clock)
    assert SECRET.encode() in _file_bytes(db_path)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        report = m.forget_agent("bob")
        assert (report.agent, report.episodes) == ("bob", 50) and report.turns == 1
        assert report.vacuumed and report.wal_truncated
        assert [a.name for a in m.agents()] == ["alice"]
        assert m.stats(agent="alice")["agents"]["alice"]["active"] == 50
        assert not m.has_agent("bob")
        assert m.retrieve("code", agent="bob", day_range=None).results == ()
        assert m.retrieve("garden", agent="alice", day_range=None).results
        assert m.check().ok
        with pytest.raises(NotFound, match="no agent 'bob'"):
            m.forget_agent("bob")
    assert SECRET.encode() not in _file_bytes(db_path)
    assert b"bob" not in _file_bytes(db_path)  # its name went too (the vector log held it)


def test_the_cli_forgets_only_with_yes(db_path: Path, clock: FixedClock, cli_env: None) -> None:
    _two_users(db_path, clock)
    runner = CliRunner()
    refused = runner.invoke(app, ["agent", "forget", "bob", "--db", str(db_path)])
    assert refused.exit_code == 1 and "add --yes" in refused.output
    done = runner.invoke(app, ["agent", "forget", "bob", "--yes", "--json", "--db", str(db_path)])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output) | {"turns": 1} == {
        "agent": "bob",
        "episodes": 50,
        "turns": 1,
        "vacuumed": True,
        "wal_truncated": True,
        "not_compacted": "",
    }
    unknown = runner.invoke(app, ["agent", "forget", "carol", "--yes", "--db", str(db_path)])
    assert unknown.exit_code == 1 and "no agent 'carol'" in unknown.output


def test_forget_takes_every_spelling_of_the_name(db_path: Path, clock: FixedClock) -> None:
    """A name an earlier version stored as typed (not in NFC) beside the same name in NFC:
    forgetting it forgets both."""
    from .helpers import stored_by_an_earlier_version

    decomposed, composed = "か\u3099っこう", "がっこう"
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        # what an earlier memengine wrote: the name as typed, then a twin in NFC beside it
        for name, text in ((decomposed, f"old note {SECRET}"), (composed, f"new note {SECRET}")):
            stored_by_an_earlier_version(m, name, text)
        m.add("someone else", agent="alice")
        assert len(m.agents()) == 3
        report = m.forget_agent(decomposed)
        assert (report.agent, report.episodes) == (composed, 2)
        assert [a.name for a in m.agents()] == ["alice"]
    assert SECRET.encode() not in _file_bytes(db_path)


def test_a_scrubbed_delete_leaves_no_copy_of_the_episode(db_path: Path, clock: FixedClock) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        for i in range(30):
            m.add_exchange(f"alice note {i} about her garden", "ok", occurred_at=T0)
        plain = m.add_exchange(f"my PIN is {SECRET}", "noted", occurred_at=T0)
        scrubbed = m.add_exchange(f"the other PIN is {SECRET}x", "noted", occurred_at=T0)
        m.add_exchange("after that, lunch", "yum", occurred_at=T0)
        assert m.delete(plain) == [plain]  # a plain delete: its bytes may stay
        m.store.connections.close()  # (the WAL folded into the file, as on close)
    assert SECRET.encode() in _file_bytes(db_path)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        assert m.delete(scrubbed, scrub=True) == [scrubbed]
        assert m.check().ok and m.store.count() == 31
        assert m.retrieve("garden", day_range=None).results
    assert SECRET.encode() not in _file_bytes(db_path)  # neither deleted one's
    runner = CliRunner()
    result = runner.invoke(app, ["optimize", "--scrub", "--db", str(db_path), "--json"])
    assert result.exit_code == 0 and json.loads(result.output)["vacuumed"] is True


def test_a_scrubbed_delete_leaves_no_copy_in_the_turns_that_quoted_it(
    db_path: Path, clock: FixedClock
) -> None:
    """In the companion loop a message is searched (its turn recorded, later turns quoting
    it in their recent conversation) before it is stored: the turns keep no text of it."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        recent: list[dict[str, str]] = []
        ids = []
        for text in ("hello", f"my bank password is {SECRET}", "weather?", "thanks"):
            m.retrieve(text, recent=recent)
            ids.append(m.add_exchange(text, "ok!"))
            recent += [{"role": "user", "content": text}, {"role": "assistant", "content": "ok!"}]
            clock.advance(minutes=3)
        assert m.delete([ids[1]], scrub=True) == [ids[1]]
        assert m.check().ok
    assert SECRET.encode() not in _file_bytes(db_path)


def test_a_scrub_empties_the_turn_texts_an_older_version_recorded(
    db_path: Path, clock: FixedClock
) -> None:
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        m.add_exchange("the garden", "ok")
        turn = m.retrieve("the garden").turn_id
        with m.store.connections.write() as cur:  # what an earlier memengine wrote
            cur.execute("UPDATE turns SET query = ? WHERE id = ?", (f"pin {SECRET}", turn))
        m.store.connections.close()
    assert SECRET.encode() in _file_bytes(db_path)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        assert m.optimize(scrub=True).vacuumed
        assert m.feedback(turn, used=[1]).used == (1,)  # the turn itself is kept
    assert SECRET.encode() not in _file_bytes(db_path)


def test_optimize_scrub_links_an_older_files_neighbours_again(
    db_path: Path, clock: FixedClock
) -> None:
    """A file from before turns lent their words only to turns at least as sensitive:
    its plain turn still holds a secret neighbour's words until `optimize --scrub`."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        for i in range(20):
            m.add_exchange(f"note {i} about the garden", "ok", occurred_at=T0 - timedelta(days=9))
        plain = m.add_exchange("we talked about the bank", "ok", occurred_at=T0)
        m.add_exchange(f"my PIN is {SECRET}", "noted", sensitivity=3, occurred_at=T0)
        with m.store.connections.write() as cur:  # what an earlier memengine wrote
            cur.execute(
                "UPDATE episodes SET context_text = ? WHERE id = ?", (f"my pin is {SECRET}", plain)
            )
        leaked = m.retrieve(SECRET, max_sensitivity=0, day_range=None)
        assert plain in [r.episode.id for r in leaked.results if "bm25_rank" in r.components]
        report = m.optimize(scrub=True)
        assert report.contexts_relinked == 1 and report.vacuumed
        found = m.retrieve(SECRET, max_sensitivity=0, day_range=None)
        assert plain not in [r.episode.id for r in found.results if "bm25_rank" in r.components]
        assert m.check().ok
        assert m.optimize(scrub=True).contexts_relinked == 0  # in step now
        with m.store.connections.write() as cur:
            cur.execute(
                "UPDATE episodes SET context_text = ? WHERE id = ?", (f"my pin is {SECRET}", plain)
            )
    no_gap = Config.model_validate({"retrieval": {"neighbour_gap_minutes": 0}})
    with Memory.open(db_path, config=no_gap, embedder=HashEmbedder(), clock=clock) as m:
        assert m.optimize(scrub=True).contexts_relinked == 22  # no neighbours: no lent words
        with m.store.connections.read() as cur:
            assert (
                cur.execute("SELECT count(*) FROM episodes WHERE context_text != ''").fetchone()[0]
                == 0
            )
        found = m.retrieve(SECRET, max_sensitivity=0, day_range=None)
        assert plain not in [r.episode.id for r in found.results if "bm25_rank" in r.components]


def test_a_turn_running_while_its_agent_is_forgotten_records_nothing(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retrieval that began before ``forget_agent`` neither makes the agent again nor
    writes the forgotten user's message into a turn."""
    import threading

    from memengine import Retrieval
    from memengine.lifecycle import turns

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("bob's secret is the apple tree", "noted", agent="bob")
        searched, forgotten = threading.Event(), threading.Event()
        known = turns.has_agent

        def known_then_wait(store: Any, agent: str) -> bool:
            out = known(store, agent)  # the agent is still there when the turn checks ...
            searched.set()
            forgotten.wait(10)  # ... and gone when it writes the record
            return out

        monkeypatch.setattr(turns, "has_agent", known_then_wait)
        results: list[Retrieval] = []
        turn = threading.Thread(
            target=lambda: results.append(mem.retrieve("bob secret apple", agent="bob"))
        )
        turn.start()
        assert searched.wait(10)
        mem.forget_agent("bob")
        forgotten.set()
        turn.join(10)
        (r,) = results
        assert r.turn_id is None and any("forgotten" in d for d in r.degraded)
        assert not mem.has_agent("bob")
        with mem.store.connections.read() as cur:
            assert cur.execute("SELECT count(*) FROM turns WHERE agent = 'bob'").fetchone()[0] == 0


def test_feedback_on_a_turn_forgotten_while_it_was_judged_is_not_found(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memengine.lifecycle import feedback

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        mem.add_exchange("bob's secret is the apple tree", "noted", agent="bob")
        turn = mem.retrieve("bob secret apple", agent="bob").turn_id
        assert turn is not None
        judge = feedback.match_answer

        def forget_then_judge(*args: Any, **kwargs: Any) -> Any:
            mem.forget_agent("bob")  # between the judgement and its write
            return judge(*args, **kwargs)

        monkeypatch.setattr(feedback, "match_answer", forget_then_judge)
        with pytest.raises(NotFound, match="deleted while its feedback ran"):
            mem.feedback(turn, answer="the apple tree")


def test_word_counts_hold_nothing_of_a_forgotten_agent_in_any_process(
    db_path: Path, clock: FixedClock
) -> None:
    """Past 10,000 rows the cached word counts were kept while the rows moved by a tenth or
    less: after bob was forgotten, alice's retrievals in this process and in another one
    still said a word of his was in the file (``signals["reach"]``)."""
    from memengine import NewEpisode

    question = f"do you know {SECRET}?"
    with (
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as a,
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as b,
    ):
        a.add_many(
            NewEpisode(
                kind="fact",
                content=f"alice note {i} about her garden",
                agent="alice",
                occurred_at=T0,
            )
            for i in range(10_050)
        )
        a.add_exchange(f"my code is {SECRET}", "noted", agent="bob", occurred_at=T0)
        for m in (a, b):
            assert m.retrieve(question, agent="alice", record=False).signals["reach"] > 0
        a.forget_agent("bob")
        for m in (a, b):
            assert m.retrieve(question, agent="alice", record=False).signals["reach"] == 0


def test_word_counts_hold_nothing_of_what_a_sleep_pruned(db_path: Path, clock: FixedClock) -> None:
    """A sleep's prune is a delete too: past 10,000 rows the cached counts still told of
    a pruned memory's word, in this process, until a new one counted again."""
    from memengine import NewEpisode

    cfg = Config.model_validate({"lifecycle": {"max_weighted_total": 100}})
    question = f"do you know {SECRET}?"
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock, config=cfg) as m:
        secret = m.add(f"my old code was {SECRET}", kind="fact", agent="bob", occurred_at=T0)
        m.add_many(
            NewEpisode(kind="fact", content=f"bob note {i}", agent="bob", occurred_at=T0)
            for i in range(120)
        )
        m.add_many(
            NewEpisode(kind="fact", content=f"alice note {i}", agent="alice", occurred_at=T0)
            for i in range(10_050)
        )
        assert m.retrieve(question, agent="alice", record=False).signals["reach"] > 0
        report = m.sleep("bob", tasks=0, train=False)
        assert secret in report.pruned_ids
        assert m.retrieve(question, agent="alice", record=False).signals["reach"] == 0


def test_an_id_a_turn_names_is_not_given_to_another_agent(db_path: Path, clock: FixedClock) -> None:
    """add_many kept an explicit id that a recorded turn of alice's named (its episode
    deleted since): her feedback then read bob's words and reinforced his memory."""
    from memengine import InvalidInput, NewEpisode

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        cat = mem.add_exchange("My cat is called Kinako", "cute", agent="alice", occurred_at=T0)
        mem.add_exchange("I like tea", "ok", agent="alice", occurred_at=T0)
        turn = mem.retrieve("what is my cat called?", agent="alice").turn_id
        assert turn is not None
        mem.delete([cat], agent="alice")
        pin = NewEpisode(
            id=cat, agent="bob", kind="fact", content=f"bob's PIN is {SECRET}", occurred_at=T0
        )
        taken = pin.model_copy(update={"id": cat + 1})  # stored, and named by the turn
        with pytest.raises(InvalidInput, match="UNIQUE constraint failed"):
            mem.add_many([taken])
        with pytest.raises(InvalidInput, match=f"episode id {cat} belonged to an episode deleted"):
            mem.add_many([pin])
        assert mem.store.existing([cat]) == set() and not mem.has_agent("bob")
        # a file written by a version without that check: the turn's id holds bob's episode
        vector = mem.embedder.embed([pin.content or ""])
        mem.store.add([pin], [pin.content or ""], vector)
        fb = mem.feedback(turn, answer=f"bob's PIN is {SECRET}", agent="alice")
        assert fb.used == () and mem.get(cat).access_count == 0


def test_a_scorer_trained_while_its_agent_is_forgotten_is_not_kept(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sleep's scorer was saved for an agent forgotten while it trained: a bare
    FOREIGN KEY error after the sleep had committed."""
    from memengine.lifecycle import ranking

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as mem:
        notes = [
            mem.add(f"bob note {i} about the budget", kind="fact", agent="bob") for i in range(12)
        ]
        for turn in range(14):
            r = mem.retrieve(f"budget note {turn}", agent="bob", limit=10)
            assert r.turn_id is not None
            mem.feedback(r.turn_id, [x.episode.id for x in r.results if x.episode.id in notes[:6]])
        train = ranking.train

        def forget_while_training(*args: Any, **kwargs: Any) -> Any:
            mem.forget_agent("bob")
            return train(*args, **kwargs)

        monkeypatch.setattr(ranking, "train", forget_while_training)
        assert mem.train_scorer("bob") is None
        assert not mem.has_agent("bob") and mem.check().ok


FORGETTER = """
import sys, time
from memengine import FixedClock, Memory
from memengine.store import maintenance
from tests.helpers import HashEmbedder, T0

def stopped(*args, **kwargs):
    print("deleted", flush=True)  # the delete is committed, the compaction not begun
    time.sleep(600)

maintenance.compact = stopped
with Memory.open(sys.argv[1], embedder=HashEmbedder(), clock=FixedClock(T0)) as m:
    m.forget_agent("bob")
"""


@pytest.mark.skipif(os.name != "posix", reason="SIGKILL")
def test_a_forget_killed_before_its_compaction_says_what_to_run(
    db_path: Path, clock: FixedClock
) -> None:
    """The agent's rows are deleted, but copies of their bytes stay in free pages until the
    file is compacted: a process killed in between leaves a note that ``doctor`` and a
    retried forget name, and ``optimize --scrub`` removes both the bytes and the note."""
    _two_users(db_path, clock)
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", FORGETTER, str(db_path)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "deleted"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=60)
        proc.stdout.close()
    config = Config(db=db_path)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        assert not m.has_agent("bob") and m.store.scrub_pending() == "a forgotten agent"
        with pytest.raises(
            NotFound,
            match=r"has not finished, or is under way in another thread: once it is not, `memengine optimize --scrub`",
        ):
            m.forget_agent("bob")
    ok, detail = diagnose(config)["checks"]["scrub"]
    assert not ok and "memengine optimize --scrub" in detail
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        report = m.optimize(scrub=True)
        assert report.vacuumed and m.store.scrub_pending() is None
    assert SECRET.encode() not in _file_bytes(db_path)
    assert "scrub" not in diagnose(config)["checks"]


def _stop(*_: object, **__: object) -> Any:
    raise KeyboardInterrupt


@pytest.mark.parametrize("command", ["forget", "delete"])
def test_ctrl_c_while_compacting_says_the_delete_is_saved(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """A Ctrl-C in the compaction after a forget or a scrubbing delete printed only
    "interrupted", as one before the commit does, though the delete was saved."""
    _two_users(db_path, clock)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        bobs = [r.episode.id for r in m.retrieve("note", agent="bob", day_range=None).results][:3]
    args = (
        ["agent", "forget", "bob", "--yes"]
        if command == "forget"
        else ["delete", *map(str, bobs), "--scrub"]
    )
    monkeypatch.setattr("memengine.store.maintenance.compact", _stop)
    result = CliRunner().invoke(app, [*args, "--db", str(db_path)])
    assert result.exit_code == 130
    assert "interrupted after the delete was saved" in result.output
    assert "memengine optimize --scrub" in result.output
    monkeypatch.undo()
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        assert (not m.has_agent("bob")) if command == "forget" else not m.store.existing(bobs)
        assert m.store.scrub_pending() is not None
    monkeypatch.setattr("memengine.store.episodes.delete_episodes", _stop)  # before the commit
    monkeypatch.setattr("memengine.store.episodes.delete_and_relink", _stop)
    result = CliRunner().invoke(app, ["delete", "1", "--scrub", "--db", str(db_path)])
    assert result.exit_code == 130 and "saved" not in result.output


# (the deleted turn of each conversation is the second; the last two are five days later)
_CONVERSATIONS = {
    "en": (
        "We talked about the weather today",
        f"My bank PIN is {SECRET}",
        "Let's plan the picnic",
        "the roses need water",
        "water them tonight",
    ),
    "ja": (
        "今日は天気の話をした",
        "銀行の暗証番号は鴨嘴獣四三二一です",
        "ピクニックの計画を立てよう",
        "薔薇に水をやらないと",
        "今夜水をやろう",
    ),
}


def _store_conversation(path: Path, clock: FixedClock, lang: str) -> list[int]:
    """Three turns at 10:00, 10:30 and 10:55, and two more five days later, 30 minutes
    apart, stored under the default gap of 60 minutes (each holds its neighbours' words)."""
    texts = _CONVERSATIONS[lang]
    times = [T0, T0 + timedelta(minutes=30), T0 + timedelta(minutes=55)]
    times += [T0 + timedelta(days=5), T0 + timedelta(days=5, minutes=30)]
    with Memory.open(path, embedder=HashEmbedder(), clock=clock) as m:
        return [
            m.add_exchange(text, "ok", agent="alice", occurred_at=at)
            for text, at in zip(texts, times, strict=True)
        ]


def _contexts(m: Memory) -> dict[int, str]:
    with m.store.connections.read() as cur:
        return {int(i): str(c) for i, c in cur.execute("SELECT id, context_text FROM episodes")}


def _search_text(m: Memory, episode_id: int) -> str:
    with m.store.connections.read() as cur:
        row = cur.execute("SELECT search_text FROM episodes WHERE id = ?", (episode_id,))
        return str(row.fetchone()[0])


def _found_by_words(m: Memory, text: str) -> set[int]:
    r = m.retrieve(text, agent="alice", record=False, day_range=None)
    return {x.episode.id for x in r.results if "bm25_rank" in x.components}


def _gap(minutes: int) -> Config:
    return Config.model_validate({"retrieval": {"neighbour_gap_minutes": minutes}})


@pytest.mark.parametrize("scrub", [False, True])
@pytest.mark.parametrize(("lang", "gap"), [("en", 10), ("ja", 10), ("en", 0), ("ja", 0)])
def test_a_delete_leaves_no_word_in_a_neighbour_linked_under_a_larger_gap(
    db_path: Path, clock: FixedClock, lang: str, gap: int, scrub: bool
) -> None:
    """With ``neighbour_gap_minutes`` lowered after the turns were stored, the delete's
    re-link looked only within the new gap: the turns 30 and 25 minutes away kept the
    deleted PIN in their neighbour words, found by a search for it (and in the file's
    bytes after a scrub). The far pair, linked under the old gap too, is not touched."""
    first, secret, third, far_a, far_b = _store_conversation(db_path, clock, lang)
    with Memory.open(db_path, config=_gap(gap), embedder=HashEmbedder(), clock=clock) as m:
        words = _search_text(m, secret)
        before = _contexts(m)
        assert words in before[first] and words in before[third]
        assert {first, third} <= _found_by_words(m, _CONVERSATIONS[lang][1])
        assert m.delete([secret], scrub=scrub) == [secret]
        after = _contexts(m)
        assert after[first] == after[third] == ""  # no neighbour within the gap now
        assert not any(words in c for c in after.values())
        assert (after[far_a], after[far_b]) == (before[far_a], before[far_b]) != ("", "")
        assert _found_by_words(m, _CONVERSATIONS[lang][1]) == set()
        assert first in _found_by_words(m, _CONVERSATIONS[lang][0])
        assert m.check().ok
    if scrub:
        assert words.encode() not in _file_bytes(db_path)
        assert SECRET.encode() not in _file_bytes(db_path)


def test_a_turn_that_comes_between_farther_than_the_gap_relinks_the_one_beside_it(
    db_path: Path, clock: FixedClock
) -> None:
    """A turn written between two linked under a larger gap is beside neither within the
    new one, yet the older turn beside it no longer is beside the PIN: it is linked again
    (its words of the PIN go), so a later delete of the PIN, which re-links only the turns
    beside it, leaves none. A turn 3 minutes away is beside it as before."""
    first, secret, third, _, _ = _store_conversation(db_path, clock, "en")
    with Memory.open(db_path, config=_gap(10), embedder=HashEmbedder(), clock=clock) as m:
        words = _search_text(m, secret)
        between = m.add_exchange(
            "the bus was late", "ok", agent="alice", occurred_at=T0 + timedelta(minutes=15)
        )
        assert _contexts(m)[first] == ""  # beside "the bus was late" now, 15 minutes away
        assert words in _contexts(m)[third]  # (still beside the PIN: the delete's to re-link)
        near = m.add_exchange(
            "it was raining", "ok", agent="alice", occurred_at=T0 + timedelta(minutes=18)
        )
        assert "raining" in _contexts(m)[between] and "bus" in _contexts(m)[near]
        m.delete([secret])
        assert not any(words in c for c in _contexts(m).values())
        assert _found_by_words(m, SECRET) == set()
        assert m.check().ok


def _turn_rows(m: Memory, agent: str) -> list[tuple[int, int, str, str, int]]:
    with m.store.connections.read() as cur:
        return [
            (int(ts), int(i), str(s), str(c), int(sens))
            for ts, i, s, c, sens in cur.execute(
                "SELECT occurred_ts, id, search_text, context_text, sensitivity FROM episodes "
                "WHERE agent = ? AND kind IN ('exchange', 'message') ORDER BY occurred_ts, id",
                (agent,),
            )
        ]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_turn_holds_only_the_words_of_the_turns_beside_it_now(
    db_path: Path, clock: FixedClock, seed: int
) -> None:
    """Turns linked under a gap of 60 minutes, then written to, in batches out of time
    order, alone, and deleted from under a gap of 10: each turn's neighbour words are, at
    every step, pieces of the turns beside it now and never of one that was (a batch's
    new rows and the stored turn just outside the rows read near them included)."""
    rng = np.random.default_rng(seed)
    said = iter(f"turn{n} " + " ".join(rng.choice(WORDS, 3)) for n in range(10_000))

    def turn() -> NewEpisode:
        at = T0 + timedelta(minutes=int(rng.integers(0, 24 * 60)))
        agent, sensitivity = str(rng.choice(["alice", "bob"])), int(rng.choice([0, 0, 0, 1]))
        if rng.random() < 0.2:  # not a turn: lends and holds nothing
            return NewEpisode(kind="fact", content=next(said), agent=agent, occurred_at=at)
        return NewEpisode(
            kind="exchange",
            user_text=next(said),
            reply_text="ok",
            agent=agent,
            sensitivity=sensitivity,
            occurred_at=at,
        )

    def turns(n: int) -> list[NewEpisode]:
        return [turn() for _ in range(n)]

    def beside_only(m: Memory) -> None:
        for agent in ("alice", "bob"):
            rows = _turn_rows(m, agent)
            for k, (_, i, _, context, sens) in enumerate(rows):
                lent = [
                    rows[j][2][:NEIGHBOUR_CHARS].rstrip(" ")
                    for j in (k - 1, k + 1)
                    if 0 <= j < len(rows) and rows[j][4] <= sens
                ]
                options = {"", *lent, " ".join(lent)}
                assert context in options, (i, context, lent)

    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        m.add_many(turns(60))
        beside_only(m)
    with Memory.open(db_path, config=_gap(10), embedder=HashEmbedder(), clock=clock) as m:
        for step in range(12):
            if step % 3 == 0:
                m.add_many(turns(int(rng.integers(2, 15))))
            elif step % 3 == 1:
                (one,) = turns(1)
                m.add_exchange(
                    one.user_text or "", "ok", agent=one.agent, occurred_at=one.occurred_at
                )
            else:
                rows = _turn_rows(m, "alice")
                m.delete([rows[int(rng.integers(0, len(rows)))][1]])
            beside_only(m)
        assert m.check().ok


@pytest.mark.parametrize("lang", ["en", "ja"])
@pytest.mark.parametrize("gap", [10, 60])
def test_a_changed_gap_reaches_the_stored_turns_with_a_scrubbing_optimize(
    db_path: Path, clock: FixedClock, lang: str, gap: int
) -> None:
    """As the README says: a turn written a week later links neither stored turn again (the
    one beside it held no words of a turn after it), so both keep what they were lent under
    the gap of 60 (30 minutes apart) until ``optimize(scrub=True)`` links every turn under
    the gap of now: beyond a gap lowered to 10, they lend each other nothing then. Not
    triggered: with the gap unchanged, neither the write nor the scrub takes a word."""
    *_, far_a, far_b = _store_conversation(db_path, clock, lang)
    with Memory.open(db_path, config=_gap(gap), embedder=HashEmbedder(), clock=clock) as m:
        lent_a, lent_b = _search_text(m, far_a), _search_text(m, far_b)
        later = m.add_exchange(
            "see you next week", "ok", agent="alice", occurred_at=T0 + timedelta(days=12)
        )
        linked = _contexts(m)
        assert lent_b in linked[far_a] and lent_a in linked[far_b]  # (under the gap of 60)
        assert linked[later] == ""  # a week from the turn before it
        m.optimize(scrub=True)
        scrubbed = _contexts(m)
        assert (lent_b in scrubbed[far_a], lent_a in scrubbed[far_b]) == (gap == 60,) * 2
        if gap == 60:
            assert scrubbed == linked  # nothing to mend
        assert m.check().ok


def test_a_sleep_that_prunes_a_turn_leaves_none_of_its_words_beside_it(
    db_path: Path, clock: FixedClock
) -> None:
    """A sleep's prune deletes through the same re-link: a pruned turn's words do not stay
    in the turns linked beside it under a larger gap."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:  # the gap of 60
        secret = m.add_exchange(  # the oldest id: the first a capacity prune takes
            f"My bank PIN is {SECRET}", "ok", agent="alice", occurred_at=T0 + timedelta(minutes=30)
        )
        first = m.add_exchange("the weather today", "ok", agent="alice", occurred_at=T0)
        third = m.add_exchange(
            "plan the picnic", "ok", agent="alice", occurred_at=T0 + timedelta(minutes=55)
        )
        words = _search_text(m, secret)
        assert words in _contexts(m)[first] and words in _contexts(m)[third]
    cfg = Config.model_validate(
        {"retrieval": {"neighbour_gap_minutes": 10}, "lifecycle": {"max_weighted_total": 2}}
    )
    with Memory.open(db_path, config=cfg, embedder=HashEmbedder(), clock=clock) as m:
        assert m.sleep("alice", tasks=0, train=False).pruned_ids == (secret,)
        assert _contexts(m) == {first: "", third: ""}
        assert _found_by_words(m, SECRET) == set()


def test_an_id_past_64_bits_is_no_episode_with_or_without_scrub(
    mem: Memory, cli_env: None, db_path: Path
) -> None:
    """The scrubbing delete of the command line asked which ids existed before the library
    dropped those no SQLite integer holds, and its OverflowError came out as a traceback."""
    kept = mem.add_exchange("hello there", "ok")
    assert mem.store.existing([2**70, kept, -(2**70)]) == {kept}
    assert mem.delete([2**70], scrub=True) == [] and mem.store.existing([kept]) == {kept}
    mem.close()
    for scrub in ([], ["--scrub"]):  # the same answer, exit 1 (an id not deleted)
        out = CliRunner().invoke(
            app, ["delete", "99999999999999999999999", *scrub, "--db", str(db_path)]
        )
        assert out.exit_code == 1 and isinstance(out.exception, SystemExit), out.output
        assert "deleted 0 of 1" in out.output
    with Memory.open(db_path, embedder=HashEmbedder()) as m:
        assert m.store.existing([kept]) == {kept}


def test_a_delete_for_an_agent_the_file_does_not_know_says_so(
    mem: Memory, cli_env: None, db_path: Path
) -> None:
    """``delete --agent ghost`` said the ids were "absent or another agent's", and
    ``delete(ids, agent=" alice")`` returned [] for a name every write refuses."""
    alices = mem.add_exchange("my cat is called Mochi", "cute", agent="alice")
    bobs = mem.add_exchange("I train on tuesdays", "ok", agent="bob")
    with pytest.raises(NotFound, match="no agent named 'ghost'"):
        mem.delete([alices], agent="ghost")
    with pytest.raises(InvalidInput, match="begins or ends with white space"):
        mem.delete([alices], agent=" alice")
    assert mem.delete([bobs], agent="alice") == []  # a known agent: another's id stays
    assert mem.store.existing([alices, bobs]) == {alices, bobs}
    mem.close()
    out = CliRunner().invoke(app, ["delete", str(alices), "--agent", "ghost", "--db", str(db_path)])
    assert out.exit_code == 1 and "no agent named 'ghost'" in out.output
    assert "absent or another agent's" not in out.output
    with Memory.open(db_path, embedder=HashEmbedder()) as m:
        assert m.store.existing([alices]) == {alices}
        assert m.delete([alices], agent="alice") == [alices]


def test_a_scrubbed_delete_empties_the_caches_of_users_text(mem: Memory) -> None:
    """A scrubbed delete left the deleted text in the pack's folded sentences and the
    retriever's word vectors, which a forget empties; a plain delete leaves them."""
    long = " ".join(f"Sentence {i} about the garden and the weather." for i in range(60))
    secret = mem.add(f"{long} The safe combination is {SECRET} behind the painting.", kind="fact")
    plain = mem.add("tea in the afternoon", kind="fact")
    query = "what is the safe combination?"
    mem.pack(mem.retrieve(query, record=False, day_range=None), query=query)
    words = mem.retriever.word_vectors
    assert quote._fold.cache_info().currsize > 0
    assert mem.delete([plain]) == [plain]
    assert quote._fold.cache_info().currsize > 0 and mem.retriever.word_vectors is words
    assert mem.delete([secret], scrub=True) == [secret]
    assert quote._fold.cache_info().currsize == 0
    assert quote.query_patterns.cache_info().currsize == 0
    assert mem.retriever.word_vectors is not words


def test_a_scrubbed_delete_empties_what_the_later_change_check_read(mem: Memory) -> None:
    """The later-change check caches what it reads of each text (who it names, what it
    tells how often, its words): a scrubbed delete empties those caches too."""
    from memengine import text
    from memengine.retrieve import change_words, changes

    changes._people(f"My sister Ann told me {SECRET} every week")
    changes._doings("week", f"I call Ann about {SECRET} twice a week")
    text._latin_words(f"the code is {SECRET}")
    change_words.change_sentences(f"I changed the code from {SECRET} to 1234")
    kept = mem.add("tea in the afternoon", kind="fact")
    assert changes._people.cache_info().currsize > 0
    assert mem.delete([kept]) == [kept]  # a plain delete leaves them
    assert text._latin_words.cache_info().currsize > 0
    assert change_words._changes_read.cache_info().currsize > 0
    secret = mem.add(f"The safe combination is {SECRET}.", kind="fact")
    assert mem.delete([secret], scrub=True) == [secret]
    assert changes._people.cache_info().currsize == 0
    assert changes._doings.cache_info().currsize == 0
    assert changes._slots.cache_info().currsize == 0
    assert text._latin_words.cache_info().currsize == 0
    assert change_words._changes_read.cache_info().currsize == 0


def test_a_forget_empties_the_stores_word_counts(db_path: Path, clock: FixedClock) -> None:
    """The full-text word counts are keyed by the words searched and the agents' names: a
    forgotten agent's stayed in this process until its next search."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        for i in range(30):
            m.add_exchange(f"note {i} about gardening and tomatoes", "nice", agent="dave")
        m.add_exchange(f"My ex took my {SECRET} plush", "Sorry.", agent="carol")
        m.add_exchange("I like tea", "ok", agent="carol")
        m.retrieve(f"Where is my {SECRET} plush?", agent="carol", record=False)
        counts = m.store.term_stats
        assert SECRET in repr(counts._df) and "carol" in counts._agents
        m.forget_agent("carol")
        assert SECRET not in repr(counts._df) and "carol" not in counts._agents


def test_a_delete_takes_its_learnings_off_the_other_memories_used(
    db_path: Path, clock: FixedClock
) -> None:
    """A feedback's learning is kept on every memory its turn used: deleting the one it was
    about left it on the others, where `life_of` showed it and no call removed it."""
    note = f"User is still hurt about the breakup ({SECRET})"
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        m.create_agent("u", perspectives=["relationships"])
        ex = m.add_exchange("My ex broke up with me in March.", "That's hard.", agent="u")
        therapy = m.add_exchange("I go to therapy on Tuesdays.", "Good for you.", agent="u")
        other = m.add_exchange("I like long walks.", "Nice.", agent="u")
        r = m.retrieve("How am I coping since the breakup?", agent="u", perspective="relationships")
        m.feedback(r.turn_id, [ex, therapy], perspective="relationships", learning=note)
        r = m.retrieve("therapy and walks", agent="u", perspective="relationships")
        m.feedback(r.turn_id, [therapy, other], perspective="relationships", learning="keep")
        alone = m.add_exchange("I journal every night.", "Lovely.", agent="u")
        r = m.retrieve("journal", agent="u", perspective="relationships")
        m.feedback(r.turn_id, [alone], perspective="relationships", learning=note)  # (its own)
        assert m.life_of(therapy, agent="u").learnings == {"relationships": [note, "keep"]}
        m.add_exchange("hello", "hi", agent="v")
        assert m.delete([therapy], agent="v") == []  # (another's: nothing goes)
        assert m.life_of(ex, agent="u").learnings == {"relationships": [note]}
        assert m.delete([ex], agent="u") == [ex]
        assert m.life_of(therapy, agent="u").learnings == {"relationships": ["keep"]}
        assert m.life_of(other, agent="u").learnings == {"relationships": ["keep"]}
        assert m.life_of(alone, agent="u").learnings == {
            "relationships": [note]
        }  # (not used with it)
        m.delete([alone], agent="u")
        assert m.life_of(therapy, agent="u").strength_by_perspective["relationships"] > 0
        m.delete([other], agent="u", scrub=True)
    assert SECRET.encode() not in _file_bytes(db_path)


def test_a_scrubbed_delete_a_reader_kept_from_its_log_says_where_copies_are(
    db_path: Path, clock: FixedClock
) -> None:
    """The compaction was done and the log kept the copies (and the file, until the log
    is folded into it), yet the error pointed at the log alone ("may remain there")."""
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        secret = m.add_exchange(f"my PIN is {SECRET}", "noted")
        m.add_exchange("after that, lunch", "yum")
    with (
        another_process_reading(db_path),
        Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m,
    ):
        with pytest.raises(DatabaseLocked, match="the file and its log may still hold copies"):
            m.delete([secret], scrub=True)
        assert m.store.existing([secret]) == set()


def _warm_caches_of_bob(m: Memory) -> object:
    """Fill the caches of users' text with bob's secret (a pack's folded sentences and
    query patterns, what the later-change check read); the word vectors before."""
    from memengine.retrieve import changes

    long = " ".join(f"Sentence {i} about the garden and the weather." for i in range(60))
    m.add(f"{long} The safe combination is {SECRET}.", kind="fact", agent="bob")
    query = "what is the safe combination?"
    m.pack(m.retrieve(query, agent="bob", record=False, day_range=None), query=query)
    changes._people(f"My sister Ann told me {SECRET} every week")
    assert quote._fold.cache_info().currsize > 0 and changes._people.cache_info().currsize > 0
    return m.retriever.word_vectors


def test_ctrl_c_in_a_forgets_compaction_says_so_and_empties_the_caches(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C after the forget's delete committed reached a library caller as a bare
    KeyboardInterrupt (forgotten or not, it could not tell), and left the user's text in
    this process's caches, which a finished forget empties."""
    from memengine.retrieve import changes

    _two_users(db_path, clock)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        words = _warm_caches_of_bob(m)
        monkeypatch.setattr("memengine.store.maintenance.compact", _stop)  # (not begun)
        with pytest.raises(KeyboardInterrupt) as stop:
            m.forget_agent("bob")
        note = "\n".join(getattr(stop.value, "__notes__", ()))
        assert "agent 'bob' is forgotten" in note and "`memengine optimize --scrub`" in note
        assert not m.has_agent("bob") and m.store.scrub_pending() == "a forgotten agent"
        assert quote._fold.cache_info().currsize == 0
        assert quote.query_patterns.cache_info().currsize == 0
        assert changes._people.cache_info().currsize == 0
        assert m.retriever.word_vectors is not words


def test_ctrl_c_before_a_forgets_commit_says_the_agent_is_not_forgotten(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One that came before the commit deleted nothing, and its note says so."""
    _two_users(db_path, clock)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        monkeypatch.setattr("memengine.store.episodes.delete_episodes", _stop)
        with pytest.raises(KeyboardInterrupt) as stop:
            m.forget_agent("bob")
        assert getattr(stop.value, "__notes__", None) == [
            "interrupted: agent 'bob' was NOT forgotten: nothing of it was deleted; forget it again"
        ]
        assert m.has_agent("bob") and m.store.scrub_pending() is None


@pytest.mark.parametrize("point", ["vacuum", "truncate_log", "_scrubbed"])
def test_ctrl_c_once_the_file_is_compacted_leaves_no_failed_scrub_check(
    db_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    """A Ctrl-C that came once the VACUUM was done (SQLite finishes it, and Python raises
    the interrupt as it returns), or during the log's checkpoint, or before the note was
    dropped, left the pending-scrub note: doctor failed a compacted file."""
    _two_users(db_path, clock)
    with Memory.open(db_path, embedder=HashEmbedder(), clock=clock) as m:
        owner = m.store if point == "_scrubbed" else m.store.connections
        done = getattr(owner, point)

        def done_then_stop(*args: Any, **kwargs: Any) -> Any:
            if point != "_scrubbed":  # (the real step, then the interrupt it returns with)
                done(*args, **kwargs)
            raise KeyboardInterrupt

        monkeypatch.setattr(owner, point, done_then_stop)
        with pytest.raises(KeyboardInterrupt):
            m.forget_agent("bob")
        monkeypatch.undo()
        assert not m.has_agent("bob")
    assert SECRET.encode() not in _file_bytes(db_path)
    assert "scrub" not in diagnose(Config(db=db_path))["checks"]
