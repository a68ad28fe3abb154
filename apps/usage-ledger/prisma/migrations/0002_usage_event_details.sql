-- The rest of a UsageEvent that the usage routes report: the key's name at the time of the call (the
-- UsageGeneration `key_label`), the model id sent upstream, reasoning tokens, whether the call streamed, and
-- the house-fast fair-use credits it consumed (counted for the fair-use windows, billed nowhere).
ALTER TABLE usage_generations
  ADD COLUMN upstream_model   text,
  ADD COLUMN key_label        text,
  ADD COLUMN reasoning_tokens bigint NOT NULL DEFAULT 0,
  ADD COLUMN stream           boolean NOT NULL DEFAULT false,
  ADD COLUMN fair_use_credits numeric(18, 6) NOT NULL DEFAULT 0;
