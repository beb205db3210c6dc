"""Parts of a day a companion chat asks about: "earlier today", "this afternoon", "tonight",
"3 hours ago", さっき, 今日の朝, and "last night" as the night, not yesterday's calendar day."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memengine import Config, FixedClock, Memory
from memengine.retrieve.temporal import parse_time_window

from .helpers import HashEmbedder

NY = ZoneInfo("America/New_York")


def ny(month: int, day: int, hour: int, minute: int = 0, *, fold: int = 0) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=NY, fold=fold)


EVENING = ny(5, 15, 21)  # Friday 15 May 2026, 21:00
AFTER_MIDNIGHT = ny(5, 16, 0, 30)  # Saturday 00:30: Friday's night still
MORNING = ny(5, 15, 9)

Expected = tuple[datetime, datetime] | None

ASKED: list[tuple[str, datetime, Expected]] = [
    # a part of today, told of as past
    ("What did I tell you this afternoon?", EVENING, (ny(5, 15, 12), ny(5, 15, 17))),
    ("what did I tell you earlier today?", EVENING, (ny(5, 15, 0), EVENING)),
    ("Earlier this evening I mentioned a book", EVENING, (ny(5, 15, 17), EVENING)),
    ("What did I eat tonight?", EVENING, (ny(5, 15, 17), EVENING)),
    ("what did I eat for lunch today?", EVENING, (ny(5, 15, 0), EVENING)),
    ("what did I say earlier?", EVENING, (ny(5, 15, 0), EVENING)),
    ("今日の朝何食べたっけ", EVENING, (ny(5, 15, 0), ny(5, 15, 12))),
    ("今日の昼何食べたっけ", EVENING, (ny(5, 15, 10), ny(5, 15, 17))),
    ("午前中何してたっけ", EVENING, (ny(5, 15, 0), ny(5, 15, 12))),
    ("今夜何食べたっけ", EVENING, (ny(5, 15, 17), EVENING)),
    ("今日何話したっけ？", EVENING, (ny(5, 15, 0), EVENING)),
    # hours ago, about then; さっき, "just now": the last three hours
    ("What did I tell you 3 hours ago?", EVENING, (ny(5, 15, 16, 30), ny(5, 15, 19, 30))),
    ("an hour ago", EVENING, (ny(5, 15, 19), EVENING)),
    ("a few hours ago", EVENING, (ny(5, 15, 15), ny(5, 15, 19))),
    ("half an hour ago", EVENING, (ny(5, 15, 19), EVENING)),
    ("3時間前に何話したっけ", EVENING, (ny(5, 15, 16, 30), ny(5, 15, 19, 30))),
    ("数時間前に言ったやつ", EVENING, (ny(5, 15, 15), ny(5, 15, 19))),
    ("さっき何話したっけ", EVENING, (ny(5, 15, 18), EVENING)),
    ("先ほど話した件", EVENING, (ny(5, 15, 18), EVENING)),
    ("What did I tell you just now?", EVENING, (ny(5, 15, 18), EVENING)),
    # last night: the evening before to the early morning, not yesterday's calendar day
    ("what did I do last night?", MORNING, (ny(5, 14, 17), ny(5, 15, 4))),
    ("last evening", MORNING, (ny(5, 14, 17), ny(5, 15, 4))),
    ("昨夜何したっけ", MORNING, (ny(5, 14, 17), ny(5, 15, 4))),
    ("ゆうべ何食べた？", MORNING, (ny(5, 14, 17), ny(5, 15, 4))),
    ("昨日の夜何した？", MORNING, (ny(5, 14, 17), ny(5, 15, 4))),
    ("一昨日の夜", MORNING, (ny(5, 13, 17), ny(5, 14, 4))),
    ("the night before last", MORNING, (ny(5, 13, 17), ny(5, 14, 4))),
    ("What did I tell you yesterday?", MORNING, (ny(5, 14, 0), ny(5, 15, 0))),  # (the day)
    # before the morning cutoff the night is still the day's
    ("what did I eat tonight?", AFTER_MIDNIGHT, (ny(5, 15, 17), AFTER_MIDNIGHT)),
    ("今夜何食べたっけ", AFTER_MIDNIGHT, (ny(5, 15, 17), AFTER_MIDNIGHT)),
    ("earlier today", AFTER_MIDNIGHT, (ny(5, 15, 0), AFTER_MIDNIGHT)),
    ("What did I tell you this afternoon?", AFTER_MIDNIGHT, (ny(5, 15, 12), ny(5, 15, 17))),
    ("this morning", AFTER_MIDNIGHT, (ny(5, 15, 0), ny(5, 15, 12))),
    ("last night", AFTER_MIDNIGHT, (ny(5, 14, 17), ny(5, 15, 4))),
    # …and "yesterday" may be either day: the calendar one and the one before it
    ("What did I tell you yesterday?", AFTER_MIDNIGHT, (ny(5, 14, 0), ny(5, 16, 0))),
    ("昨日何したっけ", AFTER_MIDNIGHT, (ny(5, 14, 0), ny(5, 16, 0))),
    ("the day before yesterday", AFTER_MIDNIGHT, (ny(5, 13, 0), ny(5, 15, 0))),
    # the present, a plan, or not a time: no window, as before
    ("what's my plan this afternoon?", EVENING, None),
    ("What did I have scheduled this afternoon?", EVENING, None),
    ("remind me tonight", EVENING, None),
    ("Remind me to call mom tonight", EVENING, None),
    ("what's planned for tonight?", EVENING, None),
    ("Tonight I'm making curry", EVENING, None),
    ("今日の予定は？", EVENING, None),
    ("what's on today?", EVENING, None),
    ("How are you today?", EVENING, None),
    ("I went to the gym today.", EVENING, None),  # (told, not asked)
    ("today's meeting was long, what did I say?", EVENING, None),
    ("今日は疲れた", EVENING, None),
    ("今日って何日だっけ", EVENING, None),
    ("今日中に終わらせた？", EVENING, None),
    ("明日の午前中に行く", EVENING, None),
    ("今日の昼何にする？", EVENING, None),
    ("今夜は何食べよう", EVENING, None),
    ("試合の1時間前に集合した", EVENING, None),
    ("1時間前には着くようにする", EVENING, None),
    ("I'm busy just now", EVENING, None),
    ("I left earlier than usual", EVENING, None),
    # a plan asked with a verb's plain form before んだっけ, or what day it is: no window
    ("今日何するんだっけ", MORNING, None),
    ("what did I say I was doing tonight", EVENING, None),
    ("what did I tell you about tonight?", EVENING, None),  # (tonight is the topic)
    ("what was on for tonight", EVENING, None),
    ("what did we talk about tonight?", EVENING, (ny(5, 15, 17), EVENING)),  # (when)
    ("今夜のこと何て言ったっけ", EVENING, None),
    ("今夜の件、何て話したっけ", EVENING, None),
    ("what was I going to do tonight?", EVENING, None),
    ("今日って何があるんだっけ", MORNING, None),
    ("今夜って誰と会うんだっけ", EVENING, None),
    ("今日の夜って何するんだっけ", EVENING, None),
    ("今日って何の日だっけ", EVENING, None),
    ("今日って燃えるゴミの日だっけ", MORNING, None),
    ("今日何時から仕事だっけ", MORNING, None),
    ("What did I tell you this afternoon?", ny(5, 15, 10), None),  # (still to come)
    # "earlier" after a filler, before what was said, or beside a past verb of telling
    ("wait what did i say earlier", EVENING, (ny(5, 15, 0), EVENING)),
    ("ok so what did i say earlier", EVENING, (ny(5, 15, 0), EVENING)),
    ("hey what did I tell you earlier", EVENING, (ny(5, 15, 0), EVENING)),
    ("so what did we talk about today", EVENING, (ny(5, 15, 0), EVENING)),
    ("sorry, what did I say earlier", EVENING, (ny(5, 15, 0), EVENING)),
    ("what did i tell u earlier abt my mom", EVENING, (ny(5, 15, 0), EVENING)),
    ("you said something earlier about sleep", EVENING, (ny(5, 15, 0), EVENING)),
    ("remember what i told you earlier", EVENING, (ny(5, 15, 0), EVENING)),
    ("remember the recipe I sent earlier?", EVENING, (ny(5, 15, 0), EVENING)),
    ("I told you earlier that my boss was mad", EVENING, (ny(5, 15, 0), EVENING)),
    ("like i said earlier", EVENING, (ny(5, 15, 0), EVENING)),
    ("as I said earlier, I'm moving", EVENING, (ny(5, 15, 0), EVENING)),
    ("earlier you said you liked jazz", EVENING, (ny(5, 15, 0), EVENING)),
    ("you mentioned earlier that you liked jazz", EVENING, (ny(5, 15, 0), EVENING)),
    ("going back to what we discussed earlier", EVENING, (ny(5, 15, 0), EVENING)),
    ("what did I just say", EVENING, (ny(5, 15, 18), EVENING)),
    ("what did you just say", EVENING, (ny(5, 15, 18), EVENING)),
    # Japanese asked of today's past without ？ or っけ
    ("今日何話した", EVENING, (ny(5, 15, 0), EVENING)),
    ("今日何食べた", EVENING, (ny(5, 15, 0), EVENING)),
    ("今日話したこと覚えてる", EVENING, (ny(5, 15, 0), EVENING)),
    ("今日何話したか教えて", EVENING, (ny(5, 15, 0), EVENING)),
    ("今日何したか教えて", EVENING, (ny(5, 15, 0), EVENING)),
    ("今日何があったか教えて", EVENING, (ny(5, 15, 0), EVENING)),
    ("今日話した内容まとめて", EVENING, (ny(5, 15, 0), EVENING)),
    ("今日どうだった？", EVENING, (ny(5, 15, 0), EVENING)),
    ("ちょっと前に言ったやつ", EVENING, (ny(5, 15, 18), EVENING)),
    ("少し前に話したこと覚えてる？", EVENING, (ny(5, 15, 18), EVENING)),
    # …but not the present, a plan, "sooner" nor another time
    ("I'll tell you earlier next time", EVENING, None),
    ("I should have told you earlier", EVENING, None),
    ("I wish I'd said it earlier", EVENING, None),
    ("I said I'd come earlier", EVENING, None),
    ("she told me to come earlier", EVENING, None),
    ("I told him to leave earlier than planned", EVENING, None),
    ("I told you earlier in the week", EVENING, None),
    ("what did I do earlier that day", EVENING, None),
    ("I mentioned it in my earlier message", EVENING, None),
    ("so what should I do today", EVENING, None),
    ("hey how are you today", EVENING, None),
    ("remember to take my meds today", EVENING, None),
    ("I just told my boss I quit", EVENING, None),
    ("今日どうだった", EVENING, None),
    ("今日何食べる", EVENING, None),
    ("今日何する", EVENING, None),
    ("今日何時に帰る", EVENING, None),
    ("今日どうする？", EVENING, None),
    ("今日話そう", EVENING, None),
    ("今日何もしなかった", EVENING, None),
    ("今日は何だか疲れた", EVENING, None),
    ("今日誰かに会った", EVENING, None),
    ("今日何するか教えて", EVENING, None),
    ("今日何食べたらいいか教えて", EVENING, None),
    ("試合の少し前に話した", EVENING, None),
    ("少し前から頭痛い", EVENING, None),
    # words around a part of the day keep their own reading
    ("was it last week or earlier?", EVENING, (ny(5, 4, 0), ny(5, 11, 0))),
    ("昨日の午前中に行った", EVENING, (ny(5, 14, 0), ny(5, 15, 0))),
]


@pytest.mark.parametrize(
    ("text", "now", "expected"), ASKED, ids=[f"{c[0]}@{c[1]:%d-%H%M}" for c in ASKED]
)
def test_parts_of_a_day(text: str, now: datetime, expected: Expected) -> None:
    assert parse_time_window(text, now) == expected


def test_hours_ago_count_elapsed_time_across_a_clock_change() -> None:
    """At 03:00 on the night the clocks go back, "3 hours ago" is three hours of elapsed
    time back, not of the wall clock (which shows 01:00–02:00 twice)."""
    now = ny(11, 1, 3)
    window = parse_time_window("What did I say 3 hours ago?", now)
    assert window is not None
    start, end = (w.timestamp() for w in window)
    assert end == now.timestamp() - 1.5 * 3600 and end - start == 3 * 3600


def _store(path: Path, episodes: list[tuple[datetime, str]]) -> Memory:
    mem = Memory.open(
        path,
        config=Config(time_zone="America/New_York"),
        embedder=HashEmbedder(),
        clock=FixedClock(datetime(2026, 1, 1, tzinfo=timezone.utc)),
    )
    for at, text in episodes:
        mem.add_exchange(text, "Got it.", occurred_at=at)
    return mem


def test_this_afternoon_packs_the_afternoons_memory(tmp_path: Path) -> None:
    """Asked at 21:00, "What did I tell you this afternoon?" packs what was told at 14:00
    (it packed nothing: the afternoon named no window, while "this morning" did); "what's my
    plan this afternoon?" still names none."""
    with _store(
        tmp_path / "m.db",
        [
            (ny(5, 15, 8), "Morning: my manager moved the launch to June"),
            (ny(5, 15, 14), "The dentist said I need a crown"),
            (ny(5, 14, 14), "Got a parking ticket downtown"),
            (ny(5, 8, 10), "Bought new running shoes"),
        ],
    ) as mem:
        asked = mem.retrieve("What did I tell you this afternoon?", now=EVENING, record=False)
        assert asked.time_window is not None
        assert asked.results[0].episode.text.startswith("The dentist")
        packed = mem.pack(asked).text
        assert "crown" in packed and "parking" not in packed
        plan = mem.retrieve("what's my plan this afternoon?", now=EVENING, record=False)
        assert plan.time_window is None


