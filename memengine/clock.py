"""The injectable clock: every "now" in memengine comes from a Clock."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone, tzinfo

from .errors import InvalidInput

__all__ = [
    "Clock",
    "FixedClock",
    "SystemClock",
    "ensure_aware",
    "in_zone",
    "iso_text",
    "parse_iso",
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

    def advance(self, delta: timedelta | None = None, /, **kwargs: float) -> datetime:
        """Move the clock forward by ``delta`` or ``timedelta(**kwargs)`` and return the new time."""
        self.now = self.now + (delta if delta is not None else timedelta(**kwargs))
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


_FRACTION = re.compile(r"(?<=\d\d:\d\d:\d\d)[.,](\d+)")


_BASIC = re.compile(
    r"(\d{4})(\d{2})(\d{2})(?:([t ])(\d{2})(\d{2})?(\d{2})?([.,]\d+)?)?([+-]\d{2}:?\d{2}|z)?",
    re.IGNORECASE,
)
"""ISO 8601's basic form (``20260501``, ``20260501T1000``, ``20260501T103000+0900``)."""
_EXTENDED = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[t ]\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?)?)?(?:[+-]\d{2}:\d{2}|z)?",
    re.IGNORECASE,
)
"""The extended form, the one every supported Python's ``fromisoformat`` reads."""


def _extended(text: str) -> str:
    """``text`` in ISO 8601's basic form written in the extended form; else as it is."""
    m = _BASIC.fullmatch(text)
    if m is None:
        return text
    year, month, day, sep, hour, minute, second, fraction, zone = m.groups()
    out = f"{year}-{month}-{day}"
    if sep:
        out += f"T{hour}" + "".join(f":{p}" for p in (minute, second) if p) + (fraction or "")
    if zone and zone.lower() != "z" and ":" not in zone:
        zone = f"{zone[:3]}:{zone[3:]}"
    return out + (zone or "")


def parse_iso(value: str) -> datetime:
    """An ISO 8601 time (``2026-05-20T08:30Z``, ``…:00.12+09:00``, the basic
    ``20260520T0830``) read the same way on every supported Python: 3.10's
    ``fromisoformat`` takes no ``Z``, no basic form and only 3 or 6 digits of a second's
    fraction, 3.11's reads more (``1775030400000`` as a day of 1775). A ``ValueError`` for
    anything else."""
    text = _extended(value.strip())
    if not _EXTENDED.fullmatch(text):
        raise ValueError(f"not an ISO 8601 time: {value!r}")
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    text = _FRACTION.sub(lambda m: "." + (m[1] + "000000")[:6], text, count=1)
    return datetime.fromisoformat(text)


def iso_text(moment: datetime) -> str:
    """``moment`` as ISO 8601 the way the models' JSON writes it: UTC as ``Z``
    (``2026-05-20T08:30:00Z``), another offset as itself; a naive datetime is UTC."""
    text = ensure_aware(moment).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text
