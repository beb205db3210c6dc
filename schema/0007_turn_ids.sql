-- memengine schema, version 7: a turn id is never given out twice.
--
-- A turn's id is what a caller keeps to give feedback on it. The store
-- numbered new turns from the largest id in the table, so when the newest
-- turns went (forget_agent, or the oldest-first trim of a sleep reaching
-- them) their ids were handed to the next turns, possibly another
-- agent's, and a late feedback call landed on a turn it did not mean.
-- As for episodes in version 6, meta holds the largest turn id ever
-- deleted from the top of the table, kept by a trigger on every delete,
-- and new turns are numbered above it (store/lifecycle/turns.py). Ids
-- deleted before this version are not known; the mark starts at the
-- largest id now stored.

INSERT INTO meta (key, value)
SELECT 'turn_id_high', CAST(coalesce(max(id), 0) AS TEXT) FROM turns WHERE true
ON CONFLICT (key) DO NOTHING;

CREATE TRIGGER IF NOT EXISTS turns_id_high AFTER DELETE ON turns
WHEN old.id > (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'turn_id_high')
BEGIN
    UPDATE meta SET value = CAST(old.id AS TEXT) WHERE key = 'turn_id_high';
END;
