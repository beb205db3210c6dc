-- memengine schema, version 1: episodes, agents, full text, meta.
-- The vector table depends on the embedder's dimension and is created from
-- vectors.sql when the file is first opened with an embedder.

CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE agents (
    name         TEXT PRIMARY KEY,
    created_at   TEXT NOT NULL,
    perspectives TEXT NOT NULL DEFAULT '[]'   -- JSON list of perspective names
);

CREATE TABLE episodes (
    id                  INTEGER PRIMARY KEY,
    agent               TEXT NOT NULL DEFAULT 'default' REFERENCES agents(name),
    kind                TEXT NOT NULL CHECK (kind IN ('exchange', 'message', 'observation',
                          'action', 'reflection', 'fact', 'summary', 'principle', 'education')),
    user_text           TEXT,
    reply_text          TEXT,
    content             TEXT,
    occurred_at         TEXT NOT NULL,          -- ISO 8601 with the caller's offset
    occurred_ts         INTEGER NOT NULL,       -- the same moment, unix seconds (for filters)
    created_at          TEXT NOT NULL,
    sensitivity         INTEGER NOT NULL DEFAULT 0 CHECK (sensitivity BETWEEN 0 AND 3),
    importance          REAL NOT NULL DEFAULT 0.5 CHECK (importance BETWEEN 0 AND 1),
    tags                TEXT NOT NULL DEFAULT '[]',   -- JSON list of strings
    metadata            TEXT NOT NULL DEFAULT '{}',   -- JSON object (external ids, …)
    status              TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    search_text         TEXT NOT NULL DEFAULT '',     -- analysed text for FTS5 (see text.py)
    context_text        TEXT NOT NULL DEFAULT '',     -- analysed text of the neighbouring episodes
    -- life cycle (see lifecycle/)
    strength            REAL NOT NULL DEFAULT 1.0,
    access_count        INTEGER NOT NULL DEFAULT 0,
    candidate_count     INTEGER NOT NULL DEFAULT 0,
    last_access         TEXT,
    impact_score        REAL NOT NULL DEFAULT 0.0,
    consolidation_level INTEGER NOT NULL DEFAULT 0 CHECK (consolidation_level BETWEEN 0 AND 5),
    CHECK (kind != 'exchange' OR user_text IS NOT NULL OR reply_text IS NOT NULL),
    CHECK (kind = 'exchange' OR content IS NOT NULL)
);

CREATE INDEX episodes_agent_time ON episodes (agent, status, occurred_ts);

-- Two columns: the episode's own words and those of its neighbours in the
-- same conversation (ranked with a lower weight, see store/fulltext.py).
CREATE VIRTUAL TABLE episodes_fts USING fts5 (
    search_text,
    context_text,
    content = 'episodes',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts (rowid, search_text, context_text)
        VALUES (new.id, new.search_text, new.context_text);
END;

CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, search_text, context_text)
        VALUES ('delete', old.id, old.search_text, old.context_text);
END;

CREATE TRIGGER episodes_fts_update AFTER UPDATE OF search_text, context_text ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, search_text, context_text)
        VALUES ('delete', old.id, old.search_text, old.context_text);
    INSERT INTO episodes_fts (rowid, search_text, context_text)
        VALUES (new.id, new.search_text, new.context_text);
END;
