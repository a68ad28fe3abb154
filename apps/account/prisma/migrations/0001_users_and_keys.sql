CREATE TABLE users (
  id            text PRIMARY KEY,
  email         text NOT NULL,
  password_hash text,
  created_at    timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (email);

CREATE TABLE caller_keys (
  id                    text PRIMARY KEY,
  user_id               text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  name                  text NOT NULL,
  key_hash              bytea NOT NULL,
  mask                  text NOT NULL,
  scopes                jsonb,
  allowed_models        jsonb,
  daily_limit_credits   integer,
  monthly_limit_credits integer,
  route                 text NOT NULL DEFAULT 'auto' CHECK (route IN ('byo', 'credits', 'auto')),
  mode                  text NOT NULL DEFAULT 'model' CHECK (mode IN ('model', 'agent')),
  incognito             boolean NOT NULL DEFAULT false,
  device_id             text,
  org_id                text,
  created_at            timestamptz(3) NOT NULL DEFAULT now(),
  last_used_at          timestamptz(3),
  revoked_at            timestamptz(3)
);
CREATE UNIQUE INDEX caller_keys_key_hash_key ON caller_keys (key_hash);
CREATE INDEX caller_keys_user_id_id_idx ON caller_keys (user_id, id);
