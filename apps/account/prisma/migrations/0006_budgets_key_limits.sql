-- Issue 45 (CONTRACTS "Budgets and limits"): a team's spend cap over its team keys, and each member's cap
-- inside it, as JSON {credits, period, time_zone, anchor}; null means no cap. The edge derives the current
-- period from the clock, so nothing here resets. A key's own requests- and tokens-per-minute limits; null
-- means the service's ceiling.
ALTER TABLE teams ADD COLUMN budget jsonb;
ALTER TABLE team_members ADD COLUMN budget jsonb;
ALTER TABLE caller_keys ADD COLUMN rpm integer CHECK (rpm > 0);
ALTER TABLE caller_keys ADD COLUMN tpm integer CHECK (tpm > 0);
