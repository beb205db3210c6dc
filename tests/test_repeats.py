"""Older exchanges whose user turn repeats what the user said are left out of a retrieval
(``[retrieval] skip_repeats``): the keys, and on real SQLite with the offline embedder,
on the fast path and the LLM turn."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine import FixedClock, Memory
from memengine.config import Config
from memengine.models import Message
from memengine.retrieve.recent import repeat_key, repeat_keys, user_repeats

from .helpers import HashEmbedder
from .openai_server import ScriptedOpenAI

T0 = datetime(2026, 4, 1, 11, 0, tzinfo=timezone.utc)
GREETING = ("Morning!", "Good morning! Hope you slept well.")
FACT = ("I bought a new car, a blue Honda Fit hybrid", "Nice, let's go for a drive!")
FILLER = [
    ("Had pizza for lunch", "Yum!"),
    ("Traffic was terrible", "That's annoying."),
    ("Just finished work", "Nice, time to relax."),
    ("Back from the gym", "Good job!"),
]


def test_the_key_leaves_case_spacing_and_punctuation_aside() -> None:
    assert repeat_key("Morning!!") == repeat_key(" morning ") == "morning"
    assert repeat_key("ｏｋ！") == repeat_key("OK") == "ok"  # full width, NFKC
    assert repeat_key("おはよう！") == repeat_key("おはよう") == "おはよう"
    assert repeat_key("👋 🙂") == repeat_key(None) == ""  # no letters: no key
    assert repeat_key("Good  night") != repeat_key("Good night, Mochi")


def test_the_keys_are_the_users_messages() -> None:
    said = [
        Message(role="user", text="Morning!"),
        Message(role="partner", text="Good morning! Hope you slept well."),
        Message(role="user", text="🙂"),
    ]
    assert repeat_keys(said) == {"morning"}
    assert repeat_keys([]) == frozenset()


def test_only_the_user_turn_of_an_exchange_repeats(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "m.db", embedder=HashEmbedder(), clock=FixedClock(T0)) as mem:
        ids = [
            mem.add_exchange("Morning!", "Hi!"),
            mem.add_exchange("morning", None),
            mem.add_exchange("Hi!", "Morning!"),  # the partner said it
            mem.add("Morning!", kind="message"),  # a multi-party log's line
            mem.add("Morning!", kind="observation"),
            mem.add_exchange("Morning! I bought a car", "Nice"),
        ]
        turns = mem.store.user_turns([*ids, 999])
        assert sorted(turns) == [ids[0], ids[1], ids[2], ids[5]]
        assert user_repeats(turns, {"morning"}) == {ids[0], ids[1]}
        assert user_repeats(turns, set()) == set()


def companion(path: Path, **retrieval: object) -> tuple[Memory, FixedClock, dict[str, object]]:
    """A fact told on day 0, then two weeks of chat with a greeting on two mornings; on
    day 20 this morning's greeting and a remark about the rain are the conversation."""
    clock = FixedClock(T0)
    cfg = Config.model_validate({"retrieval": retrieval, "lifecycle": {"record_turns": False}})
    mem = Memory.open(path, config=cfg, clock=clock)
    fact = mem.add_exchange(*FACT)
    greetings = []
    for day in range(1, 15):
        clock.set(T0 + timedelta(days=day))
        if day in (2, 5):
            greetings.append(mem.add_exchange(*GREETING))
            clock.advance(minutes=3)
        for user, reply in FILLER:
            mem.add_exchange(user, reply)
            clock.advance(minutes=3)
    clock.set(T0 + timedelta(days=20))
    rain = ("Rainy day again", "Cozy day inside then.")
    for user, reply in (GREETING, rain):
        mem.add_exchange(user, reply)
        clock.advance(minutes=2)
    recent = [
        {"role": "user", "content": GREETING[0]},
        {"role": "assistant", "content": GREETING[1]},
        {"role": "user", "content": rain[0]},
        {"role": "assistant", "content": rain[1]},
    ]
    return mem, clock, {"fact": fact, "greetings": greetings, "recent": recent}


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[tuple[Memory, dict[str, object]]]:
    mem, _clock, found = companion(tmp_path / "m.db")
    with mem:
        yield mem, found


