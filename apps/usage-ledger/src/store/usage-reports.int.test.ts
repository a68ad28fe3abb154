import { createTestDatabase, testBackends, type TestDatabase } from '@sbc/testing';
import { loadUsageLedgerConfig, start, type RunningUsageLedger } from '../main';
import { exportPagesFor, prismaExportPages } from './export-pages';
import { applyGenerations, type GenerationRow } from './generations';
import {
  addUp,
  createUsageReports,
  type CallRow,
  type GroupTotals,
  type Metrics,
  type UsageScope,
} from './usage-reports';

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
    const listNanoUsd = pick([0n, 4n, 12_300n, 250_000_000n, 3_000_000_001n]);
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
      totalCostNanoUsd: listNanoUsd,
      cacheDiscountNanoUsd: 0n,
      // A credit is $0.001: a call charged at list price is charged as many microcredits as it cost nano-USD.
      creditsChargedMicrocredits: listNanoUsd,
      fairUseMicrocredits: 0n,
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
      loadUsageLedgerConfig({
        USAGE_LEDGER_GRPC_PORT: '0',
        USAGE_LEDGER_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        LOG_LEVEL: 'silent',
      }),
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
  async function scanCalls(
    scope: UsageScope,
    from: Date,
    to: Date,
    group: 'model' | 'key',
  ): Promise<{ totals: Metrics; groups: GroupTotals[] }> {
    const column = group === 'model' ? 'model' : `COALESCE(key_id, '')`;
    const rows = await running.database.prisma.$queryRawUnsafe<Record<string, string | null>[]>(
      `SELECT ${column} AS gid, max(key_label) AS label, ` +
        `count(*)::text AS requests, count(*) FILTER (WHERE status >= ` +
        `400)::text AS failed,
              sum(tokens_prompt)::text AS tokens_in, sum(tokens_completion)::text AS tokens_out, ` +
        `sum(cache_read)::text AS cache_read,
              sum(cache_write)::text AS cache_write, ` +
        `sum(credits_charged)::text AS credits, sum(total_cost_usd)::text ` +
        `AS list_usd
       FROM usage_generations WHERE ${'orgId' in scope ? 'org_id' : 'account_id'} = $1 AND ts >= $2::timestamptz AND ` +
        `ts < $3::timestamptz GROUP BY 1`,
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

  it(
    'match a scan of the calls for any window: partial hours, whole hours and whole days read from where they are ' +
      'exact',
    async () => {
      const reports = createUsageReports(running.database.prisma, prismaExportPages(running.database.prisma));
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
          expect({ window, totals: fast[group].totals, groups: byId(fast[group].groups) }).toEqual({
            window,
            totals: scanned.totals,
            groups: byId(scanned.groups),
          });
          compared += scanned.totals.requests;
        }
      }
      expect(compared).toBeGreaterThan(10_000); // the windows held calls, not just empty answers
    },
    120_000,
  );

  it('a window inside one hour, and one of whole days only, each still count every call once', async () => {
    const reports = createUsageReports(running.database.prisma, prismaExportPages(running.database.prisma));
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

  it(
    'day buckets in zones with :30 and :45 offsets match a scan of the calls by local day (hours a midnight cuts ' +
      'come from the calls)',
    async () => {
      const reports = createUsageReports(running.database.prisma, prismaExportPages(running.database.prisma));
      const next = random(11);
      const scope = { accountId: 'usr_reports' };
      let compared = 0;
      for (const tz of [
        'Asia/Kolkata',
        'Asia/Kathmandu',
        'America/St_Johns',
        'Australia/Adelaide',
        'Australia/Lord_Howe',
      ]) {
        for (let n = 0; n < 4; n++) {
          const [a, b] = [edge(next), edge(next)].sort((x, y) => x - y);
          if (a === b) continue;
          const got = await reports.buckets(scope, { from: new Date(a!), to: new Date(b!), tz }, 'day', 'model');
          const scanned = await running.database.prisma.$queryRawUnsafe<
            Array<{
              day: string;
              model: string;
              requests: string;
              failed: string;
              tokens_in: string;
              tokens_out: string;
              credits: string;
            }>
          >(
            `SELECT to_char(date_trunc('day', ts AT TIME ZONE $4), 'YYYY-MM-DD') AS day, model, count(*)::text AS ` +
              `requests, count(*) FILTER (WHERE status >= 400)::text AS failed,
                  sum(tokens_prompt)::text AS tokens_in, sum(tokens_completion)::text AS tokens_out, ` +
              `sum(credits_charged)::text AS credits
           FROM usage_generations WHERE account_id = $1 AND ts >= $2::timestamptz AND ts < $3::timestamptz GROUP BY ` +
              `1, 2`,
            scope.accountId,
            got.from.toISOString(),
            got.to.toISOString(),
            tz,
          );
          const fromBuckets = got.buckets.flatMap((bucket) =>
            [...bucket.by].map(([model, m]) => ({
              day: bucket.key,
              model,
              requests: m.requests,
              failed: m.failed,
              tokensIn: m.tokensIn,
              tokensOut: m.tokensOut,
              credits: Math.round(m.credits * 1e6) / 1e6,
            })),
          );
          const fromCalls = scanned.map((row) => ({
            day: row.day,
            model: row.model,
            requests: Number(row.requests),
            failed: Number(row.failed),
            tokensIn: Number(row.tokens_in),
            tokensOut: Number(row.tokens_out),
            credits: Math.round(Number(row.credits) * 1e6) / 1e6,
          }));
          const order = (rows: typeof fromCalls) =>
            [...rows].sort((x, y) => (x.day + x.model < y.day + y.model ? -1 : 1));
          const window = `${tz} ${got.from.toISOString()} .. ${got.to.toISOString()}`;
          expect({ window, rows: order(fromBuckets) }).toEqual({ window, rows: order(fromCalls) });
          compared += fromCalls.reduce((sum, row) => sum + row.requests, 0);
        }
      }
      expect(compared).toBeGreaterThan(1_000); // the windows held calls
    },
    120_000,
  );
});

