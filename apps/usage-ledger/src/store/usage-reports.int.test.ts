import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadUsageLedgerConfig, start, type RunningUsageLedger } from '../main';
import { applyGenerations, type GenerationRow } from './generations';
import { addUp, createUsageReports, type GroupTotals, type Metrics, type UsageScope } from './usage-reports';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const START = Date.parse('2026-03-27T00:00:00Z');
const SPAN_MS = 6 * DAY_MS;

/** A seeded generator, so a failing window can be replayed. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function calls(count: number, next: () => number): GenerationRow[] {
  const pick = <T>(list: T[]) => list[Math.floor(next() * list.length)]!;
  return Array.from({ length: count }, (_, n) => {
    const keyId = pick(['key_a', 'key_b', 'key_c', undefined]);
    const listUsd = pick([0, 0.000000004, 0.0000123, 0.25, 3.000000001]);
    return {
      eventId: `evt_${n}`,
      requestId: `req_${n % 50}`,
      accountId: pick(['usr_reports', 'usr_reports', 'usr_other']),
      orgId: pick(['org_reports', undefined]),
      keyId,
      keyLabel: keyId ? pick([`${keyId} laptop`, `${keyId} ci`, undefined]) : undefined,
      model: pick(['house', 'house-omni', 'gpt-6.1-sol']),
      provider: pick(['sim', undefined]),
      upstream: pick(['house', 'byo:mine']),
      status: pick([200, 200, 200, 429, 502]),
      tokensPrompt: BigInt(Math.floor(next() * 5_000)),
      tokensCompletion: BigInt(Math.floor(next() * 900)),
      cacheRead: BigInt(Math.floor(next() * 100)),
      cacheWrite: BigInt(Math.floor(next() * 10)),
      ts: new Date(START + Math.floor(next() * SPAN_MS)),
      totalCostUsd: listUsd,
      cacheDiscountUsd: 0,
      creditsCharged: Math.round(listUsd * 1e3 * 1e6) / 1e6,
      fairUseCredits: 0,
    };
  });
}

/** A window edge: any millisecond, a whole hour, a UTC midnight, or a local midnight in a zone with an odd offset. */
function edge(next: () => number): number {
  const at = START - DAY_MS + Math.floor(next() * (SPAN_MS + 2 * DAY_MS));
  const shape = Math.floor(next() * 4);
  if (shape === 0) return at;
  if (shape === 1) return Math.floor(at / HOUR_MS) * HOUR_MS;
  if (shape === 2) return Math.floor(at / DAY_MS) * DAY_MS;
  const offsetMs = [5.5, -3.5, 5.75, -10][Math.floor(next() * 4)]! * HOUR_MS; // Kolkata, St John's, Kathmandu, Honolulu
  return Math.floor((at + offsetMs) / DAY_MS) * DAY_MS - offsetMs;
}

describe('usage totals per group', () => {
  let db: TestDatabase;
  let running: RunningUsageLedger;
  beforeAll(async () => {
    db = await createTestDatabase('usage_reports');
    running = await start(
      loadUsageLedgerConfig({ USAGE_LEDGER_GRPC_PORT: '0', USAGE_LEDGER_HTTP_PORT: '0', DATABASE_URL: db.databaseUrl, SBC_DATA_DIR: 'memory://', LOG_LEVEL: 'silent' }),
    );
    const rows = calls(3_000, random(7));
    // In batches, as the consumer applies them, so the rollups are built up the way they are in production.
    for (let i = 0; i < rows.length; i += 500) await applyGenerations(running.database.prisma, rows.slice(i, i + 500));
  }, 60_000);
  afterAll(async () => {
    await running?.stop();
    await db?.drop();
  });

  /** The same totals from the calls alone, one plain GROUP BY per grouping. */
  async function scanCalls(scope: UsageScope, from: Date, to: Date, group: 'model' | 'key'): Promise<{ totals: Metrics; groups: GroupTotals[] }> {
    const column = group === 'model' ? 'model' : `COALESCE(key_id, '')`;
    const rows = await running.database.prisma.$queryRawUnsafe<Record<string, string | null>[]>(
      `SELECT ${column} AS gid, max(key_label) AS label, count(*)::text AS requests, count(*) FILTER (WHERE status >= 400)::text AS failed,
              sum(tokens_prompt)::text AS tokens_in, sum(tokens_completion)::text AS tokens_out, sum(cache_read)::text AS cache_read,
              sum(cache_write)::text AS cache_write, sum(credits_charged)::text AS credits, sum(total_cost_usd)::text AS list_usd
       FROM usage_generations WHERE ${'orgId' in scope ? 'org_id' : 'account_id'} = $1 AND ts >= $2::timestamptz AND ts < $3::timestamptz GROUP BY 1`,
      'orgId' in scope ? scope.orgId : scope.accountId,
      from.toISOString(),
      to.toISOString(),
    );
    const groups = rows.map((row) => {
      const id = row.gid === '' ? '(none)' : row.gid!;
      const metrics: Metrics = {
        requests: Number(row.requests),
        failed: Number(row.failed),
        tokensIn: Number(row.tokens_in),
        tokensOut: Number(row.tokens_out),
        cacheRead: Number(row.cache_read),
        cacheWrite: Number(row.cache_write),
        credits: Math.round(Number(row.credits) * 1e6) / 1e6,
        listUsd: Math.round(Number(row.list_usd) * 1e9) / 1e9,
      };
      return { id, label: group === 'key' ? (row.label ?? id) : id, metrics };
    });
    return { totals: addUp(groups.map((g) => g.metrics)), groups };
  }

  const byId = (groups: GroupTotals[]) => [...groups].sort((a, b) => (a.id < b.id ? -1 : 1));

  it('match a scan of the calls for any window: partial hours, whole hours and whole days read from where they are exact', async () => {
    const reports = createUsageReports(running.database.prisma);
    const next = random(42);
    const scopes: UsageScope[] = [{ accountId: 'usr_reports' }, { orgId: 'org_reports' }];
    let compared = 0;
    for (let n = 0; n < 60; n++) {
      const [a, b] = [edge(next), edge(next)].sort((x, y) => x - y);
      if (a === b) continue;
      const from = new Date(a!);
      const to = new Date(b!);
      const scope = scopes[n % 2]!;
      const fast = await reports.grouped(scope, from, to, ['model', 'key']);
      for (const group of ['model', 'key'] as const) {
        const scanned = await scanCalls(scope, from, to, group);
        const window = `${JSON.stringify(scope)} ${from.toISOString()} .. ${to.toISOString()} by ${group}`;
        expect({ window, totals: fast[group].totals, groups: byId(fast[group].groups) }).toEqual({ window, totals: scanned.totals, groups: byId(scanned.groups) });
        compared += scanned.totals.requests;
      }
    }
    expect(compared).toBeGreaterThan(10_000); // the windows held calls, not just empty answers
  }, 120_000);

  it('a window inside one hour, and one of whole days only, each still count every call once', async () => {
    const reports = createUsageReports(running.database.prisma);
    const scope = { accountId: 'usr_reports' };
    for (const [from, to] of [
      ['2026-03-28T10:15:00.001Z', '2026-03-28T10:45:00Z'],
      ['2026-03-28T00:00:00Z', '2026-03-31T00:00:00Z'],
      ['2026-03-27T23:59:59.999Z', '2026-03-29T00:00:00.001Z'],
    ] as const) {
      const fast = await reports.grouped(scope, new Date(from), new Date(to), ['model']);
      expect(fast.model.totals).toEqual((await scanCalls(scope, new Date(from), new Date(to), 'model')).totals);
    }
  });
});
