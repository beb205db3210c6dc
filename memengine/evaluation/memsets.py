"""Companion-chat memory sets: evidence recall, the should-inject decision and pack precision.

One store per conversation with one ``exchange`` episode per exchange. Each
question is asked at its ``asked_at`` (the clock is set there) with its
``recent`` messages as the current conversation and the configured time
window, top 10. Scores: Recall@5/10 per question type and overall (type
``none`` has no evidence and is left out), the accuracy of the
should-inject decision on ``none`` questions (right = inject nothing) and
on the others (right = inject), and the precision of what the MemoryPack
would inject: the pack of the top ``max_results`` results, the fraction of
its episodes that are evidence, averaged over the non-``none`` questions
where something was injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..arguments import ROLES, checked_episode, in_span
from ..clock import FixedClock, ensure_aware, iso_text, time_text
from ..config import Config
from ..embed.base import Embedder
from ..errors import EvaluationError, InvalidInput
from ..importers import read_memsets
from ..models import NewEpisode
from ..text import is_blank
from .files import load_json, select_conversations
from .metrics import mean, precision, recall_at_k
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
    "NONE",
    "OVERALL",
    "TYPES",
    "MemsetConversation",
    "MemsetQuestion",
    "load_memset",
    "run_memset",
]

TYPES: tuple[str, ...] = (
    "direct",
    "anaphora",
    "temporal",
    "compound",
    "keyword",
    "paraphrase",
    "multi",
    "distractor",
)
"""The question types with evidence, in table order (others found in a file follow)."""

NONE = "none"
"""The type of questions with nothing relevant to find: the right answer is to inject nothing."""

OVERALL = "overall (excl. none)"
"""The group of every question with evidence."""

RECALL_METRICS: tuple[str, ...] = ("R@5", "R@10")


@dataclass
class MemsetQuestion:
    """One question: when it is asked, the recent conversation, the query and its evidence."""

    id: str
    type: str
    asked_at: datetime
    recent: list[dict[str, str]]
    query: str
    evidence: tuple[str, ...]


@dataclass
class MemsetConversation:
    """One memsets conversation as episodes and questions, with evidence counts."""

    id: str
    episodes: list[NewEpisode]
    questions: list[MemsetQuestion]
    evidence: dict[str, int] = field(default_factory=dict)


def load_memset(
    conversation: dict[str, Any],
    *,
    agent: str = "default",
    localize: Callable[[datetime], datetime] | None = None,
    name: str | None = None,
) -> MemsetConversation:
    """Episodes and questions of one memsets conversation (evidence ids checked). A time
    without a zone (``asked_at``, as an exchange's ``at``) is read by ``localize``
    (:meth:`.Config.localize`: in the configured ``time_zone``), else as UTC. ``name`` is
    the conversation's in errors (default: its ``id``)."""
    cid = name if name is not None else str(conversation.get("id", "?"))
    try:
        episodes = list(read_memsets(conversation, agent=agent))
        times = _exchange_times(episodes, cid, localize)
        valid = set(times)
        seen: set[str] = set()
        listed = conversation.get("questions", [])
        if not isinstance(listed, list):
            raise EvaluationError(
                f"memsets conversation {cid}: questions is a list, not a {type(listed).__name__}"
            )
        questions: list[MemsetQuestion] = []
        counts = {"questions": 0, "raw_ids": 0, "dropped": 0, "skipped": 0}
        for n, q in enumerate(listed):
            where = f"memsets conversation {cid} question {n + 1}"
            if not isinstance(q, dict):
                raise EvaluationError(f"{where} is not an object but a {type(q).__name__}")
            counts["questions"] += 1
            raw = [str(x) for x in _listed(q, "evidence", where)]
            ids = tuple(dict.fromkeys(x for x in raw if x in valid))
            counts["raw_ids"] += len(raw)
            counts["dropped"] += sum(1 for x in raw if x not in valid)
            qtype = _text(q, "type", where, default="direct")
            if qtype != NONE and qtype.strip().lower() == NONE:
                raise EvaluationError(f"{where}: type {qtype!r} is spelled {NONE!r}")
            if qtype == NONE and raw:
                raise EvaluationError(
                    f"{where}: a {NONE!r} question has nothing to find, but lists evidence {raw}"
                )
            if qtype != NONE and not ids:
                counts["skipped"] += 1
                continue
            try:
                question = MemsetQuestion(
                    id=_text(q, "id", where),
                    type=qtype,
                    asked_at=_asked_at(q, where, localize),
                    recent=_recent(q, where),
                    query=_text(q, "query", where),
                    evidence=ids if qtype != NONE else (),
                )
            except KeyError as exc:
                raise EvaluationError(f"{where} has no {exc.args[0]!r}") from exc
            where = f"memsets conversation {cid} question {question.id}"
            if question.id in seen:
                raise EvaluationError(f"{where} appears twice")
            seen.add(question.id)
            if not isinstance(q["query"], str):
                raise EvaluationError(f"{where}: query is text, not {q['query']!r}")
            if is_blank(question.query):
                raise EvaluationError(f"{where}: query is empty")
            later = [x for x in ids if times[x] > question.asked_at]
            if later:
                raise EvaluationError(
                    f"{where} is asked at {iso_text(question.asked_at)}, before its evidence "
                    f"{later[0]} happened ({iso_text(times[later[0]])}): nothing of the future "
                    "is searched"
                )
            questions.append(question)
    except InvalidInput as exc:  # an exchange read_memsets cannot read
        raise EvaluationError(f"memsets conversation {cid}: {exc}") from exc
    if not episodes:
        raise EvaluationError(f"memsets conversation {cid} has no exchanges")
    return MemsetConversation(cid, episodes, questions, counts)


def _exchange_times(
    episodes: Sequence[NewEpisode], cid: str, localize: Callable[[datetime], datetime] | None
) -> dict[str, datetime]:
    """When each exchange happened, by its id (aware: a naive ``at`` read by ``localize``),
    every exchange checked as an add would check it: an EvaluationError names the one that
    would be refused, or an id that two exchanges share."""
    times: dict[str, datetime] = {}
    for ep in episodes:
        xid = str(ep.metadata["exchange_id"])
        where = f"memsets conversation {cid} exchange {xid}"
        if xid in times:
            raise EvaluationError(f"{where} appears twice (evidence names one exchange)")
        try:
            checked_episode(ep)
        except InvalidInput as exc:
            raise EvaluationError(f"{where}: {exc}") from exc
        at = localize(ep.occurred_at) if localize is not None else ep.occurred_at
        times[xid] = ensure_aware(at)
    return times


def _listed(question: dict[str, Any], key: str, where: str) -> list[Any]:
    """``question[key]`` as a list (missing or null: empty); an EvaluationError naming the
    question when it is anything else (a string would be read as its characters)."""
    value = question.get(key) or []
    if not isinstance(value, list):
        raise EvaluationError(f"{where}: {key} is a list, not a {type(value).__name__}")
    return value


def _text(question: dict[str, Any], key: str, where: str, *, default: str | None = None) -> str:
    """``question[key]`` as text: a string, or a number (ids); an EvaluationError naming the
    question when it is missing (and has no default), null or anything else."""
    if key not in question and default is not None:
        return default
    value = question[key]
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise EvaluationError(f"{where}: {key} is text, not {value!r}")
    return str(value)


def _recent(question: dict[str, Any], where: str) -> list[dict[str, str]]:
    """A question's ``recent`` messages (objects with a ``text`` and a ``role``)."""
    messages = _listed(question, "recent", where)
    for m in messages:
        if not isinstance(m, dict) or "text" not in m:
            raise EvaluationError(
                f"{where}: recent holds a {type(m).__name__}, not a message (an object with a text)"
            )
        if not isinstance(m["text"], str):
            raise EvaluationError(f"{where}: a recent message's text is text, not {m['text']!r}")
        role = m.get("role", "user")
        if not isinstance(role, str):
            raise EvaluationError(f"{where}: a recent message's role is text, not {role!r}")
        if role not in ROLES:
            raise EvaluationError(
                f"{where}: a recent message's role is one of {', '.join(ROLES)}, not {role!r}"
            )
    return [{"role": m.get("role", "user"), "text": m["text"]} for m in messages]


def _asked_at(
    question: dict[str, Any], where: str, localize: Callable[[datetime], datetime] | None = None
) -> datetime:
    """A question's ``asked_at``, ISO 8601 text (without a zone: read by ``localize``)."""
    value = question["asked_at"]
    if not isinstance(value, str):
        raise EvaluationError(f"{where}: asked_at is a time as ISO 8601 text, not {value!r}")
    try:
        moment = time_text(value)  # (full-width digits too, as an exchange's `at`)
        moment = ensure_aware(localize(moment) if localize is not None else moment)
    except ValueError as exc:
        raise EvaluationError(f"{where}: asked_at: {exc}") from exc
    try:  # (the clock is set to it: a time no memory keeps would be refused there)
        return in_span(moment, "asked_at")
    except InvalidInput as exc:
        raise EvaluationError(f"{where}: {exc}") from exc


def recent_exchanges(question: MemsetQuestion, *, agent: str) -> list[NewEpisode]:
    """``question.recent`` as the exchanges a companion would have stored: a user message
    with the partner's reply after it is one exchange, a message without its other half
    one of its own side; a minute apart, the last a minute before the question."""
    said = [
        {"role": ROLES.get(m["role"], m["role"]), "text": m["text"]}
        for m in question.recent
        if ROLES.get(m["role"]) in ("user", "partner") and m["text"].strip()
    ]
    pairs: list[tuple[str | None, str | None]] = []
    i = 0
    while i < len(said):
        if said[i]["role"] == "user" and i + 1 < len(said) and said[i + 1]["role"] == "partner":
            pairs.append((said[i]["text"], said[i + 1]["text"]))
            i += 2
        elif said[i]["role"] == "user":
            pairs.append((said[i]["text"], None))
            i += 1
        else:
            pairs.append((None, said[i]["text"]))
            i += 1
    return [
        NewEpisode(
            agent=agent,
            user_text=user,
            reply_text=reply,
            occurred_at=question.asked_at - timedelta(minutes=len(pairs) - n),
            metadata={"recent_of": question.id},
        )
        for n, (user, reply) in enumerate(pairs)
    ]


def run_memset(
    path: Path | Sequence[Path],
    *,
    config: Config,
    embedder: Embedder,
    modes: Sequence[str] = ("fast",),
    limit: int | None = None,
    conversations: Sequence[str] | None = None,
    pad: int = 0,
    haystack: Path | None = None,
    on_ingest: Progress | None = None,
    on_question: Progress | None = None,
    store_recent: bool = False,
) -> EvalResult:
    """Evaluate every requested mode on a memsets file, or on several as one set.

    With several files every conversation id is qualified by its file's
    stem (``heldout_ja_a/ja_a1``), and the tables pool every question.
    ``store_recent`` stores each question's ``recent`` messages before it is
    asked (:func:`recent_exchanges`) and deletes them after, as a companion that
    stores every turn has them.
    """
    t_start = time.perf_counter()
    files = [Path(path)] if isinstance(path, str | Path) else [Path(p) for p in path]
    if not files:
        raise EvaluationError("no memsets file given")
    raw = _read_conversations(files)
    chosen = set(select_conversations(list(raw), conversations))
    run = start_run(
        files[0],
        [
            replace(load_memset(c, agent=config.agent, localize=config.localize, name=cid), id=cid)
            for cid, c in raw.items()
            if cid in chosen
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
    results: list[QuestionResult] = []
    for c in convs:
        last = max(ensure_aware(config.localize(e.occurred_at)) for e in c.episodes)
        clock = FixedClock(last + timedelta(days=1))
        with run.stores(c, clock) as mems:
            for q in c.questions:
                clock.set(q.asked_at)
                first = mems[plans[0].name] if plans else None
                added = (
                    first.add_many(recent_exchanges(q, agent=config.agent))
                    if store_recent and first is not None
                    else []
                )
                for plan in plans:
                    mem = mems[plan.name]
                    r = run.retrieve(mem, plan, q.query, recent=q.recent, limit=K)
                    shown = r.model_copy(
                        update={"results": r.results[: plan.config.retrieval.max_results]}
                    )
                    pack = mem.pack(shown, query=q.query)
                    by_id = {e.id: _exchange_id(e.metadata) for e in r.episodes}
                    ranking = [_exchange_id(e.metadata) for e in r.episodes]
                    metrics: dict[str, float] = {}
                    if q.type != NONE:
                        metrics = {
                            "R@5": recall_at_k(ranking, q.evidence, 5),
                            "R@10": recall_at_k(ranking, q.evidence, 10),
                        }
                    results.append(
                        QuestionResult(
                            conversation=c.id,
                            question=q.id,
                            group=q.type,
                            mode=plan.name,
                            evidence=list(q.evidence),
                            ranking=ranking,
                            metrics=metrics,
                            should_inject=r.should_inject,
                            injected=[by_id.get(i) for i in pack.episode_ids],
                            signals=dict(r.signals),
                        )
                    )
                    run.asked.advance()
                if added and first is not None:
                    first.delete(added, all_agents=True)  # (its own, of any agent)

    table: dict[str, dict[str, dict[str, float]]] = {}
    summary: dict[str, dict[str, float | None]] = {}
    by_conversation: dict[str, dict[str, dict[str, float]]] = {}
    for plan in plans:
        rows = [r for r in results if r.mode == plan.name]
        scored = [r for r in rows if r.group != NONE]
        nones = [r for r in rows if r.group == NONE]
        table[plan.name], by_conversation[plan.name] = recall_tables(scored, scored, OVERALL)
        overall = table[plan.name].get(OVERALL, {})
        if nones:
            table[plan.name][NONE] = {"n": float(len(nones))}
        precisions = [p for r in scored if (p := precision(r.injected, r.evidence)) is not None]
        summary[plan.name] = {
            "inject_accuracy_none": mean(0.0 if r.should_inject else 1.0 for r in nones),
            "n_none": float(len(nones)),
            "inject_accuracy_others": mean(1.0 if r.should_inject else 0.0 for r in scored),
            "n_others": float(len(scored)),
            "pack_precision": mean(precisions),
            "n_injected": float(len(precisions)),
            "R@5": overall.get("R@5"),
            "R@10": overall.get("R@10"),
        }
    present = {r.group for r in results}
    groups = [t for t in TYPES if t in present]
    groups += sorted(present - set(TYPES) - {NONE})
    groups += [OVERALL] if any(g != NONE for g in present) else []
    groups += [NONE] if NONE in present else []
    evidence: dict[str, dict[str, int]] = {"all": {}}
    for c in convs:
        for key, n in c.evidence.items():
            evidence["all"][key] = evidence["all"].get(key, 0) + n
    notes = [*run.skipped.values(), *run.notes, *run.degraded_notes()]
    if limit is not None:
        notes.append(f"--limit {limit}: first {limit} questions per conversation")
    if store_recent:
        notes.append("--store-recent: each question's recent messages were stored before it")
    return EvalResult(
        code=code_info().to_json(),
        settings=changed_settings(config),
        dataset="memset",
        path=", ".join(map(str, files)),
        files=[str(f) for f in files] if len(files) > 1 else [],
        modes=[p.name for p in plans],
        skipped_modes=run.skipped,
        conversations=[c.id for c in convs],
        groups=groups,
        metrics=list(RECALL_METRICS),
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


def _read_conversations(files: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """Every conversation of ``files`` by id, qualified by the file's stem when there are several."""
    out: dict[str, dict[str, Any]] = {}
    for f in files:
        data = load_json(f)
        if not isinstance(data, dict) or not isinstance(data.get("conversations"), list):
            raise EvaluationError(
                f"{f}: not a memsets file (expected an object with conversations)"
            )
        prefix = f"{f.stem}/" if len(files) > 1 else ""
        for i, conv in enumerate(data["conversations"]):
            if not isinstance(conv, dict):
                raise EvaluationError(f"{f}: conversation {i + 1} is not an object")
            given = conv.get("id", f"conversation-{i + 1}")
            if (
                isinstance(given, bool)
                or not isinstance(given, str | int)
                or not str(given).strip()
            ):
                raise EvaluationError(f"{f}: conversation {i + 1}: id is text, not {given!r}")
            cid = prefix + str(given)
            if cid in out:
                raise EvaluationError(
                    f"conversation {cid} appears twice"
                    + (" (two files with the same name?)" if prefix else f" in {f}")
                )
            out[cid] = conv
    return out


def _exchange_id(metadata: dict[str, Any]) -> str | None:
    """The exchange id of a retrieved episode; None for padding (noise is never evidence)."""
    if "noise" in metadata:
        return None
    value = metadata.get("exchange_id")
    return str(value) if value is not None else None
