"""The filters every search honours, shared by the vector and full-text queries."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Filters"]


@dataclass(frozen=True)
class Filters:
    """What a search may return: one agent, some kinds, a sensitivity cap, a time range, a status."""

    agent: str = "default"
    kinds: tuple[str, ...] | None = None
    max_sensitivity: int = 3
    since_ts: int | None = None
    until_ts: int | None = None
    statuses: tuple[str, ...] = ("active",)
    since_is_asked: bool = False
    """Whether ``since_ts`` is the caller's own limit (a ``day_range`` given to the call):
    a time window the message names then narrows within it, never past it."""

    def sql(self, prefix: str = "") -> tuple[str, list[object]]:
        """A ``WHERE`` fragment (joined by AND) and its parameters, for columns under ``prefix``."""
        p = prefix
        clauses = [f"{p}agent = ?"]
        params: list[object] = [self.agent]
        if len(self.statuses) == 1:
            clauses.append(f"{p}status = ?")
            params.append(self.statuses[0])
        else:
            clauses.append(f"{p}status IN ({','.join('?' * len(self.statuses))})")
            params.extend(self.statuses)
        if self.kinds is not None:
            clauses.append(f"{p}kind IN ({','.join('?' * len(self.kinds))})")
            params.extend(self.kinds)
        if self.max_sensitivity < 3:
            clauses.append(f"{p}sensitivity <= ?")
            params.append(self.max_sensitivity)
        if self.since_ts is not None:
            clauses.append(f"{p}occurred_ts >= ?")
            params.append(self.since_ts)
        if self.until_ts is not None:
            clauses.append(f"{p}occurred_ts <= ?")
            params.append(self.until_ts)
        return " AND ".join(clauses), params
