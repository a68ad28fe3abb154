-- Issue 44 (CONTRACTS "Response cache"): a key's opt-in to the exact response cache. `cache_ttl_s` is how long
-- a complete reply is kept for replay (0: the key does not cache); `cache_tools` lets replies that carry tool
-- calls be cached too. Existing keys cache nothing, as before.
ALTER TABLE caller_keys
  ADD COLUMN cache_ttl_s integer NOT NULL DEFAULT 0 CHECK (cache_ttl_s BETWEEN 0 AND 2592000),
  ADD COLUMN cache_tools boolean NOT NULL DEFAULT false;
