import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { usageRoutes } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import {
  creditsFromMicrocredits,
  microcredits,
  microcreditsFromCredits,
  microcreditsFromDecimalText,
  microcreditsFromWire,
  millicreditsFromMicrocredits,
  nanoUsd,
  nanoUsdForMillicredits,
  nanoUsdFromDecimalText,
  nanoUsdFromUsd,
  usdFromNanoUsd,
  wholeMicroUsd,
  type Microcredits,
  type NanoUsd,
} from '@sbc/money';
import {
  UsageLedgerService,
  type CreditPotSchema,
  type CreditsSchema,
  type UsageGenerationSchema,
  type UsageMetricsSchema,
  type UsageScope as UsageScopeMessage,
  type UsageWindow,
} from '@sbc/proto/sbc/usage/v1/ledger_pb';
import type { RpcImplementation } from '@sbc/rpc';
import type { BalancePublisher } from '../caps/balance-publisher';
import { isPlanId, OVERAGE_NANO_USD_PER_MICROCREDIT, PACKS, periodEnd, periodOf } from '../credits/plans';
import type { PotState } from '../credits/pots';
import type { PrismaClient } from '../generated/prisma/client';
import type { DaySpend, ProviderSpend, SpendReader } from '../spend/spend';
import {
  addGrant,
  addPack,
  changePlan,
  deriveCredits,
  findCreditAccount,
  loadCreditInputs,
} from '../store/credit-accounts';
import {
  addUp,
  type CallRow,
  type ExportFormat,
  type GroupTotals,
  type Grouping,
  type Metrics,
  type UsageReports,
  type UsageScope,
  type Window,
} from '../store/usage-reports';

export interface LedgerServiceDeps {
  db: PrismaClient;
  reports: UsageReports;
  spend: SpendReader;
  publisher: BalancePublisher;
  now?: () => Date;
}

/** Rows per page of a rendered export: one statement's worth, a few MB of text. */
const EXPORT_PAGE_MAX = 10_000;
/** Rows per message when they are sent as messages. */
const EXPORT_ROWS_PAGE_MAX = 5_000;
const WEEK_MS = 7 * 86_400_000;
const HOUR_MS = 3_600_000;

function scopeOf(message: UsageScopeMessage | undefined): UsageScope {
  if (!message?.userId) throw new ApiError('invalid_request', 'scope.user_id is required.', { param: 'scope' });
  return message.orgId ? { orgId: message.orgId } : { accountId: message.userId };
}

function windowOf(message: UsageWindow | undefined): Window {
  if (!message?.from || !message.to)
    throw new ApiError('invalid_request', 'window.from and window.to are required.', { param: 'window' });
  const from = timestampDate(message.from);
  const to = timestampDate(message.to);
  const tz = message.tz || 'UTC';
  if (!(from < to)) throw new ApiError('invalid_request', 'from must be before to.', { param: 'from' });
  if (!usageRoutes.isTimeZone(tz)) throw new ApiError('invalid_request', `Unknown time zone: ${tz}.`, { param: 'tz' });
  return { from, to, tz };
}

/**
 * Every amount goes out twice for one release: whole units, and the deprecated decimal computed from them for
 * edges that predate the whole units.
 */
const creditsOnWire = (amount: Microcredits) => ({ units: BigInt(amount), decimal: creditsFromMicrocredits(amount) });
const usdOnWire = (amount: NanoUsd) => ({ units: BigInt(amount), decimal: usdFromNanoUsd(amount) });

/** USD billed for credits (a credit is $0.001), to the whole micro-USD as it has always been reported. */
const billedNanoUsd = (amount: Microcredits): NanoUsd =>
  nanoUsdForMillicredits(millicreditsFromMicrocredits(amount, 'nearest'));

function metricsMessage(m: Metrics): MessageInitShape<typeof UsageMetricsSchema> {
  // The report's decimals hold whole units, so these conversions are exact.
  const credits = creditsOnWire(microcreditsFromCredits(m.credits));
  const usd = usdOnWire(billedNanoUsd(microcreditsFromCredits(m.credits)));
  const listUsd = usdOnWire(nanoUsdFromUsd(m.listUsd, 'nearest'));
  return {
    requests: BigInt(m.requests),
    tokensIn: BigInt(m.tokensIn),
    tokensOut: BigInt(m.tokensOut),
    cacheRead: BigInt(m.cacheRead),
    cacheWrite: BigInt(m.cacheWrite),
    credits: credits.decimal,
    usd: usd.decimal,
    listUsd: listUsd.decimal,
    microcredits: credits.units,
    nanoUsd: usd.units,
    listNanoUsd: listUsd.units,
  };
}

