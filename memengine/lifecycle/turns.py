"""What happens to a retrieval after the search: life ranking (opt-in), the turn record, recall.

:func:`after_retrieve` is called by ``Memory.retrieve`` with the
retriever's result. It

1. drops archived results from a normal (not deep) retrieval — they can
   only appear when a sleep archived them between the search and the fetch;
2. with ``ranking="life"``, re-ranks the candidates (Stage 1 similarity
   filter, Stage 2 linear or learned score), applies the selection rule and puts
   each later change the fast path linked before the memory it changes, as the
   fast path does (:func:`_changes_first`: "raised my membership to $65" before
   a much-used "$50 a month"), bringing in one the ranking left out;
3. in one write transaction: records the turn (its perspective and the
   nine features of every returned memory, for feedback and training; not
   its text, which quotes the recent conversation),
   adds one to each returned memory's ``candidate_count``, and, for a deep
   retrieval, brings the archived memories it returned back to active
   with ``recall_strength`` and their level lowered by ``recall_level_drop``;
   their next sleep decays them from this moment, not from the sleep before.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

import numpy as np

from ..config import LifecycleConfig
from ..embed.base import Embedder
from ..errors import DamagedDatabase, DatabaseLocked, DiskError, EmbeddingError
from ..models import Retrieval, Retrieved, may_answer, offered_results
from ..retrieve.changes import chains_newest_first
from ..store import lifecycle as store_lc
from ..store.database import Store
from ..store.episodes import existing_ids
from ..store.write_queue import forked_write_reason
from .agents import has_agent
from .features import FEATURES, TaskContext, features
from .ranking import life_scores, load_agent_scorer
from .selection import select

__all__ = ["Ranking", "after_retrieve"]

Ranking = Literal["fast", "life"]


def _similarities(
    store: Store, embedder: Embedder, results: list[Retrieved], query: str, exact: bool
) -> dict[int, float] | None:
    """Each result's cosine to ``query``: the retrieval's, and with ``exact`` the missing ones
    read from the store; None when there are none to read (no result has one: the full-text
    search answered alone, the embedder having failed) or the embedder fails on them."""
    sims = {r.episode.id: r.components["cosine"] for r in results if "cosine" in r.components}
    missing = [r.episode.id for r in results if r.episode.id not in sims]
    if exact and results and not sims:  # the full-text search answered alone: it failed
        return None
    if exact and missing and query.strip():
        try:
            vector = embedder.embed([query])[0]
        except EmbeddingError:
            return None
        sims.update(store.similarities(vector, missing))  # checks the embedder
    return sims


def _judged_apart(result: Retrieved) -> bool:
    """Whether ``result`` was found relevant by other means than its similarity: a memory of
    the time the message asks about (by its date) or an LLM rerank's pick (by meaning)."""
    comps = result.components
    return comps.get("asked_time", 0.0) >= 1.0 or "fast_rank" in comps


