-- Issue 50 (CONTRACTS "Agents, tools and policies"): how the caller's `anthropic-beta` values reach an endpoint
-- that speaks Anthropic's dialect, `{"drop": [...], "map": {...}}`. NULL (every existing endpoint): each value goes
-- as the caller sent it, as before. Beta names are no secret, so the policy is stored and shown in clear.
ALTER TABLE upstreams ADD COLUMN anthropic_beta jsonb;
