-- Issue 51 (CONTRACTS "Agents, tools and policies", MCP): tool servers an account registers, speaking MCP's
-- Streamable HTTP transport. Their headers and bearer token are credentials, sealed like an endpoint's API key
-- (store/secrets.ts); header names stay readable for the redacted view. `tools` is what the last answered probe
-- listed ([{name, description?}]); `probe` the last report, failed or not.
CREATE TABLE mcp_servers (
  id                  text PRIMARY KEY,
  user_id             text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  -- A tool's name at /mcp is `<slug>__<tool>`: no "_" in a slug, so the first "__" always ends it.
  slug                text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,47}$'),
  label               text NOT NULL CHECK (char_length(label) BETWEEN 1 AND 128),
  url                 text NOT NULL,
  header_names        jsonb NOT NULL DEFAULT '[]',
  headers_ciphertext  bytea,
  bearer_ciphertext   bytea,
  tools               jsonb NOT NULL DEFAULT '[]',
  probe               jsonb,
  probed_at           timestamptz(3),
  created_at          timestamptz(3) NOT NULL DEFAULT now(),
  updated_at          timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX mcp_servers_user_id_slug_key ON mcp_servers (user_id, slug);
CREATE INDEX mcp_servers_user_id_id_idx ON mcp_servers (user_id, id);

-- A key's MCP tool allow-list: globs over `<server>__<tool>`; null = every tool, [] = none.
ALTER TABLE caller_keys ADD COLUMN allowed_tools jsonb;

-- Whether a member's tool servers join the team's pool: set from the team's share_defaults.mcp when they join.
-- Members who joined before this column existed take their team's current default.
ALTER TABLE team_members ADD COLUMN share_mcp boolean NOT NULL DEFAULT true;
UPDATE team_members m SET share_mcp = COALESCE((t.share_defaults ->> 'mcp')::boolean, true)
  FROM teams t WHERE t.id = m.team_id;
