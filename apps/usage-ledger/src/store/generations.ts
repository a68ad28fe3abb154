import type { Prisma, PrismaClient } from '../generated/prisma/client';
import { periodOf, PLANS } from '../credits/plans';

/**
 * One `usage_generations` row as written from a usage event, its amounts in the whole units the wire carries:
 * the statement makes them the columns' decimals in exact numeric arithmetic, so no float ever holds money.
 */
export type GenerationRow = Omit<
  Prisma.UsageGenerationCreateManyInput,
  'totalCostUsd' | 'cacheDiscountUsd' | 'creditsCharged' | 'fairUseCredits'
> & {
  totalCostNanoUsd: bigint;
  cacheDiscountNanoUsd: bigint;
  creditsChargedMicrocredits: bigint;
  fairUseMicrocredits: bigint;
};

export interface AppliedBatch {
  /** Rows recorded by this call; the rest were already there (redelivered). */
  inserted: number;
  /** Accounts this batch was the first sight of. */
  newAccounts: string[];
}

const COLUMNS =
  `event_id text, request_id text, account_id text, user_id text, key_id text, key_label text, org_id ` +
  `text, model text,
  upstream_model text, upstream text, provider text, dialect_in text, dialect_out text, route text, tokens_prompt ` +
  `bigint,
  tokens_completion bigint, cache_read bigint, cache_write bigint, reasoning_tokens bigint, total_cost_usd bigint,
  cache_discount_usd bigint, credits_charged bigint, fair_use_credits bigint, is_byok boolean, status integer,
  latency_ms integer, ttft_ms integer, stream boolean, session_id text, served_by text, attempts integer,
  cache_hit boolean, guardrail_id text, guardrail_action text, ts timestamptz`;
const NAMES = COLUMNS.split(',')
  .map((column) => column.trim().split(/\s+/)[0])
  .join(', ');
/** The batch carries the money columns as whole units (nano-USD, microcredits): scaled here, exactly. */
const SCALED: Record<string, string> = {
  total_cost_usd: 'total_cost_usd * 0.000000001',
  cache_discount_usd: 'cache_discount_usd * 0.000000001',
  credits_charged: 'credits_charged * 0.000001',
  fair_use_credits: 'fair_use_credits * 0.000001',
};
const VALUES = NAMES.split(', ')
  .map((name) => SCALED[name] ?? name)
  .join(', ');

const ROLLUP_SUMS =
  `count(*), count(*) FILTER (WHERE status >= 400), sum(tokens_prompt), sum(tokens_completion), ` +
  `sum(cache_read),
  sum(cache_write), sum(reasoning_tokens), sum(total_cost_usd), sum(credits_charged)`;
const ROLLUP_UPDATE = `key_label = GREATEST(t.key_label, excluded.key_label),
  requests = t.requests + excluded.requests, failed = t.failed + excluded.failed,
  tokens_in = t.tokens_in + excluded.tokens_in, tokens_out = t.tokens_out + excluded.tokens_out,
  cache_read = t.cache_read + excluded.cache_read, cache_write = t.cache_write + excluded.cache_write,
  reasoning_tokens = t.reasoning_tokens + excluded.reasoning_tokens,
  list_usd = t.list_usd + excluded.list_usd, credits = t.credits + excluded.credits`;
const ROLLUP_COLUMNS =
  `account_id, BUCKET, org_id, key_id, model, provider, upstream, key_label, requests, failed, ` +
  `tokens_in,
  tokens_out, cache_read, cache_write, reasoning_tokens, list_usd, credits`;
const DIMENSIONS =
  `account_id, COALESCE(org_id, ''), COALESCE(key_id, ''), model, COALESCE(provider, ''), ` + `COALESCE(upstream, '')`;

function rollup(table: string, bucket: string, bucketOf: string): string {
  // Grouped and ordered by primary key: one row per key (an upsert may touch a row once per statement), and
  // concurrent batches lock rows in one order, so they cannot deadlock.
  return `INSERT INTO ${table} AS t (${ROLLUP_COLUMNS.replace('BUCKET', bucket)})
    SELECT account_id, ${bucketOf}, ${DIMENSIONS.replace('account_id, ', '')}, max(key_label), ${ROLLUP_SUMS}
    FROM inserted GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT (account_id, ${bucket}, org_id, key_id, model, provider, upstream) DO UPDATE SET ${ROLLUP_UPDATE}`;
}

/**
 * Adds the calls of a CTE named `inserted` to the hourly and daily rollups: two data-modifying CTEs to follow
 * it in one WITH (bench/ledger.mjs builds the rollups of calls it seeds in bulk with them too).
 */
