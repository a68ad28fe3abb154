import { Router, type Response } from 'express';
import { timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { usageRoutes as specs } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import { creditsFromMicrocredits, microcreditsFromWire, nanoUsd, nanoUsdFromWire, usdFromNanoUsd } from '@sbc/money';
import type {
  Credits,
  UsageDay,
  UsageGeneration,
  UsageGroupTotals,
  UsageLedgerService,
  UsageMetrics,
} from '@sbc/proto/sbc/usage/v1/ledger_pb';
import type { RpcClientOf } from '@sbc/rpc';
import { listEnvelope } from '@sbc/pagination';
import type { Authorize } from '../auth/authorize';
import type { Principal } from '../auth/authenticator';
import { boundedInstant } from '../http/bounded-instant';
import { mount } from '../http/mount';

export interface UsageRoutesDeps {
  authorize: Authorize;
  ledger: RpcClientOf<typeof UsageLedgerService>;
}

const { instantOf, MAX_DAY_BUCKETS, MAX_HOUR_BUCKETS, resolveUsageWindow } = specs;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** An export streams for as long as it has rows; this bounds the whole stream, not a page. */
const EXPORT_DEADLINE_MS = 30 * 60_000;
/** Rows the ledger reads and renders per statement. */
const EXPORT_PAGE_ROWS = 10_000;

/** A team key reads its team's usage; any other credential its account's. */
const scopeOf = (principal: Principal) => ({ userId: principal.userId, orgId: principal.key?.orgId || undefined });
const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : null);
/**
 * Money from the ledger: its whole units, or from a ledger that predates them the deprecated decimal, which is
 * range-checked (an amount no float should hold fails the call rather than being rendered).
 */
const credits = (units: bigint | undefined, deprecated: number) =>
  creditsFromMicrocredits(microcreditsFromWire(units, deprecated));
const usd = (units: bigint | undefined, deprecated: number) => usdFromNanoUsd(nanoUsdFromWire(units, deprecated));

function windowMessage(window: { from: Date; to: Date; tz: string }) {
  boundedInstant(window.from, 'from');
  boundedInstant(window.to, 'to');
  if (!(window.from < window.to)) throw new ApiError('invalid_request', 'from must be before to.', { param: 'from' });
  return { from: timestampFromDate(window.from), to: timestampFromDate(window.to), tz: window.tz };
}

function limitBuckets(window: { from: Date; to: Date }, bucket: 'day' | 'hour'): void {
  const span = window.to.getTime() - window.from.getTime();
  // One more than the maximum in whole units: a window that starts and ends mid-day still fits its days.
  if (bucket === 'day' && span > MAX_DAY_BUCKETS * DAY_MS)
    throw new ApiError('invalid_request', `A window holds at most ${MAX_DAY_BUCKETS} days.`, { param: 'from' });
  if (bucket === 'hour' && span > MAX_HOUR_BUCKETS * HOUR_MS)
    throw new ApiError('invalid_request', `Hour buckets cover at most ${MAX_HOUR_BUCKETS} hours.`, { param: 'from' });
}

/** The spec's UsageMetrics. */
function renderMetrics(m: UsageMetrics | undefined) {
  return {
    requests: Number(m?.requests ?? 0n),
    tokens_in: Number(m?.tokensIn ?? 0n),
    tokens_out: Number(m?.tokensOut ?? 0n),
    cache_read: Number(m?.cacheRead ?? 0n),
    cache_write: Number(m?.cacheWrite ?? 0n),
    tokens: credits(m?.microcredits, m?.credits ?? 0),
    usd: usd(m?.nanoUsd, m?.usd ?? 0),
    list_usd: usd(m?.listNanoUsd, m?.listUsd ?? 0),
  };
}

const renderGroup = (g: UsageGroupTotals) => ({ id: g.id, label: g.label, ...renderMetrics(g.metrics) });