const groupMessage = (g: GroupTotals) => ({ id: g.id, label: g.label, metrics: metricsMessage(g.metrics) });

function callMessage(row: CallRow): MessageInitShape<typeof UsageGenerationSchema> {
  const totalCost = usdOnWire(nanoUsdFromDecimalText(row.total_cost_usd));
  const cacheDiscount = usdOnWire(nanoUsdFromDecimalText(row.cache_discount_usd));
  const creditsCharged = creditsOnWire(microcreditsFromDecimalText(row.credits_charged));
  return {
    eventId: row.event_id,
    requestId: row.request_id,
    ts: timestampFromDate(row.ts),
    model: row.model,
    keyId: row.key_id ?? undefined,
    keyLabel: row.key_label ?? undefined,
    sessionId: row.session_id ?? undefined,
    orgId: row.org_id ?? undefined,
    upstream: row.upstream ?? '',
    provider: row.provider ?? '',
    servedBy: row.served_by ?? '',
    attempts: row.attempts,
    cacheHit: row.cache_hit,
    guardrailId: row.guardrail_id ?? '',
    guardrailAction: row.guardrail_action ?? '',
    tokensPrompt: BigInt(row.tokens_prompt),
    tokensCompletion: BigInt(row.tokens_completion),
    cacheRead: BigInt(row.cache_read),
    cacheWrite: BigInt(row.cache_write),
    reasoningTokens: BigInt(row.reasoning_tokens),
    totalCostUsd: totalCost.decimal,
    totalCostNanoUsd: totalCost.units,
    cacheDiscountUsd: cacheDiscount.decimal,
    cacheDiscountNanoUsd: cacheDiscount.units,
    creditsCharged: creditsCharged.decimal,
    creditsChargedMicrocredits: creditsCharged.units,
    isByok: row.is_byok,
    status: row.status,
    latencyMs: row.latency_ms ?? undefined,
    ttftMs: row.ttft_ms ?? undefined,
    stream: row.stream,
    dialectIn: row.dialect_in ?? '',
    route: row.route ?? '',
  };
}

function potMessage(pot: string, state: PotState): MessageInitShape<typeof CreditPotSchema> {
  const [granted, used, remaining] = [state.granted, state.used, state.remaining].map((credits) =>
    creditsOnWire(microcreditsFromCredits(credits)),
  ) as [ReturnType<typeof creditsOnWire>, ReturnType<typeof creditsOnWire>, ReturnType<typeof creditsOnWire>];
  return {
    pot,
    granted: granted.decimal,
    used: used.decimal,
    remaining: remaining.decimal,
    grantedMicrocredits: granted.units,
    usedMicrocredits: used.units,
    remainingMicrocredits: remaining.units,
  };
}

function providerSpendMessage(p: ProviderSpend) {
  const [total, usage, purchase, measured, estimated, plan] = [
    p.totalNanoUsd,
    p.usageNanoUsd,
    p.purchaseNanoUsd,
    p.measuredNanoUsd,
    p.estimatedNanoUsd,
    p.planNanoUsd,
  ].map(usdOnWire) as Array<ReturnType<typeof usdOnWire>>;
  const residual = p.residualNanoUsd === null ? undefined : usdOnWire(p.residualNanoUsd);
  return {
    provider: p.provider,
    label: p.label,
    status: p.status,
    totalUsd: total!.decimal,
    totalNanoUsd: total!.units,
    usageUsd: usage!.decimal,
    usageNanoUsd: usage!.units,
    purchaseUsd: purchase!.decimal,
    purchaseNanoUsd: purchase!.units,
    measuredUsd: measured!.decimal,
    measuredNanoUsd: measured!.units,
    estimatedUsd: estimated!.decimal,
    estimatedNanoUsd: estimated!.units,
    planUsd: plan!.decimal,
    planNanoUsd: plan!.units,
    residualUsd: residual?.decimal,
    residualNanoUsd: residual?.units,
    services: p.services.map((s) => ({
      service: s.service,
      totalUsd: usdFromNanoUsd(s.totalNanoUsd),
      totalNanoUsd: BigInt(s.totalNanoUsd),
    })),
    sources: p.sources.map((s) => ({
      source: s.source,
      status: s.status,
      freshAt: s.freshAt ? timestampFromDate(s.freshAt) : undefined,
    })),
  };
}

