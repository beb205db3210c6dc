"""What both evaluations share: modes, stores per conversation, results.

An evaluation builds one temporary memory file per conversation, ingests
it once, then opens the same file once per *mode* (a retrieval
configuration) and asks every question in every mode, so the modes are
compared on identical stores:

- ``bm25``: full text only (``search = "bm25"``);
- ``vector``: KNN only (``search = "vector"``);
- ``fast``: the default hybrid fast path, KNN + BM25 fused by RRF;
- ``full``: the fast path plus the LLM phases; needs ``[llm] base_url``
  (or ``api_key``) and is skipped with a note otherwise.

Padding (noise episodes from another dataset) is in :mod:`.padding`.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from pydantic import ValidationError

from ..clock import FixedClock
from ..config import Config, LLMConfig, RetrievalConfig
from ..embed.base import Embedder
from ..embed.cache import CachingEmbedder
from ..errors import EvaluationError, InvalidInput
from ..importers import unreadable
from ..memory import Memory
from ..models import NewEpisode, Retrieval
from ..text import json_finite
from ..transfer import write_text_file
from .metrics import mean_by_group
from .padding import PaddingInfo, pad_conversations

__all__ = [
    "MODES",
    "EvalResult",
    "ModePlan",
    "Progress",
    "ProgressCounter",
    "QuestionResult",
    "Run",
    "llm_configured",
    "plan_modes",
    "recall_tables",
    "save_json",
    "start_run",
    "stores",
]

Progress = Callable[[int, int], None]
"""A progress callback: ``(done, total)``."""

MODES: tuple[str, ...] = ("bm25", "vector", "fast", "full")
"""Every mode name ``--mode`` accepts, in the order they are shown."""

K = 10
"""How many results every scored retrieval asks for."""


# -- modes ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModePlan:
    """One retrieval configuration to evaluate, under its mode name."""

    name: str
    config: Config


def llm_configured(config: Config) -> bool:
    """Whether an LLM endpoint is configured (``[llm] base_url`` or ``api_key``)."""
    return config.llm.configured


def plan_modes(names: Sequence[str], config: Config) -> tuple[list[ModePlan], dict[str, str]]:
    """The configurations of the requested modes, and the modes skipped with the reason."""
    wanted = [n.strip().lower() for n in names if n.strip()]
    if not wanted:
        raise EvaluationError(f"no mode given; choose from {', '.join(MODES)}")
    unknown = [n for n in wanted if n not in MODES]
    if unknown:
        raise EvaluationError(
            f"unknown mode {', '.join(map(repr, unknown))}; choose from {', '.join(MODES)}"
        )
    no_llm = config.model_copy(update={"llm": LLMConfig.model_validate({})})
    search = {"bm25": "bm25", "vector": "vector", "fast": "hybrid", "full": "hybrid"}
    plans: list[ModePlan] = []
    skipped: dict[str, str] = {}
    for name in dict.fromkeys(wanted):
        if name == "full" and not llm_configured(config):
            skipped[name] = (
                "mode 'full' needs an LLM endpoint: set [llm] base_url (or api_key) in "
                "memengine.toml or MEMENGINE_LLM_BASE_URL; skipped"
            )
            continue
        base = config if name == "full" else no_llm
        update: dict[str, object] = {"search": search[name]}
        if name in ("bm25", "vector"):  # single-list references: no second stage
            update.update(session_weight=0.0, speaker_weight=0.0, answer_type_weight=0.0)
        retrieval = base.retrieval.model_copy(update=update)
        plans.append(ModePlan(name, base.model_copy(update={"retrieval": retrieval})))
    _check_modes(plans, config)
    return plans, skipped


def _check_modes(plans: Sequence[ModePlan], config: Config) -> None:
    """Each mode's ``[retrieval]`` as the configuration's own is checked, before any ingest:
    a copy made with ``model_copy`` is not, and ``search = "bm25"`` lets ``knn_k_per_query``
    sit below ``spread_k`` (no vector list to read a spread from), which a mode that
    searches vectors may not. Refused, not mended: a mode whose ``spread_k`` the eval lowered
    would measure a boost the user's settings do not run (its ``spread_low`` and
    ``spread_high`` were measured on hit 10), under the mode's name."""
    refused: dict[str, list[ModePlan]] = {}
    for plan in plans:
        try:
            RetrievalConfig.model_validate(plan.config.retrieval.model_dump())
        except ValidationError as exc:
            message = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
            refused.setdefault(message, []).append(plan)
    if refused:  # (one message in practice: the modes differ in search alone)
        message, failing = next(iter(refused.items()))
        one = len(failing) == 1
        raise EvaluationError(
            f"{'mode' if one else 'modes'} {', '.join(repr(p.name) for p in failing)} "
            f"{'searches' if one else 'search'} vectors (the configuration's [retrieval] "
            f"search is {config.retrieval.search!r}), and with {'it' if one else 'them'} "
            f"{message} under [retrieval]; or run --mode bm25 only"
        )