/** The spec's UsageDay. */
function renderDay(day: UsageDay) {
  const m = renderMetrics(day.metrics);
  return {
    day: day.day,
    tokens: m.tokens_in + m.tokens_out,
    tokens_in: m.tokens_in,
    tokens_out: m.tokens_out,
    cache_read: m.cache_read,
    cache_write: m.cache_write,
    turns: m.requests,
    cost_usd: m.list_usd,
    charged_usd: m.usd,
    credits: m.tokens,
  };
}

/** The spec's UsageGeneration; an incognito caller is never shown session ids. */
function renderGeneration(g: UsageGeneration, incognito: boolean) {
  return {
    // The event id: unique per call, so it is the page cursor; request ids are the caller's and may repeat.
    id: g.eventId || g.requestId,
    object: 'usage_generation' as const,
    request_id: g.requestId,
    ts: iso(g.ts),
    model: g.model,
    ...(g.keyId !== undefined ? { key_id: g.keyId } : {}),
    ...(g.keyLabel !== undefined ? { key_label: g.keyLabel } : {}),
    ...(g.sessionId !== undefined && !incognito ? { session_id: g.sessionId } : {}),
    native_tokens_prompt: Number(g.tokensPrompt),
    native_tokens_completion: Number(g.tokensCompletion),
    cache_read: Number(g.cacheRead),
    cache_write: Number(g.cacheWrite),
    reasoning_tokens: Number(g.reasoningTokens),
    total_cost_usd: usd(g.totalCostNanoUsd, g.totalCostUsd),
    cache_discount: usd(g.cacheDiscountNanoUsd, g.cacheDiscountUsd),
    credits_charged: credits(g.creditsChargedMicrocredits, g.creditsCharged),
    is_byok: g.isByok,
    status: g.status,
    ...(g.latencyMs !== undefined ? { latency_ms: g.latencyMs } : {}),
    ...(g.ttftMs !== undefined ? { ttft_ms: g.ttftMs } : {}),
    stream: g.stream,
    upstream: g.upstream,
    provider: g.provider,
    served_by: g.servedBy,
    attempts: g.attempts,
    ...(g.dialectIn ? { dialect: g.dialectIn } : {}),
    cache_hit: g.cacheHit,
    guardrail: g.guardrailId ? { id: g.guardrailId, action: g.guardrailAction } : null,
  };
}

/** The spec's Credits. */
function renderCredits(c: Credits) {
  const potView = (name: string) => {
    const p = c.pots.find((candidate) => candidate.pot === name);
    return {
      granted: credits(p?.grantedMicrocredits, p?.granted ?? 0),
      used: credits(p?.usedMicrocredits, p?.used ?? 0),
      remaining: credits(p?.remainingMicrocredits, p?.remaining ?? 0),
      ...(p?.expiresAt ? { expires_at: iso(p.expiresAt) } : {}),
    };
  };
  const pots = { plan: potView('plan'), beta: potView('beta'), permanent: potView('permanent') };
  const balance = credits(c.balanceMicrocredits, c.balanceCredits);
  const paidWeek = nanoUsdFromWire(c.paidNanoUsdWeek, c.paidUsdWeek);
  const listWeek = nanoUsdFromWire(c.listNanoUsdWeek, c.listUsdWeek);
  return {
    object: 'credits',
    credits: {
      beta: pots.beta.remaining,
      plan: pots.plan.remaining,
      permanent: pots.permanent.remaining,
      total: balance,
      pots,
    },
    balance_credits: balance,
    balance_tokens: balance,
    total_usage_tokens: credits(c.totalUsageMicrocredits, c.totalUsageCredits),
    period_usage_tokens: credits(c.periodUsageMicrocredits, c.periodUsageCredits),
    capacity_tokens: credits(c.capacityMicrocredits, c.capacityCredits),
    keys_count: c.keysCount,
    paid_usd_week: usdFromNanoUsd(paidWeek),
    list_usd_week: usdFromNanoUsd(listWeek),
    saved_usd_week: usdFromNanoUsd(nanoUsd(Math.max(0, listWeek - paidWeek))),
    plan: c.plan,
    ...(c.renewsAt ? { renews_at: iso(c.renewsAt) } : {}),
    overage: {
      limit_credits: credits(c.overageLimitMicrocredits, c.overageLimitCredits),
      used_credits: credits(c.overageUsedMicrocredits, c.overageUsedCredits),
      usd: usd(c.overageNanoUsd, c.overageUsd),
    },
  };
}

