"""LoCoMo evidence recall, following the retrieval protocol of the shared eval README.

One isolated store per conversation, one ``message`` episode per turn
(``"<speaker>: <text>"`` plus the image caption, the ``dia_id`` kept in its
metadata, ``occurred_at`` from the session date), the clock one day after
the last session, and for every question with valid evidence the question
text alone as the query, top 10, no time window. Malformed evidence ids are
normalised and ids of turns that do not exist are dropped, with counts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..clock import FixedClock
from ..config import Config
from ..embed.base import Embedder
from ..errors import EvaluationError, InvalidInput
from ..importers import parse_locomo_date, read_locomo
from ..lazy_re import lazy_compile
from ..models import NewEpisode
from ..text import as_a_word
from .files import load_json, select_conversations
from .metrics import RANKING_METRICS, mean, score_ranking
from .provenance import changed_settings, code_info
from .runner import (
    EvalResult,
    K,
    Progress,
    QuestionResult,
    recall_tables,
    start_run,
)

__all__ = [
    "CATEGORIES",
    "OVERALL",
    "SWAPPED",
    "EvidenceIds",
    "LocomoConversation",
    "LocomoQuestion",
    "load_locomo",
    "normalise_evidence",
    "run_locomo",
    "swap_names",
]

CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""LoCoMo's category codes and their names (verified against the paper's counts)."""

OVERALL = "overall (1–4)"
"""The group of all questions of categories 1–4; adversarial is reported apart."""

SWAPPED = "names swapped"
"""The group of other conversations' questions asked with this conversation's names
(:func:`swap_names`): most ask about something never said here."""

_SPLIT = lazy_compile(r"[;,\s]+")
_DIA_ID = lazy_compile(r"^D:?0*(\d+):0*(\d+)$")


@dataclass(frozen=True)
class EvidenceIds:
    """A question's evidence after normalisation, and what it took to get there."""

    ids: tuple[str, ...]
    raw: int
    normalised: int
    dropped: int


def normalise_evidence(raw: Sequence[Any], valid: set[str]) -> EvidenceIds:
    """Split, repair and check evidence ids against the conversation's turns.

    ``"D8:6; D9:17"`` → ``D8:6``, ``D9:17``; ``"D:11:26"`` → ``D11:26``;
    ``"D30:05"`` → ``D30:5``. A raw string that needed any of this counts as
    normalised; an id that cannot be parsed or names no turn is dropped.
    """
    ids: list[str] = []
    normalised = dropped = 0
    turns = {_canonical(v): v for v in valid if _canonical(v) is not None}
    for item in raw:
        text = str(item).strip()
        if text in valid:  # a turn's id as the file writes it (``D1:01``, ``T7``)
            if text not in ids:
                ids.append(text)
            continue
        pieces = [p for p in _SPLIT.split(text) if p]
        changed = len(pieces) != 1
        for piece in pieces or [text]:
            canonical = _canonical(piece)
            fixed = piece if piece in valid else turns.get(canonical or "")
            if fixed is not None and fixed != piece:
                changed = True
            if fixed is None:
                dropped += 1
                continue
            if fixed not in ids:
                ids.append(fixed)
        if changed:
            normalised += 1
    return EvidenceIds(tuple(ids), len(raw), normalised, dropped)


def _canonical(dia_id: str) -> str | None:
    """``dia_id`` as ``D<session>:<turn>`` without zeros in front (``D:11:26``, ``D30:05``
    are ``D11:26``, ``D30:5``), or None for an id of another form."""
    m = _DIA_ID.match(dia_id)
    return f"D{int(m.group(1))}:{int(m.group(2))}" if m else None


@dataclass
class LocomoQuestion:
    """One scorable question: its text, category and valid evidence."""

    id: str
    text: str
    category: int
    evidence: tuple[str, ...]

    @property
    def group(self) -> str:
        """The category name."""
        return CATEGORIES[self.category]


