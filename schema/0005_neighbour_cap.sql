-- memengine schema, version 5: a bound on what a neighbour lends to a turn.
--
-- A conversation turn's context_text holds its neighbours' analysed words
-- (store/episodes.py). From this version each neighbour lends at most its
-- first 1,000 characters (episodes.NEIGHBOUR_CHARS), so that a long paste
-- no longer buries the turns next to it under FTS5's length normalisation.
-- This rewrites the contexts that took more than that from a neighbour.
-- A stored context is one of: both neighbours' texts joined by a space,
-- the previous one's, the next one's (the other was more than the gap
-- away), or empty; it is recognised by comparing it with the texts of the
-- turns before and after it, so the gap setting is not needed here.
-- Contexts in no such form are left as they are. Only the agents that hold
-- a text over the bound are read (0.05 s for 100K episodes without one).

WITH ordered AS (
    SELECT id, context_text AS c,
           coalesce(LAG(search_text) OVER w, '') AS p,
           coalesce(LEAD(search_text) OVER w, '') AS n
      FROM episodes
     WHERE kind IN ('exchange', 'message')
       AND agent IN (SELECT agent FROM episodes WHERE length(search_text) > 1000)
    WINDOW w AS (PARTITION BY agent ORDER BY occurred_ts, id)
)
UPDATE episodes
   SET context_text = CASE
         WHEN o.c = trim(o.p || ' ' || o.n)
           THEN trim(rtrim(substr(o.p, 1, 1000), ' ') || ' ' || rtrim(substr(o.n, 1, 1000), ' '))
         WHEN o.c = o.p THEN rtrim(substr(o.p, 1, 1000), ' ')
         ELSE rtrim(substr(o.n, 1, 1000), ' ')
       END
  FROM ordered AS o
 WHERE episodes.id = o.id
   AND (length(o.p) > 1000 OR length(o.n) > 1000)
   AND o.c != ''
   AND (o.c = trim(o.p || ' ' || o.n) OR o.c = o.p OR o.c = o.n);
