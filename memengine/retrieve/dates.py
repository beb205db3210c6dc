"""Calendar arithmetic for the time parser: days, weeks, months, seasons and holidays as windows.

Each helper is pure date arithmetic against ``now``, whose time zone its windows take (a
:data:`Window` is ``(start, end)``, end exclusive); the number words a count is written in
(三, 十二, "a couple") are read here too. No pattern of a message is matched here: that is
:mod:`.time_rules`'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, time, timedelta

__all__ = [
    "Window",
    "add_months",
    "days_window",
    "en_number",
    "holiday_days",
    "holiday_in",
    "ja_number",
    "just_past",
    "last_season",
    "latest_before_today",
    "local_today",
    "midnight_of",
    "month_window",
    "months_ago",
    "one_day",
    "recent_season",
    "season_window",
    "this_season",
    "union",
    "week_start",
    "window_around",
    "year_window",
]

Window = tuple[datetime, datetime]
"""``(start, end)``: start inclusive, end exclusive, timezone-aware."""


# -- calendar helpers ------------------------------------------------------------------------


def midnight_of(day: date, now: datetime) -> datetime:
    return datetime.combine(day, time(0), tzinfo=now.tzinfo)


def days_window(first: date, last_inclusive: date, now: datetime) -> Window:
    return midnight_of(first, now), midnight_of(last_inclusive + timedelta(days=1), now)


def week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def month_window(year: int, month: int, now: datetime) -> Window:
    ny, nm = add_months(year, month, 1)
    return midnight_of(date(year, month, 1), now), midnight_of(date(ny, nm, 1), now)


def year_window(year: int, now: datetime) -> Window:
    return midnight_of(date(year, 1, 1), now), midnight_of(date(year + 1, 1, 1), now)


_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}


def season_window(name: str, year: int, now: datetime) -> Window:
    """The season starting in ``year`` (winter starts in December of ``year``)."""
    first = _SEASON_START[name]
    start = midnight_of(date(year, first, 1), now)
    ey, em = add_months(year, first, 3)
    return start, midnight_of(date(ey, em, 1), now)


def last_season(name: str, now: datetime) -> Window:
    """The latest occurrence of the season that is entirely over."""
    year = now.year
    while True:
        window = season_window(name, year, now)
        if window[1] <= now:
            return window
        year -= 1


def recent_season(name: str, now: datetime) -> Window:
    """The current occurrence of the season if it has begun, else the latest past one."""
    year = now.year
    while True:
        window = season_window(name, year, now)
        if window[0] <= now:
            return window
        year -= 1


def this_season(name: str, now: datetime) -> Window | None:
    """This calendar year's season (winter: the one that began last December while in Jan/Feb)."""
    year = now.year - 1 if name == "winter" and now.month <= 2 else now.year
    window = season_window(name, year, now)
    return window if window[0] <= now else None


JUST_PAST_DAYS = 92
"""A month or a day named without a year that is still to come this year is last year's
when that one ended less than this many days ago: "12月31日は何してたっけ", "what did I do
in December?" asked in January (a plan so far ahead is rarely named so)."""


def just_past(end: datetime, now: datetime) -> bool:
    """Whether a window that ends at ``end`` ended less than :data:`JUST_PAST_DAYS` ago."""
    return end <= now and now - end < timedelta(days=JUST_PAST_DAYS)


def window_around(center: datetime, tolerance: timedelta) -> Window:
    return center - tolerance, center + tolerance


def months_ago(n: int, now: datetime) -> datetime:
    y, m = add_months(now.year, now.month, -n)
    day = min(now.day, 28)
    return now.replace(year=y, month=m, day=day)


# -- numbers ------------------------------------------------------------------------------------

_KANJI_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_EN_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "a couple of": 2,
    "a couple": 2,
    "couple of": 2,
    "couple": 2,  # ("the past couple weeks")
}


def ja_number(token: str) -> int | None:
    if token.isdigit():
        return int(token)
    if token == "十":
        return 10
    if "十" in token:
        tens, _, ones = token.partition("十")
        t = _KANJI_DIGITS.get(tens, 1) if tens else 1
        o = _KANJI_DIGITS.get(ones, 0) if ones else 0
        return t * 10 + o
    if len(token) == 1 and token in _KANJI_DIGITS:
        return _KANJI_DIGITS[token]
    return None


def en_number(token: str) -> int | None:
    token = " ".join(token.split())
    if token.isdigit():
        return int(token)
    return _EN_NUMBERS.get(token)


def local_today(now: datetime) -> date:
    return now.date()


def latest_before_today(target: int, now: datetime) -> date:
    """The latest day before today that is weekday ``target`` (one to seven days back)."""
    today = local_today(now)
    return today - timedelta(days=(today.weekday() - target) % 7 or 7)


def one_day(year: int, month: int, day: int, now: datetime) -> Window | None:
    """That day of that year (None for no such day, or a year before 1900: a number)."""
    try:
        d = date(year, month, day)
    except ValueError:
        return None
    return days_window(d, d, now) if year >= 1900 else None


_HOLIDAYS = {
    "obon": ((8, 13), (8, 16)),
    "christmas": ((12, 24), (12, 25)),
    "golden_week": ((4, 29), (5, 6)),
    "new_year": ((1, 1), (1, 7)),
    "new_years_eve": ((12, 31), (12, 31)),
    "year_end": ((12, 20), (12, 31)),
    "valentine": ((2, 14), (2, 14)),
    "independence_day": ((7, 4), (7, 4)),
    "halloween": ((10, 31), (10, 31)),
}
"""Yearly holidays: (month, day) of their first and last days (Easter moves:
:func:`holiday_days`)."""


def _easter(year: int) -> date:
    """Easter Sunday of ``year`` (Gregorian calendar, the anonymous algorithm)."""
    a, (b, c) = year % 19, divmod(year, 100)
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    el = (32 + 2 * e + 2 * i - h - k) % 7
    n = (a + 11 * h + 22 * el) // 451
    month, day = divmod(h + el - 7 * n + 114, 31)
    return date(year, month, day + 1)


def holiday_days(kind: str, year: int) -> tuple[date, date]:
    """The first and last days of the holiday ``kind`` in ``year`` (Easter: Good Friday to
    Easter Monday)."""
    if kind == "easter":
        sunday = _easter(year)
        return sunday - timedelta(days=2), sunday + timedelta(days=1)
    (m1, d1), (m2, d2) = _HOLIDAYS[kind]
    return date(year, m1, d1), date(year, m2, d2)


def holiday_in(kind: str, year: int, now: datetime) -> Window | None:
    """The holiday ``kind`` of ``year``; None when it has not begun."""
    start, last = holiday_days(kind, year)
    return days_window(start, last, now) if midnight_of(start, now) <= now else None


def union(windows: Iterable[Window | None]) -> Window | None:
    """The smallest window covering every given one (None when none is given)."""
    present = [w for w in windows if w is not None]
    if not present:
        return None
    return min(w[0] for w in present), max(w[1] for w in present)
