"""Values of a closed kind (:mod:`memengine.values`): what the answer judge and the English
corrections compare, each only with a value of its own kind."""

from __future__ import annotations

import time

import pytest

from memengine.values import closed_values, kanji_number, same_kind_change


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Yoga on Mondays at 7pm", {("weekday", "0"), ("time", "19:00")}),
        ("19:30, or 7:30 p.m.", {("time", "19:30")}),
        ("ヨガは月曜の夜7時半", {("weekday", "0"), ("time", "7:30|19:30")}),
        ("3月3日に1,800円", {("date", "3/3"), ("amount ¥", "1800")}),
        ("Rent is $1,950 from Mar 3", {("amount $", "1950"), ("date", "3/3")}),
        ("Saturday, June 6 in Kyoto", {("weekday", "5"), ("date", "6/6")}),
        ("the 6th of June", {("date", "6/6")}),
        ("in May, not March", {("month", "5"), ("month", "3")}),
        ("the dentist is on the 19th", {("day", "19")}),
        ("19日に変更", {("day", "19")}),
        ("3万円", {("amount ¥", "30000")}),
        ("12万円", {("amount ¥", "120000")}),
        ("十二万円", {("amount ¥", "120000")}),
        ("120,000 yen", {("amount ¥", "120000")}),
        ("¥3,000", {("amount ¥", "3000")}),
        ("1,800ドル", {("amount $", "1800")}),
        ("$2.50", {("amount $", "2.5")}),
        ("5 kg", {("amount kg", "5")}),
        ("12pm", {("time", "12:00")}),
        ("noon", {("time", "12:00")}),
        ("12am", {("time", "0:00")}),
        ("midnight", {("time", "0:00")}),
        ("half past seven", {("time", "7:30|19:30")}),
        ("It's 7 o'clock", {("time", "7:00|19:00")}),
        ("the meeting is at 3", {("time", "3:00|15:00")}),
        ("at 8 not 7 btw", {("time", "8:00|20:00")}),  # (what sets it against another)
        ("no it's at 8 instead", {("time", "8:00|20:00")}),
        ("are we still on at 7?", {("time", "7:00|19:00")}),
        ("Movie night is Saturday at 8\nOK!", {("weekday", "5"), ("time", "8:00|20:00")}),
        ("my streak is at 5 lol", set()),  # (a count: corrections read their own hours)
        ("I'm at 3 then I'll stop", set()),
        ("三時", {("time", "3:00|15:00")}),
        ("午後7時半", {("time", "19:30")}),
        ("See you Tue.", {("weekday", "1")}),
        ("Sat, 10:30am", {("weekday", "5"), ("time", "10:30")}),
        ("7 P.M.", {("time", "19:00")}),
        ("7.30pm", {("time", "19:30")}),
        ("午前7時", {("time", "7:00")}),
        ("9am-5pm", {("time", "9:00"), ("time", "17:00")}),
        ("1万2000円", {("amount ¥", "12000")}),
        ("3万5000円", {("amount ¥", "35000")}),
        ("三万五千円", {("amount ¥", "35000")}),
        ("1万2千円", {("amount ¥", "12000")}),
        ("2千円", {("amount ¥", "2000")}),
        ("千円", {("amount ¥", "1000")}),
        ("1.5万円", {("amount ¥", "15000")}),
        ("1億円", {("amount ¥", "100000000")}),
        ("$2k", {("amount $", "2000")}),
        ("2.5k dollars", {("amount $", "2500")}),
        ("$1.2m", {("amount $", "1200000")}),
        ("$300-400", {("amount $", "300"), ("amount $", "400")}),
        # (a range's high end multiplies a bare low end when that keeps it ordered)
        ("1〜2万円", {("amount ¥", "10000"), ("amount ¥", "20000")}),
        ("1-2万円", {("amount ¥", "10000"), ("amount ¥", "20000")}),
        ("1〜2千円", {("amount ¥", "1000"), ("amount ¥", "2000")}),
        ("$5-10k", {("amount $", "5000"), ("amount $", "10000")}),
        ("5-10k dollars", {("amount $", "5000"), ("amount $", "10000")}),
        ("$500-1k", {("amount $", "500"), ("amount $", "1000")}),
        ("$800-1.2k", {("amount $", "800"), ("amount $", "1200")}),
        ("800-1.2k dollars", {("amount $", "800"), ("amount $", "1200")}),  # (any form)
        ("500-1k yen", {("amount ¥", "500"), ("amount ¥", "1000")}),
        ("1〜2万5千円", {("amount ¥", "10000"), ("amount ¥", "25000")}),  # (its largest 万)
        ("十〜二十万円", {("amount ¥", "100000"), ("amount ¥", "200000")}),
        ("1千〜2万円", {("amount ¥", "1000"), ("amount ¥", "20000")}),
        ("2〜3百万円", {("amount ¥", "2000000"), ("amount ¥", "3000000")}),  # (百万 whole)
        ("1〜2千万円", {("amount ¥", "10000000"), ("amount ¥", "20000000")}),
        ("2〜3千円", {("amount ¥", "2000"), ("amount ¥", "3000")}),
        ("1〜2億5千万円", {("amount ¥", "100000000"), ("amount ¥", "250000000")}),
        ("a $2 million-dollar house", {("amount $", "2000000")}),
        ("a $3 billion-dollar deal", {("amount $", "3000000000")}),
        ("5000〜1万円", {("amount ¥", "5000"), ("amount ¥", "10000")}),
        ("$2 million", {("amount $", "2000000")}),
        ("$1.2 billion", {("amount $", "1200000000")}),
        ("3 thousand dollars", {("amount $", "3000")}),
        ("$15/day", {("amount $", "15")}),
        ("$1,950/mo", {("amount $", "1950")}),
        ("7-9pm", {("time", "19:00"), ("time", "21:00")}),
        ("3-4pm", {("time", "15:00"), ("time", "16:00")}),
        ("11-1pm", {("time", "11:00|23:00"), ("time", "13:00")}),
        ("10:00-11:30", {("time", "10:00|22:00"), ("time", "11:30|23:30")}),
        ("300〜400ドル", {("amount $", "300"), ("amount $", "400")}),
        ("£20", {("amount £", "20")}),
        ("20 pounds", {("amount lb", "20")}),  # (a weight: £ only with its sign)
        ("5 kilos", {("amount kg", "5")}),
        ("The 4th of July", {("date", "7/4")}),
        ("The 25th of Dec", {("date", "12/25")}),
        ("6/6(土)", {("weekday", "5")}),
        # (must not: a bare number, an age, a year, a duration, a phone number, a code)
        ("1,2,3", set()),
        ("3-4 of them", set()),  # (no range of times without a meridiem or minutes)
        ("12-34", set()),
        ("$2 millionaire", {("amount $", "2")}),
        ("3/14", set()),
        ("090-1234-5678", set()),
        ("Emma is turning 7", set()),
        ("7歳の誕生日", set()),
        ("engaged in 2025", set()),
        ("3時間歩いた", set()),
        ("walked 3 hours", set()),
        ("3日間休んだ", set()),
        ("5日前に買った", set()),
        ("5日後に届く", set()),
        ("5日ぶりに走った", set()),
        ("10日ほど休んだ", set()),
        ("10日ぐらいかかる", set()),
        ("3日目で飽きた", set()),
        ("It was the 1st time I played", set()),
        ("the 3rd floor", set()),
        ("一" * 30 + "円", set()),  # (a run too long to be a number)
        ("1" * 30 + "円", set()),
        ("I was at 3 parties", set()),
        ("I sat down in the sun", set()),
        ("May I march on? I may.", set()),
        ("wait no, march 14", {("date", "3/14")}),  # (a month typed in lower case, its day after)
        ("sorry, june 15th!", {("date", "6/15")}),
        ("I may 5 times a week", set()),
        ("Flew an A320", set()),
        ("I love my yoga class", set()),
    ],
)
def test_closed_values(text: str, values: set[tuple[str, str]]) -> None:
    assert closed_values(text) == values


