"""The parts of a day as windows: the morning, the afternoon, the evening, a night, hours ago.

A person's day runs past midnight: until :data:`MORNING_CUTOFF_HOUR` the night is still the
day's, so at 00:30 "this morning", "this afternoon", "tonight" and "earlier today" are those
of the day before (:func:`users_day`). Pure arithmetic against ``now``, in its time zone; the
words are matched in :mod:`.time_rules`.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone

from .dates import Window, local_today

__all__ = [
    "DAY_END_HOUR",
    "EVENING_HOUR",
    "MORNING_CUTOFF_HOUR",
    "NOON_HOUR",
    "back_from_now",
    "hours_of_day",
    "night",
    "users_day",
]

MORNING_CUTOFF_HOUR = 4
"""Before this hour the day is still the one before: at 00:40 "this morning" (今朝) is the
morning of the day before, and "last night" the night before that."""
NOON_HOUR = 12
"""Where the morning ends and the afternoon begins."""
EVENING_HOUR = 17
"""Where the afternoon ends and the evening ("tonight", 今夜, "last night") begins."""
DAY_END_HOUR = 24 + MORNING_CUTOFF_HOUR
"""Where a person's day ends, counted from its midnight: the cutoff of the morning after."""


def users_day(now: datetime) -> date:
    """The day ``now`` belongs to as a person counts it: today, or the day before until
    :data:`MORNING_CUTOFF_HOUR`."""
    return local_today(now) - timedelta(days=now.hour < MORNING_CUTOFF_HOUR)


def _at(day: date, hour: int, now: datetime) -> datetime:
    """``hour`` o'clock of ``day`` in ``now``'s time zone (24 and later: of the days after)."""
    return datetime.combine(day + timedelta(days=hour // 24), time(hour % 24), tzinfo=now.tzinfo)


def hours_of_day(first: int, last: int, now: datetime) -> Window:
    """From ``first`` o'clock to ``last`` o'clock (past 24: into the next day) of
    :func:`users_day`: (0, 12) is "this morning", (17, 28) "tonight"."""
    day = users_day(now)
    return _at(day, first, now), _at(day, last, now)


def night(back: int, now: datetime) -> Window:
    """The night ``back`` nights before this one (1: "last night", 2: "the night before
    last"): from :data:`EVENING_HOUR` of the day ``back`` days before :func:`users_day` to
    :data:`MORNING_CUTOFF_HOUR` of the morning after it, so that what was told at 01:30
    is of the night before, and a party of the night before last is not of last night."""
    day = users_day(now) - timedelta(days=back)
    return _at(day, EVENING_HOUR, now), _at(day, DAY_END_HOUR, now)


def back_from_now(oldest: timedelta, newest: timedelta, now: datetime) -> Window:
    """From ``oldest`` ago to ``newest`` ago, counted in elapsed time (a clock put back in
    autumn makes no hour of "3 hours ago" twice), in ``now``'s time zone."""
    elapsed = now.astimezone(timezone.utc)
    zone = now.tzinfo
    return (elapsed - oldest).astimezone(zone), (elapsed - newest).astimezone(zone)
