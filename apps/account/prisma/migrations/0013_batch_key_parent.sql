-- Issue 55 (docs/batches.md "Pacing"): a key the runs service mints for a batch's lines names the key that created
-- the batch, so the edge counts the batch's lines in that key's rate windows at a share of its limits, and the
-- key's interactive calls keep the rest. Null on every other key, and on a batch key of a session-created batch.
ALTER TABLE caller_keys ADD COLUMN parent_key_id text;