/** A call as the spec's UsageGeneration, written the way the edge writes one for GET /v1/usage/requests. */
function generationJson(row: CallRow, incognito: boolean) {
  return {
    id: row.event_id || row.request_id,
    object: 'usage_generation',
    request_id: row.request_id,
    ts: row.ts.toISOString(),
    model: row.model,
    ...(row.key_id !== null ? { key_id: row.key_id } : {}),
    ...(row.key_label !== null ? { key_label: row.key_label } : {}),
    ...(row.session_id !== null && !incognito ? { session_id: row.session_id } : {}),
    native_tokens_prompt: Number(row.tokens_prompt),
    native_tokens_completion: Number(row.tokens_completion),
    cache_read: Number(row.cache_read),
    cache_write: Number(row.cache_write),
    reasoning_tokens: Number(row.reasoning_tokens),
    total_cost_usd: Number(row.total_cost_usd),
    cache_discount: Number(row.cache_discount_usd),
    credits_charged: Number(row.credits_charged),
    is_byok: row.is_byok,
    status: row.status,
    ...(row.latency_ms !== null ? { latency_ms: row.latency_ms } : {}),
    ...(row.ttft_ms !== null ? { ttft_ms: row.ttft_ms } : {}),
    stream: row.stream,
    upstream: row.upstream ?? '',
    provider: row.provider ?? '',
    served_by: row.served_by ?? '',
    attempts: row.attempts,
    cache_hit: row.cache_hit,
  };
}

const CSV_HEADER =
  'request_id,ts,model,key_id,key_label,session_id,upstream,provider,served_by,attempts,status,stream,is_byok,' +
  'native_tokens_prompt,native_tokens_completion,cache_read,cache_write,reasoning_tokens,' +
  'total_cost_usd,cache_discount,credits_charged,latency_ms,ttft_ms';

