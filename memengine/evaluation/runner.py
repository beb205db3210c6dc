"""What both evaluations share: modes, stores per conversation, padding, results.

An evaluation builds one temporary memory file per conversation, ingests
it once, then opens the same file once per *mode* (a retrieval
configuration) and asks every question in every mode, so the modes are
compared on identical stores:

- ``bm25``: full text only (``search = "bm25"``);
- ``vector``: KNN only (``search = "vector"``);
- ``fast``: the default hybrid fast path, KNN + BM25 fused by RRF;
- ``full``: the fast path plus the LLM phases; needs ``[llm] base_url``
  (or ``api_key``) and is skipped with a note otherwise.

Padding adds noise episodes from another dataset (the *haystack*) to every
store, spread evenly over the conversation's time span; they carry no
evidence id, so they can only push evidence down the ranking.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from ..clock import FixedClock
from ..config import Config, LLMConfig
from ..embed.base import Embedder
from ..embed.cache import CachingEmbedder
from ..errors import EvaluationError, InvalidInput
from ..importers import detect_format, locomo_turn_text
from ..memory import Memory
from ..models import EpisodeKind, NewEpisode, Retrieval

__all__ = [
    "MODES",
    "CachingEmbedder",
    "EvalResult",
    "Haystack",
    "ModePlan",
    "PaddingInfo",
    "Progress",
    "ProgressCounter",
    "QuestionResult",
    "Run",
    "llm_configured",
    "load_haystack",
    "load_json",
    "noise_episodes",
    "plan_modes",
    "save_json",
    "select_conversations",
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
    return bool(config.llm.base_url or config.llm.api_key)


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
    return plans, skipped


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


# -- data files ----------------------------------------------------------------------------
def load_json(path: Path) -> Any:
    """Read a JSON evaluation file, turning I/O and syntax errors into EvaluationError."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise EvaluationError(f"no such file: {path}") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvaluationError(f"{path}: cannot read JSON ({exc})") from exc


def select_conversations(available: Sequence[str], wanted: Sequence[str] | None) -> list[str]:
    """The conversation ids to run: all, or the ``wanted`` ones (which must exist), in file order."""
    if not wanted:
        return list(available)
    missing = [w for w in wanted if w not in available]
    if missing:
        raise EvaluationError(
            f"unknown conversation {', '.join(missing)}; the file holds {', '.join(available)}"
        )
    keep = set(wanted)
    return [a for a in available if a in keep]


# -- padding -------------------------------------------------------------------------------
@dataclass(frozen=True)
class NoiseItem:
    """One haystack episode's text: a LoCoMo turn (content) or a memsets exchange."""

    content: str | None = None
    user: str | None = None
    reply: str | None = None

    @property
    def texts(self) -> tuple[str, ...]:
        """The texts this item would store (for the overlap check)."""
        return tuple(t for t in (self.content, self.user, self.reply) if t)


@dataclass
class Haystack:
    """Noise episodes by source conversation, read from a LoCoMo or memsets file."""

    path: Path
    format: str
    conversations: dict[str, list[NoiseItem]]

    def describe(self) -> str:
        """A short description such as ``locomo_dev.json (LoCoMo turns)``."""
        what = "LoCoMo turns" if self.format == "locomo" else "memsets exchanges"
        return f"{self.path.name} ({what})"


def load_haystack(path: Path) -> Haystack:
    """Read the noise pool of a LoCoMo or memsets file, by conversation."""
    path = Path(path)
    if not path.exists():
        raise EvaluationError(f"no such haystack file: {path}")
    try:
        fmt = detect_format(path)
    except InvalidInput as exc:
        raise EvaluationError(str(exc)) from exc
    data = load_json(path)
    convs: dict[str, list[NoiseItem]] = {}
    if fmt == "locomo":
        for n, sample in enumerate(data):
            conv = sample.get("conversation", {})
            items = [
                NoiseItem(content=locomo_turn_text(turn))
                for key, turns in conv.items()
                if key.startswith("session_") and key.count("_") == 1 and isinstance(turns, list)
                for turn in turns
            ]
            convs[str(sample.get("sample_id", f"sample-{n}"))] = items
    elif fmt == "memsets":
        for conv in data["conversations"]:
            convs[str(conv["id"])] = [
                NoiseItem(user=ex.get("user"), reply=ex.get("partner"))
                for s in conv["sessions"]
                for ex in s["exchanges"]
            ]
    else:
        raise EvaluationError(f"{path}: a haystack must be a LoCoMo or memsets JSON file")
    return Haystack(path.resolve(), fmt, convs)


