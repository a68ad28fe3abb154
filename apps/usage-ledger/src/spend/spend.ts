import { findCatalogModel } from '@sbc/catalog';
import type { Logger } from '@sbc/logging';
import {
  microcreditsFromCredits,
  nanoUsd,
  nanoUsdForMicrocredits,
  nanoUsdFromDecimalText,
  nanoUsdFromUsd,
  wholeMicroUsd,
  type NanoUsd,
} from '@sbc/money';
import type { PrismaClient } from '../generated/prisma/client';
import type { UsageReports, UsageScope } from '../store/usage-reports';
import { CostReportError, type CostReportReader, type DailyCost } from './cost-reports';

type SourceStatus = 'ok' | 'stale' | 'missing';
type SpendStatus = 'caught_up' | 'residual' | 'estimate_only';

/** Amounts in nano-USD, each to the whole micro-USD (the grain spend has always been reported at). */
export interface ProviderSpend {
  provider: string;
  label: string;
  totalNanoUsd: NanoUsd;
  usageNanoUsd: NanoUsd;
  purchaseNanoUsd: NanoUsd;
  measuredNanoUsd: NanoUsd;
  estimatedNanoUsd: NanoUsd;
  planNanoUsd: NanoUsd;
  residualNanoUsd: NanoUsd | null;
  status: SpendStatus;
  services: Array<{ service: string; totalNanoUsd: NanoUsd }>;
  sources: Array<{ source: string; freshAt: Date | null; status: SourceStatus }>;
}

export interface DaySpend {
  measuredNanoUsd: NanoUsd;
  estimatedNanoUsd: NanoUsd;
  planNanoUsd: NanoUsd;
}

export interface Spend {
  totalNanoUsd: NanoUsd;
  tiedNanoUsd: NanoUsd;
  estimatedNanoUsd: NanoUsd;
  unpricedModels: string[];
  providers: ProviderSpend[];
  series: Array<{ day: string; providers: Map<string, DaySpend> }>;
}

export interface SpendDeps {
  db: PrismaClient;
  reports: UsageReports;
  logger: Logger;
  /** Configured cost reports by provider (`openai`, `anthropic`). */
  costReports: Partial<Record<string, CostReportReader>>;
  refreshMs: number;
  now?: () => Date;
}

const LABELS: Record<string, string> = {
  house: 'House (service credits)',
  openai: 'OpenAI',
  anthropic: 'Anthropic',
  google: 'Google',
};
const SOURCE_NAMES: Record<string, string> = { openai: 'openai_costs_api', anthropic: 'anthropic_cost_report' };
const DAY_MS = 86_400_000;

const NO_USD = nanoUsd(0);
const plus = (a: NanoUsd, b: NanoUsd) => nanoUsd(a + b);
const minus = (a: NanoUsd, b: NanoUsd) => nanoUsd(a - b);
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

/** Who a call's money went to: the service for house and credit calls, the vendor for the caller's own (BYO) calls. */
function payeeOf(upstream: string, model: string): string {
  if (!upstream.startsWith('byo:')) return 'house';
  const vendor = findCatalogModel(model)?.vendor;
  return vendor && vendor !== 'house' ? vendor : upstream;
}

interface SourceRow {
  provider: string;
  fetched_at: Date | null;
  covered_from: string | null;
  covered_to: string | null;
  last_error: string | null;
}

/**
 * Spend across the places a caller's AI money goes, per provider, for [from, to) in UTC days:
 * - `house` (this service): plan fees and packs bought (from the credit journal) and overage; the ledger is
 *   that bill, so it is measured and always caught up. `estimated_usd` is the credits used at $0.001.
 * - each vendor the caller dials with its own keys (BYO): `estimated_usd` is those calls at list price;
 *   `measured_usd` is what the vendor's organization cost report says (OpenAI, Anthropic, with the admin keys
 *   configured). Days the report covers are measured; the days after it (today, or while it is unreachable)
 *   are estimated, and that estimate is `residual_usd`. `status` says which: `caught_up` (all measured),
 *   `residual` (partly estimated), `estimate_only` (no report).
 */
