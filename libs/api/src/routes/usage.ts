import { z } from 'zod';
import { localDate, wallClockMs } from '@sbc/budget-periods';
import { DateTime, listOf, pageQuery } from '../common';
import { defineRoute, type RouteSpec } from '../route';

// Usage, credits and spend (issue 5). Usage is an account's (every call it made), or, read with a team key,
// the team's (every call made with that team's keys). Credits are always the calling account's.
const TAG = 'Usage';

/** Most buckets a breakdown answers: a year of days, a month of hours. */
export const MAX_DAY_BUCKETS = 366;
export const MAX_HOUR_BUCKETS = 31 * 24;

/** True for an IANA time zone name the runtime knows. */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

const Instant = z
  .union([DateTime, z.iso.date()])
  .meta({ description: 'An RFC 3339 date-time, or a date (`YYYY-MM-DD`) meaning 00:00 of that day in `tz`.' });
const TimeZone = z
  .string()
  .min(1)
  .max(64)
  .refine(isTimeZone, 'Expected an IANA time zone, e.g. UTC or Europe/Berlin.')
  .default('UTC')
  .meta({ description: 'IANA time zone whose local days make the day buckets; default UTC.' });

const windowShape = {
  from: Instant.optional().meta({ description: 'Start of the window (inclusive).' }),
  to: Instant.optional().meta({ description: 'End of the window (exclusive); default now.' }),
  tz: TimeZone,
};
const WindowQuery = z.object(windowShape);

const count = z.number().int();
const amount = z.number();

export const UsageMetrics = z
  .object({
    requests: count,
    tokens_in: amount,
    tokens_out: amount,
    cache_read: amount,
    cache_write: amount,
    tokens: amount.meta({ description: 'Credits billed.' }),
    usd: amount.meta({ description: 'USD billed (credits at $0.001).' }),
    list_usd: amount.meta({ description: 'USD at vendor list price, whoever paid (BYO calls included).' }),
  })
  .loose()
  .meta({ id: 'UsageMetrics' });

const GroupMetrics = z
  .object({
    ...UsageMetrics.shape,
    id: z.string().meta({ description: '`(none)` for calls made without a key (a session).' }),
    label: z.string(),
  })
  .loose()
  .meta({ id: 'UsageGroupMetrics' });

export const UsageGeneration = z
  .object({
    id: z
      .string()
      .meta({ description: 'The call’s usage event id, unique per call: the cursor for `after_id` / `before_id`.' }),
    object: z.literal('usage_generation'),
    request_id: z.string().meta({
      description: 'The x-request-id the call answered with (the caller’s own when it sent one); not unique.',
    }),
    ts: DateTime,
    model: z.string(),
    key_id: z.string().optional(),
    key_label: z.string().optional(),
    session_id: z.string().optional().meta({ description: 'Never recorded for incognito keys, nor shown to one.' }),
    native_tokens_prompt: amount,
    native_tokens_completion: amount,
    cache_read: amount,
    cache_write: amount,
    reasoning_tokens: amount,
    total_cost_usd: amount.meta({ description: 'USD at vendor list price.' }),
    cache_discount: amount.meta({ description: 'USD the cache reads saved against uncached input at list price.' }),
    credits_charged: amount,
    is_byok: z.boolean(),
    status: count,
    latency_ms: amount.optional(),
    ttft_ms: amount.optional(),
    stream: z.boolean(),
    upstream: z.string(),
    provider: z.string(),
    served_by: z.string().meta({
      description:
        'The routing target that answered: `house`, `byo:<slug>` or `provider:<vendor>/<deployment>`; the last one ' +
        'tried when none answered. For calls recorded before routing policy, `upstream`.',
    }),
    attempts: count.meta({
      description:
        'Upstream attempts the call made across its targets and fallback models; 0 when none was tried (a call ' +
        'refused before it was sent). For calls recorded before routing policy, 1 when the call reached its upstream.',
    }),
    dialect: z
      .string()
      .optional()
      .meta({ description: 'The route called: `chat`, `responses`, `messages` or `embeddings`.' }),
    cache_hit: z.boolean().meta({
      description: 'The reply was replayed from the response cache: no upstream was called and nothing was charged.',
    }),
    guardrail: z
      .object({ id: z.string(), action: z.enum(['block', 'redact', 'log']) })
      .nullable()
      .optional()
      .meta({ description: 'The guardrail that acted on the call (its strongest action), or null.' }),
  })
  .loose()
  .meta({ id: 'UsageGeneration' });