@dataclass
class PaddingInfo:
    """How much padding was used, and from where."""

    requested: int
    source: str
    used: dict[str, int] = field(default_factory=dict)
    excluded: dict[str, list[str]] = field(default_factory=dict)

    def describe(self) -> str:
        """One line for the table header."""
        counts = sorted(set(self.used.values()))
        got = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}" if counts else "0"
        short = "" if not counts or counts[0] >= self.requested else f" of {self.requested}"
        return f"padding: {got}{short} noise episodes per store from {self.source}"


def noise_episodes(
    haystack: Haystack,
    n: int,
    *,
    test_path: Path,
    test_id: str,
    test_texts: set[str],
    start: datetime,
    end: datetime,
    agent: str,
) -> tuple[list[NewEpisode], list[str]]:
    """Up to ``n`` noise episodes for one conversation, spread evenly over ``[start, end]``.

    The conversation under test never contributes: a haystack conversation
    is left out when it is the same conversation of the same file, or when
    it shares any text with the conversation under test (another copy of
    it). The sample is seeded by the conversation id, so runs repeat.
    Returns the episodes and the haystack conversations left out.
    """
    same_file = haystack.path == Path(test_path).resolve()
    pool: list[NoiseItem] = []
    excluded: list[str] = []
    for conv_id, items in haystack.conversations.items():
        if (same_file and conv_id == test_id) or any(
            t in test_texts for item in items for t in item.texts
        ):
            excluded.append(conv_id)
            continue
        pool.extend(items)
    rng = random.Random(f"memengine-eval-padding:{test_id}")
    chosen = rng.sample(pool, min(n, len(pool)))
    span = (end - start).total_seconds()
    out: list[NewEpisode] = []
    for i, item in enumerate(chosen):
        at = start + timedelta(seconds=span * (i + 0.5) / len(chosen))
        meta = {"noise": haystack.path.name}
        fields: dict[str, Any] = {"agent": agent, "occurred_at": at, "metadata": meta}
        if item.content is not None:
            fields.update(kind=EpisodeKind.message, content=item.content)
        else:
            fields.update(kind=EpisodeKind.exchange, user_text=item.user, reply_text=item.reply)
        out.append(NewEpisode.model_validate(fields))
    return out, excluded


def pad_conversations(
    conversations: Sequence[tuple[str, Sequence[NewEpisode]]],
    pad: int,
    haystack: Path | None,
    *,
    test_path: Path,
    agent: str,
) -> tuple[PaddingInfo | None, dict[str, list[NewEpisode]]]:
    """Noise episodes for each ``(id, episodes)`` conversation (:func:`noise_episodes`),
    keyed by id, and what was used; ``(None, {})`` without ``pad`` or ``haystack``."""
    if not pad or haystack is None:
        return None, {}
    hay = load_haystack(haystack)
    padding = PaddingInfo(pad, hay.describe())
    noise: dict[str, list[NewEpisode]] = {}
    for conv_id, episodes in conversations:
        times = [e.occurred_at for e in episodes]
        texts = {t for e in episodes for t in (e.content, e.user_text, e.reply_text) if t}
        eps, excluded = noise_episodes(
            hay,
            pad,
            test_path=test_path,
            test_id=conv_id,
            test_texts=texts,
            start=min(times),
            end=max(times),
            agent=agent,
        )
        noise[conv_id] = eps
        padding.used[conv_id] = len(eps)
        padding.excluded[conv_id] = excluded
    return padding, noise


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
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "conversation"
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
        return r

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
    for c in conversations:
        if limit is not None:
            c.questions = c.questions[:limit]
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
    questions: list[QuestionResult] = field(default_factory=list)
    by_conversation: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """``by_conversation[mode][conversation][metric]`` over the overall row's questions."""
    files: list[str] = field(default_factory=list)
    """The files pooled into this run when there were several (``path`` joins them)."""
    code: dict[str, Any] = field(default_factory=dict)
    """Which memengine ran (:func:`.provenance.code_info`)."""

    def to_json(self) -> dict[str, Any]:
        """Every number as plain JSON data."""
        return asdict(self)


def save_json(result: EvalResult, path: Path) -> None:
    """Write ``result`` as JSON to ``path``."""
    Path(path).write_text(
        json.dumps(result.to_json(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
