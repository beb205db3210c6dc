"""Fixes from the session-49 reviews: the language of a turn, a message searched alone
after set phrases that only look like pronouns, and a joined search's share of a score."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memengine import FixedClock, Memory
from memengine.cli import app
from memengine.models import Message
from memengine.retrieve.retriever import turn_language
from memengine.retrieve.signals import code_words
from memengine.store.filters import Filters
from memengine.store.fulltext import match_expression
from memengine.text import guess_language, query_terms


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        # a Japanese writer spaces pasted English, and the particles with it
        ("pip install -r requirements.txt が ERROR: Could not find a version で失敗する", "ja"),
        ("torch==2.3.1 で ModuleNotFoundError が出た", "ja"),
        ("Pythonのdeadlineいつ？", "ja"),
        ("I wrote 'は' on the whiteboard", "en"),  # (a hiragana quoted: English)
        ("Tell me about de Gaulle and ni hao", "en"),
    ],
)
def test_a_particle_spaced_after_english_is_japanese(text: str, lang: str) -> None:
    assert guess_language(text) == lang


def test_a_message_of_its_own_words_gives_the_turn_its_language() -> None:
    """After a reply in Japanese, "When is Mochi's birthday?" was a Japanese turn: the
    pack's frame and an LLM's prompts came out in Japanese for an English question."""
    said = [Message(role="user", text="猫の話"), Message(role="assistant", text="もちの話だね！")]
    assert turn_language("When is Mochi's birthday?", said) == "en"
    assert turn_language("もちの誕生日いつ？", [Message(role="user", text="Hi")]) == "ja"
    assert turn_language("OK!", said) == "ja"  # (too short to tell: the conversation does)
    assert turn_language("はい", [Message(role="user", text="Is it at noon?")]) == "ja"


def test_an_english_question_after_a_japanese_reply_is_packed_in_english(
    real_mem: Memory,
) -> None:
    real_mem.add_exchange("Mochi's birthday is on 3 March, she turns four.", "Noted!")
    recent = [
        {"role": "user", "content": "Mochi is being so cute today"},
        {"role": "assistant", "content": "もちちゃん、かわいいね！写真見たいな"},
    ]
    r = real_mem.retrieve("When is Mochi's birthday?", recent=recent)
    assert r.language == "en"
    text = real_mem.pack(r).text
    assert "why:" in text and "関連" not in text


def test_the_same_words_told_again_come_the_latest_first(mem: Memory, clock: FixedClock) -> None:
    """Identical turns tie in both searches and came oldest first (by row id): "when did I
    last say I was tired?" packed the first tellings, the latest ranked ninth. The vector
    scan's order of ties is checked in tests/test_search_index.py."""
    copies = []
    for _ in range(6):
        copies.append(mem.add_exchange("so tired tonight", "Get some rest!"))
        clock.advance(days=1)
    expr = match_expression(query_terms("so tired tonight"))
    assert expr is not None
    hits = mem.store.bm25(expr, 4, Filters())
    assert len({score for _, score in hits}) == 1  # (a tie)
    assert [i for i, _ in hits] == sorted(copies, reverse=True)[:4]