const UsageDay = z
  .object({
    day: z.string().meta({ description: '`YYYY-MM-DD` in `tz`.' }),
    tokens: amount.meta({ description: 'tokens_in + tokens_out.' }),
    tokens_in: amount,
    tokens_out: amount,
    cache_read: amount,
    cache_write: amount,
    turns: count.meta({ description: 'Calls.' }),
    cost_usd: amount.meta({ description: 'USD at list price.' }),
    charged_usd: amount.meta({ description: 'USD billed in credits.' }),
    credits: amount.optional(),
  })
  .loose()
  .meta({ id: 'UsageDay' });

export const UsageDaily = z
  .object({
    from: z.string().meta({ description: 'The first day.' }),
    to: z.string().meta({ description: 'The last day (inclusive).' }),
    tz: z.string().optional(),
    days: z.array(UsageDay),
    totals: z
      .object({
        tokens: amount,
        tokens_in: amount,
        tokens_out: amount,
        turns: count,
        cost_usd: amount,
        charged_usd: amount,
      })
      .loose()
      .meta({ id: 'UsageDailyTotals' }),
  })
  .loose()
  .meta({ id: 'UsageDaily' });

export const UsageBreakdown = z
  .object({
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    bucket: z.enum(['day', 'hour']),
    group: z.string(),
    totals: UsageMetrics,
    groups: z.array(GroupMetrics),
    buckets: z.array(
      z
        .object({
          ...UsageMetrics.shape,
          key: z.string().meta({ description: '`YYYY-MM-DD`, or `YYYY-MM-DDTHH:MM` for hours, in `tz`.' }),
          start: DateTime,
          by: z
            .record(z.string(), UsageMetrics)
            .meta({ description: 'Group id → its metrics in this bucket (groups with no calls are left out).' }),
        })
        .loose()
        .meta({ id: 'UsageBucket' }),
    ),
  })
  .loose()
  .meta({ id: 'UsageBreakdown' });

const Pot = z.object({ granted: amount, used: amount, remaining: amount, expires_at: DateTime.optional() }).loose();

export const Credits = z
  .object({
    credits: z
      .object({
        beta: amount.meta({ description: 'Beta credits left this month (Free plan; refilled on the 1st).' }),
        plan: amount.meta({ description: 'Plan credits left this month (reset on the 1st, no roll-over).' }),
        permanent: amount.meta({ description: 'Pack and granted credits left (never expire).' }),
        total: amount,
        pots: z.object({ plan: Pot, beta: Pot, permanent: Pot }).loose().optional(),
      })
      .loose(),
    balance_credits: amount,
    balance_tokens: amount.meta({ description: 'The same balance (legacy name).' }),
    total_usage_tokens: amount.meta({ description: 'Credits used, ever.' }),
    period_usage_tokens: amount.meta({ description: 'Credits used this month.' }),
    capacity_tokens: amount.meta({
      description: 'Credits available this month before any use: plan + beta + permanent at the start.',
    }),
    keys_count: count.meta({ description: 'Keys that have made calls.' }),
    paid_usd_week: amount,
    list_usd_week: amount,
    saved_usd_week: amount,
    plan: z.string().meta({ description: '`free`, `plus`, `pro` or `max`.' }),
    renews_at: DateTime.optional(),
    overage: z.object({ limit_credits: amount, used_credits: amount, usd: amount }).loose().optional(),
  })
  .loose()
  .meta({ id: 'Credits' });

