"""The injectable clock: every "now" in memengine comes from a Clock."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

__all__ = ["Clock", "FixedClock", "SystemClock", "ensure_aware"]

Clock = Callable[[], datetime]
"""A callable returning the current time as a timezone-aware datetime."""


def SystemClock() -> datetime:
    """The real time, in UTC."""
    return datetime.now(timezone.utc)


class FixedClock:
    """A clock that stands still until moved; for tests, evals and simulations."""

    def __init__(self, now: datetime) -> None:
        self.now = ensure_aware(now)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta | None = None, /, **kwargs: float) -> datetime:
        """Move the clock forward by ``delta`` or ``timedelta(**kwargs)`` and return the new time."""
        self.now = self.now + (delta if delta is not None else timedelta(**kwargs))
        return self.now

    def set(self, now: datetime) -> None:
        """Jump to ``now``."""
        self.now = ensure_aware(now)


def ensure_aware(moment: datetime) -> datetime:
    """Return ``moment`` with a timezone; a naive datetime is taken to be UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
