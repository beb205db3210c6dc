"""The Retriever: builds the context query, runs the phases, and decides what to inject.

Without an LLM a turn is the fast path alone: the context query (the
last few recent messages joined with the user's new text) plus any extra
queries go through :class:`FastPath`; the results are labelled and the
should-inject rule is applied. The LLM phases (expansion, reranking) hook
in through :class:`Phases` when configured.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Executor
from datetime import datetime, timedelta

from ..config import RetrievalConfig
from ..embed.base import Embedder
from ..models import Message, Retrieval, Retrieved
from ..store.database import Store
from ..store.filters import Filters
from ..text import guess_language
from .fastpath import Candidate, FastPath, FastResult

__all__ = ["Retriever", "context_query", "fast_results", "inject_decision", "label"]


def context_query(text: str, recent: Sequence[Message], turns: int) -> str:
    """The recent conversation (last ``turns`` exchanges, i.e. 2×turns messages) and the new text."""
    tail = list(recent)[-2 * turns :] if turns else []
    parts = [m.text.strip() for m in tail if m.text.strip()]
    parts.append(text.strip())
    return "\n".join(parts)


def label(candidate: Candidate, config: RetrievalConfig, top_score: float) -> str:
    """Relevance without an LLM.

    ``high``: both the vector and the full-text search ranked it in their
    top 3; ``medium``: its fused score is at least ``pack_score_ratio`` of the
    best one and its cosine similarity clears ``relevance_threshold`` or both
    searches found it; ``low`` otherwise (listed, never packed).
    """
    c = candidate.components
    if candidate.score < config.pack_score_ratio * top_score:
        return "low"
    both = "knn_rank" in c and "bm25_rank" in c
    if both and c["knn_rank"] <= 3 and c["bm25_rank"] <= 3:
        return "high"
    if both or c.get("cosine", 0.0) >= config.relevance_threshold:
        return "medium"
    return "low"


def inject_decision(candidates: Sequence[Candidate], config: RetrievalConfig) -> bool:
    """The fast path's should-inject rule.

    Inject when one of the top results was ranked in the top 3 of both the
    vector and the full-text search, or has a cosine similarity to the
    context query of at least ``relevance_threshold`` (0.29). Both were
    chosen on the dev sets (docs/benchmarks.md). Without an LLM these are
    the only "nothing relevant" signals; the rerank phase replaces them.
    """
    for c in candidates[: config.max_results]:
        comps = c.components
        if comps.get("knn_rank", 99) <= 3 and comps.get("bm25_rank", 99) <= 3:
            return True
        if comps.get("cosine", 0.0) >= config.relevance_threshold:
            return True
    return False


def fast_results(
    candidates: Sequence[Candidate], config: RetrievalConfig, limit: int | None
) -> list[Retrieved]:
    """The fast path's ranking as results, each labelled by :func:`label`."""
    top = list(candidates)[: limit or config.max_results]
    return [
        Retrieved(
            episode=c.episode,
            score=c.score,
            rank=i + 1,
            relevance=label(c, config, top[0].score),
            components=c.components,
        )
        for i, c in enumerate(top)
    ]


class Retriever:
    """Runs a turn's retrieval over one store."""

    def __init__(
        self, store: Store, embedder: Embedder, config: RetrievalConfig, executor: Executor
    ) -> None:
        self.config = config
        self.fast = FastPath(store, embedder, config, executor)

    def filters(
        self,
        *,
        agent: str,
        now: datetime,
        kinds: Sequence[str] | None,
        max_sensitivity: int,
        day_range: int | None,
        deep: bool,
    ) -> Filters:
        """The search filters of one turn."""
        since = None
        if day_range is not None:
            since = int((now - timedelta(days=day_range)).timestamp())
        return Filters(
            agent=agent,
            kinds=tuple(kinds) if kinds is not None else None,
            max_sensitivity=max_sensitivity,
            since_ts=since,
            until_ts=int(now.timestamp()) + 1,
            statuses=("active", "archived") if deep else ("active",),
        )

    def retrieve(
        self,
        text: str,
        *,
        recent: Sequence[Message],
        filters: Filters,
        now: datetime,
        extra_queries: Sequence[str] = (),
        limit: int | None = None,
    ) -> Retrieval:
        """One turn's retrieval on the fast path."""
        t0 = time.perf_counter()
        cfg = self.config
        query = context_query(text, recent, cfg.recent_conversation_turns)
        lang = guess_language(text + " " + " ".join(m.text for m in recent[-2:]))
        result: FastResult = self.fast.run([query, *extra_queries], filters, now=now)
        results = tuple(fast_results(result.candidates, cfg, limit))
        timings = dict(result.timings_ms)
        timings["turn"] = round((time.perf_counter() - t0) * 1000, 3)
        return Retrieval(
            results=results,
            queries=tuple(result.queries),
            timings_ms=timings,
            degraded=tuple(result.degraded),
            should_inject=inject_decision(result.candidates, cfg),
            language=lang,
            candidates=len(result.candidates),
        )
