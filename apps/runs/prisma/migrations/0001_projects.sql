CREATE TABLE projects (
  id            text PRIMARY KEY,
  account_id    text NOT NULL,
  name          text NOT NULL,
  instructions  text,
  default_model text,
  created_at    timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at    timestamptz(3)
);
CREATE INDEX projects_account_id_id_idx ON projects (account_id, id);