function daySpendMessage(day: DaySpend) {
  return {
    measured: usdFromNanoUsd(day.measuredNanoUsd),
    estimated: usdFromNanoUsd(day.estimatedNanoUsd),
    plan: usdFromNanoUsd(day.planNanoUsd),
    measuredNanoUsd: BigInt(day.measuredNanoUsd),
    estimatedNanoUsd: BigInt(day.estimatedNanoUsd),
    planNanoUsd: BigInt(day.planNanoUsd),
  };
}

/** An amount a caller sent: the whole units, else the deprecated decimal; refused when it is no amount. */
function requestedMicrocredits(
  refusal: { param: string; message: string },
  units: bigint | undefined,
  deprecatedCredits: number,
): Microcredits {
  try {
    return microcreditsFromWire(units, deprecatedCredits);
  } catch (error) {
    if (error instanceof RangeError) throw new ApiError('invalid_request', refusal.message, { param: refusal.param });
    throw error;
  }
}

const OVERAGE_LIMIT_REFUSAL = { param: 'overage_limit_credits', message: 'overage_limit_credits must be 0 or more.' };
const GRANT_REFUSAL = { param: 'credits', message: 'credits must be a non-zero number.' };

function requireUser(userId: string): string {
  if (!userId) throw new ApiError('invalid_request', 'user_id is required.', { param: 'user_id' });
  return userId;
}

const isExportFormat = (format: string): format is ExportFormat => format === 'csv' || format === 'jsonl';

const optionalDate = (value: Timestamp | undefined) => (value ? timestampDate(value) : undefined);

