"""The injectable clock: every "now" in memengine comes from a Clock."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone, tzinfo

from .errors import InvalidInput
from .lazy_re import lazy_compile
from .text import shown_value

__all__ = [
    "Clock",
    "FixedClock",
    "SystemClock",
    "ensure_aware",
    "in_zone",
    "iso_text",
    "parse_iso",
    "time_text",
]

Clock = Callable[[], datetime]
"""A callable returning the current time as a timezone-aware datetime."""


def SystemClock() -> datetime:
    """The real time, in UTC."""
    return datetime.now(timezone.utc)


class FixedClock:
    """A clock that stands still until moved; for tests, evals and simulations."""

    def __init__(self, now: datetime) -> None:
        """Stand at ``now``; a time without a zone is UTC (a clock tells an instant, whatever
        ``time_zone`` the memory reads messages in)."""
        self.now = _instant(now)

    def __call__(self) -> datetime:
        return self.now

    def __repr__(self) -> str:
        return f"FixedClock({self.now.isoformat()})"

    def advance(self, delta: timedelta | None = None, /, **kwargs: float) -> datetime:
        """Move the clock forward by ``delta`` or ``timedelta(**kwargs)`` of elapsed time
        (across a summer-time change, ``hours=1`` is an hour, whatever the wall clock of
        the clock's zone reads) and return the new time, in the clock's zone."""
        if delta is not None and kwargs:
            raise InvalidInput("advance a clock by a timedelta or by keywords, not both")
        try:
            step = delta if delta is not None else timedelta(**kwargs)
            if not isinstance(step, timedelta):
                raise TypeError(f"not {type(step).__name__}")
            moved = (self.now.astimezone(timezone.utc) + step).astimezone(self.now.tzinfo)
        except (TypeError, ValueError, OverflowError) as exc:  # (ValueError: a NaN)
            raise InvalidInput(f"cannot advance the clock by {delta or kwargs!r}: {exc}") from exc
        self.now = moved
        return self.now

    def set(self, now: datetime) -> None:
        """Jump to ``now``."""
        self.now = _instant(now)


def _instant(now: object) -> datetime:
    if not isinstance(now, datetime):
        raise InvalidInput(f"a clock's time is a datetime, not {type(now).__name__}")
    return ensure_aware(now)


def ensure_aware(moment: datetime) -> datetime:
    """Return ``moment`` with a timezone; a naive datetime is taken to be UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def in_zone(moment: datetime, zone: tzinfo | None) -> datetime:
    """``moment`` in ``zone`` (the day a reader there calls it), as it is without one, or
    when it lies at the calendar's edge where no other zone can show it."""
    if zone is None:
        return moment
    try:
        return moment.astimezone(zone)
    except OverflowError:  # (a time stored before times were kept inside the edges)
        return moment


_ISO = lazy_compile(
    r"(\d{4})-?(\d{2})-?(\d{2})"  # the day, extended (2026-05-20) or basic (20260520)
    r"(?:[t ](\d{2})(?::?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?)?"  # 08, 08:30, 083000.5
    # Z, +09, +0900, +09:00, +01:19:32 (a zone's old offset, as isoformat() writes it),
    # a space before it too
    r" ?(z|[+-]\d{2}(?::?[0-5]\d(?::?[0-5]\d(?:\.\d{1,6})?)?)?)?",
    re.IGNORECASE | re.ASCII,  # (\d alone takes ２ and ٢ too)
)
"""An ISO 8601 time in the forms people and programs write (``date +%FT%T%z``, SQL
databases, the basic form)."""


def parse_iso(value: str) -> datetime:
    """An ISO 8601 time (``2026-05-20T08:30Z``, ``…:00.12+09:00``, ``…T08:30:00+0900``, the
    basic ``20260520T0830``) read the same way on every supported Python: read here, not by
    ``fromisoformat``, which reads fewer forms on 3.10 and more on 3.11 (``1775030400000``
    as a day of 1775). A ``ValueError`` for anything else (a week or ordinal date too)."""
    m = _ISO.fullmatch(value.strip())
    if m is None:
        raise ValueError(f"not an ISO 8601 time: {shown_value(value)}")
    year, month, day, hour, minute, second, fraction, zone = m.groups()
    tz: tzinfo | None = None
    if zone is not None:
        if zone in ("z", "Z"):
            tz = timezone.utc
        else:
            sign = -1 if zone[0] == "-" else 1
            whole, _, part = zone[1:].replace(":", "").partition(".")
            offset = timedelta(
                hours=int(whole[:2]),
                minutes=int(whole[2:4] or 0),
                seconds=int(whole[4:6] or 0),
                microseconds=int(part.ljust(6, "0")) if part else 0,
            )
            tz = timezone(sign * offset)  # (ValueError past ±24 h)
    return datetime(
        int(year),
        int(month),
        int(day),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        int((fraction or "").ljust(6, "0")[:6]),
        tzinfo=tz,
    )


_NUMBER = lazy_compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*")


_FULL_WIDTH = {0xFF01 + i: 0x21 + i for i in range(0x5E)} | {0x3000: 0x20}
"""Full-width ASCII (！ to ～) and the ideographic space, as their ASCII: what an IME types."""


def time_text(value: str) -> datetime:
    """:func:`parse_iso` of a time given as text (an export's line, a new episode's field),
    its ``ValueError`` saying what is wrong: a number that is no basic-form day
    (``20260401`` is one) is refused as such, not read as a Unix timestamp. Full-width
    digits and marks (２０２６－１２－０１, as an IME types them) are read as their ASCII."""
    typed, value = value, value.translate(_FULL_WIDTH)
    try:
        return parse_iso(value)
    except ValueError as exc:
        if _ISO.fullmatch(value.strip()):  # written as a time, but no such day (2026-02-30)
            raise ValueError(f"no such time: {shown_value(typed)} ({exc})") from None
        value = typed  # (said as it was typed)
        if _NUMBER.fullmatch(value):
            raise ValueError(
                "a time as ISO 8601 text (2026-04-01T08:30:00Z, or 20260401), not "
                f"{shown_value(value)}: memengine reads no Unix timestamp"
            ) from None
        raise ValueError(f"not an ISO 8601 time: {shown_value(value)}") from None


def iso_text(moment: datetime) -> str:
    """``moment`` as ISO 8601 the way the models' JSON writes it: UTC as ``Z``
    (``2026-05-20T08:30:00Z``), another offset as itself; a naive datetime is UTC."""
    text = ensure_aware(moment).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