def after_retrieve(
    store: Store,
    embedder: Embedder,
    cfg: LifecycleConfig,
    retrieval: Retrieval,
    *,
    agent: str,
    now: datetime,
    perspective: str | None,
    ranking: Ranking,
    k: int,
    deep: bool,
    record: bool,
    recall: bool,
    rng: np.random.Generator,
) -> Retrieval:
    """Rank (when ``ranking="life"``), record the turn (when ``record`` and the store knows
    ``agent``) and recall archived results (when ``deep`` and ``recall``). A read-only store
    does neither: its archived results stay archived."""
    results = list(retrieval.results)
    if not deep:
        results = [r for r in results if r.episode.status == "active"]
    query = retrieval.queries[0] if retrieval.queries else ""
    life = ranking == "life"
    ids = [r.episode.id for r in results]
    degraded = list(retrieval.degraded)
    read = _similarities(store, embedder, results, query, exact=life)
    if read is None:  # the life ranking filters on cosines: without them it keeps the fast order
        degraded.append("life ranking skipped: the embedder failed; the fast path's order kept")
        life = False
        results = results[:k]  # it was given every candidate to rank
    sims = read or {}
    pstr: dict[int, dict[str, float]] = {}
    if perspective is not None and ids:
        with store.connections.read() as cur:
            pstr = store_lc.perspective_strengths(cur, ids, perspective)
    ctx = TaskContext.of(query, now, perspective)
    feats = [
        features(
            r.episode,
            sims.get(r.episode.id, 0.0),
            pstr.get(r.episode.id, {}).get(perspective) if perspective else None,
            ctx,
            cfg,
        )
        for r in results
    ]
    should_inject = retrieval.should_inject
    if life:
        keep = [
            i
            for i, f in enumerate(feats)
            if (f[0] >= cfg.similarity_threshold or _judged_apart(results[i]))
            and may_answer(results[i].components)  # whatever its life score
        ]
        try:
            scorer = load_agent_scorer(store, agent, cfg)
        except DamagedDatabase as exc:  # the linear formula ranks; train-scorer writes anew
            scorer = None
            degraded.append(f"life ranking used the linear formula: {exc}")
        scores = life_scores(feats, scorer, cfg)  # (a later change brought in has one too)
        order = sorted(keep, key=lambda i: -scores[i])
        chosen = select(
            [scores[i] for i in order],
            mode=cfg.selection,
            k=k,
            threshold=cfg.selection_threshold,
            max_results=max(k, cfg.selection_max_results),
            rng=rng,
        )
        picked = [order[pos] for pos in chosen]
        ranked: list[Retrieved] = []
        new_feats: list[list[float]] = []
        # (a change brought in takes the place of the last pick past k, or past the cliff's)
        for i, changes in _changes_first(picked, results)[: max(k, len(picked))]:
            comps = dict(results[i].components)
            comps.update(zip(FEATURES, feats[i], strict=True))
            comps["life_score"] = scores[i]
            comps["learned"] = 1.0 if scorer is not None else 0.0
            if i not in picked:
                comps["brought_back"] = 1.0
            # a change is scored as the best of its chain, as the fast path scores it
            score = max(scores[j] for j in changes) if changes else scores[i]
            ranked.append(
                results[i].model_copy(
                    update={"score": score, "rank": len(ranked) + 1, "components": comps}
                )
            )
            new_feats.append(feats[i])
        results, feats = ranked, new_feats
        # nothing to inject when every chosen memory is low (the pack shows none of them)
        should_inject = should_inject and any(r.relevance != "low" for r in results)
    turn_id: int | None = None
    recalled: dict[int, tuple[float, int]] = {}
    ids = [r.episode.id for r in results]
    offered = offered_results(results, should_inject)  # what the reply is shown
    ids_before = list(ids)
    # a read-only file records nothing; nor does a turn of an agent the file does not know
    # (a mistyped name would otherwise become an agent)
    record = record and not store.read_only and has_agent(store, agent)
    deep_recall = deep and recall and not store.read_only
    if not (record or (deep_recall and ids)) and ids:
        with store.connections.read() as cur:
            results, feats = _still_stored(cur, agent, results, feats)
    if record or (deep_recall and ids):
        try:
            with store.connections.write(wait_s=cfg.turn_record_wait_s) as cur:
                results, feats = _still_stored(cur, agent, results, feats)
                ids = [r.episode.id for r in results]
                if len(ids) < len(ids_before):  # (a copy of a deleted one may be offered)
                    offered = offered_results(results, should_inject)
                if record:
                    turn_id = store_lc.insert_turn(
                        cur,
                        agent=agent,
                        now=now,
                        recorded=store.now(),
                        perspective=perspective,
                        ranking=ranking,
                        candidates=list(zip(ids, feats, strict=True)),
                        # feedback judges an answer against these
                        offered=[r.episode.id for r in offered],
                    )
                    if turn_id is None:  # the agent was forgotten while the turn ran
                        degraded.append("turn not recorded: the agent was forgotten meanwhile")
                    else:
                        store_lc.count_candidates(cur, ids)
                if deep_recall:
                    archived = [  # those offered the reply: a low result is not recalled
                        r.episode.id for r in offered if r.episode.status == "archived"
                    ]
                    if archived:
                        recalled = store_lc.recall_archived(
                            cur,
                            archived,
                            strength=cfg.recall_strength,
                            level_drop=cfg.recall_level_drop,
                            now=store.now(),  # (the clock that dates the turn)
                        )
        except DatabaseLocked:  # the file busy past the turn's own wait (not write_wait_s)
            # the answer matters more than its record: it is returned unrecorded
            turn_id, recalled = None, {}
            with store.connections.read() as cur:  # (without what was deleted meanwhile)
                results, feats = _still_stored(cur, agent, results, feats)
            forked = forked_write_reason(store.path)  # (no writer to wait for: say why)
            degraded.append(
                f"turn not recorded: {forked}"
                if forked is not None
                else f"turn not recorded: another writer kept the file past "
                f"{cfg.turn_record_wait_s:g} s ([lifecycle] turn_record_wait_s waits longer)"
            )
        except DiskError as exc:  # the disk: the answer is returned unrecorded too
            turn_id, recalled = None, {}
            degraded.append(f"turn not recorded: {exc}")
    if recalled:
        results = [
            r.model_copy(
                update={
                    "episode": r.episode.model_copy(
                        update={
                            "status": "active",
                            "strength": recalled[r.episode.id][0],
                            "consolidation_level": recalled[r.episode.id][1],
                        }
                    )
                }
            )
            if r.episode.id in recalled
            else r
            for r in results
        ]
    if len(results) < len(ids_before):  # (deleted meanwhile: nothing left to offer, nothing)
        should_inject = should_inject and bool(offered_results(results, should_inject))
    return retrieval.model_copy(
        update={
            "results": tuple(results),
            "turn_id": turn_id,
            "should_inject": should_inject,
            "degraded": tuple(degraded),
        }
    )


