-- Issue 55 (docs/batches.md "Pacing"): when the edge answers one of a batch's lines that the batch's share of its
-- creating key's rate windows is spent, the whole batch waits until the window has room, not only that line: the
-- next line would be refused the same way, and a lane trying line after line would spend the edge's CPU on
-- refusals while the key's own calls wait.
ALTER TABLE batches ADD COLUMN paused_until timestamptz(3);
