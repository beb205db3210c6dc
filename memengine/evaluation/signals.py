"""How well each should-inject signal, alone, tells the questions that want nothing apart.

``memengine eval signals`` reads files written by ``memengine eval … --json``
and pools the questions of one mode whose message asks something (small
talk goes by a rule of its own). A question wants nothing when it is a
memsets ``none`` question or a LoCoMo question asked under swapped names;
every other one has evidence. LoCoMo's adversarial questions
(:data:`LEFT_OUT`) and the questions an LLM decided are left out. For each
signal the fast path records (:attr:`memengine.models.Retrieval.signals`:
``top_cosine``, ``reach``, and ``coverage`` for the questions the opt-in
rule read) it finds the lowest threshold that rejects at least
``none_target`` of the questions that want nothing, and says what share of
the others that threshold still lets through. It also gives the decision
as it was made, for comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EvaluationError
from .files import load_json
from .locomo import CATEGORIES, SWAPPED
from .memsets import NONE

__all__ = ["SignalReport", "SignalRow", "signal_report"]

WANT_NOTHING = frozenset({NONE, SWAPPED})
"""Question groups whose right answer is to inject nothing."""

LEFT_OUT = frozenset({CATEGORIES[5]})
"""Question groups of neither kind: LoCoMo's adversarial questions have evidence, yet ask
about what the other speaker did."""

_SKIP = frozenset({"asks", "evidence", "proposes"})
"""The rule's yes/no parts: ``asks`` picks the pool, ``evidence`` is in the decision row,
``proposes`` is read only for a message that asks nothing (outside the pool)."""


@dataclass(frozen=True)
class SignalRow:
    """One signal: its means, and the threshold that rejects ``none_target`` of the nothing-questions."""

    name: str
    n_nothing: int
    n_others: int
    mean_nothing: float
    mean_others: float
    threshold: float
    """Inject when the signal is at least this (``inf``: only rejecting every question gets there)."""
    nothing_rejected: float
    """The share of the questions that want nothing below the threshold (≥ the target)."""
    others_kept: float
    """The share of the questions with evidence at or above it: what the threshold costs."""


@dataclass(frozen=True)
class SignalReport:
    """The pooled questions, the decision as made, and one :class:`SignalRow` per signal."""

    files: list[str]
    mode: str
    none_target: float
    n_nothing: int
    n_others: int
    small_talk: int
    llm_decided: int
    decided_nothing_rejected: float
    decided_others_kept: float
    rows: list[SignalRow]


def signal_report(
    paths: Sequence[Path], *, mode: str = "fast", none_target: float = 0.85
) -> SignalReport:
    """Pool the asking questions of ``mode`` from eval JSON ``paths`` and rank every signal."""
    if not 0.0 < none_target <= 1.0:
        raise EvaluationError(f"--none-target must be within (0, 1], not {none_target}")
    nothing: list[dict[str, Any]] = []
    others: list[dict[str, Any]] = []
    small_talk = llm_decided = 0
    seen: dict[tuple[str, str, str], Path] = {}
    read: set[Path] = set()
    for path in paths:
        if Path(path).resolve() in read:
            raise EvaluationError(f"{path} is named twice; pool each file once")
        read.add(Path(path).resolve())
        source, questions = _questions(path, mode)
        for q in questions:
            key = (source, str(q.get("conversation", "")), str(q.get("question", "")))
            if seen.setdefault(key, path) != path:
                raise EvaluationError(
                    f"{path}: question {key[1]}/{key[2]} of {source} is also in {seen[key]}; "
                    "pool each run of a set once (not its default and its opt-in run)"
                )
            if q.get("group") in LEFT_OUT:
                continue
            signals = q.get("signals") or {}
            if not signals:  # an LLM decided: the fast path's signals were not read
                llm_decided += 1
                continue
            if signals.get("asks", 1.0) < 1.0:
                small_talk += 1
                continue
            (nothing if q.get("group") in WANT_NOTHING else others).append(q)
    if not nothing or not others:
        raise EvaluationError(
            f"mode {mode!r} needs asking questions of both kinds decided by the fast path "
            f"(none or names swapped: {len(nothing)}, with evidence: {len(others)}, decided by "
            f"an LLM: {llm_decided}); run eval with --json on a memsets file with none "
            "questions or on LoCoMo with --swap-names"
        )
    names = sorted({k for q in [*nothing, *others] for k in q.get("signals") or {}} - _SKIP)
    rows = [row for name in names if (row := _row(name, nothing, others, none_target))]
    rows.sort(key=lambda r: -r.others_kept)
    return SignalReport(
        files=[str(p) for p in paths],
        mode=mode,
        none_target=none_target,
        n_nothing=len(nothing),
        n_others=len(others),
        small_talk=small_talk,
        llm_decided=llm_decided,
        decided_nothing_rejected=sum(not q.get("should_inject") for q in nothing) / len(nothing),
        decided_others_kept=sum(bool(q.get("should_inject")) for q in others) / len(others),
        rows=rows,
    )


def _questions(path: Path, mode: str) -> tuple[str, list[dict[str, Any]]]:
    """The dataset a results file measured, and its questions asked in ``mode``."""
    data = load_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise EvaluationError(f"{path}: not a file written by `memengine eval … --json`")
    modes = [str(m) for m in data.get("modes") or []]
    if mode not in modes:
        raise EvaluationError(f"{path}: no mode {mode!r} (it has {', '.join(modes) or 'none'})")
    out = [q for q in data["questions"] if isinstance(q, dict) and q.get("mode") == mode]
    if out and not any("signals" in q for q in out):
        raise EvaluationError(f"{path}: no signals recorded; write it again with this version")
    return str(data.get("path", path)), out


def _row(
    name: str, nothing: list[dict[str, Any]], others: list[dict[str, Any]], target: float
) -> SignalRow | None:
    bad = _values(name, nothing)
    good = _values(name, others)
    if not bad or not good:
        return None
    for threshold in sorted({*bad, *good, float("inf")}):
        rejected = sum(v < threshold for v in bad) / len(bad)
        if rejected >= target:
            break
    return SignalRow(
        name=name,
        n_nothing=len(bad),
        n_others=len(good),
        mean_nothing=sum(bad) / len(bad),
        mean_others=sum(good) / len(good),
        threshold=threshold,
        nothing_rejected=rejected,
        others_kept=sum(v >= threshold for v in good) / len(good),
    )


def _values(name: str, questions: list[dict[str, Any]]) -> list[float]:
    """The finite values of signal ``name`` among ``questions`` (the ones without it left out)."""
    out = []
    for q in questions:
        value = (q.get("signals") or {}).get(name)
        if isinstance(value, (int, float)) and math.isfinite(value):
            out.append(float(value))
    return out