const compact = (value: number) =>
  new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 }).format(value);
const dollars = (value: number) => `$${value.toFixed(value >= 1 ? 2 : 4)}`;

/** The report in a few sentences, for people and for pasting into a chat. */
function summarize(report: {
  from: string;
  to: string;
  tz: string;
  totals: ReturnType<typeof renderMetrics>;
  failed: number;
  topModels: UsageGroupTotals[];
  topKeys: UsageGroupTotals[];
  days: ReturnType<typeof renderDay>[];
}): string {
  const { totals } = report;
  const lines = [
    `${report.from} to ${report.to} (${report.tz}): ${totals.requests.toLocaleString('en-US')} ` +
      `calls${report.failed > 0 ? ` (${report.failed.toLocaleString('en-US')} refused or failed)` : ''}, ` +
      `${compact(totals.tokens_in)} tokens in and ${compact(totals.tokens_out)} ` +
      `out; ${totals.tokens.toLocaleString('en-US', { maximumFractionDigits: 3 })} credits billed ` +
      `(${dollars(totals.usd)}), ${dollars(totals.list_usd)} at list price.`,
  ];
  const share = (g: UsageGroupTotals) =>
    totals.requests > 0 ? Math.round((100 * Number(g.metrics?.requests ?? 0n)) / totals.requests) : 0;
  if (report.topModels.length > 0)
    lines.push(`Top models: ${report.topModels.map((g) => `${g.label} (${share(g)}% of calls)`).join(', ')}.`);
  if (report.topKeys.length > 0)
    lines.push(`Top keys: ${report.topKeys.map((g) => `${g.label} (${share(g)}% of calls)`).join(', ')}.`);
  const busiest = report.days.reduce<ReturnType<typeof renderDay> | undefined>(
    (best, day) => (day.turns > (best?.turns ?? 0) ? day : best),
    undefined,
  );
  if (busiest) lines.push(`Busiest day: ${busiest.day} with ${busiest.turns.toLocaleString('en-US')} calls.`);
  return lines.join(' ');
}