# -- progress ------------------------------------------------------------------------------
class ProgressCounter:
    """Accumulates progress over several steps into one ``(done, total)`` callback."""

    def __init__(self, callback: Progress | None, total: int) -> None:
        self.callback = callback
        self.total = total
        self.done = 0

    def advance(self, n: int = 1) -> None:
        """Count ``n`` more units done."""
        self.done += n
        if self.callback:
            self.callback(self.done, self.total)

    def sub(self) -> Progress:
        """A callback for a step that reports its own cumulative ``done`` from zero."""
        start = self.done

        def report(done: int, _total: int) -> None:
            self.done = start + done
            if self.callback:
                self.callback(self.done, self.total)

        return report


# -- stores --------------------------------------------------------------------------------
@contextmanager
def stores(
    name: str,
    episodes: Sequence[NewEpisode],
    plans: Sequence[ModePlan],
    *,
    embedder: Embedder,
    clock: FixedClock,
    progress: Progress | None = None,
) -> Iterator[dict[str, Memory]]:
    """Ingest ``episodes`` into a temporary file once, and open it once per mode.

    Yields ``{mode name: Memory}`` over the same file; the file (and its
    folder) are deleted on exit.
    """
    folder = Path(tempfile.mkdtemp(prefix="memengine-eval-"))
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name[:40]) or "conversation"
    # (its own folder: only readable; 40 characters of 4 bytes stay under a name's 255)
    path = folder / f"{safe}.db"
    try:
        if not plans:  # every mode was skipped: nothing to ingest
            yield {}
            return
        base = plans[0].config
        with Memory.open(path, config=base, embedder=embedder, clock=clock) as mem:
            mem.add_many(episodes, progress=progress, total=len(episodes))
        with ExitStack() as stack:
            opened = {
                plan.name: stack.enter_context(
                    Memory.open(path, config=plan.config, embedder=embedder, clock=clock)
                )
                for plan in plans
            }
            yield opened
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- one evaluation run ---------------------------------------------------------------------
class Conversation(Protocol):
    """What a run needs of a conversation: its id, its episodes and its questions."""

    id: str
    episodes: list[NewEpisode]
    questions: list[Any]


C = TypeVar("C", bound=Conversation)


