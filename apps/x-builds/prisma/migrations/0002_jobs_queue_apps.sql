-- Lane state beside the persisted settings: why intake is paused, the build backoff, and the X poller's
-- cursor, rate-limit reset and singleton lease.
ALTER TABLE queue_settings
  ADD COLUMN paused_reason    text,
  ADD COLUMN backoff_until    timestamptz(3),
  ADD COLUMN backoff_step     integer NOT NULL DEFAULT 0,
  ADD COLUMN x_since_id       text,
  ADD COLUMN x_reset_at       timestamptz(3),
  ADD COLUMN x_reply_reset_at timestamptz(3),
  ADD COLUMN poller_owner     text,
  ADD COLUMN poller_until     timestamptz(3);

CREATE TABLE build_jobs (
  id                  text PRIMARY KEY,
  user_id             text NOT NULL,
  key_id              text,
  lane                text NOT NULL CHECK (lane IN ('x', 'api')),
  source              jsonb NOT NULL,
  post_id             text UNIQUE,
  idempotency_key     text,
  author_id           text NOT NULL,
  conversation_id     text,
  prompt              text NOT NULL,
  title               text,
  key_bounds          jsonb NOT NULL DEFAULT '{}',
  status              text NOT NULL CHECK (status IN ('queued', 'screening', 'building', 'auditing', 'publishing', 'verifying', 'fixing', 'drafting', 'done', 'refused', 'failed', 'cancelled')),
  resume_from         text,
  pinned              boolean NOT NULL DEFAULT false,
  queue_order         bigint NOT NULL DEFAULT 0,
  not_before          timestamptz(3),
  attempt             integer NOT NULL DEFAULT 0,
  fix_attempts        integer NOT NULL DEFAULT 0,
  lease_owner         text,
  lease_until         timestamptz(3),
  heartbeat_at        timestamptz(3),
  cancel_requested_at timestamptz(3),
  build_key_id        text,
  model               text,
  bundle_html         text,
  findings            jsonb NOT NULL DEFAULT '[]',
  checks              jsonb NOT NULL DEFAULT '[]',
  refusal_category    text,
  refusal_reason      text,
  error               text,
  slug                text,
  reply_text          text,
  reply_status        text,
  reply_post_id       text,
  reply_posted_at     timestamptz(3),
  created_at          timestamptz(3) NOT NULL DEFAULT now(),
  updated_at          timestamptz(3) NOT NULL DEFAULT now(),
  started_at          timestamptz(3),
  finished_at         timestamptz(3),
  UNIQUE (user_id, idempotency_key)
);

-- One active job per author and per conversation, race-free: a second insert violates the index.
CREATE UNIQUE INDEX build_jobs_one_active_per_author ON build_jobs (author_id)
  WHERE status NOT IN ('done', 'refused', 'failed', 'cancelled');
CREATE UNIQUE INDEX build_jobs_one_active_per_conversation ON build_jobs (conversation_id)
  WHERE conversation_id IS NOT NULL AND status NOT IN ('done', 'refused', 'failed', 'cancelled');
-- Dispatch order of the queued set.
CREATE INDEX build_jobs_dispatch ON build_jobs (pinned DESC, queue_order, id) WHERE status = 'queued';
CREATE INDEX build_jobs_user ON build_jobs (user_id, id DESC);
CREATE INDEX build_jobs_author_created ON build_jobs (author_id, created_at);
CREATE INDEX build_jobs_created ON build_jobs (created_at);
CREATE INDEX build_jobs_lease ON build_jobs (lease_until) WHERE lease_until IS NOT NULL;

-- Every transition of a job, in order: the audit log and the source of backoff counts.
CREATE TABLE job_events (
  id      bigserial PRIMARY KEY,
  job_id  text NOT NULL REFERENCES build_jobs (id),
  type    text NOT NULL,
  from_status text,
  to_status   text,
  data    jsonb NOT NULL DEFAULT '{}',
  at      timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX job_events_job ON job_events (job_id, id);
CREATE INDEX job_events_type_at ON job_events (type, at);

-- Stage timings per job attempt.
CREATE TABLE job_stage_spans (
  id         bigserial PRIMARY KEY,
  job_id     text NOT NULL REFERENCES build_jobs (id),
  attempt    integer NOT NULL,
  stage      text NOT NULL,
  started_at timestamptz(3) NOT NULL,
  ended_at   timestamptz(3),
  outcome    text
);
CREATE INDEX job_stage_spans_job ON job_stage_spans (job_id, id);
CREATE INDEX job_stage_spans_ended ON job_stage_spans (ended_at);

-- Published apps: one slug per job; the slug points at its current immutable bundle.
CREATE TABLE apps (
  id                text PRIMARY KEY,
  slug              text NOT NULL UNIQUE,
  job_id            text NOT NULL UNIQUE REFERENCES build_jobs (id),
  bundle_id         text NOT NULL,
  state             text NOT NULL CHECK (state IN ('live', 'taken_down')),
  csp               text NOT NULL,
  created_at        timestamptz(3) NOT NULL DEFAULT now(),
  taken_down_at     timestamptz(3),
  taken_down_reason text
);

-- Bundle files are written once and never changed; a fix publishes a new bundle under the same slug.
CREATE TABLE app_files (
  bundle_id    text NOT NULL,
  path         text NOT NULL,
  app_id       text NOT NULL REFERENCES apps (id),
  content_type text NOT NULL,
  body         bytea NOT NULL,
  sha256       text NOT NULL,
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (bundle_id, path)
);

-- Screenshots and clips recorded by a browser during verification.
CREATE TABLE job_media (
  job_id       text NOT NULL REFERENCES build_jobs (id),
  kind         text NOT NULL CHECK (kind IN ('screenshot', 'clip')),
  content_type text NOT NULL,
  body         bytea NOT NULL,
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (job_id, kind)
);

CREATE TABLE author_blocks (
  author_id  text PRIMARY KEY,
  reason     text NOT NULL CHECK (reason IN ('operator', 'optout', 'blocked_us')),
  blocked_by text,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);

-- Lane-wide happenings that belong to no job: X API backoffs and pauses.
CREATE TABLE lane_events (
  id     bigserial PRIMARY KEY,
  type   text NOT NULL,
  data   jsonb NOT NULL DEFAULT '{}',
  at     timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX lane_events_type_at ON lane_events (type, at);