/** Resolves when the response can take more, or is gone. */
function drainOrClose(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** Usage reports, credits and spend, answered by the usage ledger. */
export function usageRoutes(deps: UsageRoutesDeps): Router {
  const router = Router();

  mount(router, specs.getUsage, deps.authorize, async ({ query, principal, requestId }) => {
    const window = resolveUsageWindow(query, new Date(), { days: 30 });
    const reply = await deps.ledger.getUsageSummary(
      { scope: scopeOf(principal), window: windowMessage(window) },
      { requestId },
    );
    return {
      status: 200,
      body: {
        object: 'usage',
        from: window.from.toISOString(),
        to: window.to.toISOString(),
        tz: window.tz,
        totals: renderMetrics(reply.totals),
        models: reply.models.map(renderGroup),
        keys: reply.keys.map(renderGroup),
      },
    };
  });

  mount(router, specs.listUsageRequests, deps.authorize, async ({ query, principal, requestId }) => {
    const reply = await deps.ledger.listUsageRequests(
      {
        scope: scopeOf(principal),
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        from: query.from ? timestampFromDate(boundedInstant(instantOf(query.from), 'from')) : undefined,
        to: query.to ? timestampFromDate(boundedInstant(instantOf(query.to), 'to')) : undefined,
        keyId: query.key_id,
        model: query.model,
      },
      { requestId },
    );
    const data = reply.data.map((g) => renderGeneration(g, principal.key?.incognito === true));
    return { status: 200, body: listEnvelope(data, reply.hasMore, (row) => row.id) };
  });

  mount(router, specs.getUsageDaily, deps.authorize, async ({ query, principal, requestId }) => {
    const window = resolveUsageWindow(query, new Date(), { days: 30 });
    limitBuckets(window, 'day');
    const reply = await deps.ledger.getUsageDaily(
      { scope: scopeOf(principal), window: windowMessage(window) },
      { requestId },
    );
    const days = reply.days.map(renderDay);
    const totals = renderMetrics(reply.totals);
    return {
      status: 200,
      body: {
        object: 'usage_daily',
        from: days[0]?.day ?? '',
        to: days.at(-1)?.day ?? '',
        tz: window.tz,
        days,
        totals: {
          tokens: totals.tokens_in + totals.tokens_out,
          tokens_in: totals.tokens_in,
          tokens_out: totals.tokens_out,
          turns: totals.requests,
          cost_usd: totals.list_usd,
          charged_usd: totals.usd,
          credits: totals.tokens,
        },
      },
    };
  });

  mount(router, specs.getUsageBreakdown, deps.authorize, async ({ query, principal, requestId }) => {
    const window = resolveUsageWindow(query, new Date(), query.bucket === 'hour' ? { hours: 24 } : { days: 30 });
    limitBuckets(window, query.bucket);
    const reply = await deps.ledger.getUsageBreakdown(
      { scope: scopeOf(principal), window: windowMessage(window), bucket: query.bucket, group: query.group },
      { requestId },
    );
    const buckets = reply.buckets.map((b) => ({
      key: b.key,
      start: iso(b.start),
      ...renderMetrics(b.metrics),
      by: Object.fromEntries(Object.entries(b.by).map(([id, m]) => [id, renderMetrics(m)])),
    }));
    return {
      status: 200,
      body: {
        object: 'usage_breakdown',
        from: iso(reply.from) ?? window.from.toISOString(),
        to: iso(reply.to) ?? window.to.toISOString(),
        tz: window.tz,
        bucket: query.bucket,
        group: query.group,
        totals: renderMetrics(reply.totals),
        groups: reply.groups.map(renderGroup),
        buckets,
      },
    };
  });

  mount(router, specs.exportUsage, deps.authorize, async ({ query, principal, requestId, req, res }) => {
    const window = resolveUsageWindow({ from: query.from ?? '1970-01-01', to: query.to }, new Date(), { days: 1 });
    const message = windowMessage(window);
    const abort = new AbortController();
    req.on('close', () => abort.abort()); // the caller left: stop reading from the ledger
    const csv = query.format === 'csv';
    // The ledger renders the file (far cheaper than a message per row); the edge relays its bytes.
    const chunks = deps.ledger.exportUsage(
      {
        scope: scopeOf(principal),
        window: message,
        pageSize: EXPORT_PAGE_ROWS,
        format: query.format,
        omitSessionIds: principal.key?.incognito === true,
      },
      { requestId, signal: abort.signal, deadlineMs: EXPORT_DEADLINE_MS },
    );
    const iterator = chunks[Symbol.asyncIterator]();
    // The first chunk is read before the status is sent, so a refusal still answers with its own status.
    let next = await iterator.next();
    res.status(200);
    res.setHeader('content-type', csv ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
    res.setHeader('content-disposition', `attachment; filename="usage.${csv ? 'csv' : 'jsonl'}"`);
    try {
      while (!next.done) {
        // Written chunk by chunk, waiting for the socket to drain, so memory holds about one chunk per export.
        if (!res.write(next.value.chunk)) await drainOrClose(res);
        if (abort.signal.aborted) return;
        next = await iterator.next();
      }
      res.end();
    } catch (error) {
      // Headers are gone: the only honest signal left is a broken stream.
      res.destroy(error instanceof Error ? error : undefined);
    }
  });

  mount(router, specs.getCredits, deps.authorize, async ({ principal, requestId }) => {
    const reply = await deps.ledger.getCredits({ userId: principal.userId }, { requestId });
    return { status: 200, body: renderCredits(reply.credits!) };
  });

  mount(router, specs.getSpend, deps.authorize, async ({ query, principal, requestId }) => {
    const window = resolveUsageWindow({ ...query, tz: 'UTC' }, new Date(), { days: 30 });
    limitBuckets(window, 'day');
    const reply = await deps.ledger.getSpend(
      { scope: scopeOf(principal), window: windowMessage(window) },
      { requestId },
    );
    return {
      status: 200,
      body: {
        object: 'spend',
        from: reply.series[0]?.day ?? window.from.toISOString().slice(0, 10),
        to: reply.series.at(-1)?.day ?? window.to.toISOString().slice(0, 10),
        currency: 'USD',
        total_usd: usd(reply.totalNanoUsd, reply.totalUsd),
        tied_usd: usd(reply.tiedNanoUsd, reply.tiedUsd),
        estimated_usd: usd(reply.estimatedNanoUsd, reply.estimatedUsd),
        unpriced_models: reply.unpricedModels,
        providers: reply.providers.map((p) => ({
          provider: p.provider,
          label: p.label,
          total_usd: usd(p.totalNanoUsd, p.totalUsd),
          usage_usd: usd(p.usageNanoUsd, p.usageUsd),
          purchase_usd: usd(p.purchaseNanoUsd, p.purchaseUsd),
          measured_usd: usd(p.measuredNanoUsd, p.measuredUsd),
          estimated_usd: usd(p.estimatedNanoUsd, p.estimatedUsd),
          plan_usd: usd(p.planNanoUsd, p.planUsd),
          residual_usd:
            p.residualNanoUsd === undefined && p.residualUsd === undefined
              ? null
              : usd(p.residualNanoUsd, p.residualUsd ?? 0),
          status: p.status,
          services: p.services.map((s) => ({ service: s.service, total_usd: usd(s.totalNanoUsd, s.totalUsd) })),
          sources: p.sources.map((s) => ({ source: s.source, fresh_at: iso(s.freshAt), status: s.status })),
        })),
        series: reply.series.map((point) => ({
          day: point.day,
          providers: Object.fromEntries(
            Object.entries(point.providers).map(([id, v]) => [
              id,
              {
                measured: usd(v.measuredNanoUsd, v.measured),
                estimated: usd(v.estimatedNanoUsd, v.estimated),
                plan: usd(v.planNanoUsd, v.plan),
              },
            ]),
          ),
        })),
      },
    };
  });

  mount(router, specs.getUsageReport, deps.authorize, async ({ query, principal, requestId }) => {
    const window = resolveUsageWindow(query, new Date(), { days: 30 });
    limitBuckets(window, 'day');
    const reply = await deps.ledger.getUsageReport(
      { scope: scopeOf(principal), window: windowMessage(window) },
      { requestId },
    );
    const days = reply.days.map(renderDay);
    const totals = renderMetrics(reply.totals);
    const from = days[0]?.day ?? '';
    const to = days.at(-1)?.day ?? '';
    const failed = Number(reply.failedRequests);
    return {
      status: 200,
      body: {
        object: 'usage_report',
        from,
        to,
        tz: window.tz,
        totals,
        failed_requests: failed,
        top_models: reply.topModels.map(renderGroup),
        top_keys: reply.topKeys.map(renderGroup),
        days,
        summary: summarize({
          from,
          to,
          tz: window.tz,
          totals,
          failed,
          topModels: reply.topModels,
          topKeys: reply.topKeys,
          days,
        }),
      },
    };
  });

  return router;
}
