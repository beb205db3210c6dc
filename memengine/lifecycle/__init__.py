"""The life cycle of memories: use-based strength, decay by consolidation level, sleep, recall.

Pure rules live in :mod:`.strength`, :mod:`.features`, :mod:`.scorer`,
:mod:`.selection`, :mod:`.simulate` and :mod:`.answer_match` (the offline answer judge,
with the words it reads in :mod:`.answer_words`); :mod:`.turns`, :mod:`.feedback`,
:mod:`.sleep`, :mod:`.ranking` and :mod:`.agents` apply them to a store
(through :mod:`memengine.store.lifecycle`, the only SQL). See
the README section "Memory that lives".
"""

from __future__ import annotations

from .agents import (
    AgentRow,
    MemoryLife,
    create_agent,
    has_agent,
    list_agents,
    memory_life,
    never_used,
    principles,
)
from .feedback import FeedbackResult, Judge, give_feedback, read_answer
from .plot import plot_strength
from .ranking import ScorerInfo, scorer_declined, train_agent_scorer
from .sleep import SleepInterrupted, SleepReport, SleepTerminated, run_sleep
from .turns import Ranking, after_retrieve

__all__ = [
    "AgentRow",
    "FeedbackResult",
    "Judge",
    "MemoryLife",
    "Ranking",
    "ScorerInfo",
    "SleepInterrupted",
    "SleepReport",
    "SleepTerminated",
    "after_retrieve",
    "create_agent",
    "give_feedback",
    "has_agent",
    "list_agents",
    "memory_life",
    "never_used",
    "plot_strength",
    "principles",
    "read_answer",
    "run_sleep",
    "scorer_declined",
    "train_agent_scorer",
]
