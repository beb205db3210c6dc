"""English corrections: "no wait, it's Tuesday, not Monday" is a later change, as
「月曜じゃなくて火曜」 is, and plain negations are none."""

from __future__ import annotations

import pytest

from memengine import FixedClock, Memory
from memengine.retrieve.change_words import change_sentences

FILLER = [
    ("went jogging along the river", "Nice"),
    ("cooked curry tonight", "Yum"),
    ("watched a movie with Ken", "Fun"),
]


def _yoga(mem: Memory, clock: FixedClock, new: str) -> tuple[int, int]:
    """Small talk, "My yoga class is on Monday evenings", ``new`` two minutes later, and three
    days on: the two ids."""
    for user, reply in FILLER:
        mem.add_exchange(user, reply)
        clock.advance(minutes=30)
    old = mem.add_exchange("My yoga class is on Monday evenings", "Good routine")
    clock.advance(minutes=2)
    later = mem.add_exchange(new, "Got it")
    clock.advance(days=3)
    return old, later


def test_a_correction_is_packed_first_and_marked(real_mem: Memory, clock: FixedClock) -> None:
    old, new = _yoga(
        real_mem, clock, "no wait, it's Tuesday, not Monday. Yoga is on Tuesday evenings"
    )
    r = real_mem.retrieve("When is my yoga class?")
    first = r.results[0]
    assert first.episode.id == new
    assert first.components.get("later_change") == 1.0
    assert first.components.get("changes") == float(old)
    packed = real_mem.pack(r).episode_ids
    assert packed[0] == new
    assert "same subject" in real_mem.pack(r).text


def test_a_plain_wait_changes_nothing(real_mem: Memory, clock: FixedClock) -> None:
    _yoga(real_mem, clock, "I can't wait for yoga on Monday, it's not bad at all")
    r = real_mem.retrieve("When is my yoga class?")
    assert not any("later_change" in x.components for x in r.results)


@pytest.mark.parametrize(
    "text",
    [
        "no wait, it's Tuesday, not Monday.",
        "No, wait, the appointment is on Thursday",
        "Wait, no, the dentist is on the 19th",
        "It's Tuesday, not Monday.",
        "I mean 7pm, not 6pm",
        "The party is on Saturday, not Friday",
        "My sister, not my brother, lives in Kyoto",
        "It's not Monday but Tuesday.",
        "Scratch that, the meeting is at 3",
        "Correction: the flight leaves at 9",
        "I misspoke earlier, the class is on Wednesday",
        "Sorry, I meant Tuesday",
        "Actually, it was Osaka",
        "Actually it's my sister who lives in Kyoto",
    ],
)
def test_a_correction_is_a_change_word(text: str) -> None:
    assert change_sentences(text)


@pytest.mark.parametrize(
    "text",
    [
        "Not really.",
        "I'm not sure.",
        "Not bad, not bad at all",
        "Not yet",
        "Why not",
        "Tomorrow, if not today",
        "Not that I know of",
        "Not much, honestly",
        "It's not only fun but also cheap",
        "I'm not tired but I'll go to bed",
        "I'm not hungry but fine",
        "Sure, not a problem",
        "Me, not really",
        "It's good, not great",
        "Honestly, not a fan",
        "I don't eat meat, not even fish",
        "I mean, it's fine",
        "I meant to call you",
        "I actually liked it",
        "Wait for me",
        "I can't wait, so excited",
        "Wait, no one told me",
        "There's no wait at lunch on Monday",
        "Tuesday, not Monday?",
        "Is it Tuesday, not Monday",
    ],
)
def test_a_negation_filler_or_question_is_no_correction(text: str) -> None:
    assert change_sentences(text) == []


def test_japanese_and_english_corrections_agree() -> None:
    assert change_sentences("あ、違った、月曜じゃなくて火曜の夜だった")
    assert change_sentences("Oh, it's Tuesday, not Monday")
    assert change_sentences("月曜じゃなくて火曜？") == []
    assert change_sentences("Tuesday, not Monday?") == []
