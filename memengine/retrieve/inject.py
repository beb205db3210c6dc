"""The fast path's should-inject decision, without an LLM.

Two questions decide it:

1. Does the user's new message ask for memories at all? A question, an
   interrogative or a recall cue ("remember", 覚えてる, …っけ) does
   (:func:`.signals.asks_memory`); small talk ("Nice weather today") does
   not, and then only a near restatement of a memory (cosine to the context
   query ≥ ``statement_min_cosine``) is worth injecting. A proposal or an offer
   asks nothing either ("Let's get sushi tonight!", "I'm baking you cookies",
   激辛カレー作るね: :func:`.proposal.proposes`), yet the reply needs what it
   touches (a favourite, an allergy, 辛いの無理): it also injects a memory both
   searches ranked in their top 3 (``high``) whose cosine is at least
   ``proposal_min_cosine`` (:func:`plan_evidence`).
2. Is anything relevant there? One of the top results was ranked in the
   top 3 of both the vector and the full-text search (for its own words, not
   only its neighbours'), has a cosine
   similarity to the context query (or to the question typed after a long paste:
   :meth:`.fastpath.FastPath.run`) of at least ``relevance_threshold``, or
   occurred in the time the message asks about, when it asks about nothing
   else ("What did I do yesterday?", :func:`.temporal.time_is_asked`), or is the
   full-text search's first by its own words and holds a code the message names
   (E1101, ERESOLVE, ORA-00942: :func:`.signals.code_words`; the vectors barely
   weigh such a word) (:func:`evidence_found`).

Without vectors (the embedder failed and the full-text search answered
alone) there is no cosine to read: a message that asks gets the best
full-text hits, small talk gets nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from ..config import RetrievalConfig
from ..lazy_re import lazy_compile
from ..models import may_answer
from .fastpath import Candidate, lexical_agreement

__all__ = ["evidence_found", "plan_evidence", "should_inject", "top_cosine"]

_CODE_TOKEN = lazy_compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*", re.ASCII)
"""A memory's words as :func:`.signals.code_words` reads a code (a whole word: "good" is not
in "goods")."""
_PARTS = lazy_compile(r"[._-]")
"""What joins the parts of a memory's word ("psycopg2" of "psycopg2.OperationalError")."""
_CODE_CHARS = 20_000
"""How much of a memory is read for a code."""


def evidence_found(
    candidates: Sequence[Candidate], config: RetrievalConfig, codes: Collection[str] = ()
) -> bool:
    """Whether a top result is in the top 3 of both searches (the full-text one for its own
    words: :func:`.fastpath.lexical_agreement`), clears ``relevance_threshold``,
    occurred in the time the message asks about (``asked_time``), or is the full-text
    search's first by its own words and holds one of ``codes`` (the message's
    :func:`.signals.code_words`)."""
    for c in candidates[: config.max_results]:
        comps = c.components
        if not may_answer(comps):
            continue
        if codes and comps.get("bm25_rank", 99) <= 1 and lexical_agreement(comps):
            tokens = _CODE_TOKEN.findall(c.episode.text[:_CODE_CHARS].lower())
            words = {*tokens, *(part for t in tokens for part in _PARTS.split(t))}
            if any(code in words for code in codes):
                return True
        if (
            comps.get("knn_rank", 99) <= 3
            and comps.get("bm25_rank", 99) <= 3
            and lexical_agreement(comps)
        ):
            return True
        if comps.get("asked_time", 0.0) >= 1.0:
            return True
        if comps.get("cosine", 0.0) >= config.relevance_threshold:
            return True
    return False


def plan_evidence(candidates: Sequence[Candidate], config: RetrievalConfig) -> bool:
    """Whether a top result that both searches ranked in their top 3 (the full-text one for
    its own words: what the ``high`` label asks) has a cosine of at least
    ``proposal_min_cosine``: "I'm allergic to peanuts" for "I'm baking you peanut butter
    cookies!", not 今夜何見るか迷う, which shares only 今夜 with 今夜は焼肉にしよう."""
    return any(
        may_answer(c.components)
        and c.components.get("knn_rank", 99) <= 3
        and c.components.get("bm25_rank", 99) <= 3
        and lexical_agreement(c.components)
        and c.components.get("cosine", 0.0) >= config.proposal_min_cosine
        for c in candidates[: config.max_results]
    )


def top_cosine(candidates: Sequence[Candidate], config: RetrievalConfig) -> float:
    """The best cosine similarity to the context query among the top results (0 without any;
    small talk's own old copies, marked ``repeat``, left aside)."""
    return max(
        (
            c.components.get("cosine", 0.0)
            for c in candidates[: config.max_results]
            if may_answer(c.components)
        ),
        default=0.0,
    )


def should_inject(
    candidates: Sequence[Candidate],
    config: RetrievalConfig,
    *,
    asks: bool,
    lexical_only: bool = False,
    codes: Collection[str] = (),
    proposes: bool = False,
) -> bool:
    """The decision: evidence for a message that asks, a near restatement for small talk,
    and for a proposal that asks nothing (``proposes``) also a ``high`` memory near enough
    (:func:`plan_evidence`); ``lexical_only``: full-text hits for a message that asks,
    nothing for small talk nor a proposal (no cosine tells what it touches)."""
    if lexical_only:
        return asks and any(
            lexical_agreement(c.components) and may_answer(c.components)
            for c in candidates[: config.max_results]
        )
    if not asks:
        if proposes and plan_evidence(candidates, config):
            return True
        return top_cosine(candidates, config) >= config.statement_min_cosine
    return evidence_found(candidates, config, codes)
