-- Issue 41 (CONTRACTS "Routing policy"): an endpoint's share of a model's calls among the caller's endpoints
-- listing it. 0 is standby, tried only when the others failed; existing endpoints take the default 1, so they
-- keep sharing calls evenly as before.
ALTER TABLE upstreams ADD COLUMN weight integer NOT NULL DEFAULT 1 CHECK (weight BETWEEN 0 AND 100);