/** The usage ledger's gRPC API (proto/sbc/usage/v1/ledger.proto). */
export function createLedgerService(deps: LedgerServiceDeps): RpcImplementation<typeof UsageLedgerService> {
  const now = deps.now ?? (() => new Date());

  async function creditsOf(userId: string): Promise<MessageInitShape<typeof CreditsSchema>> {
    await deps.publisher.ensurePublished(userId);
    const at = now();
    const account = (await findCreditAccount(deps.db, userId))!;
    const period = periodOf(at);
    const derived = deriveCredits(await loadCreditInputs(deps.db, userId), account, period);
    const { current } = derived;
    const scope = { accountId: userId };
    const weekTo = new Date(Math.ceil(at.getTime() / HOUR_MS) * HOUR_MS);
    const { model: week } = await deps.reports.grouped(scope, new Date(weekTo.getTime() - WEEK_MS), weekTo, ['model']);
    const allTime = await deps.db.$queryRawUnsafe<{ credits: string | null }[]>(
      `SELECT sum(credits)::text AS credits FROM usage_daily WHERE account_id = $1`,
      userId,
    );
    const facts = await deps.reports.accountFacts(userId);
    const expiresAt = timestampFromDate(periodEnd(period));
    // The derived pots' decimals hold whole microcredits, so these conversions are exact.
    const units = microcreditsFromCredits;
    const balance = creditsOnWire(units(derived.balance));
    const totalUsage = creditsOnWire(microcreditsFromDecimalText(allTime[0]?.credits ?? '0'));
    const periodUsage = creditsOnWire(units(current.usage));
    const capacity = creditsOnWire(
      microcredits(units(current.plan.granted) + units(current.beta.granted) + units(current.permanent.granted)),
    );
    const paidWeek = usdOnWire(billedNanoUsd(units(week.totals.credits)));
    const listWeek = usdOnWire(nanoUsdFromUsd(week.totals.listUsd, 'nearest'));
    const overageLimit = creditsOnWire(units(current.overage.limit));
    const overageUsed = creditsOnWire(units(current.overage.used));
    const overageCost = usdOnWire(
      wholeMicroUsd(nanoUsd(units(current.overage.used) * OVERAGE_NANO_USD_PER_MICROCREDIT)),
    );
    return {
      plan: account.plan,
      pots: [
        { ...potMessage('plan', current.plan), expiresAt },
        { ...potMessage('beta', current.beta), expiresAt },
        potMessage('permanent', current.permanent),
      ],
      balanceCredits: balance.decimal,
      balanceMicrocredits: balance.units,
      totalUsageCredits: totalUsage.decimal,
      totalUsageMicrocredits: totalUsage.units,
      periodUsageCredits: periodUsage.decimal,
      periodUsageMicrocredits: periodUsage.units,
      capacityCredits: capacity.decimal,
      capacityMicrocredits: capacity.units,
      keysCount: facts.keysCount,
      paidUsdWeek: paidWeek.decimal,
      paidNanoUsdWeek: paidWeek.units,
      listUsdWeek: listWeek.decimal,
      listNanoUsdWeek: listWeek.units,
      renewsAt: expiresAt,
      overageLimitCredits: overageLimit.decimal,
      overageLimitMicrocredits: overageLimit.units,
      overageUsedCredits: overageUsed.decimal,
      overageUsedMicrocredits: overageUsed.units,
      overageUsd: overageCost.decimal,
      overageNanoUsd: overageCost.units,
    };
  }

  return {
    async getUsageSummary(request) {
      const window = windowOf(request.window);
      const scope = scopeOf(request.scope);
      const { model: models, key: keys } = await deps.reports.grouped(scope, window.from, window.to, ['model', 'key']);
      return {
        totals: metricsMessage(models.totals),
        models: models.groups.map(groupMessage),
        keys: keys.groups.map(groupMessage),
      };
    },

    async listUsageRequests(request) {
      const page = await deps.reports.listCalls(
        scopeOf(request.scope),
        { limit: request.limit, after_id: request.afterId, before_id: request.beforeId },
        { from: optionalDate(request.from), to: optionalDate(request.to), keyId: request.keyId, model: request.model },
      );
      return { data: page.data.map((row) => callMessage(row)), hasMore: page.has_more };
    },

    async getUsageDaily(request) {
      const { buckets } = await deps.reports.buckets(scopeOf(request.scope), windowOf(request.window), 'day');
      return {
        days: buckets.map((b) => ({ day: b.key, metrics: metricsMessage(b.metrics) })),
        totals: metricsMessage(addUp(buckets.map((b) => b.metrics))),
      };
    },

    async getUsageBreakdown(request) {
      if (request.bucket !== 'day' && request.bucket !== 'hour')
        throw new ApiError('invalid_request', 'bucket must be day or hour.', { param: 'bucket' });
      if (!['key', 'model', 'provider', 'upstream'].includes(request.group))
        throw new ApiError('invalid_request', 'group must be key, model, provider or upstream.', { param: 'group' });
      const result = await deps.reports.buckets(
        scopeOf(request.scope),
        windowOf(request.window),
        request.bucket,
        request.group as Grouping,
      );
      return {
        from: timestampFromDate(result.from),
        to: timestampFromDate(result.to),
        totals: metricsMessage(addUp(result.buckets.map((b) => b.metrics))),
        groups: result.groups.map(groupMessage),
        buckets: result.buckets.map((b) => ({
          key: b.key,
          start: timestampFromDate(b.start),
          metrics: metricsMessage(b.metrics),
          by: Object.fromEntries([...b.by].map(([id, m]) => [id, metricsMessage(m)])),
        })),
      };
    },

    async *exportUsage(request, ctx) {
      const window = windowOf(request.window);
      const scope = scopeOf(request.scope);
      if (request.format) {
        if (!isExportFormat(request.format))
          throw new ApiError('invalid_request', 'format must be csv or jsonl.', { param: 'format' });
        const pageRows = Math.min(EXPORT_PAGE_MAX, Math.max(1, request.pageSize || EXPORT_PAGE_MAX));
        const file = deps.reports.exportFile(scope, window.from, window.to, request.format, {
          omitSessionIds: request.omitSessionIds,
          pageRows,
          signal: ctx.signal,
        });
        for await (const chunk of file) yield { chunk };
        return;
      }
      const pageSize = Math.min(EXPORT_ROWS_PAGE_MAX, Math.max(1, request.pageSize || 1_000));
      for await (const rows of deps.reports.exportCalls(scope, window.from, window.to, pageSize, ctx.signal)) {
        yield { rows: rows.map((row) => callMessage(row)) };
      }
    },

    async getUsageReport(request) {
      const window = windowOf(request.window);
      const scope = scopeOf(request.scope);
      const days = await deps.reports.buckets(scope, window, 'day');
      const { model: models, key: keys } = await deps.reports.grouped(scope, days.from, days.to, ['model', 'key']);
      return {
        totals: metricsMessage(models.totals),
        topModels: models.groups.slice(0, 5).map(groupMessage),
        topKeys: keys.groups.slice(0, 5).map(groupMessage),
        days: days.buckets.map((b) => ({ day: b.key, metrics: metricsMessage(b.metrics) })),
        failedRequests: BigInt(models.totals.failed),
      };
    },

    async getCredits(request) {
      return { credits: await creditsOf(requireUser(request.userId)) };
    },

    async getSpend(request) {
      const window = windowOf(request.window);
      const spend = await deps.spend.spend(scopeOf(request.scope), window);
      return {
        totalUsd: usdFromNanoUsd(spend.totalNanoUsd),
        totalNanoUsd: BigInt(spend.totalNanoUsd),
        tiedUsd: usdFromNanoUsd(spend.tiedNanoUsd),
        tiedNanoUsd: BigInt(spend.tiedNanoUsd),
        estimatedUsd: usdFromNanoUsd(spend.estimatedNanoUsd),
        estimatedNanoUsd: BigInt(spend.estimatedNanoUsd),
        unpricedModels: spend.unpricedModels,
        providers: spend.providers.map(providerSpendMessage),
        series: spend.series.map((point) => ({
          day: point.day,
          providers: Object.fromEntries([...point.providers].map(([id, day]) => [id, daySpendMessage(day)])),
        })),
      };
    },

    async setPlan(request) {
      requireUser(request.userId);
      if (!isPlanId(request.plan))
        throw new ApiError('invalid_request', 'plan must be free, plus, pro or max.', { param: 'plan' });
      const given = request.overageLimitMicrocredits !== undefined || request.overageLimitCredits !== undefined;
      const limit = given
        ? requestedMicrocredits(
            OVERAGE_LIMIT_REFUSAL,
            request.overageLimitMicrocredits,
            request.overageLimitCredits ?? 0,
          )
        : undefined;
      if (limit !== undefined && limit < 0)
        throw new ApiError('invalid_request', OVERAGE_LIMIT_REFUSAL.message, { param: OVERAGE_LIMIT_REFUSAL.param });
      await deps.publisher.changeBalance(request.userId, (tx, account) =>
        changePlan(
          tx,
          account,
          request.plan as 'free',
          limit === undefined ? undefined : creditsFromMicrocredits(limit),
          now(),
        ),
      );
      return { credits: await creditsOf(request.userId) };
    },

    async purchasePack(request) {
      requireUser(request.userId);
      if (PACKS[request.packUsd] === undefined)
        throw new ApiError('invalid_request', 'pack_usd must be 5, 20 or 100.', { param: 'pack_usd' });
      await deps.publisher.changeBalance(
        request.userId,
        async (tx) => void (await addPack(tx, request.userId, request.packUsd, now())),
      );
      return { credits: await creditsOf(request.userId) };
    },

    async grantCredits(request) {
      requireUser(request.userId);
      const units = requestedMicrocredits(GRANT_REFUSAL, request.microcredits, request.credits);
      if (units === 0) throw new ApiError('invalid_request', GRANT_REFUSAL.message, { param: GRANT_REFUSAL.param });
      if (!request.reason) throw new ApiError('invalid_request', 'reason is required.', { param: 'reason' });
      await deps.publisher.changeBalance(request.userId, (tx) =>
        addGrant(tx, request.userId, creditsFromMicrocredits(units), request.reason, now()),
      );
      return { credits: await creditsOf(request.userId) };
    },
  };
}
