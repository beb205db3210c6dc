-- memengine schema, version 8: an imported strength decays from its import.
--
-- An export carries each memory's strength as the sleeps of its file left
-- it, and its creation time. The sleep of the file it was imported into
-- counted the memory's decay from its creation (or from that file's
-- previous sleep), so the days or turns before the import, already
-- counted in the strength, were counted a second time (a memory a month
-- old lost a month of strength at the first sleep after a move).
-- decay_from is the moment a stored strength holds for when that is later
-- than the creation: the store sets it when an episode arrives with a
-- strength and a creation time before now (an import of an export,
-- add_many of episodes read from another memory): the export's decayed_at
-- (when the strength held in the old file), else the moment stored; and a
-- sleep counts a memory's tasks from the latest of its creation, its
-- decay_from and the previous sleep (lifecycle/sleep.py). NULL for
-- everything stored before this version, which decays as it did.

ALTER TABLE episodes ADD COLUMN decay_from TEXT;
