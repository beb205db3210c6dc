-- memengine schema, version 9: the id mark is above every id a record names.
--
-- Version 6 first seeded the mark from the largest id stored; a later
-- release of that step seeded it also from the ids recorded turns name,
-- but a file an earlier release had already brought to version 6 kept its
-- lower mark. A top id deleted before then that an old turn names was
-- then given out again, and a feedback on that turn credited the new,
-- unrelated memory. This step raises the mark (it never lowers it) to the
-- largest id stored, named by a turn's candidates or its used memories, or
-- held by a sleep's strength history (which outlives a deleted memory).
--
-- Only what memengine writes counts: an id is an integer from 1 to
-- MAX_KEPT_ID (2**53 - 1, store/ids.py) in an object of the candidates
-- list ({"id": 7, ...}) or in the used list (7). A damaged record (a
-- string among the candidates, not JSON at all, an id of 1e20 or -3) is
-- passed over: one such turn must neither stop the file's upgrade nor lift
-- the mark past what an add may give out. (CASE, not AND, guards each
-- json_extract: SQLite may evaluate the terms of an AND in any order.)

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
              WHERE id BETWEEN 1 AND 9007199254740991), 0),
    coalesce((SELECT max(episode_id) FROM strength_history
              WHERE typeof(episode_id) = 'integer'
                AND episode_id BETWEEN 1 AND 9007199254740991), 0)
) AS TEXT) WHERE true
ON CONFLICT (key) DO UPDATE SET value = CAST(max(
    coalesce(CAST(meta.value AS INTEGER), 0), CAST(excluded.value AS INTEGER)
) AS TEXT);