function csvRow(row: CallRow, incognito: boolean): string {
  const g = generationJson(row, incognito) as Record<string, unknown>;
  const cell = (value: unknown) => {
    if (value === undefined || value === null) return '';
    const text = String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return `${CSV_HEADER.split(',')
    .map((column) => cell(g[column]))
    .join(',')}\r\n`;
}

describe('the export file', () => {
  let db: TestDatabase;
  let running: RunningUsageLedger;
  /** The same calls in an embedded (PGlite) ledger, whose export reads through Prisma. */
  let embedded: RunningUsageLedger;
  const accountId = 'usr_export';
  /** An account id and event ids that are only safe in SQL as values, for the COPY path's quoted literals. */
  const quotingAccountId = String.raw`usr_o'brien\ "x"; --`;
  const quiet = ['plain', '', 'ünïcödé 🙂 \u2028', 'slash / and spaces'];
  const hostile = [
    'plain',
    'comma, inside',
    'a "quoted" word',
    'line\nbreak',
    'carriage\rreturn',
    'tab\tand \u0001 control',
    'back\\slash /',
    'ünïcödé 🙂 \u2028',
    '',
  ];
  beforeAll(async () => {
    db = await createTestDatabase('usage_export');
    running = await start(
      loadUsageLedgerConfig({
        USAGE_LEDGER_GRPC_PORT: '0',
        USAGE_LEDGER_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        LOG_LEVEL: 'silent',
      }),
    );
    embedded = await start(
      loadUsageLedgerConfig({
        USAGE_LEDGER_GRPC_PORT: '0',
        USAGE_LEDGER_HTTP_PORT: '0',
        SBC_DATA_DIR: 'memory://',
        LOG_LEVEL: 'silent',
      }),
    );
    // In nano-USD: from $0.000000001 to $123,456.123456789, and two negatives.
    const costs = [
      0n,
      1n,
      4n,
      120n,
      123n,
      500n,
      1_000n,
      12_300n,
      250_000_000n,
      3_000_000_001n,
      123_456_123_456_789n,
      -2n,
      -1_500_000_000n,
    ];
    const rows: GenerationRow[] = Array.from({ length: 2_345 }, (_, n) => {
      // Every other call's text needs no quoting or escaping, the rest's mostly does: both renderings are used.
      const text = (k: number) => (n % 2 === 0 ? quiet[(n + k) % quiet.length]! : hostile[(n + k) % hostile.length]!);
      return {
        eventId: `evt_${String(n).padStart(5, '0')}`,
        requestId: `req ${text(0)}`,
        accountId,
        keyId: n % 4 === 0 ? undefined : `key_${text(1)}`,
        keyLabel: n % 3 === 0 ? undefined : text(2),
        sessionId: n % 5 === 0 ? undefined : `ses_${text(3)}`,
        model: `model ${text(4)}`,
        provider: n % 6 === 0 ? undefined : text(5),
        upstream: n % 7 === 0 ? undefined : text(6),
        servedBy: n % 7 === 0 ? undefined : `byo:${text(7)}`,
        attempts: n % 5,
        status: n % 9 === 0 ? 502 : 200,
        isByok: n % 2 === 0,
        stream: n % 3 === 1,
        latencyMs: n % 8 === 0 ? undefined : n,
        ttftMs: n % 10 === 0 ? undefined : n % 77,
        tokensPrompt: BigInt(n * 1_000_003),
        tokensCompletion: BigInt(n % 500),
        cacheRead: BigInt(n % 3),
        cacheWrite: BigInt(n % 2),
        reasoningTokens: BigInt(n % 11),
        // Calls sharing a millisecond, so the order within one falls to the event id.
        ts: new Date(Date.parse('2026-04-01T00:00:00Z') + Math.floor(n / 3) * 997),
        totalCostNanoUsd: costs[n % costs.length]!,
        cacheDiscountNanoUsd: costs[(n + 5) % costs.length]!,
        creditsChargedMicrocredits: ((cost) => (cost < 0n ? -cost : cost))(costs[(n + 3) % costs.length]!),
        fairUseMicrocredits: 0n,
      };
    });
    const quoting = rows
      .slice(0, 20)
      .map((row, n) => ({ ...row, accountId: quotingAccountId, eventId: `evt_'\\${n}"` }));
    for (const ledger of [running, embedded]) {
      for (let i = 0; i < rows.length; i += 500) await applyGenerations(ledger.database.prisma, rows.slice(i, i + 500));
      await applyGenerations(ledger.database.prisma, quoting);
    }
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    await embedded?.stop();
    await db?.drop();
  });

  /**
   * The export as the ledger serves it: from the test database's ledger (by COPY when that is PostgreSQL, as
   * in CI; through Prisma when the suite runs on PGlite), or from the embedded ledger through Prisma.
   */
  const reportsOf = (via: 'postgres' | 'pglite') =>
    via === 'postgres'
      ? createUsageReports(running.database.prisma, exportPagesFor(running.database))
      : createUsageReports(embedded.database.prisma, prismaExportPages(embedded.database.prisma));
  // What compares COPY with Prisma, or watches the driver's pool, needs a PostgreSQL server.
  const itWithPostgres = testBackends().postgresUrl ? it : it.skip;

  async function read(
    format: 'csv' | 'jsonl',
    incognito: boolean,
    pageRows: number,
    from = '2026-03-01T00:00:00Z',
    to = '2026-05-01T00:00:00Z',
    options: { via?: 'postgres' | 'pglite'; scope?: UsageScope } = {},
  ): Promise<{ text: string; chunks: number }> {
    const chunks: Buffer[] = [];
    const file = reportsOf(options.via ?? 'postgres').exportFile(
      options.scope ?? { accountId },
      new Date(from),
      new Date(to),
      format,
      { omitSessionIds: incognito, pageRows },
    );
    for await (const chunk of file) chunks.push(chunk);
    return { text: Buffer.concat(chunks).toString('utf8'), chunks: chunks.length };
  }

  async function expected(
    incognito: boolean,
    from = '2026-03-01T00:00:00Z',
    to = '2026-05-01T00:00:00Z',
    scope: UsageScope = { accountId },
  ): Promise<{ csv: string; jsonl: string }> {
    const rows: CallRow[] = [];
    for await (const page of reportsOf('postgres').exportCalls(scope, new Date(from), new Date(to), 1_000))
      rows.push(...page);
    return {
      csv: `${CSV_HEADER}\r\n${rows.map((row) => csvRow(row, incognito)).join('')}`,
      jsonl: rows.map((row) => `${JSON.stringify(generationJson(row, incognito))}\n`).join(''),
    };
  }

  it(
    'is, byte for byte, the calls written as the edge writes them: JSON lines and CSV, hostile text, tiny costs, ' +
      'missing fields',
    async () => {
      for (const incognito of [false, true]) {
        const want = await expected(incognito);
        expect(want.jsonl.split('\n')).toHaveLength(2_346);
        for (const pageRows of [7, 1_000, 10_000]) {
          expect((await read('jsonl', incognito, pageRows)).text).toBe(want.jsonl);
          expect((await read('csv', incognito, pageRows)).text).toBe(want.csv);
        }
      }
      expect((await read('jsonl', false, 10_000)).text).toContain('"total_cost_usd":1.23e-7');
      expect((await read('jsonl', true, 10_000)).text).not.toContain('session_id');
    },
    120_000,
  );

  it('covers [from, to) only; an empty window is an empty JSON file and a CSV header alone', async () => {
    const from = '2026-04-01T00:01:39.700Z';
    const to = '2026-04-01T00:03:19.400Z';
    const want = await expected(false, from, to);
    expect(want.jsonl.length).toBeGreaterThan(0);
    expect((await read('jsonl', false, 1, from, to)).text).toBe(want.jsonl);
    expect((await read('jsonl', false, 50, '2027-01-01T00:00:00Z', '2027-02-01T00:00:00Z')).text).toBe('');
    expect((await read('csv', false, 50, '2027-01-01T00:00:00Z', '2027-02-01T00:00:00Z')).text).toBe(
      `${CSV_HEADER}\r\n`,
    );
  });

  it('comes in chunks of at most 1 MiB, whatever the page', async () => {
    for (const via of ['postgres', 'pglite'] as const) {
      const { text, chunks } = await read('jsonl', false, 10_000, undefined, undefined, { via });
      expect(Buffer.byteLength(text)).toBeGreaterThan(1 << 20);
      expect(chunks).toBe(Math.ceil(Buffer.byteLength(text) / (1 << 20)));
    }
  });

  itWithPostgres(
    'is the same bytes from the embedded ledger (PGlite, through Prisma) as from PostgreSQL (COPY)',
    async () => {
      for (const incognito of [false, true]) {
        for (const format of ['csv', 'jsonl'] as const) {
          const fromPostgres = await read(format, incognito, 1_000);
          expect((await read(format, incognito, 1_000, undefined, undefined, { via: 'pglite' })).text).toBe(
            fromPostgres.text,
          );
        }
      }
    },
    60_000,
  );

  it('takes quotes, backslashes and SQL in an account id and in the event ids it pages after as values', async () => {
    const scope = { accountId: quotingAccountId };
    const want = await expected(false, undefined, undefined, scope);
    expect(want.jsonl.split('\n')).toHaveLength(21);
    for (const via of ['postgres', 'pglite'] as const) {
      expect((await read('jsonl', false, 1, undefined, undefined, { via, scope })).text).toBe(want.jsonl);
      expect((await read('csv', false, 3, undefined, undefined, { via, scope })).text).toBe(want.csv);
    }
  });

  itWithPostgres(
    'a caller who leaves mid-export leaves no database connection behind: after more abandoned exports than the pool ' +
      'holds, the next export still finishes',
    async () => {
      const pool = running.database.pool!;
      const reports = reportsOf('postgres');
      const window = [{ accountId }, new Date('2026-03-01T00:00:00Z'), new Date('2026-05-01T00:00:00Z')] as const;
      for (let n = 0; n < pool.options.max + 2; n++) {
        const abort = new AbortController();
        const file = reports.exportFile(...window, 'jsonl', {
          omitSessionIds: false,
          pageRows: 100,
          signal: abort.signal,
        });
        // Half leave by dropping the stream, half by cancelling it (as the edge does when its caller goes).
        let chunks = 0;
        for await (const chunk of file) {
          expect(chunk.length).toBeGreaterThan(0);
          chunks += 1;
          if (n % 2 === 0) break;
          abort.abort();
        }
        expect(chunks).toBe(1);
      }
      expect((await read('jsonl', false, 100)).text).toBe((await expected(false)).jsonl);
      // A page read ahead for an abandoned export finishes on its own and gives its connection back.
      for (let waited = 0; pool.idleCount < pool.totalCount && waited < 5_000; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(pool.idleCount).toBe(pool.totalCount);
      expect(pool.waitingCount).toBe(0);
    },
    60_000,
  );
});
