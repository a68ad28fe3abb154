-- Agent runs: a queue in PostgreSQL. Workers claim with SKIP LOCKED, hold a lease they renew, and a run whose
-- lease ran out is claimed again (recovered) from its last checkpoint (`transcript`).
CREATE TABLE runs (
  id                  text PRIMARY KEY,
  account_id          text NOT NULL,
  project_id          text NOT NULL REFERENCES projects (id),
  status              text NOT NULL DEFAULT 'queued',
  model               text NOT NULL,
  prompt              text NOT NULL,
  output              text,
  error               jsonb,
  usage               jsonb NOT NULL DEFAULT '{}',
  metadata            jsonb NOT NULL DEFAULT '{}',
  caller              jsonb NOT NULL,
  idempotency_key     text,
  request_hash        text,
  last_seq            integer NOT NULL DEFAULT 0,
  attempt             integer NOT NULL DEFAULT 0,
  lease_owner         text,
  lease_until         timestamptz(3),
  heartbeat_at        timestamptz(3),
  cancel_requested_at timestamptz(3),
  invoke_key_id       text,
  transcript          jsonb,
  created_at          timestamptz(3) NOT NULL DEFAULT now(),
  started_at          timestamptz(3),
  settled_at          timestamptz(3),
  CONSTRAINT runs_status_check CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled'))
);
CREATE INDEX runs_account_id_id_idx ON runs (account_id, id);
CREATE INDEX runs_project_id_id_idx ON runs (project_id, id);
CREATE UNIQUE INDEX runs_account_id_idempotency_key_key ON runs (account_id, idempotency_key);
-- What the claim reads: the oldest queued runs, and running runs whose lease ran out.
CREATE INDEX runs_queued_idx ON runs (created_at, id) WHERE status = 'queued';
CREATE INDEX runs_running_lease_idx ON runs (lease_until) WHERE status = 'running';

-- Append-only; `seq` comes from runs.last_seq in the transaction that inserts the row, so it has no gaps.
CREATE TABLE run_events (
  run_id     text NOT NULL REFERENCES runs (id),
  seq        integer NOT NULL,
  type       text NOT NULL,
  data       jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);

-- A project's workspace: the files its runs list, read and write.
CREATE TABLE workspace_files (
  project_id text NOT NULL REFERENCES projects (id),
  path       text NOT NULL,
  content    text NOT NULL,
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (project_id, path)
);

-- HTTP exchanges of the URL-fetch tool, redacted before they are stored, for the service-documents learner.
CREATE TABLE exchanges (
  id          text PRIMARY KEY,
  run_id      text NOT NULL REFERENCES runs (id),
  host        text NOT NULL,
  method      text NOT NULL,
  url         text NOT NULL,
  status      integer NOT NULL,
  request     jsonb NOT NULL,
  response    jsonb NOT NULL,
  recorded_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX exchanges_host_id_idx ON exchanges (host, id);

CREATE TABLE webhook_endpoints (
  id              text PRIMARY KEY,
  account_id      text NOT NULL,
  url             text NOT NULL,
  events          jsonb NOT NULL,
  secret          text NOT NULL,
  created_at      timestamptz(3) NOT NULL DEFAULT now(),
  disabled_at     timestamptz(3),
  disabled_reason text,
  deleted_at      timestamptz(3)
);
CREATE INDEX webhook_endpoints_account_id_id_idx ON webhook_endpoints (account_id, id);

-- The outbox: written in the transaction that settles a run, one delivery per subscribed endpoint.
CREATE TABLE webhook_events (
  id         text PRIMARY KEY,
  account_id text NOT NULL,
  run_id     text NOT NULL REFERENCES runs (id),
  type       text NOT NULL,
  payload    text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
  id              text PRIMARY KEY,
  event_id        text NOT NULL REFERENCES webhook_events (id),
  endpoint_id     text NOT NULL REFERENCES webhook_endpoints (id),
  status          text NOT NULL DEFAULT 'pending',
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz(3),
  created_at      timestamptz(3) NOT NULL DEFAULT now(),
  CONSTRAINT webhook_deliveries_status_check CHECK (status IN ('pending', 'succeeded', 'failed'))
);
CREATE INDEX webhook_deliveries_endpoint_id_id_idx ON webhook_deliveries (endpoint_id, id);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

CREATE TABLE webhook_attempts (
  delivery_id  text NOT NULL REFERENCES webhook_deliveries (id),
  attempt      integer NOT NULL,
  status_code  integer,
  error        text,
  duration_ms  integer NOT NULL,
  attempted_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (delivery_id, attempt)
);
