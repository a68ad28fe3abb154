-- Issue 52 (CONTRACTS "Guardrails"): the guardrail that acted on a call (`grd_…`) and its action (block, redact or
-- log). Rows recorded before guardrails existed were acted on by none.
ALTER TABLE usage_generations ADD COLUMN guardrail_id text, ADD COLUMN guardrail_action text;