const usdAmount = amount;
export const Spend = z
  .object({
    from: z.string(),
    to: z.string(),
    currency: z.literal('USD'),
    total_usd: usdAmount,
    tied_usd: usdAmount.meta({
      description: "The part of total_usd backed by a bill: this service's ledger, or a provider's cost report.",
    }),
    estimated_usd: usdAmount.meta({
      description: "The part of total_usd that is usage × list price, not yet in a provider's cost report.",
    }),
    unpriced_models: z.array(z.string()),
    providers: z.array(
      z
        .object({
          provider: z.string(),
          label: z.string(),
          total_usd: usdAmount,
          usage_usd: usdAmount,
          purchase_usd: usdAmount,
          measured_usd: usdAmount,
          estimated_usd: usdAmount,
          plan_usd: usdAmount,
          residual_usd: usdAmount.nullable(),
          status: z.enum(['caught_up', 'residual', 'estimate_only']),
          services: z.array(z.object({ service: z.string(), total_usd: usdAmount }).loose()),
          sources: z.array(
            z
              .object({ source: z.string(), fresh_at: DateTime.nullable(), status: z.enum(['ok', 'stale', 'missing']) })
              .loose(),
          ),
        })
        .loose()
        .meta({ id: 'ProviderSpend' }),
    ),
    series: z.array(
      z
        .object({
          day: z.string(),
          providers: z.record(
            z.string(),
            z.object({ measured: usdAmount, estimated: usdAmount, plan: usdAmount }).loose(),
          ),
        })
        .loose(),
    ),
  })
  .loose()
  .meta({ id: 'Spend' });

export const UsageReport = z
  .object({
    object: z.literal('usage_report'),
    from: z.string(),
    to: z.string(),
    tz: z.string(),
    totals: UsageMetrics,
    failed_requests: count,
    top_models: z.array(GroupMetrics),
    top_keys: z.array(GroupMetrics),
    days: z.array(UsageDay),
    summary: z.string(),
  })
  .loose()
  .meta({ id: 'UsageReport' });

const WINDOW_DEFAULTS = 'Without `from`, the last 30 days (today included).';

export const getUsage = defineRoute({
  operationId: 'getUsage',
  method: 'get',
  path: '/v1/usage',
  summary: 'Usage over a window',
  description: `Totals of the window, and per model and per key. ${WINDOW_DEFAULTS}`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['usage:read'] },
  query: WindowQuery,
  responses: {
    200: {
      description: 'Usage.',
      schema: z
        .object({
          object: z.literal('usage'),
          from: DateTime,
          to: DateTime,
          tz: z.string(),
          totals: UsageMetrics,
          models: z.array(GroupMetrics),
          keys: z.array(GroupMetrics),
        })
        .loose()
        .meta({ id: 'Usage' }),
    },
  },
});

export const listUsageRequests = defineRoute({
  operationId: 'listUsageRequests',
  method: 'get',
  path: '/v1/usage/requests',
  summary: 'Usage per request',
  description: 'One row per model call, newest first; refused and hung-up calls included (with their status).',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['usage:read'] },
  query: pageQuery({
    from: Instant.optional(),
    to: Instant.optional(),
    key_id: z.string().min(1).max(64).optional(),
    model: z.string().min(1).max(256).optional(),
  }),
  responses: { 200: { description: 'A page of calls.', schema: listOf(UsageGeneration, 'UsageGenerationList') } },
});

export const getUsageDaily = defineRoute({
  operationId: 'getUsageDaily',
  method: 'get',
  path: '/v1/usage/daily',
  summary: 'Usage per day',
  description:
    `One entry per day of the window, days with no calls included; days are UTC unless \`tz\` names a ` +
    `zone. ${WINDOW_DEFAULTS} At most ${MAX_DAY_BUCKETS} days.`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['usage:read'] },
  query: WindowQuery,
  responses: { 200: { description: 'Daily usage.', schema: UsageDaily } },
});

export const getUsageBreakdown = defineRoute({
  operationId: 'getUsageBreakdown',
  method: 'get',
  path: '/v1/usage/breakdown',
  summary: 'Usage bucketed and grouped',
  description:
    `Day buckets (local days of \`tz\`, whole days) or hour buckets (UTC hours, labelled in \`tz\`), each ` +
    `split by key, model, provider or upstream. Without \`from\`: the last 30 days, or for hours the last 24 hours. ` +
    `At most ${MAX_DAY_BUCKETS} day or ${MAX_HOUR_BUCKETS} hour buckets.`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['usage:read'] },
  query: z.object({
    ...windowShape,
    bucket: z.enum(['day', 'hour']).default('day'),
    group: z.enum(['key', 'model', 'provider', 'upstream']).default('model'),
  }),
  responses: { 200: { description: 'The breakdown.', schema: UsageBreakdown } },
});

