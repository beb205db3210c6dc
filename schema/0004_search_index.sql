-- memengine schema, version 4: what keeps the searches fast.
--
-- 1. vector_log: one row per insert, delete or filter-column update of an
--    episode, written by triggers in the same transaction. In-process vector
--    indexes (store/vector_index.py) replay it before each search, so they
--    see every committed write, from this process or another. A row with
--    episode_id -1 (written by a re-embed) resets them. Old rows are pruned
--    on write; an index that falls behind the pruned part reloads.
-- 2. agent_key in the full-text index: a one-token form of the agent name,
--    so that a retrieval scoped to one agent matches only that agent's rows
--    instead of every agent's rows before filtering.

CREATE TABLE vector_log (
    seq        INTEGER PRIMARY KEY,
    episode_id INTEGER NOT NULL,
    agent      TEXT NOT NULL
);

CREATE TRIGGER vector_log_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO vector_log (episode_id, agent) VALUES (new.id, new.agent);
END;

CREATE TRIGGER vector_log_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO vector_log (episode_id, agent) VALUES (old.id, old.agent);
END;

CREATE TRIGGER vector_log_update AFTER UPDATE OF agent, kind, sensitivity, status, occurred_ts
ON episodes BEGIN
    INSERT INTO vector_log (episode_id, agent) VALUES (old.id, old.agent);
    INSERT INTO vector_log (episode_id, agent) SELECT new.id, new.agent
     WHERE new.agent IS NOT old.agent;
END;

ALTER TABLE episodes ADD COLUMN agent_key TEXT
    GENERATED ALWAYS AS ('a' || lower(hex(agent))) VIRTUAL;

DROP TRIGGER IF EXISTS episodes_fts_insert;
DROP TRIGGER IF EXISTS episodes_fts_delete;
DROP TRIGGER IF EXISTS episodes_fts_update;
DROP TABLE IF EXISTS episodes_fts;

-- search_text: the episode's own words; context_text: its neighbours' words
-- (lower weight); agent_key: weight 0, used only to scope the match.
CREATE VIRTUAL TABLE episodes_fts USING fts5 (
    search_text,
    context_text,
    agent_key,
    content = 'episodes',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER episodes_fts_insert AFTER INSERT ON episodes BEGIN
    INSERT INTO episodes_fts (rowid, search_text, context_text, agent_key)
        VALUES (new.id, new.search_text, new.context_text, new.agent_key);
END;

CREATE TRIGGER episodes_fts_delete AFTER DELETE ON episodes BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, search_text, context_text, agent_key)
        VALUES ('delete', old.id, old.search_text, old.context_text, old.agent_key);
END;

CREATE TRIGGER episodes_fts_update AFTER UPDATE OF search_text, context_text, agent ON episodes
BEGIN
    INSERT INTO episodes_fts (episodes_fts, rowid, search_text, context_text, agent_key)
        VALUES ('delete', old.id, old.search_text, old.context_text, old.agent_key);
    INSERT INTO episodes_fts (rowid, search_text, context_text, agent_key)
        VALUES (new.id, new.search_text, new.context_text, new.agent_key);
END;

INSERT INTO episodes_fts (episodes_fts) VALUES ('rebuild');
