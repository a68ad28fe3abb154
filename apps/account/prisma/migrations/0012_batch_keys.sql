-- Issue 55 (docs/batches.md "Billed once"): a key the runs service mints for one batch's lines names that batch.
-- Only such a key's answered call takes its usage event id from the call (the line's id), so a line called again
-- after a crash is applied once by the ledger; a key a user mints has none and never chooses its event ids.
ALTER TABLE caller_keys ADD COLUMN batch_id text;