@dataclass
class Run(Generic[C]):
    """The setup and time keeping both evaluations share (:func:`start_run`)."""

    conversations: list[C]
    plans: list[ModePlan]
    skipped: dict[str, str]
    padding: PaddingInfo | None
    noise: dict[str, list[NewEpisode]]
    embedder: CachingEmbedder
    ingest: ProgressCounter
    asked: ProgressCounter
    started: float
    ingest_s: float = 0.0
    mode_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """Settings that change what is measured (printed with the results)."""
    retrievals: dict[str, int] = field(default_factory=dict)
    degraded: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per mode, the retrievals that came back with ``degraded`` notes, by the part named."""

    @contextmanager
    def stores(self, conversation: C, clock: FixedClock) -> Iterator[dict[str, Memory]]:
        """:func:`stores` for one conversation with its noise, the ingest time counted."""
        t0 = time.perf_counter()
        with stores(
            conversation.id,
            [*conversation.episodes, *self.noise.get(conversation.id, [])],
            self.plans,
            embedder=self.embedder,
            clock=clock,
            progress=self.ingest.sub(),
        ) as mems:
            self.ingest_s += time.perf_counter() - t0
            yield mems

    def retrieve(self, mem: Memory, plan: ModePlan, text: str, **options: Any) -> Retrieval:
        """``mem.retrieve(text, **options)``, its time added to ``plan``'s question time."""
        t0 = time.perf_counter()
        r = mem.retrieve(text, **options)
        self.mode_s[plan.name] = self.mode_s.get(plan.name, 0.0) + time.perf_counter() - t0
        self.retrievals[plan.name] = self.retrievals.get(plan.name, 0) + 1
        if r.degraded:
            parts = self.degraded.setdefault(plan.name, {"retrievals": 0})
            parts["retrievals"] += 1
            for part in sorted(r.degraded_parts):
                parts[part] = parts.get(part, 0) + 1
        return r

    def degraded_counts(self) -> dict[str, int]:
        """Per mode, how many retrievals came back degraded (0 for none)."""
        return {m: self.degraded.get(m, {}).get("retrievals", 0) for m in self.retrievals}

    def degraded_notes(self) -> list[str]:
        """One note per mode some of whose retrievals came back degraded: they were scored as
        they came back (an LLM unreachable, a deadline missed), not as the mode works."""
        notes = []
        for mode, parts in self.degraded.items():
            what = ", ".join(f"{p} {n}" for p, n in parts.items() if p != "retrievals")
            notes.append(
                f"degraded: {parts['retrievals']} of {self.retrievals[mode]} retrievals in mode "
                f"{mode} came back degraded ({what}) and were scored as they came back"
            )
        return notes

    def timings(self) -> dict[str, float]:
        """Seconds spent ingesting, asking in each mode, and in all."""
        return {
            "ingest": round(self.ingest_s, 3),
            **{f"questions_{m}": round(s, 3) for m, s in self.mode_s.items()},
            "total": round(time.perf_counter() - self.started, 3),
        }


def start_run(
    path: Path,
    conversations: list[C],
    *,
    config: Config,
    embedder: Embedder,
    modes: Sequence[str],
    limit: int | None,
    pad: int,
    haystack: Path | None,
    on_ingest: Progress | None,
    on_question: Progress | None,
    started: float,
) -> Run[C]:
    """Plan the modes, cut the questions to ``limit``, pick the padding, set up progress."""
    if pad and haystack is None:
        raise EvaluationError(
            "--pad needs --haystack (a LoCoMo or memsets file to take noise from)"
        )
    plans, skipped = plan_modes(modes, config)
    if not plans:  # (a run of nothing would write a result that looks like one)
        said = "; ".join(note.removesuffix("; skipped") for note in skipped.values())
        raise EvaluationError(f"no mode left to evaluate: {said}")
    for c in conversations:
        if limit is not None:
            c.questions = c.questions[:limit]
    if not any(c.questions for c in conversations):
        why = "the file holds no conversations" if not conversations else "none with valid evidence"
        raise EvaluationError(f"{path}: no questions to evaluate ({why})")
    padding, noise = pad_conversations(
        [(c.id, c.episodes) for c in conversations],
        pad,
        haystack,
        test_path=path,
        agent=config.agent,
    )
    episodes = sum(len(c.episodes) + len(noise.get(c.id, [])) for c in conversations)
    questions = sum(len(c.questions) for c in conversations) * len(plans)
    return Run(
        conversations,
        plans,
        skipped,
        padding,
        noise,
        CachingEmbedder(embedder, size=100_000),
        ProgressCounter(on_ingest, episodes),
        ProgressCounter(on_question, questions),
        started,
        mode_s={p.name: 0.0 for p in plans},
        retrievals={p.name: 0 for p in plans},
        notes=setting_notes(config),
    )


