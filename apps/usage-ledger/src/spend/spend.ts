import { findCatalogModel } from '@sbc/catalog';
import type { Logger } from '@sbc/logging';
import type { PrismaClient } from '../generated/prisma/client';
import type { UsageReports, UsageScope } from '../store/usage-reports';
import { CostReportError, type CostReportReader, type DailyCost } from './cost-reports';

type SourceStatus = 'ok' | 'stale' | 'missing';
type SpendStatus = 'caught_up' | 'residual' | 'estimate_only';

interface ProviderSpend {
  provider: string;
  label: string;
  totalUsd: number;
  usageUsd: number;
  purchaseUsd: number;
  measuredUsd: number;
  estimatedUsd: number;
  planUsd: number;
  residualUsd: number | null;
  status: SpendStatus;
  services: Array<{ service: string; totalUsd: number }>;
  sources: Array<{ source: string; freshAt: Date | null; status: SourceStatus }>;
}

export interface Spend {
  totalUsd: number;
  tiedUsd: number;
  estimatedUsd: number;
  unpricedModels: string[];
  providers: ProviderSpend[];
  series: Array<{ day: string; providers: Map<string, { measured: number; estimated: number; plan: number }> }>;
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

const usd = (value: number) => Math.round(value * 1e6) / 1e6;
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
      `SELECT provider, fetched_at, to_char(covered_from, 'YYYY-MM-DD') AS covered_from, to_char(covered_to, 'YYYY-MM-DD') AS covered_to, last_error
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
          `INSERT INTO provider_costs (provider, day, service, amount_usd) SELECT $1, d, s, a FROM unnest($2::date[], $3::text[], $4::numeric[]) AS u(d, s, a)
           ON CONFLICT (provider, day, service) DO UPDATE SET amount_usd = excluded.amount_usd`,
          provider,
          entries.map((e) => e[0]),
          entries.map((e) => e[1]),
          entries.map((e) => e[2]),
        );
      }
      await tx.$executeRawUnsafe(
        `INSERT INTO provider_cost_sources (provider, source, fetched_at, covered_from, covered_to, last_error) VALUES ($1, $2, $3::timestamptz, $4::date, $5::date, NULL)
         ON CONFLICT (provider) DO UPDATE SET source = excluded.source, fetched_at = excluded.fetched_at, covered_from = excluded.covered_from, covered_to = excluded.covered_to, last_error = NULL`,
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
        `SELECT provider, fetched_at, to_char(covered_from, 'YYYY-MM-DD') AS covered_from, to_char(covered_to, 'YYYY-MM-DD') AS covered_to, last_error FROM provider_cost_sources`,
      );
      const sources = new Map(sourceRows.map((row) => [row.provider, row]));
      const measuredRows = await deps.db.$queryRawUnsafe<
        { provider: string; day: string; service: string; usd: string }[]
      >(
        `SELECT provider, to_char(day, 'YYYY-MM-DD') AS day, service, amount_usd::text AS usd FROM provider_costs WHERE day >= $1::date AND day < $2::date`,
        fromDay,
        toDay,
      );

      const usage = await deps.reports.byModelAndUpstream(scope, from, to);
      const unpriced = new Set<string>();
      const estimatedByDay = new Map<string, Map<string, number>>(); // provider → day → usd
      const estimatedByModel = new Map<string, Map<string, number>>(); // provider → model → usd
      const houseCreditsByDay = new Map<string, number>();
      for (const row of usage) {
        const payee = payeeOf(row.upstream, row.model);
        if (payee === 'house') {
          houseCreditsByDay.set(row.day, (houseCreditsByDay.get(row.day) ?? 0) + row.metrics.credits);
          continue;
        }
        if (row.metrics.listUsd === 0 && row.metrics.tokensIn + row.metrics.tokensOut > 0) unpriced.add(row.model);
        const perDay = estimatedByDay.get(payee) ?? new Map<string, number>();
        perDay.set(row.day, (perDay.get(row.day) ?? 0) + row.metrics.listUsd);
        estimatedByDay.set(payee, perDay);
        const perModel = estimatedByModel.get(payee) ?? new Map<string, number>();
        perModel.set(row.model, (perModel.get(row.model) ?? 0) + row.metrics.listUsd);
        estimatedByModel.set(payee, perModel);
      }

      const series = days.map((day) => ({
        day,
        providers: new Map<string, { measured: number; estimated: number; plan: number }>(),
      }));
      const seriesOf = (day: string, provider: string) => {
        const entry = series.find((s) => s.day === day);
        if (!entry) return undefined;
        const value = entry.providers.get(provider) ?? { measured: 0, estimated: 0, plan: 0 };
        entry.providers.set(provider, value);
        return value;
      };

      const providers: ProviderSpend[] = [];
      // The service's own bill (an account's; a team's usage is billed to its members' accounts).
      if ('accountId' in scope) {
        const journal = await deps.db.$queryRawUnsafe<{ kind: string; usd: string; day: string }[]>(
          `SELECT kind, usd::text AS usd, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day FROM credit_journal
           WHERE account_id = $1 AND usd > 0 AND created_at >= $2::timestamptz AND created_at < $3::timestamptz`,
          scope.accountId,
          from.toISOString(),
          to.toISOString(),
        );
        let planUsd = 0;
        let purchaseUsd = 0;
        for (const entry of journal) {
          const amount = Number(entry.usd);
          const point = seriesOf(entry.day, 'house');
          if (entry.kind === 'pack') {
            purchaseUsd += amount;
            if (point) point.measured += amount;
          } else {
            planUsd += amount;
            if (point) point.plan += amount;
          }
        }
        let creditsUsd = 0;
        for (const [day, credits] of houseCreditsByDay) {
          creditsUsd += credits * 0.001;
          const point = seriesOf(day, 'house');
          if (point) point.estimated += credits * 0.001;
        }
        const last = await deps.reports.accountFacts(scope.accountId);
        const services = [
          { service: 'plan', totalUsd: usd(planUsd) },
          { service: 'credit_packs', totalUsd: usd(purchaseUsd) },
        ].filter((s) => s.totalUsd > 0);
        providers.push({
          provider: 'house',
          label: LABELS.house!,
          totalUsd: usd(planUsd + purchaseUsd),
          usageUsd: 0,
          purchaseUsd: usd(purchaseUsd),
          measuredUsd: usd(planUsd + purchaseUsd),
          estimatedUsd: usd(creditsUsd),
          planUsd: usd(planUsd),
          residualUsd: 0,
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
        const estimates = estimatedByDay.get(provider) ?? new Map<string, number>();
        const measured = measuredRows.filter(
          (row) => row.provider === provider && coveredTo !== null && row.day < coveredTo,
        );
        let measuredUsd = 0;
        const services = new Map<string, number>();
        for (const row of measured) {
          const amount = Number(row.usd);
          measuredUsd += amount;
          services.set(row.service, (services.get(row.service) ?? 0) + amount);
          const point = seriesOf(row.day, provider);
          if (point) point.measured += amount;
        }
        let estimatedUsd = 0;
        let residual = 0;
        for (const [day, amount] of estimates) {
          estimatedUsd += amount;
          if (coveredTo === null || day >= coveredTo) residual += amount;
          const point = seriesOf(day, provider);
          if (point) point.estimated += amount;
        }
        const uncoveredDays = coveredTo === null ? days.length : days.filter((day) => day >= coveredTo).length;
        const status: SpendStatus = coveredTo === null ? 'estimate_only' : uncoveredDays > 0 ? 'residual' : 'caught_up';
        if (status === 'estimate_only')
          for (const [model, amount] of estimatedByModel.get(provider) ?? []) services.set(model, amount);
        const usageUsd = status === 'estimate_only' ? estimatedUsd : measuredUsd + residual;
        providers.push({
          provider,
          label: LABELS[provider] ?? provider.replace(/^byo:/, ''),
          totalUsd: usd(usageUsd),
          usageUsd: usd(usageUsd),
          purchaseUsd: 0,
          measuredUsd: usd(measuredUsd),
          estimatedUsd: usd(estimatedUsd),
          planUsd: 0,
          residualUsd: status === 'estimate_only' ? null : usd(residual),
          status,
          services: [...services]
            .map(([service, amount]) => ({ service, totalUsd: usd(amount) }))
            .sort((a, b) => b.totalUsd - a.totalUsd || (a.service < b.service ? -1 : 1)),
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

      const totalUsd = usd(providers.reduce((sum, p) => sum + p.totalUsd, 0));
      const estimatedUsd = usd(
        providers.reduce((sum, p) => sum + (p.status === 'estimate_only' ? p.usageUsd : (p.residualUsd ?? 0)), 0),
      );
      for (const point of series)
        for (const value of point.providers.values())
          Object.assign(value, {
            measured: usd(value.measured),
            estimated: usd(value.estimated),
            plan: usd(value.plan),
          });
      return {
        totalUsd,
        tiedUsd: usd(totalUsd - estimatedUsd),
        estimatedUsd,
        unpricedModels: [...unpriced].sort(),
        providers,
        series,
      };
    },
  };
}

export type SpendReader = ReturnType<typeof createSpend>;