export const exportUsage = defineRoute({
  operationId: 'exportUsage',
  rateCost: 20,
  method: 'get',
  path: '/v1/usage/export',
  summary: 'Export usage rows',
  description:
    'Every call of the window, oldest first, streamed as it is read: `jsonl` (default) is one UsageGeneration per ' +
    'line (`application/x-ndjson`); `csv` is `text/csv` with a header row. Without `from`: everything.',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['usage:read'] },
  query: z.object({ from: windowShape.from, to: windowShape.to, format: z.enum(['jsonl', 'csv']).default('jsonl') }),
  responses: { 200: { description: 'The rows.', contentType: 'application/x-ndjson', schema: z.string() } },
});

export const getCredits = defineRoute({
  operationId: 'getCredits',
  method: 'get',
  path: '/v1/credits',
  summary: 'Credit balance',
  description:
    "The calling account's credits: the beta pot (Free), plan credits (reset monthly, no roll-over) and permanent " +
    'credits (packs and grants, never expire), spent in that order, then overage where the account allows it ($1 per ' +
    '1,000 credits).',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['billing:read'] },
  responses: { 200: { description: 'Credits.', schema: Credits } },
});

export const getSpend = defineRoute({
  operationId: 'getSpend',
  method: 'get',
  path: '/v1/spend',
  summary: 'AI spend across apps',
  description:
    'Spend per provider over whole UTC days: this service (plan fees, packs), and each vendor dialed with your own ' +
    "keys: measured from the vendor's organization cost report where configured, estimated from usage × list price " +
    'for the days the report does not cover yet (`residual_usd`). ' +
    WINDOW_DEFAULTS,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['usage:read'] },
  query: z.object({ from: windowShape.from, to: windowShape.to }),
  responses: { 200: { description: 'Spend.', schema: Spend } },
});

export const getUsageReport = defineRoute({
  operationId: 'getUsageReport',
  method: 'get',
  path: '/v1/usage/report',
  summary: 'A usage report',
  description:
    `A readable summary of a period: totals, the top models and keys, a day series, and \`summary\`, the ` +
    `same in a few sentences. ${WINDOW_DEFAULTS}`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['usage:read'] },
  query: WindowQuery,
  responses: { 200: { description: 'The report.', schema: UsageReport } },
});

export const USAGE_ROUTES: readonly RouteSpec[] = [
  getUsage,
  listUsageRequests,
  getUsageDaily,
  getUsageBreakdown,
  exportUsage,
  getCredits,
  getSpend,
  getUsageReport,
];

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

// The local date of an instant, as team budgets read it: one reading of the zone's clock for both.
export { localDate };

/** The instant 00:00 of `date` (`YYYY-MM-DD`) in `tz` (the first instant of that day where midnight is skipped). */
export function startOfLocalDay(date: string, tz: string): Date {
  const midnightAsUtc = Date.parse(`${date}T00:00:00Z`);
  let at = midnightAsUtc - (wallClockMs(midnightAsUtc, tz) - midnightAsUtc);
  // Once more with the offset at the first guess, which differs when a DST change falls in between.
  at = midnightAsUtc - (wallClockMs(at, tz) - at);
  return new Date(at);
}

/** A query instant: an RFC 3339 date-time as given, or a date as 00:00 of that day in `tz`. */
export function instantOf(value: string, tz = 'UTC'): Date {
  return /^\d{4}-\d{2}-\d{2}$/.test(value) ? startOfLocalDay(value, tz) : new Date(value);
}

/**
 * The window a usage route reads: `from` / `to` as given (a date is 00:00 local), `to` defaulting to now and
 * `from` to the start of the local day `defaultDays - 1` days before today (so today is the last of
 * `defaultDays` days), or `defaultHours` before `to`.
 */
export function resolveUsageWindow(
  query: { from?: string; to?: string; tz?: string },
  now: Date,
  defaults: { days: number } | { hours: number },
): { from: Date; to: Date; tz: string } {
  const tz = query.tz ?? 'UTC';
  const to = query.to ? instantOf(query.to, tz) : now;
  if (query.from) return { from: instantOf(query.from, tz), to, tz };
  if ('hours' in defaults)
    return { from: new Date(Math.floor((to.getTime() - defaults.hours * HOUR_MS) / HOUR_MS) * HOUR_MS), to, tz };
  const firstDay = new Date(
    Date.parse(`${localDate(new Date(to.getTime() - 1), tz)}T00:00:00Z`) - (defaults.days - 1) * DAY_MS,
  )
    .toISOString()
    .slice(0, 10);
  return { from: startOfLocalDay(firstDay, tz), to, tz };
}
