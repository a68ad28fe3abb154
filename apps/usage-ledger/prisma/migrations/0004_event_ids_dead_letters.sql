-- Issue 24. A usage row is keyed by the event id the edge makes once per call, not by the caller's request
-- id: callers choose request ids and may reuse them (within an account or across accounts), and a shared id
-- must not make a call free or hide another account's call. The request id stays on the row for correlation.
-- Rows recorded before this have no event id; their request id was unique, so it stands in for one.
ALTER TABLE usage_generations ADD COLUMN event_id text;
UPDATE usage_generations SET event_id = request_id;
ALTER TABLE usage_generations ALTER COLUMN event_id SET NOT NULL;
ALTER TABLE usage_generations DROP CONSTRAINT usage_generations_pkey;
ALTER TABLE usage_generations ADD CONSTRAINT usage_generations_pkey PRIMARY KEY (event_id);

-- Pages of calls, newest first: a keyset on (ts, event_id), which unlike the request id is unique.
DROP INDEX usage_generations_account_ts_request_idx;
DROP INDEX usage_generations_org_ts_request_idx;
CREATE INDEX usage_generations_account_ts_event_idx ON usage_generations (account_id, ts DESC, event_id DESC);
CREATE INDEX usage_generations_org_ts_event_idx ON usage_generations (org_id, ts DESC, event_id DESC) WHERE org_id IS NOT NULL;

-- Usage events the ledger could not apply (undecodable, or refused by the database while their neighbours
-- were applied), parked so the rest of the stream moves on. `event` holds the bytes as they came off the bus.
-- An operator lists and replays them (`main.js dead-letters list|replay`); a replayed one keeps its row.
CREATE TABLE usage_dead_letters (
  id          bigserial PRIMARY KEY,
  event_id    text,
  topic       text NOT NULL,
  partition   integer NOT NULL,
  "offset"    text NOT NULL,
  key         text NOT NULL,
  error       text NOT NULL,
  event       bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  replayed_at timestamptz
);
-- A redelivered poison event is parked once.
CREATE UNIQUE INDEX usage_dead_letters_event_idx ON usage_dead_letters (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX usage_dead_letters_pending_idx ON usage_dead_letters (created_at) WHERE replayed_at IS NULL;
