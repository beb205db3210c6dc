"""English corrections: "no wait, it's Tuesday, not Monday" is a later change, as
「月曜じゃなくて火曜」 is, when it sets a value against another of its kind (a weekday, a
time, an amount, a name); plain negations, contrasts and fillers are none ("It's a
marathon, not a sprint", "Actually, it's fine")."""

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
    # (said in the next turn: a correction of it, :mod:`memengine.retrieve.corrections`)
    assert "corrects the memory of" in real_mem.pack(r).text


def test_a_contrast_is_no_later_change(real_mem: Memory, clock: FixedClock) -> None:
    """ "My yoga class is a marathon, not a sprint." shares the yoga class with the Monday
    memory, but sets no value against another: it is no later change of it."""
    old, _ = _yoga(real_mem, clock, "My yoga class is a marathon, not a sprint.")
    r = real_mem.retrieve("When is my yoga class?")
    assert not any("later_change" in x.components for x in r.results)
    assert real_mem.pack(r).episode_ids[0] == old


def test_a_statement_opening_with_a_verb_like_noun_is_a_correction(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "Book club meets on Thursday, not Wednesday." opens with "book" but tells what is so
    (no object after it): it changes the Wednesday memory; "Book it for Thursday, not
    Wednesday." asks for something and changes nothing."""
    for user, reply in FILLER:
        real_mem.add_exchange(user, reply)
        clock.advance(minutes=30)
    old = real_mem.add_exchange("My book club meets on Wednesday evenings", "Fun")
    clock.advance(minutes=2)
    asked = real_mem.add_exchange("Book it for Thursday, not Wednesday.", "Sure")
    clock.advance(minutes=2)
    new = real_mem.add_exchange("Book club meets on Thursday, not Wednesday.", "Got it")
    clock.advance(days=3)
    r = real_mem.retrieve("When is book club?")
    marked = {x.episode.id: x.components for x in r.results}
    assert marked[new].get("later_change") == 1.0
    assert marked[new].get("changes") == float(old)
    assert "later_change" not in marked.get(asked, {})
    assert real_mem.pack(r).episode_ids[0] == new


def test_a_request_with_a_bare_noun_changes_nothing(real_mem: Memory, clock: FixedClock) -> None:
    """ "Get concert tickets for Sunday, not Saturday." asks for something (a bare noun, then
    the time it is meant for): it is no later change of the Saturday memory, which still leads
    the pack; "Don't forget the concert is on Sunday, not Saturday." tells what is so and
    changes it."""
    for user, reply in FILLER:
        real_mem.add_exchange(user, reply)
        clock.advance(minutes=30)
    old = real_mem.add_exchange("The jazz concert is on Saturday night", "Fun")
    clock.advance(minutes=2)
    asked = real_mem.add_exchange("Get concert tickets for Sunday, not Saturday.", "Sure")
    clock.advance(days=3)
    r = real_mem.retrieve("When is the jazz concert?")
    assert not any("later_change" in x.components for x in r.results)
    assert real_mem.pack(r).episode_ids[0] == old
    told = real_mem.add_exchange("Don't forget the concert is on Sunday, not Saturday.", "Ok")
    clock.advance(days=1)
    r = real_mem.retrieve("When is the jazz concert?")
    marked = {x.episode.id: x.components for x in r.results}
    assert marked[told].get("later_change") == 1.0  # (of the concert, either older one)
    assert marked[told].get("changes") in (float(old), float(asked))
    assert "later_change" not in marked.get(asked, {})


def test_a_correction_after_an_ellipsis_is_a_later_change(
    real_mem: Memory, clock: FixedClock
) -> None:
    """ "Yoga is Tuesday... not Monday." is one sentence (its dots go on before a lowercase
    "not"): it changes the Monday memory, as "Yoga is Tuesday, not Monday." would."""
    old, new = _yoga(real_mem, clock, "Yoga is Tuesday... not Monday.")
    r = real_mem.retrieve("When is my yoga class?")
    marked = {x.episode.id: x.components for x in r.results}
    assert marked[new].get("later_change") == 1.0
    assert marked[new].get("changes") == float(old)
    assert real_mem.pack(r).episode_ids[0] == new


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
        "It's Sato, not Tanaka",
        "Rent is $1,950, not $1,800.",
        "Not Monday — Tuesday.",
        "It's on Tuesday not Monday.",
        "It's Tuesday, not Monday 😅",
        "It's Tuesday, not Monday lol",
        "Actually, Tuesday.",
        "My bad, it's Tuesday.",
        "Make that Tuesday.",
        "I said Monday but I meant Tuesday.",
        "Yoga is 火曜, not 月曜.",
        "The dentist is on the 19th, not the 18th",
        "Monday — no, Tuesday",
        "It's not Monday but Tuesday.",
        "Scratch that, the meeting is at 3",
        "Correction: the flight leaves at 9",
        "I misspoke earlier, the class is on Wednesday",
        "Sorry, I meant Tuesday",
        "Actually, it was Osaka",
        "Actually it's my sister who lives in Kyoto",
        "Yoga is at 7pm, not 7am.",  # (a written meridiem is its own value)
        "It's on June 19, not the 12th.",  # (a date's day against a day of the month)
        "No wait, it's Friday, not Saturday.",  # (a retracting opener, before a plan word)
        "No wait, I'll go on Friday, not Saturday.",
        # (what a thing will be is so; a noun or a name is no request)
        "The party will be on Saturday, not Friday.",
        "The meeting will be at 3pm, not 2pm.",
        "My rent will be $1,950, not $1,800.",
        "Oops, the wedding will be on June 19, not June 12.",
        "Book club is on Thursday, not Wednesday.",
        "Check-in is at 3pm, not 2pm.",
        "Pick-up is at 4pm, not 5pm.",
        "Check-up is on the 19th, not the 12th.",
        "Meet-up is on Friday, not Thursday.",
        "Pay day is the 25th, not the 20th.",
        "Mark's birthday is June 19, not June 12.",
        "Take-off is at 7am, not 7pm.",
        "Don't forget it's Tuesday, not Monday.",
        "Don't forget that it's Tuesday, not Monday.",
        "Please note it's Tuesday, not Monday.",
        "Also don't forget it's Tuesday, not Monday.",
        "Yoga is usually on Tuesdays, not Mondays.",
        "The party is going to be on Saturday, not Friday.",  # (as "will be")
        "Check in is at 3pm, not 2pm.",  # (a be-verb in the first four words: a statement)
        # (a verb-like first word with no object after it: a statement, no request)
        "Book club meets on Thursday, not Wednesday.",
        "Book club's on Thursday, not Wednesday.",
        "Book club will be on Thursday, not Wednesday.",
        "Pay day's the 25th, not the 20th.",
        "Call time's 7am, not 8am.",
        "Plan B starts on Friday, not Saturday.",  # (one letter is no name)
        "Set list starts at 9pm, not 8pm.",
        "Visit hours end at 8pm, not 9pm.",
        "Check out time is 11am, not noon.",  # (a particle, then a be-verb in four words)
        "Book fair opens on Friday, not Saturday.",
        "Move day falls on Saturday, not Sunday.",
        "Mark said the party is Saturday, not Friday.",  # (a name with a verb after it)
        "Remember: book club meets on Thursday, not Wednesday.",
        "Make sure it's Friday, not Saturday.",
        "Let me correct myself: Tuesday, not Monday.",  # (takes back what was said)
        "Let me rephrase, yoga is Tuesday, not Monday.",
        "Let me clarify that it's Tuesday, not Monday.",
        "Let me fix that: Tuesday, not Monday.",
        # (a bare noun after a verb-like first word, its time told with "on" or "at", or a
        # be-verb after its "for": a statement; "Pay rent on the 1st" is a known miss)
        "Book club on Thursday, not Wednesday.",
        "Call time for the shoot is 7am, not 8am.",
        "Pay rent on the 1st, not the 5th.",
        # (an ellipsis before a lowercase "not" goes on with its sentence)
        "Yoga is Tuesday... not Monday.",
        "Yoga is Tuesday...not Monday.",
        "It's Tuesday.. not Monday",
        "Yoga's on Tuesday... not Monday lol",
        "Yoga is Tuesday\u2026 not Monday.",
        # (an amount paid by a unit, its thousands grouped or not)
        "Rent is $1,950/mo, not $1,800/mo.",
        "Rent is $1950/mo, not $1800/mo.",
        "It's $20/hr, not $15/hr.",
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
        # (a contrast of words that are no values of one kind, nor names)
        "It's a marathon, not a sprint.",
        "Quality, not quantity.",
        "Love, not war.",
        "It's me, not you.",
        "I love it, not gonna lie.",
        "Seriously, not funny.",
        "It's not a bug but a feature.",
        "I'm not angry, but disappointed.",
        "Coffee, not tea, is my thing.",
        "I'm a morning person, not a night owl.",
        "I'm tired, not sick.",
        "I'm 30, not 29.",
        "Monday, not 7pm",
        "Rent is $1,950, not 1,800円",
        # (a list going on)
        "We meet Tuesday, not Monday, and Friday.",
        # (the same value, or a bare time that may be the written one)
        "It's Monday, not Monday.",
        "The dentist is at 19:00, not 7pm.",
        # (a plan, a maybe, a habit or a request: nothing corrected)
        "I'll go on Friday, not Saturday.",
        "I might go Friday, not Saturday.",
        "Maybe Friday, not Saturday.",
        "If it's Friday, not Saturday, I'll go.",
        "Let's meet Friday, not Saturday.",
        "We should go to Kyoto, not Osaka.",
        "I usually go on Mondays, not Tuesdays.",
        "Call me on Monday, not Tuesday.",
        "Ask Ken, not Mia.",
        "I won't go Friday, not Saturday.",
        "Book it for Friday, not Saturday.",
        "Check the 19th, not the 12th.",
        "We'll meet on Friday, not Saturday.",
        "Go on Friday, not Saturday.",
        # (a verb and its object, no be-verb in the clause's first four words: a request)
        "Call mom on Sunday, not Saturday.",
        "Please call mom on Sunday, not Saturday.",
        "Text dad on Sunday, not Saturday.",
        "Call grandma on Sunday, not Saturday.",
        "Buy 2 tickets for Friday, not Saturday.",
        "Come over on Sunday, not Saturday.",
        "Call me at 7pm, not 8pm.",
        "Ok, also book it for Friday, not Saturday.",
        "Send it to Ken, not Mia.",
        "Book the table for 7pm, not 8pm.",
        "Get the tickets for Friday, not Saturday.",
        # (a bare noun or two after a request's verb, then the time it is meant for)
        "Get tickets for Friday, not Saturday.",
        "Order pizza for 7pm, not 8pm.",
        "Book seats for Sunday, not Saturday.",
        "Please book seats for Sunday, not Saturday.",
        "Get concert tickets for the 19th, not the 12th.",
        # (dots before a capital end a sentence; what follows them corrects nothing)
        "I was tired... Not Monday though, Tuesday was worse.",
        "I was tired... not Monday though, Tuesday was worse.",
        "Tuesday... Not Monday.",
        "Make sure to call on Friday, not Saturday.",
        "Let me know by Friday, not Saturday.",  # (the speaker's plan)
        "Don't forget to call mom on Sunday, not Saturday.",
        "Let me book it for Friday, not Saturday.",  # (the speaker's plan, as "I'll")
        "Let me fix dinner on Friday, not Saturday.",  # (a plan: "fix" of a meal)
        "Let me fix the bike on Saturday, not Sunday.",
        "Come home on Friday, not Saturday.",
        "Come early on Friday, not Saturday.",
        "Call Mark's mom on Sunday, not Saturday.",  # (a name's "'s" before someone)
        "Ask Ken's wife on Monday, not Tuesday.",
        "Call TJ on Monday, not Tuesday.",  # (a name in capitals)
        "I'm going to go on Saturday, not Friday.",
        "It's $2 million, not $2m.",  # (the same amount)
        # (an opener with no value nor name after it)
        "Actually, it's fine.",
        "Actually it's been a great day.",
        "Actually, it's raining.",
        "Actually, that's so sweet of you.",
        "Actually, it's fine, yoga on Monday evenings is relaxing.",
        "No wait, that's amazing!",
        "No wait, I love it!",
        "No wait, don't go yet.",
        "Sorry, I meant to say thanks.",
    ],
)
def test_a_negation_filler_or_question_is_no_correction(text: str) -> None:
    assert change_sentences(text) == []


def test_japanese_and_english_corrections_agree() -> None:
    assert change_sentences("あ、違った、月曜じゃなくて火曜の夜だった")
    assert change_sentences("Oh, it's Tuesday, not Monday")
    assert change_sentences("月曜じゃなくて火曜？") == []
    assert change_sentences("Tuesday, not Monday?") == []
