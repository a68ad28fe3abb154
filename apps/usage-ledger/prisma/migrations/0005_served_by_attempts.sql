-- Issue 41 (CONTRACTS "Routing policy"): the routing target that answered a call (`house`, `byo:<slug>`,
-- `provider:<vendor>/<deployment>`; the last one tried when none answered) and how many upstream attempts
-- the call made across its targets and fallback models.
ALTER TABLE usage_generations
  ADD COLUMN served_by text,
  ADD COLUMN attempts  integer NOT NULL DEFAULT 0;

-- Rows recorded before routing policy had a single target: the one `upstream` names, tried once when the
-- call reached it. Only an edge that dialed an engine names the provider, so a row without one never
-- reached an upstream (the decoder reads older events the same way).
UPDATE usage_generations
  SET served_by = upstream,
      attempts = CASE WHEN COALESCE(provider, '') <> '' THEN 1 ELSE 0 END;
