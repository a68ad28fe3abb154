-- Issue 52 (CONTRACTS "Guardrails"): policies a key's model calls pass through. A guardrail belongs to an account
-- (`user_id`) or to a team (`org_id` set, `user_id` its creator); its settings are the kind's JSON object, and a
-- webhook guardrail's signing secret is sealed like an endpoint's API key. Keys and teams name the guardrails
-- attached to them; deleting a guardrail removes it from every list (the service does so in the same transaction).
CREATE TABLE guardrails (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  org_id text REFERENCES teams (id) ON DELETE CASCADE,
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
  kind text NOT NULL CHECK (kind IN ('detectors', 'webhook')),
  config jsonb NOT NULL,
  applies_to text[] NOT NULL DEFAULT '{request,reply}',
  webhook_secret bytea,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX guardrails_user_idx ON guardrails (user_id, id) WHERE org_id IS NULL;
CREATE INDEX guardrails_org_idx ON guardrails (org_id, id) WHERE org_id IS NOT NULL;

ALTER TABLE caller_keys ADD COLUMN guardrail_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE teams ADD COLUMN guardrail_ids text[] NOT NULL DEFAULT '{}';
