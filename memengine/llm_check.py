"""``memengine llm-check``: is the configured LLM endpoint usable for the phases, and fast enough?

Pings each model, then runs one real expansion and one real rerank on a
small built-in sample and times them against the phases' deadlines.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import TypeVar

from .config import Config
from .errors import ConfigError, LLMError
from .llm.client import ChatClient
from .models import Episode, EpisodeKind, Message, Role
from .retrieve.expand import Expander
from .retrieve.fastpath import Candidate
from .retrieve.rerank import Reranker

__all__ = ["check_llm"]

T = TypeVar("T")

_SAMPLE_RECENT: tuple[tuple[Role, str], ...] = (
    ("user", "Juno keeps pawing at her mouth this evening."),
    ("partner", "Poor girl. Is she still managing her food?"),
)
_SAMPLE_TEXT = "Yes, she's eating fine. Remind me when her appointment is?"
_SAMPLE_EPISODES = (
    ("Juno's dental cleaning is booked at Northside Vets on 2 June.", "Noted, 2 June."),
    ("We tried the new ramen place Menya Kaze downtown.", "Was the broth good?"),
    ("The Fenwick tender went in today, fingers crossed.", "Well done!"),
)


def check_llm(config: Config) -> dict[str, tuple[bool, str]]:
    """Run the checks against ``config.llm``; each is ``name -> (ok, detail)``.

    Raises :class:`ConfigError` when no endpoint is configured; a failing
    endpoint is a failed check, not an exception.
    """
    llm = config.llm
    if not llm.configured:
        raise ConfigError(
            "no LLM endpoint configured: set base_url in the llm section of memengine.toml "
            "(e.g. http://localhost:11434/v1 for Ollama) or MEMENGINE_LLM_BASE_URL; see docs/llm.md"
        )
    checks: dict[str, tuple[bool, str]] = {}
    now = datetime.now(timezone.utc)
    recent = [Message(role=r, text=t) for r, t in _SAMPLE_RECENT]
    with ChatClient.from_config(llm) as client:
        for model in dict.fromkeys([llm.expansion_model, llm.rerank_model]):
            try:
                seconds = client.ping(model)
                checks[f"ping {model}"] = (True, f"{client.shown_url}: {seconds * 1000:.0f} ms")
            except LLMError as exc:
                checks[f"ping {model}"] = (False, str(exc))
        if not all(ok for ok, _ in checks.values()):
            return checks
        expander = Expander(client, llm, max_queries=config.retrieval.max_expanded_queries)
        ok, detail, expansion = _timed(
            lambda: expander.expand(
                _SAMPLE_TEXT, recent, now, "en", deadline_s=llm.request_timeout_s
            ),
            llm.expansion_deadline_s,
        )
        if expansion is not None:
            detail += f"; queries {expansion.expanded_queries}"
        checks["expansion"] = (ok, detail)
        episodes = [
            Episode(
                id=i + 1,
                agent="check",
                kind=EpisodeKind.exchange,
                user_text=user,
                reply_text=reply,
                occurred_at=now - timedelta(days=10 * (i + 1)),
                created_at=now,
            )
            for i, (user, reply) in enumerate(_SAMPLE_EPISODES)
        ]
        reranker = Reranker(client, llm)
        ok, detail, outcome = _timed(
            lambda: reranker.rerank(
                _SAMPLE_TEXT,
                recent,
                [Candidate(ep, 1.0 / (i + 1)) for i, ep in enumerate(episodes)],
                now,
                "en",
                deadline_s=llm.request_timeout_s,
            ),
            llm.rerank_deadline_s,
        )
        if outcome is not None:
            chosen = [f"{c.id} ({c.relevance})" for c in outcome.chosen]
            detail += f"; chose {chosen or 'nothing'} (expected 1 first)"
            if outcome.unknown_ids:
                detail += f"; invented ids {outcome.unknown_ids}"
            if outcome.malformed:
                detail += f"; {outcome.malformed} item(s) of the wrong shape"
            if not outcome.chosen and (outcome.unknown_ids or outcome.malformed):
                ok = False  # as a turn reads it: nothing usable, the fast path's ranking
                detail += "; nothing usable is left: turns would keep the fast path's ranking"
        checks["rerank"] = (ok, detail)
        # what the phases just used (known only once they ran)
        checks["response_format"] = (True, client.response_format_in_use)
    return checks


def _timed(call: Callable[[], T], deadline_s: float) -> tuple[bool, str, T | None]:
    """Run one phase call and describe the outcome (ok, detail, value), with its time against
    the phase's deadline whether it answered or failed ("invalid reply: …; after 5.01 s — over
    the 0.90 s deadline"): a slow server's wrong answer is two faults, not one."""
    start = time.monotonic()
    try:
        value = call()
    except LLMError as exc:
        seconds = time.monotonic() - start
        return False, f"{exc}; after {_against(seconds, deadline_s, fall_back=False)}", None
    seconds = time.monotonic() - start
    late = seconds > deadline_s
    return not late, _against(seconds, deadline_s, fall_back=True), value


def _against(seconds: float, deadline_s: float, *, fall_back: bool) -> str:
    """``seconds`` against a phase's deadline: "0.42 s (deadline 0.90 s)", or "5.01 s — over
    the 0.90 s deadline: turns will fall back" (those last words left out after a failure,
    which turns fall back on whatever its time)."""
    if seconds <= deadline_s:
        return f"{seconds:.2f} s (deadline {deadline_s:.2f} s)"
    then = ": turns will fall back" if fall_back else ""
    return f"{seconds:.2f} s — over the {deadline_s:.2f} s deadline{then}"