@dataclass
class LocomoConversation:
    """One LoCoMo sample as episodes and scorable questions, with evidence counts by category."""

    id: str
    episodes: list[NewEpisode]
    questions: list[LocomoQuestion]
    now: datetime
    evidence: dict[str, dict[str, int]] = field(default_factory=dict)
    speakers: tuple[str, str] = ("", "")
    swapped: list[LocomoQuestion] = field(default_factory=list)
    """Questions of the other conversations with the speakers' names replaced
    by this one's (:func:`swap_names`); their right answer is to inject nothing."""


def _count(evidence: dict[str, dict[str, int]], group: str, key: str, n: int = 1) -> None:
    bucket = evidence.setdefault(
        group,
        {"questions": 0, "scored": 0, "skipped": 0, "raw_ids": 0, "normalised": 0, "dropped": 0},
    )
    bucket[key] += n


def load_locomo(
    sample: dict[str, Any], *, agent: str = "default", name: str | None = None
) -> LocomoConversation:
    """Episodes, scorable questions and evidence counts of one LoCoMo sample (``name``: its
    name, default its ``sample_id``)."""
    sid = name if name is not None else str(sample.get("sample_id", "?"))
    try:
        episodes = list(read_locomo(sample, agent=agent))
        conv = sample["conversation"]
        # the dates of sessions that hold turns: some samples date sessions that have none
        # (conv-26 dates 35, holds 19), and the clock is a day after the last real one
        dates = [
            parse_locomo_date(v)
            for k, v in conv.items()
            if k.startswith("session_")
            and k.endswith("_date_time")
            and conv.get(k.removesuffix("_date_time"))
        ]
    except InvalidInput as exc:
        raise EvaluationError(f"LoCoMo sample {sid}: {exc}") from exc
    except KeyError as exc:
        raise EvaluationError(f"LoCoMo sample {sid} has no {exc.args[0]!r}") from exc
    except (TypeError, ValueError, AttributeError) as exc:
        raise EvaluationError(f"malformed LoCoMo sample {sid}: {exc}") from exc
    if not episodes:
        raise EvaluationError(f"LoCoMo sample {sid} has no turns")
    last = max([*dates, *(e.occurred_at for e in episodes)])
    turns = [str(e.metadata["dia_id"]) for e in episodes]
    valid = set(turns)
    if len(valid) < len(turns):
        twice = next(t for n, t in enumerate(turns) if t in turns[:n])
        raise EvaluationError(f"LoCoMo sample {sid}: turn {twice} appears twice")
    questions: list[LocomoQuestion] = []
    evidence: dict[str, dict[str, int]] = {}
    listed = sample.get("qa", [])
    if not isinstance(listed, list):
        raise EvaluationError(f"LoCoMo sample {sid}: qa is a list, not a {type(listed).__name__}")
    for n, qa in enumerate(listed):
        if not isinstance(qa, dict):
            raise EvaluationError(
                f"LoCoMo sample {sid}: qa item {n + 1} is not an object but a {type(qa).__name__}"
            )
        category = qa.get("category")
        if isinstance(category, str | float | bool):  # ("2" would be skipped, unknown)
            raise EvaluationError(
                f"LoCoMo sample {sid}: qa item {n + 1}: category is a whole number, not "
                f"{category!r}"
            )
        if category is None:
            raise EvaluationError(
                f"LoCoMo sample {sid}: qa item {n + 1} has no category (LoCoMo numbers them 1–5)"
            )
        if not isinstance(category, int) or category not in CATEGORIES:  # ([1] is unhashable)
            _count(evidence, "unknown category", "questions")
            _count(evidence, "unknown category", "skipped")
            continue
        group = CATEGORIES[category]
        raw = qa.get("evidence") or []
        if not isinstance(raw, list):
            raise EvaluationError(
                f"LoCoMo sample {sid}: qa item {n + 1}: evidence is a list, not a "
                f"{type(raw).__name__}"
            )
        question = qa.get("question")
        if question is not None and not isinstance(question, str):
            raise EvaluationError(
                f"LoCoMo sample {sid}: qa item {n + 1}: question is text, not {question!r}"
            )
        if not (question or "").strip():
            raise EvaluationError(
                f"LoCoMo sample {sid}: qa item {n + 1} asks nothing (a blank question)"
            )
        ev = normalise_evidence(raw, valid)
        _count(evidence, group, "questions")
        _count(evidence, group, "raw_ids", ev.raw)
        _count(evidence, group, "normalised", ev.normalised)
        _count(evidence, group, "dropped", ev.dropped)
        if not ev.ids:
            _count(evidence, group, "skipped")
            continue
        _count(evidence, group, "scored")
        questions.append(LocomoQuestion(f"{sid}#q{n + 1}", str(question), category, ev.ids))
    speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
    return LocomoConversation(
        sid, episodes, questions, last + timedelta(days=1), evidence, speakers
    )