export function createSpend(deps: SpendDeps) {
  const now = deps.now ?? (() => new Date());

  /** Reads a provider's report again when the stored one is older than `refreshMs` or does not cover the window. */
  async function refresh(provider: string, read: CostReportReader, from: string, to: string): Promise<void> {
    const [row] = await deps.db.$queryRawUnsafe<SourceRow[]>(
      `SELECT provider, fetched_at, to_char(covered_from, 'YYYY-MM-DD') AS covered_from, to_char(covered_to, ` +
        `'YYYY-MM-DD') AS covered_to, last_error
       FROM provider_cost_sources WHERE provider = $1`,
      provider,
    );
    const at = now();
    const fresh = row?.fetched_at && at.getTime() - row.fetched_at.getTime() < deps.refreshMs && !row.last_error;
    const completeNeeded = to < dayOf(at) ? to : dayOf(at);
    if (fresh && row.covered_from !== null && row.covered_from <= from && (row.covered_to ?? '') >= completeNeeded)
      return;
    const readTo = to < dayOf(at) ? to : dayOf(new Date(at.getTime() + DAY_MS));
    let costs: DailyCost[];
    try {
      costs = await read({ from: new Date(`${from}T00:00:00Z`), to: new Date(`${readTo}T00:00:00Z`) });
    } catch (error) {
      const message = error instanceof CostReportError ? error.message : 'cost report failed';
      deps.logger.warn(
        { provider, err: error },
        'reading a provider cost report failed; spend falls back to estimates',
      );
      await deps.db.$executeRawUnsafe(
        `INSERT INTO provider_cost_sources (provider, source, last_error) VALUES ($1, $2, $3)
         ON CONFLICT (provider) DO UPDATE SET last_error = excluded.last_error`,
        provider,
        SOURCE_NAMES[provider] ?? provider,
        message,
      );
      return;
    }
    // Days before today are complete; today's costs are still landing, so today stays estimated.
    const completeTo = readTo > dayOf(at) ? dayOf(at) : readTo;
    await deps.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(
        `DELETE FROM provider_costs WHERE provider = $1 AND day >= $2::date AND day < $3::date`,
        provider,
        from,
        readTo,
      );
      const merged = new Map<string, number>();
      for (const cost of costs)
        merged.set(
          JSON.stringify([cost.day, cost.service]),
          (merged.get(JSON.stringify([cost.day, cost.service])) ?? 0) + cost.usd,
        );
      const entries = [...merged].map(
        ([key, amount]) => [...(JSON.parse(key) as [string, string]), amount.toFixed(6)] as const,
      );
      if (entries.length > 0) {
        await tx.$executeRawUnsafe(
          `INSERT INTO provider_costs (provider, day, service, ` +
            `amount_usd) SELECT $1, d, s, a FROM unnest($2::date[], ` +
            `$3::text[], $4::numeric[]) AS u(d, s, a)
           ON CONFLICT (provider, day, service) DO UPDATE SET amount_usd = excluded.amount_usd`,
          provider,
          entries.map((e) => e[0]),
          entries.map((e) => e[1]),
          entries.map((e) => e[2]),
        );
      }
      await tx.$executeRawUnsafe(
        `INSERT INTO provider_cost_sources (provider, source, fetched_at, covered_from, covered_to, last_error) ` +
          `VALUES ($1, $2, $3::timestamptz, $4::date, $5::date, NULL)
         ON CONFLICT (provider) DO UPDATE SET source = excluded.source, fetched_at = excluded.fetched_at, ` +
          `covered_from = excluded.covered_from, covered_to = excluded.covered_to, last_error = NULL`,
        provider,
        SOURCE_NAMES[provider] ?? provider,
        at.toISOString(),
        from,
        completeTo,
      );
    });
  }

  return {
    async spend(scope: UsageScope, window: { from: Date; to: Date }): Promise<Spend> {
      const fromDay = dayOf(window.from);
      const toDay = dayOf(new Date(window.to.getTime() - 1 + DAY_MS)); // exclusive, whole days
      const from = new Date(`${fromDay}T00:00:00Z`);
      const to = new Date(`${toDay}T00:00:00Z`);
      const days: string[] = [];
      for (let at = from.getTime(); at < to.getTime(); at += DAY_MS) days.push(dayOf(new Date(at)));

      await Promise.all(
        Object.entries(deps.costReports).map(([provider, read]) =>
          read ? refresh(provider, read, fromDay, toDay) : Promise.resolve(),
        ),
      );
      const sourceRows = await deps.db.$queryRawUnsafe<SourceRow[]>(
        `SELECT provider, fetched_at, to_char(covered_from, 'YYYY-MM-DD') AS covered_from, to_char(covered_to, ` +
          `'YYYY-MM-DD') AS covered_to, last_error FROM provider_cost_sources`,
      );
      const sources = new Map(sourceRows.map((row) => [row.provider, row]));
      const measuredRows = await deps.db.$queryRawUnsafe<
        { provider: string; day: string; service: string; usd: string }[]
      >(
        `SELECT provider, to_char(day, 'YYYY-MM-DD') AS day, service, amount_usd::text AS usd FROM provider_costs ` +
          `WHERE day >= $1::date AND day < $2::date`,
        fromDay,
        toDay,
      );

      const usage = await deps.reports.byModelAndUpstream(scope, from, to);
      const unpriced = new Set<string>();
      const estimatedByDay = new Map<string, Map<string, NanoUsd>>(); // provider → day → usd
      const estimatedByModel = new Map<string, Map<string, NanoUsd>>(); // provider → model → usd
      // The credits house calls used, as what they are worth (a microcredit is a nano-USD).
      const houseCreditsByDay = new Map<string, NanoUsd>();
      for (const row of usage) {
        const payee = payeeOf(row.upstream, row.model);
        // The report's decimals hold whole units, so these conversions are exact.
        if (payee === 'house') {
          const worth = nanoUsdForMicrocredits(microcreditsFromCredits(row.metrics.credits));
          houseCreditsByDay.set(row.day, plus(houseCreditsByDay.get(row.day) ?? NO_USD, worth));
          continue;
        }
        if (row.metrics.listUsd === 0 && row.metrics.tokensIn + row.metrics.tokensOut > 0) unpriced.add(row.model);
        const list = nanoUsdFromUsd(row.metrics.listUsd, 'nearest');
        const perDay = estimatedByDay.get(payee) ?? new Map<string, NanoUsd>();
        perDay.set(row.day, plus(perDay.get(row.day) ?? NO_USD, list));
        estimatedByDay.set(payee, perDay);
        const perModel = estimatedByModel.get(payee) ?? new Map<string, NanoUsd>();
        perModel.set(row.model, plus(perModel.get(row.model) ?? NO_USD, list));
        estimatedByModel.set(payee, perModel);
      }

      const series = days.map((day) => ({ day, providers: new Map<string, DaySpend>() }));
      const seriesOf = (day: string, provider: string) => {
        const entry = series.find((s) => s.day === day);
        if (!entry) return undefined;
        const value = entry.providers.get(provider) ?? {
          measuredNanoUsd: NO_USD,
          estimatedNanoUsd: NO_USD,
          planNanoUsd: NO_USD,
        };
        entry.providers.set(provider, value);
        return value;
      };

      const providers: ProviderSpend[] = [];
      // The service's own bill (an account's; a team's usage is billed to its members' accounts).
      if ('accountId' in scope) {
        const journal = await deps.db.$queryRawUnsafe<{ kind: string; usd: string; day: string }[]>(
          `SELECT kind, usd::text AS usd, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM ` +
            `credit_journal
           WHERE account_id = $1 AND usd > 0 AND created_at >= $2::timestamptz AND created_at < $3::timestamptz`,
          scope.accountId,
          from.toISOString(),
          to.toISOString(),
        );
        let planUsd = NO_USD;
        let purchaseUsd = NO_USD;
        for (const entry of journal) {
          const amount = nanoUsdFromDecimalText(entry.usd);
          const point = seriesOf(entry.day, 'house');
          if (entry.kind === 'pack') {
            purchaseUsd = plus(purchaseUsd, amount);
            if (point) point.measuredNanoUsd = plus(point.measuredNanoUsd, amount);
          } else {
            planUsd = plus(planUsd, amount);
            if (point) point.planNanoUsd = plus(point.planNanoUsd, amount);
          }
        }
        let creditsUsd = NO_USD;
        for (const [day, worth] of houseCreditsByDay) {
          creditsUsd = plus(creditsUsd, worth);
          const point = seriesOf(day, 'house');
          if (point) point.estimatedNanoUsd = plus(point.estimatedNanoUsd, worth);
        }
        const last = await deps.reports.accountFacts(scope.accountId);
        const services = [
          { service: 'plan', totalNanoUsd: wholeMicroUsd(planUsd) },
          { service: 'credit_packs', totalNanoUsd: wholeMicroUsd(purchaseUsd) },
        ].filter((s) => s.totalNanoUsd > 0);
        providers.push({
          provider: 'house',
          label: LABELS.house!,
          totalNanoUsd: wholeMicroUsd(plus(planUsd, purchaseUsd)),
          usageNanoUsd: NO_USD,
          purchaseNanoUsd: wholeMicroUsd(purchaseUsd),
          measuredNanoUsd: wholeMicroUsd(plus(planUsd, purchaseUsd)),
          estimatedNanoUsd: wholeMicroUsd(creditsUsd),
          planNanoUsd: wholeMicroUsd(planUsd),
          residualNanoUsd: NO_USD,
          status: 'caught_up',
          services,
          sources: [{ source: 'usage_ledger', freshAt: last.lastAppliedAt, status: 'ok' }],
        });
      }

      const vendors = new Set<string>([...Object.keys(deps.costReports), ...estimatedByDay.keys()]);
      for (const provider of [...vendors].sort()) {
        const source = sources.get(provider);
        const configured = deps.costReports[provider] !== undefined;
        const sourceStatus: SourceStatus =
          !configured || !source?.fetched_at ? 'missing' : source.last_error ? 'stale' : 'ok';
        const coveredTo = sourceStatus === 'missing' ? null : (source?.covered_to ?? null);
        const estimates = estimatedByDay.get(provider) ?? new Map<string, NanoUsd>();
        const measured = measuredRows.filter(
          (row) => row.provider === provider && coveredTo !== null && row.day < coveredTo,
        );
        let measuredUsd = NO_USD;
        const services = new Map<string, NanoUsd>();
        for (const row of measured) {
          const amount = nanoUsdFromDecimalText(row.usd);
          measuredUsd = plus(measuredUsd, amount);
          services.set(row.service, plus(services.get(row.service) ?? NO_USD, amount));
          const point = seriesOf(row.day, provider);
          if (point) point.measuredNanoUsd = plus(point.measuredNanoUsd, amount);
        }
        let estimatedUsd = NO_USD;
        let residual = NO_USD;
        for (const [day, amount] of estimates) {
          estimatedUsd = plus(estimatedUsd, amount);
          if (coveredTo === null || day >= coveredTo) residual = plus(residual, amount);
          const point = seriesOf(day, provider);
          if (point) point.estimatedNanoUsd = plus(point.estimatedNanoUsd, amount);
        }
        const uncoveredDays = coveredTo === null ? days.length : days.filter((day) => day >= coveredTo).length;
        const status: SpendStatus = coveredTo === null ? 'estimate_only' : uncoveredDays > 0 ? 'residual' : 'caught_up';
        if (status === 'estimate_only')
          for (const [model, amount] of estimatedByModel.get(provider) ?? []) services.set(model, amount);
        const usageUsd = status === 'estimate_only' ? estimatedUsd : plus(measuredUsd, residual);
        providers.push({
          provider,
          label: LABELS[provider] ?? provider.replace(/^byo:/, ''),
          totalNanoUsd: wholeMicroUsd(usageUsd),
          usageNanoUsd: wholeMicroUsd(usageUsd),
          purchaseNanoUsd: NO_USD,
          measuredNanoUsd: wholeMicroUsd(measuredUsd),
          estimatedNanoUsd: wholeMicroUsd(estimatedUsd),
          planNanoUsd: NO_USD,
          residualNanoUsd: status === 'estimate_only' ? null : wholeMicroUsd(residual),
          status,
          services: [...services]
            .map(([service, amount]) => ({ service, totalNanoUsd: wholeMicroUsd(amount) }))
            .sort((a, b) => b.totalNanoUsd - a.totalNanoUsd || (a.service < b.service ? -1 : 1)),
          sources:
            configured || SOURCE_NAMES[provider]
              ? [
                  {
                    source: SOURCE_NAMES[provider] ?? provider,
                    freshAt: source?.fetched_at ?? null,
                    status: sourceStatus,
                  },
                ]
              : [],
        });
      }

      const totalUsd = providers.reduce((sum, p) => plus(sum, p.totalNanoUsd), NO_USD);
      const estimatedUsd = providers.reduce(
        (sum, p) => plus(sum, p.status === 'estimate_only' ? p.usageNanoUsd : (p.residualNanoUsd ?? NO_USD)),
        NO_USD,
      );
      for (const point of series)
        for (const value of point.providers.values())
          Object.assign(value, {
            measuredNanoUsd: wholeMicroUsd(value.measuredNanoUsd),
            estimatedNanoUsd: wholeMicroUsd(value.estimatedNanoUsd),
            planNanoUsd: wholeMicroUsd(value.planNanoUsd),
          });
      return {
        totalNanoUsd: totalUsd,
        tiedNanoUsd: minus(totalUsd, estimatedUsd),
        estimatedNanoUsd: estimatedUsd,
        unpricedModels: [...unpriced].sort(),
        providers,
        series,
      };
    },
  };
}

export type SpendReader = ReturnType<typeof createSpend>;
