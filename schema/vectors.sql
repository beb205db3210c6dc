-- The vector table and the triggers that keep its filter columns in step
-- with episodes. {dimension} is the embedder's dimension, recorded in meta.
-- The agent is a partition key, so a retrieval scoped to one agent scans
-- only that agent's vectors. Every agent holds at least one whole chunk of
-- vectors, so the rows per chunk are small (memengine/store/vectors.py,
-- CHUNK_SIZE).

CREATE VIRTUAL TABLE episode_vectors USING vec0 (
    episode_id  INTEGER PRIMARY KEY,
    agent       TEXT PARTITION KEY,
    kind        TEXT,
    sensitivity INTEGER,
    status      TEXT,
    occurred_ts INTEGER,
    embedding   FLOAT[{dimension}] distance_metric=cosine,
    chunk_size={chunk_size}
);

CREATE TRIGGER episode_vectors_filters AFTER UPDATE OF kind, sensitivity, status, occurred_ts
ON episodes BEGIN
    UPDATE episode_vectors
       SET kind = new.kind, sensitivity = new.sensitivity,
           status = new.status, occurred_ts = new.occurred_ts
     WHERE episode_id = new.id;
END;

CREATE TRIGGER episode_vectors_delete AFTER DELETE ON episodes BEGIN
    DELETE FROM episode_vectors WHERE episode_id = old.id;
END;
