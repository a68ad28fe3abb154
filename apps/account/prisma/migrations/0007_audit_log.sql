-- Issue 45 (CONTRACTS "Audit records"): who changed what, when and from where. A change made in this database
-- writes its record in the same transaction; other services append theirs through AuditService.
-- Who reads a record: its actor; `owner_user_id`, the account the resource belongs to (none for a team's own
-- settings and invites); and the owners and admins of `team_id`, the team the resource belongs to.
-- `before` / `after` hold the resource as JSON with every secret masked.
CREATE TABLE audit_events (
  id              text PRIMARY KEY,
  at              timestamptz(3) NOT NULL DEFAULT now(),
  actor_user_id   text NOT NULL,
  actor_key_id    text,
  actor_session   text,
  actor_device_id text,
  ip              text,
  action          text NOT NULL,
  resource_type   text NOT NULL,
  resource_id     text NOT NULL,
  owner_user_id   text,
  team_id         text,
  before          jsonb,
  after           jsonb
);
CREATE INDEX audit_events_owner_idx ON audit_events (owner_user_id, id) WHERE owner_user_id IS NOT NULL;
CREATE INDEX audit_events_actor_idx ON audit_events (actor_user_id, id);
CREATE INDEX audit_events_team_idx ON audit_events (team_id, id) WHERE team_id IS NOT NULL;

-- Append-only: no code path updates or deletes a record, and the database refuses it too.
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only';
END;
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();

-- Full access (every scope) and Read-only query (every `:read` scope) now include audit:read. A key minted with
-- either before it existed stores the list of that time, which holds every `:read` scope of then: such a key gains
-- audit:read, so both presets keep meaning what they say.
UPDATE caller_keys SET scopes = scopes || '["audit:read"]'::jsonb
WHERE jsonb_typeof(scopes) = 'array'
  AND scopes @> '["usage:read", "billing:read", "keys:read", "endpoints:read", "teams:read", "devices:read",
    "builds:read", "runs:read"]'::jsonb
  AND NOT scopes @> '["audit:read"]'::jsonb;
