-- Issue 52: the model judge kind (a chosen model asked a yes/no question about the call; its settings are
-- {model, question, max_tokens, timeout_ms, fail}).
ALTER TABLE guardrails DROP CONSTRAINT guardrails_kind_check;
ALTER TABLE guardrails ADD CONSTRAINT guardrails_kind_check CHECK (kind IN ('detectors', 'webhook', 'judge'));