def test_old_copies_of_this_mornings_greeting_do_not_push_the_fact_out(
    chat: tuple[Memory, dict[str, object]],
) -> None:
    """The context query holds the greeting: its two old copies were found by both
    searches and packed as `high`, and the car was not packed at all."""
    mem, found = chat
    r = mem.retrieve("What car did I get again?", recent=found["recent"])
    greetings = found["greetings"]
    assert isinstance(greetings, list)
    assert sorted(r.repeats) == greetings
    assert {x.episode.id for x in r.results}.isdisjoint(greetings)
    assert r.should_inject
    assert found["fact"] in mem.pack(r).episode_ids


def test_small_talk_does_not_restate_its_own_old_copies(tmp_path: Path) -> None:
    """They stay results (a search for a stored text finds it), `low`: the message does
    not inject them as the memory it restates (it did, all five top results)."""
    mem, clock, _ = companion(tmp_path / "m.db")
    with mem:
        clock.advance(hours=1)
        r = mem.retrieve("Traffic was terrible")
        copies = [x for x in r.results if x.episode.user_text == "Traffic was terrible"]
        assert r.repeats == () and len(copies) >= 3
        assert all(x.components["repeat"] == 1.0 and x.relevance == "low" for x in copies)
        assert not r.should_inject and r.signals["top_cosine"] < 0.7
        assert mem.pack(r).episode_ids == ()
        # a question keeps them as they are: the reply may hold the answer
        r = mem.retrieve("Traffic was terrible?")
        assert "repeat" not in r.results[0].components and r.results[0].relevance != "low"


def test_a_question_keeps_its_old_copies(tmp_path: Path) -> None:
    """The reply to the same question asked before may hold the answer."""
    clock = FixedClock(T0)
    with Memory.open(tmp_path / "m.db", clock=clock) as mem:
        asked = mem.add_exchange("What's my cat's name?", "Mochi, the grey one!")
        clock.advance(days=3)
        r = mem.retrieve("What's my cat's name?")
        assert r.repeats == ()
        assert r.results[0].episode.id == asked


def test_skip_repeats_off_keeps_them(tmp_path: Path) -> None:
    mem, _clock, found = companion(tmp_path / "m.db", skip_repeats=False)
    with mem:
        r = mem.retrieve("What car did I get again?", recent=found["recent"])
        assert r.repeats == ()
        greetings = found["greetings"]
        assert isinstance(greetings, list)
        assert set(greetings) <= {x.episode.id for x in r.results}


def test_the_lists_keep_their_length_past_the_copies(tmp_path: Path) -> None:
    """Each search asks for more hits when repeats are left out: fourteen copies of the
    recent message (the newest held, the others that the searches found listed as
    repeats) and still two hits in two-hit lists."""
    mem, _clock, _ = companion(tmp_path / "m.db", knn_k_per_query=2, bm25_k_per_query=2)
    with mem:
        recent = [
            {"role": "user", "content": "Traffic was terrible"},
            {"role": "assistant", "content": "That's annoying."},
        ]
        r = mem.retrieve("traffic was terrible again, what car did I get?", recent=recent)
        assert len(r.repeats) >= 10 and r.in_recent
        assert len(r.results) >= 2
        assert "Traffic" not in " ".join(x.episode.text for x in r.results)


def test_the_llm_turn_leaves_them_out_of_the_reranker_prompt(tmp_path: Path) -> None:
    mem, _clock, found = companion(tmp_path / "m.db")
    mem.close()
    greetings = found["greetings"]
    assert isinstance(greetings, list)
    with ScriptedOpenAI() as srv:
        llm = {"base_url": srv.base_url, "turn_deadline_s": 5.0, "cache_expansions": False}
        cfg = Config.model_validate({"llm": llm, "lifecycle": {"record_turns": False}})
        with Memory.open(tmp_path / "m.db", config=cfg, clock=FixedClock(T0)) as mem:
            srv.push_chat(json_data={"expanded_queries": ["the car I bought"]})
            srv.push_chat(
                json_data={
                    "relevant_episodes": [
                        {"id": found["fact"], "relevance": "high", "reason": "the car"}
                    ],
                    "injection_strategy": "quote_key_parts",
                }
            )
            now = T0 + timedelta(days=20, minutes=5)
            r = mem.retrieve("What car did I get again?", recent=found["recent"], now=now)
            assert sorted(r.repeats) == greetings
            _, rerank = srv.chat_requests
            prompt = str(rerank["messages"][-1]["content"])
            assert all(f"[id {g}]" not in prompt for g in greetings)
            assert [x.episode.id for x in r.results] == [found["fact"]]
