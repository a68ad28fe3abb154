-- Issue 44 (CONTRACTS "Response cache"): the call was replayed from the response cache (no upstream was called,
-- nothing was charged). Rows recorded before the cache existed were all answered by an upstream.
ALTER TABLE usage_generations ADD COLUMN cache_hit boolean NOT NULL DEFAULT false;
