CREATE TABLE notes (
  id text PRIMARY KEY,
  body text NOT NULL
);
