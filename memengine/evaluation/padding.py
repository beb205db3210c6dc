"""Padding: noise episodes from another dataset (the *haystack*) added to every store,
spread evenly over the conversation's time span. They carry no evidence id, so they
can only push evidence down the ranking."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import EvaluationError, InvalidInput
from ..importers import detect_format, locomo_turn_text
from ..models import EpisodeKind, NewEpisode
from .files import load_json

__all__ = [
    "Haystack",
    "NoiseItem",
    "PaddingInfo",
    "load_haystack",
    "noise_episodes",
    "pad_conversations",
]


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
        fmt = detect_format(path)  # (UTF-16 too, as a data set is read)
    except InvalidInput as exc:
        raise EvaluationError(str(exc)) from exc
    if fmt not in ("locomo", "memsets"):
        raise EvaluationError(f"{path}: a haystack must be a LoCoMo or memsets JSON file")
    data = load_json(path)
    try:
        convs = _locomo_noise(data) if fmt == "locomo" else _memsets_noise(data)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise EvaluationError(
            f"{path}: not a {fmt} file the padding can read (an eval --json result?): {exc!r}"
        ) from exc
    return Haystack(path.resolve(), fmt, convs)


def _locomo_noise(data: Any) -> dict[str, list[NoiseItem]]:
    """The turns of a LoCoMo file, by sample."""
    convs: dict[str, list[NoiseItem]] = {}
    for n, sample in enumerate(data):
        conv = sample.get("conversation", {})
        items = [
            NoiseItem(content=locomo_turn_text(turn))
            for key, turns in conv.items()
            if key.startswith("session_") and key.count("_") == 1 and isinstance(turns, list)
            for turn in turns
        ]
        convs[str(sample.get("sample_id", f"sample-{n}"))] = items
    return convs


def _memsets_noise(data: Any) -> dict[str, list[NoiseItem]]:
    """The exchanges of a memsets file, by conversation."""
    convs: dict[str, list[NoiseItem]] = {}
    for conv in data["conversations"]:
        convs[str(conv["id"])] = [
            NoiseItem(user=ex.get("user"), reply=ex.get("partner"))
            for s in conv["sessions"]
            for ex in s["exchanges"]
        ]
    return convs


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
