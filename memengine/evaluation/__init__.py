"""Retrieval evaluation: LoCoMo evidence recall and the companion-chat memory sets.

Only the CLI imports this package. :func:`run_locomo` and :func:`run_memset`
return an :class:`EvalResult`; :mod:`memengine.cli.eval_report` renders it with rich.
"""

from __future__ import annotations

from .locomo import CATEGORIES, normalise_evidence, run_locomo
from .memsets import run_memset
from .metrics import all_at_k, mean_by_group, mrr, ndcg_at_k, recall_at_k, score_ranking
from .padding import PaddingInfo
from .runner import MODES, EvalResult, QuestionResult, plan_modes, save_json

__all__ = [
    "CATEGORIES",
    "MODES",
    "EvalResult",
    "PaddingInfo",
    "QuestionResult",
    "all_at_k",
    "mean_by_group",
    "mrr",
    "ndcg_at_k",
    "normalise_evidence",
    "plan_modes",
    "recall_at_k",
    "run_locomo",
    "run_memset",
    "save_json",
    "score_ranking",
]