def test_a_paste_told_again_finds_the_old_one_and_its_fix(real_mem: Memory) -> None:
    """A traceback pasted again asks nothing, so its old copy was marked a repeat of small
    talk ("Morning!") and the pack was empty: the old reply held the fix."""
    traceback = (
        'Traceback (most recent call last):\n  File "/app/worker.py", line 88, in run\n'
        'psycopg2.OperationalError: password authentication failed for user "svc_billing"'
    )
    fix = real_mem.add_exchange(traceback, "Rotated secret: update the password in Vault.")
    real_mem.add_exchange("Lunch was great", "Nice!")
    r = real_mem.retrieve(traceback)
    assert r.results[0].episode.id == fix and "repeat" not in r.results[0].components
    assert r.should_inject and "Vault" in real_mem.pack(r).text
    real_mem.add_exchange("Morning!", "Good morning!")
    morning = real_mem.retrieve("Morning!")  # (small talk's copies stay marked)
    copies = [x for x in morning.results if x.episode.text.startswith("Morning")]
    assert copies and all("repeat" in x.components for x in copies)


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("what was E1101 about?", ["e1101"]),
        ("remind me about ERESOLVE", ["eresolve"]),
        ("ORA-00942 again", ["ora-00942"]),
        ("got 0x80070005 on windows", ["0x80070005"]),
        ("what's the user_id column", ["user_id"]),
        ("psycopg2.connect failed", ["psycopg2.connect"]),
        ("ERESOLVEってなんだっけ？", ["eresolve"]),  # (Japanese has no lower case)
        ("I'M SO TIRED", []),  # (shouted: no code)
        ("I'm SO HAPPY today", []),
        ("need it ASAP, lmao", []),  # (four capitals or fewer)
        ("e.g. the U.S. trip at 5 a.m., thanks.see you", []),
        ("1.5kg of flour at 2pm-ish", []),
        ("what was the ERESOLVE error from NPM?", ["eresolve"]),  # (two acronyms: no shout)
        ("I'm SOOOO tired, gr8, see u l8r, my PS5 and the U.S.A.", []),
        ("meet at 4pm on the 3rd, ran 5km", []),  # (times, ordinals, amounts)
        ("version 3.11.7 is out", []),
        ("How was your day?", []),
    ],
)
def test_the_codes_a_message_names(text: str, codes: list[str]) -> None:
    assert code_words(text) == codes


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("Gym 7pm-8pm tonight", []),
        ("free 3pm-4pm or 7-8pm", []),
        ("Slept 7h-8h again", []),
        ("Ran 5k-10k today", []),
        ("Lunch was 1000yen again, dinner 3000yen", []),
        ("the bag was 30kyen", []),
        ("a 16GB card", []),
        ("flight NH106, pylint E1101", ["nh106", "e1101"]),
        ("room 1204B at 3pm-4pm", ["1204b"]),
        ("npm says ERESOLVE again", ["eresolve"]),
        ("ORA-00942 at 10am-11am", ["ora-00942"]),
    ],
)
def test_a_range_or_an_amount_run_into_its_unit_is_no_code(text: str, codes: list[str]) -> None:
    """ "Gym 7pm-8pm tonight" and "Lunch was 1000yen again" named a code (7pm-8pm, 1000yen):
    a message told again injected its own old copies, as "Gym at 7pm tonight" did not."""
    assert code_words(text) == codes


def test_a_message_told_again_with_a_range_of_hours_injects_no_copy(
    real_mem: Memory, clock: FixedClock
) -> None:
    """Its range of hours was a code the old copies held: each copy was evidence and all four
    were packed for a message that asks nothing ("Gym at 7pm tonight" packed none)."""
    for reply in ("Have fun!", "Nice!", "Cool.", "Enjoy!"):
        real_mem.add_exchange("Gym 7pm-8pm tonight", reply)
        real_mem.add_exchange("Made curry for dinner", "Yum.")
        clock.advance(days=1)
    again = real_mem.retrieve("Gym 7pm-8pm tonight")
    assert not again.should_inject and real_mem.pack(again).text == ""
    asked = real_mem.retrieve("what time is the gym tonight?")  # (a question still finds it)
    assert asked.should_inject and "7pm-8pm" in real_mem.pack(asked).text


def test_a_question_of_one_code_injects_the_memory_that_holds_it(real_mem: Memory) -> None:
    """ "what was E1101 about?" found its one memory first in the full-text search, but the
    vectors barely weigh a code (cosine .12): the pack was empty."""
    lint = real_mem.add_exchange(
        "pylint complains E1101 no-member on my Django models", "Install pylint-django."
    )
    real_mem.add_exchange(
        "Node 18 にしたら npm ERR! code ERESOLVE が出る", "--legacy-peer-deps を試して"
    )
    for i in range(6):
        real_mem.add_exchange(f"Made pasta for dinner again, the {i}th time", "Yum!")
    r = real_mem.retrieve("what was E1101 about?")
    assert r.should_inject and r.results[0].episode.id == lint
    assert "pylint-django" in real_mem.pack(r).text
    other = real_mem.retrieve("what was W0612 about?")  # (a code no memory holds)
    assert not other.should_inject


