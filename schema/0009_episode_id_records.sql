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

INSERT INTO meta (key, value)
SELECT 'episode_id_high', CAST(max(
    coalesce((SELECT max(id) FROM episodes), 0),
    coalesce((SELECT max(CAST(json_extract(c.value, '$.id') AS INTEGER))
              FROM turns, json_each(turns.candidates) AS c
              WHERE json_valid(turns.candidates)), 0),
    coalesce((SELECT max(CAST(u.value AS INTEGER))
              FROM turns, json_each(turns.used) AS u
              WHERE turns.used IS NOT NULL AND json_valid(turns.used)), 0),
    coalesce((SELECT max(episode_id) FROM strength_history), 0)
) AS TEXT) WHERE true
ON CONFLICT (key) DO UPDATE SET value = CAST(max(
    coalesce(CAST(meta.value AS INTEGER), 0), CAST(excluded.value AS INTEGER)
) AS TEXT);
