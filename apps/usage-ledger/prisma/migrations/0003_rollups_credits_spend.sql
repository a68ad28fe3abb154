-- Usage rollups, credits and spend (issue 5).
--
-- Pages of calls, newest first, per account and per team: a keyset on (ts, request_id).
DROP INDEX usage_generations_account_id_ts_idx;
CREATE INDEX usage_generations_account_ts_request_idx ON usage_generations (account_id, ts DESC, request_id DESC);
CREATE INDEX usage_generations_org_ts_request_idx ON usage_generations (org_id, ts DESC, request_id DESC) WHERE org_id IS NOT NULL;

-- Calls summed per UTC hour and per UTC day, by team, key, model, provider and upstream. Each call is added
-- once, in the transaction that first records its request id, so the rollups always equal the sum of
-- usage_generations. Absent dimensions are '' so they can sit in the primary key.
CREATE TABLE usage_hourly (
  account_id       text NOT NULL,
  hour             timestamptz NOT NULL,
  org_id           text NOT NULL DEFAULT '',
  key_id           text NOT NULL DEFAULT '',
  model            text NOT NULL,
  provider         text NOT NULL DEFAULT '',
  upstream         text NOT NULL DEFAULT '',
  key_label        text,
  requests         bigint NOT NULL DEFAULT 0,
  failed           bigint NOT NULL DEFAULT 0,
  tokens_in        bigint NOT NULL DEFAULT 0,
  tokens_out       bigint NOT NULL DEFAULT 0,
  cache_read       bigint NOT NULL DEFAULT 0,
  cache_write      bigint NOT NULL DEFAULT 0,
  reasoning_tokens bigint NOT NULL DEFAULT 0,
  list_usd         numeric(20, 9) NOT NULL DEFAULT 0,
  credits          numeric(20, 6) NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, hour, org_id, key_id, model, provider, upstream)
);
CREATE INDEX usage_hourly_org_hour_idx ON usage_hourly (org_id, hour);

CREATE TABLE usage_daily (
  account_id       text NOT NULL,
  day              date NOT NULL,
  org_id           text NOT NULL DEFAULT '',
  key_id           text NOT NULL DEFAULT '',
  model            text NOT NULL,
  provider         text NOT NULL DEFAULT '',
  upstream         text NOT NULL DEFAULT '',
  key_label        text,
  requests         bigint NOT NULL DEFAULT 0,
  failed           bigint NOT NULL DEFAULT 0,
  tokens_in        bigint NOT NULL DEFAULT 0,
  tokens_out       bigint NOT NULL DEFAULT 0,
  cache_read       bigint NOT NULL DEFAULT 0,
  cache_write      bigint NOT NULL DEFAULT 0,
  reasoning_tokens bigint NOT NULL DEFAULT 0,
  list_usd         numeric(20, 9) NOT NULL DEFAULT 0,
  credits          numeric(20, 6) NOT NULL DEFAULT 0,
  PRIMARY KEY (account_id, day, org_id, key_id, model, provider, upstream)
);
CREATE INDEX usage_daily_org_day_idx ON usage_daily (org_id, day);

-- One row per account the ledger has seen: its plan and the bookkeeping of the balance it publishes to the
-- edge. Balances themselves are never stored: they are derived from credit_journal and the usage rollups.
CREATE TABLE credit_accounts (
  account_id            text PRIMARY KEY,
  plan                  text NOT NULL DEFAULT 'free',
  overage_limit_credits numeric(18, 6) NOT NULL DEFAULT 0,
  -- The last month whose plan and beta pots were granted ('YYYY-MM', UTC).
  refilled_period       text,
  last_usage_at         timestamptz,
  last_applied_at       timestamptz,
  needs_reconcile       boolean NOT NULL DEFAULT true,
  reconciled_at         timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now()
);

-- Every credit that enters an account: monthly plan and beta refills, plan upgrades, packs and grants.
-- Append-only (a trigger refuses updates and deletes); what is spent is the usage rollups.
CREATE TABLE credit_journal (
  id         bigserial PRIMARY KEY,
  account_id text NOT NULL,
  kind       text NOT NULL,
  pot        text NOT NULL,
  credits    numeric(18, 6) NOT NULL,
  usd        numeric(12, 2) NOT NULL DEFAULT 0,
  -- The month the entry belongs to ('YYYY-MM', UTC): plan and beta credits expire at its end.
  period     text NOT NULL,
  note       text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_journal_account_idx ON credit_journal (account_id, period);
-- A month's refill is granted once, whichever replica or retry gets there first.
CREATE UNIQUE INDEX credit_journal_refill_once ON credit_journal (account_id, kind, period) WHERE kind IN ('plan_refill', 'beta_refill');

CREATE FUNCTION credit_journal_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'credit_journal is append-only';
END;
$$;
CREATE TRIGGER credit_journal_append_only BEFORE UPDATE OR DELETE ON credit_journal
  FOR EACH ROW EXECUTE FUNCTION credit_journal_append_only();

-- Daily costs read from providers' organization cost reports (measured spend), by service line.
CREATE TABLE provider_costs (
  provider   text NOT NULL,
  day        date NOT NULL,
  service    text NOT NULL,
  amount_usd numeric(18, 6) NOT NULL,
  PRIMARY KEY (provider, day, service)
);

-- When each provider's cost report was last read, and up to when it covers.
CREATE TABLE provider_cost_sources (
  provider   text PRIMARY KEY,
  source     text NOT NULL,
  fetched_at timestamptz,
  -- The days [covered_from, covered_to) of the last read are complete in provider_costs.
  covered_from date,
  covered_to date,
  last_error text
);