def test_the_words_of_a_time_asked_are_not_searched_as_a_topic(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "What did we talk about last week?" searched "last" and "week" as words: every
    Python traceback ("most recent call last") matched, and was packed with 'shares "last"'."""
    traceback = real_mem.add_exchange(
        "Traceback (most recent call last): ModuleNotFoundError: No module named 'yaml'",
        "pip install pyyaml",
    )
    clock.advance(days=20)
    week = real_mem.add_exchange("Booked the flights to Osaka for June", "Exciting!")
    clock.advance(days=6)
    for question in ("what did we talk about last week?", "先週何話したっけ"):
        r = real_mem.retrieve(question)
        assert r.results[0].episode.id == week
        tb = [x for x in r.results if x.episode.id == traceback]
        assert all("bm25_rank" not in x.components for x in tb)
        assert 'shares "last"' not in real_mem.pack(r).text
    found = real_mem.retrieve("what was the pip error with yaml last week?")  # (other words stay)
    assert any(x.episode.id == traceback and "bm25_rank" in x.components for x in found.results)


def test_a_text_that_starts_with_a_dash_goes_after_two_dashes(tmp_path: Path) -> None:
    """ "-5 degrees outside" read as an option (the README shows the way round it)."""
    db = str(tmp_path / "m.db")
    runner = CliRunner()
    refused = runner.invoke(app, ["add", "-5 degrees outside", "--db", db])
    assert refused.exit_code == 2 and "-5" in refused.output
    added = runner.invoke(app, ["add", "--db", db, "--", "-5 degrees outside"])
    assert added.exit_code == 0, added.output
    with Memory.open(db) as mem:
        assert mem.get(1).user_text == "-5 degrees outside"


def test_one_text_told_again_takes_one_place_in_the_vector_list(
    real_mem: Memory, clock: FixedClock
) -> None:
    """Six evenings of "Traffic was awful" took six of the vector list's places (their
    vectors are one), and a trip that fitted the question took none."""
    trips = [
        real_mem.add_exchange("Back from a long weekend in Lisbon, the tiles!", "Lovely!"),
        real_mem.add_exchange("We spent a week in Kyoto, so many temples", "Wonderful!"),
    ]
    for _ in range(8):
        clock.advance(days=1)
        real_mem.add_exchange("Traffic was awful", "Ugh, sorry.")
    r = real_mem.retrieve("What places have I travelled to?", limit=10)
    by_vector = sorted(
        (x for x in r.results if "knn_rank" in x.components), key=lambda x: x.components["knn_rank"]
    )
    texts = [x.episode.text for x in by_vector]
    assert len(texts) == len(set(texts))  # (one place per text)
    assert set(trips) <= {x.episode.id for x in by_vector[:3]}


def test_each_part_of_a_split_question_packs_its_answer(mem: Memory) -> None:
    """Split in two, "When is Mochi's birthday and what's our vet called?" ranked the vet
    first in both of its own lists, but the fused score sums every list: below 0.75 of
    the birthday's, it was ``low`` and left out of the pack."""
    mem.add_exchange("Mochi's birthday is on 3 March, she turns four", "Noted!")
    vet = mem.add_exchange("Our vet is Dr. Alvarez at Greenway clinic", "Good to know")
    mem.add_exchange("Tom's birthday party is on 12 June", "Fun!")
    for i in range(5):
        mem.add_exchange(f"Work meeting ran long, day {i}", "Tiring.")
    r = mem.retrieve(
        "When is Mochi's birthday and what's the name of our vet?",
        extra_queries=["Mochi birthday", "vet name"],
    )
    shown = {x.episode.id: x for x in r.results}
    assert vet in shown and shown[vet].relevance != "low"
    assert "Alvarez" in mem.pack(r).text


@pytest.mark.parametrize(
    "greeting", ["おはよう\n今日もがんばる", "Morning!\nCoffee time", "That movie was AMAZING"]
)
def test_a_greeting_of_two_lines_is_still_small_talk(real_mem: Memory, greeting: str) -> None:
    """Its old copies were packed once a paste of several lines stopped being small talk."""
    for _ in range(3):
        real_mem.add_exchange(greeting, "おはよう！")
    r = real_mem.retrieve(greeting)
    copies = [x for x in r.results if x.episode.user_text == greeting]
    assert copies and all("repeat" in x.components for x in copies)
    assert not r.should_inject


def test_a_message_of_three_lines_is_no_small_talk(real_mem: Memory) -> None:
    """Small talk is one or two lines: the third made a pasted note's old copy a repeat."""
    note = "Shopping\nmilk, eggs\nand the dry cleaning"
    copy = real_mem.add_exchange(note, "Got it.")
    real_mem.add_exchange("Lunch was great", "Nice!")
    r = real_mem.retrieve(note)
    assert r.results[0].episode.id == copy and "repeat" not in r.results[0].components


@pytest.mark.parametrize(
    ("text", "leans"),
    [
        ("Wait. When is it?", True),  # (a chat opener is no noun "it" stands for)
        ("Nice! When does it start?", True),
        ("うそのような本当の話があってさ", False),  # (the その of 嘘の)
        ("おそれいりますが明日は休みます", False),
    ],
)
def test_openers_and_words_that_hold_a_demonstrative(text: str, leans: bool) -> None:
    from memengine.retrieve.recent import _leans_back

    assert _leans_back(text.lower()) is leans


def test_a_title_in_quotes_names_no_time() -> None:
    """The song "Yesterday" opened a window on yesterday."""
    from datetime import datetime, timezone

    from memengine.retrieve.temporal import parse_time_window

    now = datetime(2026, 11, 4, 12, tzinfo=timezone.utc)
    assert parse_time_window('my favourite Beatles song is "Yesterday"', now) is None
    assert parse_time_window('you said "last monday" we went hiking', now) is not None
