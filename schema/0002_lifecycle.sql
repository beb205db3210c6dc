-- memengine schema, version 2: the life cycle of memories (see memengine/lifecycle/).
-- Per-perspective strengths and learnings, turns (retrievals awaiting or
-- holding feedback), the learned scorer of each agent, and one row per
-- sleep with a per-episode strength snapshot for plots.

-- A memory's strength under one named perspective of its agent (コスト, 納期, …).
-- A row exists once the memory has been used in a task of that perspective;
-- its strength starts at 0 and grows only by perspective-specific use.
CREATE TABLE episode_perspectives (
    episode_id  INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
    perspective TEXT NOT NULL,
    strength    REAL NOT NULL DEFAULT 0.0,
    learnings   TEXT NOT NULL DEFAULT '[]',   -- JSON list of strings
    PRIMARY KEY (episode_id, perspective)
) WITHOUT ROWID;

-- One retrieval ("task"): what it returned, with the ranking features each
-- candidate had at that moment, and, after feedback, which were used.
CREATE TABLE turns (
    id          INTEGER PRIMARY KEY,
    agent       TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    created_at  TEXT NOT NULL,
    created_ts  REAL NOT NULL,                 -- unix seconds, for ordering and counting
    query       TEXT NOT NULL DEFAULT '',
    perspective TEXT,
    ranking     TEXT NOT NULL DEFAULT 'fast',  -- 'fast' or 'life'
    candidates  TEXT NOT NULL DEFAULT '[]',    -- JSON [{"id": int, "f": [9 floats]}]
    used        TEXT,                          -- JSON list of ids; NULL until feedback
    outcome     TEXT CHECK (outcome IN ('success', 'failure')),
    impact      REAL NOT NULL DEFAULT 0.0,
    method      TEXT,                          -- how "used" was decided (explicit, match, llm)
    feedback_at TEXT
);

CREATE INDEX turns_agent ON turns (agent, id);

-- The learned ranking scorer of an agent (9 -> 16 -> 1), weights as JSON.
CREATE TABLE scorers (
    agent      TEXT PRIMARY KEY REFERENCES agents(name) ON DELETE CASCADE,
    weights    TEXT NOT NULL,
    trained_at TEXT NOT NULL,
    samples    INTEGER NOT NULL,
    last_turn  INTEGER NOT NULL DEFAULT 0,
    auc        REAL
);

-- One row per sleep: what it did, and the agent's state after it.
CREATE TABLE sleeps (
    id             INTEGER PRIMARY KEY,
    agent          TEXT NOT NULL REFERENCES agents(name) ON DELETE CASCADE,
    slept_at       TEXT NOT NULL,
    slept_ts       REAL NOT NULL,
    last_turn      INTEGER NOT NULL,          -- the last turn counted by this sleep
    tasks          REAL NOT NULL,             -- tasks since the previous sleep
    decay_clock    TEXT NOT NULL,             -- 'tasks' or 'days'
    promoted       INTEGER NOT NULL,
    decayed        INTEGER NOT NULL,
    archived       INTEGER NOT NULL,
    pruned         INTEGER NOT NULL,
    active         INTEGER NOT NULL,
    archived_total INTEGER NOT NULL,
    weighted_total REAL NOT NULL,
    level_counts   TEXT NOT NULL,             -- JSON list: active memories per level 0..5
    strength_mean  REAL NOT NULL,
    strength_p10   REAL NOT NULL,
    strength_p50   REAL NOT NULL,
    strength_p90   REAL NOT NULL
);

CREATE INDEX sleeps_agent ON sleeps (agent, id);

-- Each active memory's strength and level right after a sleep (kept for
-- the last [lifecycle] history_sleeps sleeps). No foreign key to episodes:
-- the history of a pruned memory stays until it ages out.
CREATE TABLE strength_history (
    sleep_id   INTEGER NOT NULL REFERENCES sleeps(id) ON DELETE CASCADE,
    episode_id INTEGER NOT NULL,
    strength   REAL NOT NULL,
    level      INTEGER NOT NULL,
    PRIMARY KEY (sleep_id, episode_id)
) WITHOUT ROWID;

CREATE INDEX episodes_life ON episodes (agent, candidate_count, access_count);

-- Principles are fetched for every pack: a small partial index finds them.
CREATE INDEX episodes_principles ON episodes (agent, status)
    WHERE kind = 'principle' OR tags LIKE '%"principle"%';
