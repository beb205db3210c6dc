-- memengine schema, version 3: an index for the neighbour re-link of new turns.
-- store/episodes.py link_neighbours reads one agent's episodes in a time range;
-- without (agent, occurred_ts) it scanned and sorted the agent's whole history
-- on every write (46 ms per add_exchange at 100K episodes).
CREATE INDEX episodes_agent_ts ON episodes (agent, occurred_ts);