def test_last_night_is_the_night_not_yesterdays_date(tmp_path: Path) -> None:
    """ "what did I do last night?" at 09:00 packs what was told at 01:30 that night (it was
    of today's date, so ``low`` and left out); the next morning it packs that night's 23:50,
    not the night before's 00:20 party, which was of yesterday's date."""
    with _store(
        tmp_path / "m.db",
        [
            (ny(10, 31, 23, 50), "Carved a pumpkin with my niece"),
            (ny(11, 1, 0, 20), "Halloween party ran late, I dressed as a pirate"),
            (ny(11, 1, 1, 30), "Couldn't sleep so I baked banana bread"),
            (ny(11, 1, 23, 50), "Watched the Giants lose again"),
        ],
    ) as mem:
        first = mem.retrieve("what did I do last night?", now=ny(11, 1, 9), record=False)
        packed = mem.pack(first).text
        assert "banana bread" in packed and "pirate" in packed and "pumpkin" in packed
        assert "Giants" not in packed
        after = mem.retrieve("what did I do last night?", now=ny(11, 2, 9), record=False)
        packed = mem.pack(after).text
        assert "Giants" in packed and "pirate" not in packed and "banana" not in packed
        in_window = {
            r.episode.text.split("\n")[0]
            for r in after.results
            if r.components.get("window", 0.0) >= 1.0
        }
        assert any("Giants" in t for t in in_window)
        assert not any("pirate" in t for t in in_window)


