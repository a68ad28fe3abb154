-- Files in OpenAI's Files API (docs/batches.md): batch inputs, user data, and the output and error files of
-- batches. The bytes are 1 MiB bytea chunks beside the row (shared by every edge, on disk under the data folder
-- when embedded); a row is readable once committed, and an upload never committed is swept.
CREATE TABLE files (
  id           text PRIMARY KEY,
  -- The account (usr_…) or, for a team key, the team (org_…) the file belongs to.
  owner_id     text NOT NULL,
  filename     text NOT NULL,
  purpose      text NOT NULL,
  bytes        bigint NOT NULL DEFAULT 0,
  committed_at timestamptz(3),
  created_at   timestamptz(3) NOT NULL DEFAULT now(),
  expires_at   timestamptz(3)
);
CREATE INDEX files_owner_id_id_idx ON files (owner_id, id);
CREATE INDEX files_uncommitted_created_at_idx ON files (created_at) WHERE committed_at IS NULL;

CREATE TABLE file_chunks (
  file_id text NOT NULL REFERENCES files (id) ON DELETE CASCADE,
  seq     integer NOT NULL,
  data    bytea NOT NULL,
  PRIMARY KEY (file_id, seq)
);

-- Per owner, the bytes of its files (committed or on the way), kept in the transaction of every change. Its row
-- is locked first by every write to the owner's files, so the quota holds under concurrent uploads.
CREATE TABLE file_owners (
  owner_id text PRIMARY KEY,
  bytes    bigint NOT NULL DEFAULT 0
);