export const ROLLUP_CTES =
  `hourly AS ` +
  `(${rollup('usage_hourly', 'hour', `date_trunc('hour', ts AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`)}),
daily AS (${rollup('usage_daily', 'day', `(ts AT TIME ZONE 'UTC')::date`)})`;

/**
 * One statement does the whole batch, so it commits or fails as a unit without a transaction round trip:
 * record each event id not yet recorded (`ON CONFLICT DO NOTHING`: the first write wins, a redelivery
 * changes nothing; request ids may repeat and do not matter here), add exactly the rows it recorded to the hourly and
 * daily rollups, note each account's latest call, and give accounts seen for the first time the Free plan's refill for
 * the month. Rollups sum in exact numerics, so the totals do not depend on the order calls arrive in.
 */
const APPLY_BATCH =
  `WITH batch AS (SELECT * FROM json_to_recordset($1::json) AS r(${COLUMNS})),
inserted AS (
  INSERT INTO usage_generations (${NAMES}) SELECT ${VALUES} FROM batch ORDER BY event_id
  ON CONFLICT (event_id) DO NOTHING
  RETURNING account_id, org_id, key_id, key_label, model, provider, upstream, status, tokens_prompt, tokens_completion,
    cache_read, cache_write, reasoning_tokens, total_cost_usd, credits_charged, ts
),
${ROLLUP_CTES},
accounts AS (
  INSERT INTO credit_accounts (account_id, last_usage_at, last_applied_at, needs_reconcile, refilled_period)
    SELECT account_id, max(ts), $2::timestamptz, true, $3 FROM inserted GROUP BY account_id ORDER BY account_id
  ON CONFLICT (account_id) DO UPDATE SET
    last_usage_at = GREATEST(credit_accounts.last_usage_at, excluded.last_usage_at),
    last_applied_at = excluded.last_applied_at,
    needs_reconcile = true
  RETURNING account_id, (xmax = 0) AS created
),
refills AS (
  INSERT INTO credit_journal (account_id, kind, pot, credits, period, note)
    SELECT account_id, 'beta_refill', 'beta', $4::numeric, $3, 'monthly beta pot' FROM accounts WHERE created
  ON CONFLICT (account_id, kind, period) WHERE kind IN ('plan_refill', 'beta_refill') DO NOTHING
)
SELECT (SELECT count(*) FROM inserted)::int AS inserted,
       COALESCE((SELECT json_agg(account_id ORDER BY account_id) FROM accounts WHERE created), '[]'::json)::text AS ` +
  `new_accounts`;

/** The row as JSON for json_to_recordset: whole numbers as strings (JSON numbers would pass through a float). */
function toRecord(row: GenerationRow): Record<string, unknown> {
  return {
    event_id: row.eventId,
    request_id: row.requestId,
    account_id: row.accountId,
    user_id: row.userId ?? null,
    key_id: row.keyId ?? null,
    key_label: row.keyLabel ?? null,
    org_id: row.orgId ?? null,
    model: row.model,
    upstream_model: row.upstreamModel ?? null,
    upstream: row.upstream ?? null,
    provider: row.provider ?? null,
    dialect_in: row.dialectIn ?? null,
    dialect_out: row.dialectOut ?? null,
    route: row.route ?? null,
    tokens_prompt: String(row.tokensPrompt ?? 0),
    tokens_completion: String(row.tokensCompletion ?? 0),
    cache_read: String(row.cacheRead ?? 0),
    cache_write: String(row.cacheWrite ?? 0),
    reasoning_tokens: String(row.reasoningTokens ?? 0),
    total_cost_usd: String(row.totalCostNanoUsd),
    cache_discount_usd: String(row.cacheDiscountNanoUsd),
    credits_charged: String(row.creditsChargedMicrocredits),
    fair_use_credits: String(row.fairUseMicrocredits),
    is_byok: row.isByok ?? false,
    status: row.status,
    latency_ms: row.latencyMs ?? null,
    ttft_ms: row.ttftMs ?? null,
    stream: row.stream ?? false,
    session_id: row.sessionId ?? null,
    served_by: row.servedBy ?? null,
    attempts: row.attempts ?? 0,
    cache_hit: row.cacheHit ?? false,
    guardrail_id: row.guardrailId ?? null,
    guardrail_action: row.guardrailAction ?? null,
    ts: (row.ts as Date).toISOString(),
  };
}

/** How much longer Prisma's bounds on a usage batch's transaction are than its statement timeout. */
const PRISMA_MARGIN_MS = 2_000;

/**
 * Applies a batch of calls, exactly once per event id whatever the redelivery or order (see APPLY_BATCH). With
 * `statementTimeoutMs` the statement runs in a transaction that sets it (`SET LOCAL`, so the connection goes back
 * to the pool unchanged for the RPC reads that share it): the server cancels a statement stuck on a lock or a
 * slow disk past it (SQLSTATE 57014, an outage to the consumer), well before the consumer's session runs out.
 */
export async function applyGenerations(
  db: PrismaClient,
  rows: GenerationRow[],
  now: Date = new Date(),
  statementTimeoutMs?: number,
): Promise<AppliedBatch> {
  if (rows.length === 0) return { inserted: 0, newAccounts: [] };
  // The same event twice in one batch (a redelivery): the first one is the one recorded, as across batches.
  const unique = new Map<string, GenerationRow>();
  for (const row of rows) if (!unique.has(row.eventId)) unique.set(row.eventId, row);
  const apply = db.$queryRawUnsafe<{ inserted: number; new_accounts: string }[]>(
    APPLY_BATCH,
    JSON.stringify([...unique.values()].map(toRecord)),
    now.toISOString(),
    periodOf(now),
    PLANS.free.betaCredits.toFixed(6),
  );
  const [result] =
    statementTimeoutMs === undefined
      ? await apply
      : (
          await db.$transaction(
            [db.$executeRawUnsafe(`SET LOCAL statement_timeout = ${Math.trunc(statementTimeoutMs)}`), apply],
            // Prisma's own bounds on the transaction (2 s to start, 5 s to run, by default) would cut a batch
            // short before the server's timeout: they are set past it, so the server's is the one that acts.
            { maxWait: statementTimeoutMs + PRISMA_MARGIN_MS, timeout: statementTimeoutMs + PRISMA_MARGIN_MS },
          )
        )[1];
  return { inserted: result?.inserted ?? 0, newAccounts: JSON.parse(result?.new_accounts ?? '[]') as string[] };
}