def test_earlier_today_and_just_now_in_japanese_find_todays_memory(tmp_path: Path) -> None:
    """さっき and 今日の朝 name a window: the memory of then comes first and is packed."""
    with _store(
        tmp_path / "m.db",
        [
            (ny(5, 15, 7, 30), "朝ごはんにフレンチトーストを作った"),
            (ny(5, 15, 19, 30), "妹から電話があって来月結婚するって"),
            (ny(5, 12, 19, 30), "駅前の本屋で小説を買った"),
        ],
    ) as mem:
        for question, told in (
            ("さっき何話したっけ？", "妹"),
            ("今日の朝何話したっけ？", "フレンチ"),
        ):
            retrieval = mem.retrieve(question, now=EVENING, record=False)
            assert retrieval.time_window is not None, question
            assert told in retrieval.results[0].episode.text, question
            assert told in mem.pack(retrieval).text, question


def test_a_part_of_the_day_in_a_later_window_is_read_by_its_own_time() -> None:
    """A memory told at 22:00 that says "tonight" names that evening (read from when it was
    told), as one that says "this morning" names that morning."""
    told = ny(5, 10, 22)
    assert parse_time_window("Tonight was fun, we went bowling", told) == (ny(5, 10, 17), told)
    assert parse_time_window("Tonight was fun", told - timedelta(hours=6)) is None


