-- Sign-in sessions, teams (the spec's Team; ids `org_…`), and paired devices with their pairing grants.
-- Credentials (session and device tokens) are stored as the SHA-256 of the secret, like caller keys.

CREATE TABLE sessions (
  token_hash  bytea PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at  timestamptz(3) NOT NULL DEFAULT now(),
  expires_at  timestamptz(3) NOT NULL,
  -- Set by sign-out; an ended session is refused like an unknown one.
  ended_at    timestamptz(3)
);
CREATE INDEX sessions_user_id_idx ON sessions (user_id);

CREATE TABLE teams (
  id                     text PRIMARY KEY,
  name                   text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  -- {mcp, rules, skills}: what a new member pools by default.
  share_defaults         jsonb NOT NULL DEFAULT '{"mcp": true, "rules": true, "skills": true}',
  share_policy           text NOT NULL DEFAULT 'members' CHECK (share_policy IN ('members', 'editors')),
  require_manual_confirm boolean NOT NULL DEFAULT false,
  created_by             text NOT NULL REFERENCES users (id),
  created_at             timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE team_members (
  team_id   text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  user_id   text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  role      text NOT NULL CHECK (role IN ('owner', 'admin', 'editor', 'member')),
  groups    jsonb NOT NULL DEFAULT '[]',
  joined_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (team_id, user_id)
);
CREATE INDEX team_members_user_id_idx ON team_members (user_id);

CREATE TABLE team_invites (
  -- The invite code is the credential the invitee presents; it is shown to team managers and sent by email.
  code         text PRIMARY KEY,
  team_id      text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  email        text NOT NULL,
  role         text NOT NULL CHECK (role IN ('admin', 'editor', 'member')),
  invited_by   text NOT NULL REFERENCES users (id),
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  expires_at   timestamptz(3) NOT NULL,
  sent_count   integer NOT NULL DEFAULT 1,
  last_sent_at timestamptz(3) NOT NULL DEFAULT now(),
  accepted_at  timestamptz(3),
  accepted_by  text REFERENCES users (id),
  revoked_at   timestamptz(3)
);
CREATE INDEX team_invites_team_id_idx ON team_invites (team_id, created_at);
-- One pending invite per address and team.
CREATE UNIQUE INDEX team_invites_pending_key ON team_invites (team_id, lower(email)) WHERE accepted_at IS NULL AND revoked_at IS NULL;

CREATE TABLE devices (
  id            text PRIMARY KEY,
  user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  kind          text NOT NULL CHECK (length(kind) BETWEEN 1 AND 32),
  label         text NOT NULL CHECK (length(label) BETWEEN 1 AND 64),
  fingerprint   text NOT NULL CHECK (length(fingerprint) BETWEEN 1 AND 256),
  -- The spec's capabilities object and AgentDeviceFacet, as the device declared them.
  capabilities  jsonb,
  agent         jsonb,
  token_hash    bytea NOT NULL,
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  last_seen_at  timestamptz(3)
);
CREATE UNIQUE INDEX devices_token_hash_key ON devices (token_hash);
CREATE INDEX devices_user_id_id_idx ON devices (user_id, id);

-- RFC 8628 device authorization grants: pending until a signed-in user approves the user code, then
-- exchanged once for a device token.
CREATE TABLE device_pairings (
  device_code_hash bytea PRIMARY KEY,
  user_code        text NOT NULL,
  kind             text NOT NULL,
  label            text NOT NULL,
  fingerprint      text NOT NULL,
  capabilities     jsonb,
  agent            jsonb,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'denied', 'consumed')),
  user_id          text REFERENCES users (id) ON DELETE CASCADE,
  device_id        text,
  interval_s       integer NOT NULL DEFAULT 5,
  last_polled_at   timestamptz(3),
  created_at       timestamptz(3) NOT NULL DEFAULT now(),
  expires_at       timestamptz(3) NOT NULL
);
CREATE UNIQUE INDEX device_pairings_user_code_key ON device_pairings (user_code);
