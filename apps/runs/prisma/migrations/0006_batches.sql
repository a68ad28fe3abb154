-- OpenAI batches (docs/batches.md): a batch over an input file, one row per line, claimed by the batch workers
-- with a lease as runs are (FOR UPDATE SKIP LOCKED), so a worker that dies leaves its lines to another.
CREATE TABLE batches (
  id                text PRIMARY KEY,
  -- The account (usr_…) or, for a team key, the team (org_…) the batch belongs to.
  owner_id          text NOT NULL,
  -- Who created it (RunCaller as JSON): each line is called with a key minted within these bounds.
  caller            jsonb NOT NULL,
  endpoint          text NOT NULL,
  -- The input file of an OpenAI batch; null for an Anthropic message batch (its requests come inline).
  input_file_id     text,
  completion_window text NOT NULL,
  -- validating → in_progress → finalizing → completed | failed | expired; cancelling → cancelled.
  status            text NOT NULL DEFAULT 'validating',
  metadata          jsonb,
  errors            jsonb,
  output_file_id    text,
  error_file_id     text,
  total             integer NOT NULL,
  completed         integer NOT NULL DEFAULT 0,
  failed            integer NOT NULL DEFAULT 0,
  -- Keys minted for the batch's lines, revoked when it ends.
  key_ids           text[] NOT NULL DEFAULT '{}',
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  expires_at        timestamptz(3) NOT NULL,
  in_progress_at    timestamptz(3),
  finalizing_at     timestamptz(3),
  completed_at      timestamptz(3),
  failed_at         timestamptz(3),
  expired_at        timestamptz(3),
  cancelling_at     timestamptz(3),
  cancelled_at      timestamptz(3)
);
CREATE INDEX batches_owner_id_id_idx ON batches (owner_id, id);
CREATE INDEX batches_open_idx ON batches (created_at) WHERE status IN ('validating', 'in_progress', 'cancelling');

CREATE TABLE batch_lines (
  batch_id    text NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
  line_no     integer NOT NULL,
  -- `batch_req_…`: the line's id in the output and error files, and the request id its model call is sent with.
  id          text NOT NULL,
  custom_id   text NOT NULL,
  body        text NOT NULL,
  -- queued → running → succeeded | failed.
  state       text NOT NULL DEFAULT 'queued',
  attempts    integer NOT NULL DEFAULT 0,
  lease_until timestamptz(3),
  not_before  timestamptz(3),
  -- The line's result as the output or error file shows it (JSON text), once settled.
  result      text,
  PRIMARY KEY (batch_id, line_no)
);
CREATE INDEX batch_lines_open_idx ON batch_lines (batch_id, line_no) WHERE state IN ('queued', 'running');
