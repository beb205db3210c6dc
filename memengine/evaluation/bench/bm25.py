"""Section ``bm25``: a query term present in most episodes against the rest of the query."""

from __future__ import annotations

import itertools
import time
from typing import Any

from ...config import RetrievalConfig
from ...store.database import Store
from ...store.filters import Filters
from ...store.fulltext import match_expression, quote_term
from ...store.inspect import bm25_plan, match_count
from ...text import query_terms
from ..synth import (
    EPOCH,
    FREQUENT_WORD_EN,
    FREQUENT_WORD_JA,
)
from .config import EMBEDDER_ID, K
from .harness import (
    Bench,
    mean,
    ms,
    ratio,
    summarize,
)


def run(bench: Bench) -> dict[str, Any]:
    """BM25 with and without a very frequent word, per language, filter shape and term rule."""
    cfg = bench.cfg
    built = bench.single(cfg.bm25_size)
    out: dict[str, Any] = {"episodes": cfg.bm25_size, "rows": []}
    store = Store(built.path, embedder_id=EMBEDDER_ID, dimension=cfg.dimension, now=bench.clock)
    ts = int(EPOCH.timestamp())
    agent = built.corpus.agent_prefix
    shapes = {
        "agent only": Filters(agent=agent),
        "agent, last 365 days": Filters(agent=agent, since_ts=ts - 365 * 86400, until_ts=ts + 1),
    }
    try:
        total = store.count()
        probe = match_expression(["today"]) or ""
        out["plans"] = {name: bm25_plan(store, probe, f, K) for name, f in shapes.items()}
        if all(p["fts_first"] for p in out["plans"].values()):
            # same plan: the window adds nothing to measure
            shapes.pop("agent only")
        rc = RetrievalConfig()
        # the fast path's depth and column weight in both rows; only the term rules differ
        depth = {"k": rc.bm25_k_per_query, "context_weight": rc.context_weight}
        term_rules: dict[str, dict[str, Any]] = {
            # the rule the target is about, alone: terms in over half the episodes go
            f"max_df {rc.max_term_df:g}": {**depth, "max_df": rc.max_term_df},
            # the fast path's rules: also a budget of rows for the query's terms
            f"+ budget {rc.bm25_posting_budget:,} (fast path)": {
                **depth,
                "max_df": rc.max_term_df,
                "posting_budget": rc.bm25_posting_budget,
            },
        }
        for lang, word in (("en", FREQUENT_WORD_EN), ("ja", FREQUENT_WORD_JA)):
            qs = bench.queries(built, cfg.queries + cfg.warmup, language=lang, salt=3)
            if not qs:
                continue
            df = match_count(store, quote_term(word))
            for (shape, filters), (rules, options) in itertools.product(
                shapes.items(), term_rules.items()
            ):
                base_ms: list[float] = []
                freq_ms: list[float] = []
                terms: list[tuple[int, int]] = []
                searched: list[tuple[int, int]] = []
                matched: list[tuple[int, int]] = []
                label = f"bm25 {lang}, {shape}, {rules}: with and without '{word}'"
                for _, q, measured in bench.loop(qs, label):
                    t_base = query_terms(q.text)
                    t_freq = query_terms(q.text + " " + word)
                    e_base, e_freq = match_expression(t_base), match_expression(t_freq)
                    if not e_base or not e_freq:
                        continue
                    t0 = time.perf_counter()
                    _, d_base = store.text_search(t_base, filters=filters, **options)
                    tb = ms(t0)
                    t0 = time.perf_counter()
                    _, d_freq = store.text_search(t_freq, filters=filters, **options)
                    tf = ms(t0)
                    if measured:
                        base_ms.append(tb)
                        freq_ms.append(tf)
                        terms.append((len(t_base), len(t_freq)))
                        s_base = [t for t in t_base if t not in d_base]
                        s_freq = [t for t in t_freq if t not in d_freq]
                        searched.append((len(s_base), len(s_freq)))
                        if len(matched) < 10:  # the rows the searched terms match
                            matched.append(
                                (
                                    match_count(store, match_expression(s_base) or ""),
                                    match_count(store, match_expression(s_freq) or ""),
                                )
                            )
                b, f = summarize(base_ms), summarize(freq_ms)
                out["rows"].append(
                    {
                        "language": lang,
                        "filters": shape,
                        "term_rules": rules,
                        "frequent_word": word,
                        "frequent_word_df": df,
                        "frequent_word_share": round(df / max(total, 1), 3),
                        "without_ms": b,
                        "with_ms": f,
                        "ratio_p50": ratio(f["p50"], b["p50"]),
                        "mean_terms_without": mean([t[0] for t in terms]),
                        "mean_terms_with": mean([t[1] for t in terms]),
                        "mean_terms_searched_without": mean([t[0] for t in searched]),
                        "mean_terms_searched_with": mean([t[1] for t in searched]),
                        "mean_rows_matched_without": mean([m[0] for m in matched]),
                        "mean_rows_matched_with": mean([m[1] for m in matched]),
                    }
                )
    finally:
        store.close()
    return out