def test_kanji_numbers() -> None:
    numbers = [
        "12",
        "十二",
        "三十",
        "二〇",
        "百五十",
        "七",
        "3万5000",
        "三万五千",
        "2千",
        "一" * 4400,
    ]
    assert [kanji_number(n) for n in numbers] == [12, 12, 30, 20, 150, 7, 35000, 35000, 2000, None]


@pytest.mark.parametrize(
    "text",
    [
        "一" * 50_000,
        "一" * 49_999 + "円",
        "家賃は" + "一" * 8000,
        "1" * 50_000 + "円",
        "$" + "1" * 50_000,
        "1" + ",111" * 12_500,
        "1万" * 25_000 + "円",
        "7-" * 25_000,
        "the 1st " * 6000,
        "月曜の7時に3万円払った。" * 4000,
    ],
)
def test_a_long_paste_is_read_in_linear_time(text: str) -> None:
    """Each takes well under 0.1 s alone; a quadratic reading took seconds (一×10,000: 8.8
    s, ×50,000 minutes). The bound is wide so that a busy machine does not fail it."""
    start = time.thread_time()  # (this thread's CPU: a loaded machine's waits not counted)
    closed_values(text)
    same_kind_change(text, text)
    assert time.thread_time() - start < 3.0


@pytest.mark.parametrize(
    ("said", "meant", "change"),
    [
        ("Monday", "Tuesday", True),
        ("6pm", "7pm", True),
        ("$1,800", "$1,950", True),
        ("the 18th", "the 19th", True),
        ("月曜", "火曜", True),
        ("Monday", "Monday", False),
        ("1,800円", "$1,950", False),  # (another currency)
        ("Monday", "7pm", False),  # (another kind)
        ("a sprint", "a marathon", False),
        ("6", "7", False),  # (bare numbers)
        ("7am", "7pm", True),
        ("午前7時", "午後7時", True),
        ("7pm", "19:00", False),
        ("7pm", "at 7", False),  # (a bare time may be either)
        ("7時", "19時", False),
        ("the 12th", "June 19", True),  # (a date's day against a day of the month)
        ("the 19th", "June 19", False),
        ("3万5000円", "35,000円", False),
        ("$2m", "$2 million", False),  # (a word multiplies as its letter does)
        ("$2 million", "$3 million", True),
        ("1〜2万円", "1万円", True),  # (the low end is 10,000, not 1)
        ("1〜2万円", "1万〜2万円", False),
        ("7-9pm", "19:00-21:00", False),
    ],
)
def test_a_value_replaces_only_one_of_its_kind(said: str, meant: str, change: bool) -> None:
    assert same_kind_change(said, meant) is change
