-- memengine schema, version 6: an episode id is never given out twice.
--
-- The store numbers new episodes from the largest id in the table, so
-- deleting the newest episode handed its id to the next one written, and
-- whatever still named the old id (a turn's candidates, feedback, an
-- exported file, the in-process vector index) then named an unrelated
-- memory. From this version meta holds the largest id ever deleted from
-- the top of the table, kept by a trigger on every delete (whatever
-- deletes), and the store numbers new episodes above it
-- (store/episodes.py). Ids deleted before this version are not known but
-- for those a recorded turn names: the mark starts at the largest id now
-- stored or named by a turn's candidates or its used memories.

INSERT INTO meta (key, value)
SELECT 'episode_id_high', CAST(max(
    coalesce((SELECT max(id) FROM episodes), 0),
    coalesce((SELECT max(CAST(json_extract(c.value, '$.id') AS INTEGER))
              FROM turns, json_each(turns.candidates) AS c
              WHERE json_valid(turns.candidates)), 0),
    coalesce((SELECT max(CAST(u.value AS INTEGER))
              FROM turns, json_each(turns.used) AS u
              WHERE turns.used IS NOT NULL AND json_valid(turns.used)), 0)
) AS TEXT) WHERE true
ON CONFLICT (key) DO NOTHING;

CREATE TRIGGER IF NOT EXISTS episodes_id_high AFTER DELETE ON episodes
WHEN old.id > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'episode_id_high')
BEGIN
    UPDATE meta SET value = CAST(old.id AS TEXT) WHERE key = 'episode_id_high';
END;
