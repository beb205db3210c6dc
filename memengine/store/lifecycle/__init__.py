"""All SQL of the life cycle, one module per group of tables: :mod:`.agents` (agents and
perspectives), :mod:`.turns` (turns and training samples), :mod:`.strength`
(reinforcement, archiving, the life rows), :mod:`.sleeps` (sleeps and the
strength history) and :mod:`.scorer` (learned scorers), re-exported here.

Every function takes a cursor and runs inside the caller's transaction
(``store.connections.read()`` or ``.write()``); the orchestration lives in
:mod:`memengine.lifecycle`.
"""

from __future__ import annotations

from .agents import AgentRow, agent_episode_ids, drop_agent, get_agent, list_agents, upsert_agent
from .scorer import (
    feedback_since_training,
    load_scorer,
    retire_scorers,
    samples_after,
    save_scorer,
)
from .sleeps import (
    SleepRow,
    delete_sleep_history,
    history_series,
    insert_history,
    insert_sleep,
    last_sleep,
    sleep_series,
)
from .strength import (
    LifeRow,
    archive,
    clear_decay_from,
    count_candidates,
    decay_baselines,
    drop_learnings_of,
    learnings,
    life_rows,
    never_used,
    perspective_strengths,
    principles,
    reactivate_principles,
    recall_archived,
    reinforce,
    reinforce_perspective,
    set_perspective_strengths,
    set_strengths,
)
from .turns import (
    Samples,
    TurnRow,
    clear_turn_texts,
    close_turn,
    get_turn,
    has_turns_up_to,
    insert_turn,
    named_by_records,
    training_samples,
    trim_turns,
    turn_times,
)

__all__ = [
    "AgentRow",
    "LifeRow",
    "Samples",
    "SleepRow",
    "TurnRow",
    "agent_episode_ids",
    "archive",
    "clear_decay_from",
    "clear_turn_texts",
    "close_turn",
    "count_candidates",
    "decay_baselines",
    "delete_sleep_history",
    "drop_agent",
    "drop_learnings_of",
    "feedback_since_training",
    "get_agent",
    "get_turn",
    "has_turns_up_to",
    "history_series",
    "insert_history",
    "insert_sleep",
    "insert_turn",
    "last_sleep",
    "learnings",
    "life_rows",
    "list_agents",
    "load_scorer",
    "named_by_records",
    "never_used",
    "perspective_strengths",
    "principles",
    "reactivate_principles",
    "recall_archived",
    "reinforce",
    "reinforce_perspective",
    "retire_scorers",
    "samples_after",
    "save_scorer",
    "set_perspective_strengths",
    "set_strengths",
    "sleep_series",
    "training_samples",
    "trim_turns",
    "turn_times",
    "upsert_agent",
]