def test_earlier_and_a_question_without_its_mark_find_todays_memory(tmp_path: Path) -> None:
    """ "ok so what did i say earlier", "remember what i told you earlier" and 今日何話した
    (no ？ nor っけ) name today so far: what was told today comes first and is packed, not
    last week's (they named no window, and last week's came first)."""
    with _store(
        tmp_path / "m.db",
        [
            (ny(5, 15, 14), "The dentist said I need a crown"),
            (ny(5, 8, 14), "Got a parking ticket downtown"),
            (ny(5, 15, 10), "上司に企画書を褒められた"),
            (ny(5, 8, 10), "駅前の本屋で小説を買った"),
        ],
    ) as mem:
        for question, told, not_told in (
            ("ok so what did i say earlier", "crown", "parking"),
            ("remember what i told you earlier", "crown", "parking"),
            ("wait what did i say earlier", "crown", "parking"),  # ("wait" names no topic)
            ("hey what did I mention earlier?", "crown", "parking"),
            ("今日何話した", "企画書", "小説"),
        ):
            retrieval = mem.retrieve(question, now=EVENING, record=False)
            assert retrieval.time_window is not None, question
            assert retrieval.results[0].episode.occurred_at.date() == EVENING.date(), question
            packed = mem.pack(retrieval).text
            assert told in packed and not_told not in packed, question
