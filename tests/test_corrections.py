"""A correction said in the next turn ("Actually it's Tuesday, not Monday", いや、火曜だった)
comes in before the memory it corrects, marked as its change: on real SQLite with the
offline default embedder, and the words that say a turn corrects."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from memengine import FixedClock, Memory
from memengine.embed.usem3 import USEM3Embedder
from memengine.models import Episode, EpisodeKind
from memengine.retrieve.corrections import corrects

T0 = datetime(2026, 9, 1, 20, 0, tzinfo=timezone.utc)
FILLER = [
    ("今日も仕事疲れた〜", "お疲れさま！"),
    ("夜ご飯はカレーにした", "いいね"),
    ("Work was so busy today", "Rest up."),
    ("Made pasta tonight", "Yum!"),
]


def _turn(user: str) -> Episode:
    return Episode(
        id=1, agent="u", kind=EpisodeKind.exchange, user_text=user, reply_text="OK",
        content=f"User: {user}\nPartner: OK", occurred_at=T0, created_at=T0,
    )  # fmt: skip


@pytest.mark.parametrize(
    "said",
    [
        "actually it's Tuesday, not Monday",
        "Sorry, I meant Tuesday",
        "Oops, it's on Tuesday at 6pm, not Monday",
        "No wait, Tuesday",
        "Scratch that, the meeting is at 4",
        "It's Tuesday, not Monday 😅",
        "いや、火曜だった",
        "ごめん、月曜じゃなくて火曜だった",
        "火曜の間違いだった",
    ],
)
def test_a_short_turn_that_corrects_is_read_as_one(said: str) -> None:
    assert corrects(_turn(said))


@pytest.mark.parametrize(
    "said",
    [
        "Actually, can you help me plan the trip?",  # a new request
        "Actually, what time is it in Tokyo?",
        "Sorry, it's been a long day",  # an apology, no correction
        "いや〜今日は疲れた",  # a sigh
        "いや、それがさ、聞いてよ",
        "Is it Tuesday, not Monday?",  # a question
        "Actually " + "the whole story is long, " * 8,  # a long message opens so as often
    ],
)
def test_other_turns_are_no_correction(said: str) -> None:
    assert not corrects(_turn(said))


def _yoga(mem: Memory, fact: str, correction: str, *, gap: timedelta, speaker: str = "") -> int:
    """Filler over twelve days, the fact on day 3 and ``correction`` ``gap`` after it;
    the correction's id."""
    meta = {"speaker": speaker} if speaker else None
    for d in range(12):
        said, reply = FILLER[d % 4]
        mem.add_exchange(said, reply, agent="u", occurred_at=T0 + timedelta(days=d))
    at = T0 + timedelta(days=3, minutes=5)
    mem.add_exchange(fact, "OK!", agent="u", occurred_at=at, metadata=meta)
    other = {"speaker": "Partner"} if speaker else None
    return mem.add_exchange(
        correction, "了解！", agent="u", occurred_at=at + gap, metadata=other or meta
    )


@pytest.mark.parametrize(
    ("fact", "correction", "question", "says"),
    [
        (
            "My yoga class is on Monday at 6pm",
            "actually it's Tuesday, not Monday",
            "When is my yoga class?",
            "corrects the memory of 20:05 the same day",
        ),
        (
            "My yoga class is on Monday at 6pm",
            "Sorry, I meant Tuesday",
            "When is my yoga class?",
            "corrects the memory of 20:05 the same day",
        ),
        (
            "ヨガは月曜の夜7時からなんだ",
            "いや、火曜だった",
            "ヨガって何曜日だっけ？",
            "の記憶の訂正",
        ),
    ],
)
def test_a_correction_in_the_next_turn_is_packed_before_what_it_corrects(
    tmp_path: Path, usem3: USEM3Embedder, fact: str, correction: str, question: str, says: str
) -> None:
    """It names no subject of its own: the question found the old turn alone (the
    correction ranked `low`, unpacked, and the reply told the old day as the fact)."""
    now = T0 + timedelta(days=13)
    with Memory.open(tmp_path / "m.db", embedder=usem3, clock=FixedClock(now)) as mem:
        fixed = _yoga(mem, fact, correction, gap=timedelta(minutes=1))
        r = mem.retrieve(question, agent="u", now=now)
        pack = mem.pack(r, principles=False)
        assert fixed in pack.episode_ids
        assert pack.text.index(correction) < pack.text.index(fact)
        assert says in pack.text
        item = next(x for x in r.results if x.episode.id == fixed)
        assert item.relevance != "low" and item.components["correction"] == 1.0


def test_another_speakers_turn_or_a_later_one_is_no_correction(
    tmp_path: Path, usem3: USEM3Embedder
) -> None:
    """A chat log's next message by the other person ("Actually, …") corrects nothing its
    speaker said; a turn past the neighbour gap (an hour) is no next turn."""
    now = T0 + timedelta(days=13)
    for name, gap, speaker in (
        ("other.db", timedelta(minutes=1), "Caroline"),
        ("late.db", timedelta(hours=3), ""),
    ):
        with Memory.open(tmp_path / name, embedder=usem3, clock=FixedClock(now)) as mem:
            said = "actually it's Tuesday, not Monday"
            fixed = _yoga(mem, "My yoga class is on Monday at 6pm", said, gap=gap, speaker=speaker)
            r = mem.retrieve("When is my yoga class?", agent="u", now=now)
            assert not any("correction" in x.components for x in r.results)
            item = next((x for x in r.results if x.episode.id == fixed), None)
            assert item is None or "changes" not in item.components