def setting_notes(config: Config) -> list[str]:
    """Notes for the opt-in settings that change the should-inject decision."""
    minimum = config.retrieval.coverage_min
    level = config.retrieval.coverage_word_min
    if minimum <= 0:
        if level > 0:
            return [
                f"should-inject: [retrieval] coverage_word_min = {level:g} has no effect: "
                "coverage_min is 0 (the coverage is off)"
            ]
        return []
    if level <= 0:
        return [f"should-inject: [retrieval] coverage_min = {minimum:g} (opt-in soft coverage)"]
    return [
        f"should-inject: [retrieval] coverage_min = {minimum:g}, coverage_word_min = {level:g} "
        "(opt-in coverage: the share of the question's words with a partner at that cosine)"
    ]


# -- results -------------------------------------------------------------------------------
@dataclass
class QuestionResult:
    """One question asked in one mode: what came back and how it scored."""

    conversation: str
    question: str
    group: str
    mode: str
    evidence: list[str]
    ranking: list[str | None]
    metrics: dict[str, float]
    should_inject: bool | None = None
    injected: list[str | None] = field(default_factory=list)
    signals: dict[str, float] = field(default_factory=dict)


@dataclass
class EvalResult:
    """Everything one evaluation run measured; ``table[mode][group][metric]``."""

    dataset: str
    path: str
    modes: list[str]
    skipped_modes: dict[str, str]
    conversations: list[str]
    groups: list[str]
    metrics: list[str]
    table: dict[str, dict[str, dict[str, float]]]
    embedder: str
    k: int = K
    summary: dict[str, dict[str, float | None]] = field(default_factory=dict)
    evidence: dict[str, dict[str, int]] = field(default_factory=dict)
    padding: PaddingInfo | None = None
    timings_s: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    degraded: dict[str, int] = field(default_factory=dict)
    """Per mode, the retrievals that came back degraded (``Retrieval.degraded`` not empty)."""
    questions: list[QuestionResult] = field(default_factory=list)
    by_conversation: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """``by_conversation[mode][conversation][metric]`` over the overall row's questions."""
    files: list[str] = field(default_factory=list)
    """The files pooled into this run when there were several (``path`` joins them)."""
    code: dict[str, Any] = field(default_factory=dict)
    """Which memengine ran (:func:`.provenance.code_info`)."""
    settings: dict[str, Any] = field(default_factory=dict)
    """The settings that differ from the defaults (:func:`.provenance.changed_settings`)."""

    def to_json(self) -> dict[str, Any]:
        """Every number as plain JSON data."""
        return asdict(self)


def recall_tables(
    rows: Sequence[QuestionResult], counted: Sequence[QuestionResult], overall: str
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """One mode's recall table, the mean metrics of ``rows`` per group plus the ``overall``
    row of ``counted``, and the same means of ``counted`` per conversation."""
    table = {
        **mean_by_group((r.group, r.metrics) for r in rows),
        **mean_by_group((overall, r.metrics) for r in counted),
    }
    return table, mean_by_group((r.conversation, r.metrics) for r in counted)


def is_eval_result(data: Any) -> bool:
    """Whether ``data`` (read from a JSON file) is a result of ``memengine eval``."""
    return isinstance(data, dict) and "dataset" in data and "table" in data


def check_result_path(
    path: Path | None,
    *,
    command: str = "memengine eval",
    is_result: Callable[[Any], bool] = is_eval_result,
) -> None:
    """Refuse (``InvalidInput``) a results file that exists and holds something other than
    an earlier result of ``command`` (``is_result``), such as a data set (``--json`` before
    a shell's list of files takes the first of them); checked before a run of minutes, not
    after it."""
    if path is None or not path.is_file() or path.stat().st_size == 0:
        return
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, RecursionError):
        data = None
    except OSError as exc:  # (a read, not an output)
        raise unreadable(path, exc) from exc
    if not is_result(data):
        raise InvalidInput(
            f"cannot write {path}: it holds something other than an earlier result of "
            f"{command} (a data set?); name another file after --json, or remove it"
        )


def save_json(result: EvalResult, path: Path) -> None:
    """Write ``result`` as JSON to ``path`` (a number that is not finite as null), whole or
    not at all, as an export is written (:func:`.transfer.write_text_file`)."""
    text = json.dumps(json_finite(result.to_json()), ensure_ascii=False, indent=2) + "\n"
    write_text_file(path, text)