def swap_names(conversations: Sequence[LocomoConversation], per_source: int) -> None:
    """Give each conversation up to ``per_source`` questions of every other one, renamed.

    The questions (categories 1–4) that name a speaker of their own
    conversation are taken at even steps through the file, and the names
    are replaced by this conversation's (first speaker for first speaker,
    second for second, whole words only). The person is then known here but
    the asked thing, in most cases, was never said: the right decision is
    to inject nothing. Some are answerable by chance (two conversations can
    share a topic; about a quarter of 20 read by hand), so 100 % left empty
    is not the ceiling. Only the questions left in ``source.questions`` are
    candidates (under :func:`run_locomo`'s ``limit``, each source's first ones).
    """
    for target in conversations:
        target.swapped = []
        for source in conversations:
            if source is target or not all(source.speakers) or not all(target.speakers):
                continue
            rename = _renamer(dict(zip(source.speakers, target.speakers, strict=True)))
            naming = [
                (q, text) for q in source.questions if q.category != 5 and (text := rename(q.text))
            ]
            count = min(per_source, len(naming))
            for i in range(count):
                q, text = naming[i * len(naming) // count]
                target.swapped.append(LocomoQuestion(f"{target.id}<{q.id}", text, q.category, ()))


def _renamer(names: dict[str, str]) -> Callable[[str], str | None]:
    """A function that replaces each key of ``names``, as a word (:func:`as_a_word`: さくら
    in さくらの犬 too), by its value, all at once; it returns None for a text that holds
    none of them."""
    pattern = re.compile("|".join(as_a_word(name) for name in sorted(names, key=len, reverse=True)))

    def rename(text: str) -> str | None:
        renamed, n = pattern.subn(lambda m: names[m.group()], text)
        return renamed if n else None

    return rename


def run_locomo(
    path: Path,
    *,
    config: Config,
    embedder: Embedder,
    modes: Sequence[str] = ("fast",),
    limit: int | None = None,
    conversations: Sequence[str] | None = None,
    pad: int = 0,
    haystack: Path | None = None,
    swapped: int = 0,
    on_ingest: Progress | None = None,
    on_question: Progress | None = None,
) -> EvalResult:
    """Run the LoCoMo retrieval protocol over ``path`` in every requested mode.

    With ``swapped`` > 0 every conversation is also asked up to that many
    questions of each other conversation under its own speakers' names
    (:func:`swap_names`), and the should-inject decision is scored on them:
    right is to inject nothing.
    """
    t_start = time.perf_counter()
    if swapped and pad:
        raise EvaluationError(
            "--swap-names cannot be combined with --pad: the noise could hold the swapped "
            "questions' own evidence under their original names"
        )
    data = load_json(path)
    if not isinstance(data, list) or not all(isinstance(s, dict) for s in data):
        raise EvaluationError(f"{path}: not a LoCoMo file (expected a JSON list of samples)")
    ids = [str(s.get("sample_id", f"sample-{i}")) for i, s in enumerate(data)]
    twice = next((i for n, i in enumerate(ids) if i in ids[:n]), None)
    if twice is not None:
        raise EvaluationError(f"{path}: sample {twice} appears twice")
    chosen = set(select_conversations(ids, conversations))
    run = start_run(
        path,
        [
            load_locomo(s, agent=config.agent, name=i)
            for s, i in zip(data, ids, strict=True)
            if i in chosen
        ],
        config=config,
        embedder=embedder,
        modes=modes,
        limit=limit,
        pad=pad,
        haystack=haystack,
        on_ingest=on_ingest,
        on_question=on_question,
        started=t_start,
    )
    plans, convs = run.plans, run.conversations
    if swapped:
        swap_names(convs, swapped)
    n_swapped = sum(len(c.swapped) for c in convs)
    run.asked.total += n_swapped * len(plans)
    results: list[QuestionResult] = []
    for c in convs:
        with run.stores(c, FixedClock(c.now)) as mems:
            asked = [(q, True) for q in c.questions] + [(q, False) for q in c.swapped]
            for q, own in asked:
                for plan in plans:
                    r = run.retrieve(mems[plan.name], plan, q.text, day_range=None, limit=K)
                    ranking = [_dia_id(e.metadata) for e in r.episodes]
                    results.append(
                        QuestionResult(
                            conversation=c.id,
                            question=q.id,
                            group=q.group if own else SWAPPED,
                            mode=plan.name,
                            evidence=list(q.evidence),
                            ranking=ranking,
                            metrics=score_ranking(ranking, q.evidence) if own else {},
                            should_inject=r.should_inject,
                            signals=dict(r.signals),
                        )
                    )
                    run.asked.advance()

    table: dict[str, dict[str, dict[str, float]]] = {}
    by_conversation: dict[str, dict[str, dict[str, float]]] = {}
    summary: dict[str, dict[str, float | None]] = {}
    for plan in plans:
        rows = [r for r in results if r.mode == plan.name and r.group != SWAPPED]
        counted = [r for r in rows if r.group != CATEGORIES[5]]
        table[plan.name], by_conversation[plan.name] = recall_tables(rows, counted, OVERALL)
        summary[plan.name] = {
            "inject_accuracy_answerable": mean(1.0 if r.should_inject else 0.0 for r in counted),
            "n_answerable": float(len(counted)),
        }
        if n_swapped:
            away = [r for r in results if r.mode == plan.name and r.group == SWAPPED]
            summary[plan.name] |= {
                "inject_accuracy_swapped": mean(0.0 if r.should_inject else 1.0 for r in away),
                "n_swapped": float(len(away)),
            }
    groups = [CATEGORIES[1], CATEGORIES[2], CATEGORIES[3], CATEGORIES[4], OVERALL, CATEGORIES[5]]
    evidence: dict[str, dict[str, int]] = {}
    for c in convs:
        for group, counts in c.evidence.items():
            for key, n in counts.items():
                _count(evidence, group, key, n)
    for group in list(evidence):
        if group in CATEGORIES.values() and group != CATEGORIES[5]:
            for key, n in evidence[group].items():
                _count(evidence, OVERALL, key, n)
    notes = [*run.skipped.values(), *run.notes, *run.degraded_notes()]
    if limit is not None:
        notes.append(f"--limit {limit}: first {limit} scorable questions per conversation")
    if n_swapped:
        notes.append(
            f"names swapped: up to {swapped} questions (categories 1–4) of each other "
            "conversation, asked with this conversation's speaker names; right = inject "
            "nothing (some are answerable by chance: about a quarter of 20 read by hand)"
            + (f"; taken from the first {limit} of each" if limit is not None else "")
        )
    elif swapped:
        notes.append("--swap-names: nothing swapped (it needs two conversations or more)")
    return EvalResult(
        code=code_info().to_json(),
        settings=changed_settings(config),
        dataset="locomo",
        path=str(path),
        modes=[p.name for p in plans],
        skipped_modes=run.skipped,
        conversations=[c.id for c in convs],
        groups=[g for g in groups if any(g in t for t in table.values())],
        metrics=list(RANKING_METRICS),
        table=table,
        by_conversation=by_conversation,
        embedder=embedder.id,
        summary=summary,
        evidence=evidence,
        padding=run.padding,
        timings_s=run.timings(),
        notes=notes,
        degraded=run.degraded_counts(),
        questions=results,
    )


def _dia_id(metadata: dict[str, Any]) -> str | None:
    """The dia_id of a retrieved episode; None for padding (noise is never evidence)."""
    if "noise" in metadata:
        return None
    value = metadata.get("dia_id")
    return str(value) if value is not None else None