def _changes_first(picked: list[int], results: list[Retrieved]) -> list[tuple[int, list[int]]]:
    """The positions in ``results`` of the life ranking's ``picked`` (best first), each
    chain of later changes the fast path linked among them (:mod:`..retrieve.changes`: a
    result marked ``changes``, the id of the one it changes, of the same agent) where its
    best-ranked member stood, the newest first, each with the positions of its chain when
    it is a change in one (else none). A change of a picked memory the ranking left out is
    brought in before it, and so down a chain, as the LLM rerank brings one back: alone, a
    strong old "My rent is $1,800" would tell the old fact as the fact."""
    at = {r.episode.id: i for i, r in enumerate(results)}
    older: dict[int, int] = {}  # a change's position → the position of what it changes
    for i, r in enumerate(results):
        j = at.get(int(r.components.get("changes", 0)))
        if j is not None and results[j].episode.agent == r.episode.agent:
            older[i] = j
    changed_by: dict[int, list[int]] = {}
    for i, j in older.items():
        changed_by.setdefault(j, []).append(i)
    every, todo = list(picked), list(picked)
    while todo:  # (the picked memories' left-out changes, and theirs)
        for i in changed_by.get(todo.pop(), []):
            if i not in every and may_answer(results[i].components):
                every.append(i)
                todo.append(i)
    out: list[tuple[int, list[int]]] = []
    for chain in chains_newest_first(
        every, lambda i: i, older, lambda i: results[i].episode.occurred_at
    ):
        out.extend((i, chain if older.get(i) in chain else []) for i in chain)
    return out


def _still_stored(
    cur: Any, agent: str, results: list[Retrieved], feats: list[list[float]]
) -> tuple[list[Retrieved], list[list[float]]]:
    """The results (with their features) still stored as ``agent``'s when the turn is
    recorded: one deleted, or forgotten with its agent, while the searches ran is neither
    returned nor named by the turn (an import may give its id to another agent's memory
    meanwhile)."""
    present = existing_ids(cur, [r.episode.id for r in results], agent)
    if len(present) == len(results):
        return results, feats
    kept = [i for i, r in enumerate(results) if r.episode.id in present]
    ranked = [results[i].model_copy(update={"rank": n}) for n, i in enumerate(kept, start=1)]
    return ranked, [feats[i] for i in kept]
