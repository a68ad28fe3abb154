-- Custom endpoints (the spec's Upstream) and personal @aliases, read by the edge through GetRoutingTable.

-- One counter per user, bumped by every alias write or delete, so a device can ask for "changes since rev N"
-- and a delete (whose row is gone) still has a revision to report.
ALTER TABLE users ADD COLUMN alias_rev bigint NOT NULL DEFAULT 0;

CREATE TABLE upstreams (
  id                 text PRIMARY KEY,
  user_id            text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- Set on a team's shared endpoint; the edge sees it only for keys of that team.
  org_id             text,
  slug               text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,47}$'),
  label              text NOT NULL,
  base_url           text NOT NULL,
  dialect            text NOT NULL DEFAULT 'auto' CHECK (dialect IN ('openai', 'anthropic', 'auto')),
  -- AES-256-GCM (store/secrets.ts); null when the endpoint needs no key.
  api_key_ciphertext bytea,
  -- Header values are credentials as often as not, so the whole {name: value} object is one ciphertext;
  -- the names alone stay readable for the redacted view.
  header_names       jsonb NOT NULL DEFAULT '[]',
  headers_ciphertext bytea,
  models             jsonb NOT NULL DEFAULT '[]',
  model_names        jsonb NOT NULL DEFAULT '{}',
  model_meta         jsonb NOT NULL DEFAULT '{}',
  -- The last probe report {ok, models_found?, error?, at?}, failed or not.
  probe              jsonb,
  -- When the endpoint last answered a probe; a failed probe leaves it alone.
  probed_at          timestamptz(3),
  created_at         timestamptz(3) NOT NULL DEFAULT now(),
  updated_at         timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX upstreams_user_id_slug_key ON upstreams (user_id, slug);
-- Two members of a team cannot both share an endpoint under one slug.
CREATE UNIQUE INDEX upstreams_org_id_slug_key ON upstreams (org_id, slug) WHERE org_id IS NOT NULL;
CREATE INDEX upstreams_user_id_id_idx ON upstreams (user_id, id);

CREATE TABLE aliases (
  user_id    text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- Stored without its leading "@".
  token      text NOT NULL CHECK (token ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
  vendor     text NOT NULL CHECK (length(vendor) BETWEEN 1 AND 64),
  model_id   text NOT NULL CHECK (length(model_id) BETWEEN 1 AND 256),
  label      text NOT NULL,
  tier       text NOT NULL,
  custody    text NOT NULL DEFAULT 'envelope' CHECK (custody IN ('envelope', 'device-held')),
  -- The user's alias_rev at this row's last write.
  rev        bigint NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, token)
);
