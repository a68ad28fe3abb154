-- Stored OpenAI Responses (`store: true`), read back by id and continued with `previous_response_id`. Each row is
-- self-contained: `input_items` holds the response's whole context (what a continuation prepends), so deleting or
-- evicting one response never breaks another. Bodies are the JSON text the caller saw, kept as text (never
-- parsed here; a `\u0000` escape in a model's output stays storable).
CREATE TABLE stored_responses (
  id          text PRIMARY KEY,
  -- The account (usr_…) or, for a team key, the team (org_…) the response belongs to.
  owner_id    text NOT NULL,
  -- Insertion order: the oldest go first when the owner is over its bounds.
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  response    text NOT NULL,
  input_items text NOT NULL,
  -- UTF-8 bytes of response and input_items together: what the owner's byte bound counts.
  size_bytes  integer NOT NULL,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  expires_at  timestamptz(3) NOT NULL
);
CREATE INDEX stored_responses_owner_id_seq_idx ON stored_responses (owner_id, seq);
CREATE INDEX stored_responses_expires_at_idx ON stored_responses (expires_at);

-- Per owner, what its stored responses add up to, kept in the transaction of every change. Its row is locked
-- first by every write to the owner's responses, so writes of one owner are serialised and never deadlock.
CREATE TABLE response_owners (
  owner_id  text PRIMARY KEY,
  responses integer NOT NULL DEFAULT 0,
  bytes     bigint NOT NULL DEFAULT 0
);
