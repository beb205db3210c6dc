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
--
-- Only an id memengine writes counts, as in version 9 (which says why): an
-- integer from 1 to 2**53 - 1 in an object of the candidates list or in the
-- used list; a damaged record is passed over. This step was changed in place
-- to read so (it stopped a file's upgrade with "malformed JSON" on one turn
-- whose candidates held a string): the change only lets more files through,
-- and every well-formed file gets the same mark as before.

INSERT INTO meta (key, value)
SELECT 'episode_id_high', CAST(max(
    coalesce((SELECT max(id) FROM episodes), 0),
    coalesce((SELECT max(id) FROM (
                  SELECT CASE WHEN c.type = 'object' THEN (
                      CASE WHEN json_type(c.value, '$.id') = 'integer'
                      THEN json_extract(c.value, '$.id') END) END AS id
                  FROM turns, json_each(CASE WHEN json_valid(turns.candidates)
                                        THEN turns.candidates ELSE '[]' END) AS c)
              WHERE id BETWEEN 1 AND 9007199254740991), 0),
    coalesce((SELECT max(id) FROM (
                  SELECT CASE WHEN u.type = 'integer' THEN u.value END AS id
                  FROM turns, json_each(CASE WHEN json_valid(turns.used)
                                        THEN turns.used ELSE '[]' END) AS u)
              WHERE id BETWEEN 1 AND 9007199254740991), 0)
) AS TEXT) WHERE true
ON CONFLICT (key) DO NOTHING;

CREATE TRIGGER IF NOT EXISTS episodes_id_high AFTER DELETE ON episodes
WHEN old.id > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'episode_id_high')
BEGIN
    UPDATE meta SET value = CAST(old.id AS TEXT) WHERE key = 'episode_id_high';
END;
