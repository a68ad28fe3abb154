import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startStack, type UsageStack } from '../support/stack';
import { usageEvent, type UsageEventFields, type UsageEventInit } from '../support/usage-events';

/**
 * The usage routes, credits and spend as a caller sees them, over usage events fed to the ledger as the edge
 * sends them (so calls can be placed at chosen instants), plus model calls through the edge where the edge's
 * own enforcement is the point.
 */
let stack: UsageStack;
const fakes: Server[] = [];
const providerCalls: Array<{ provider: string; url: URL; headers: IncomingMessage['headers'] }> = [];

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  fakes.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
}

const DAY_MS = 86_400_000;
const today = () => new Date().toISOString().slice(0, 10);
const yesterday = () => new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);

beforeAll(async () => {
  // Provider cost reports: OpenAI answers (in two pages), Anthropic's is down.
  const openai = await listen((req, res) => {
    const url = new URL(req.url!, 'http://fake');
    providerCalls.push({ provider: 'openai', url, headers: req.headers });
    const bucket = (day: string, value: number, line: string) => ({
      object: 'bucket',
      start_time: Date.parse(`${day}T00:00:00Z`) / 1000,
      end_time: Date.parse(`${day}T00:00:00Z`) / 1000 + 86_400,
      results: [
        { object: 'organization.costs.result', amount: { value, currency: 'usd' }, line_item: line, project_id: null },
      ],
    });
    res.setHeader('content-type', 'application/json');
    if (url.searchParams.get('page') === 'p2')
      res.end(
        JSON.stringify({
          object: 'page',
          data: [bucket(yesterday(), 0.25, 'gpt-6.1-sol, output')],
          has_more: false,
          next_page: null,
        }),
      );
    else
      res.end(
        JSON.stringify({
          object: 'page',
          data: [bucket(yesterday(), 1.5, 'gpt-6.1-sol, input')],
          has_more: true,
          next_page: 'p2',
        }),
      );
  });
  const anthropic = await listen((req, res) => {
    providerCalls.push({ provider: 'anthropic', url: new URL(req.url!, 'http://fake'), headers: req.headers });
    res.statusCode = 503;
    res.end('{"type":"error"}');
  });
  stack = await startStack({
    label: 'usage_routes',
    ledger: {
      env: {
        LEDGER_RECONCILE_QUIET_MS: '200',
        OPENAI_ADMIN_KEY: 'sk-admin-fake-openai',
        OPENAI_ADMIN_BASE_URL: `${openai}/v1`,
        ANTHROPIC_ADMIN_KEY: 'sk-ant-admin-fake',
        ANTHROPIC_ADMIN_BASE_URL: anthropic,
      },
    },
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  for (const server of fakes) await new Promise((resolve) => server.close(resolve));
});

/** A fresh account with a Full access key. */
async function newAccount() {
  const userId = await stack.seedUser();
  const key = await stack.seedKey({ userId });
  return { userId, key: key.secret, keyId: key.id };
}

const event = (userId: string, at: string, init: UsageEventFields = {}) =>
  usageEvent({
    requestId: `req_${randomUUID().replace(/-/g, '')}`,
    accountId: userId,
    userId,
    keyId: 'key_default',
    keyLabel: 'default key',
    atMs: Date.parse(at),
    ...init,
  });

const dayCounts = (body: { days: Array<{ day: string; turns: number }> }) =>
  Object.fromEntries(body.days.map((d) => [d.day, d.turns]));

describe('day boundaries', () => {
  it('days are UTC by default, and local days of a named zone with tz, across a daylight-saving change', async () => {
    const { userId, key } = await newAccount();
    // Berlin moves from +01:00 to +02:00 at 01:00 UTC on 2026-03-29; Kolkata is +05:30 all year.
    await stack.sendEvents([
      event(userId, '2026-03-28T22:59:59Z'), // UTC 28 · Berlin 28 23:59:59 · Kolkata 29
      event(userId, '2026-03-28T23:00:00Z'), // UTC 28 · Berlin 29 00:00 · Kolkata 29
      event(userId, '2026-03-29T21:59:59Z'), // UTC 29 · Berlin 29 23:59:59 (summer time) · Kolkata 30
      event(userId, '2026-03-29T22:00:00Z'), // UTC 29 · Berlin 30 00:00 · Kolkata 30
      event(userId, '2026-03-28T18:29:59Z'), // UTC 28 · Berlin 28 · Kolkata 28 23:59:59
    ]);
    const daily = (query: string) => stack.api('GET', `/v1/usage/daily?from=2026-03-28&to=2026-03-31${query}`, { key });

    const utc = await daily('');
    expect(utc.status).toBe(200);
    expect(dayCounts(utc.body)).toEqual({ '2026-03-28': 3, '2026-03-29': 2, '2026-03-30': 0 });
    expect(utc.body).toMatchObject({
      from: '2026-03-28',
      to: '2026-03-30',
      tz: 'UTC',
      totals: { turns: 5, tokens_in: 500, tokens_out: 250, tokens: 750 },
    });
    expect(utc.body.totals.charged_usd).toBeCloseTo(0.0003, 9);

    expect(dayCounts((await daily('&tz=Europe/Berlin')).body)).toEqual({
      '2026-03-28': 2,
      '2026-03-29': 2,
      '2026-03-30': 1,
    });
    // A half-hour zone is read from the calls themselves rather than the hourly rollup; same rules.
    expect(dayCounts((await daily('&tz=Asia/Kolkata')).body)).toEqual({
      '2026-03-28': 1,
      '2026-03-29': 2,
      '2026-03-30': 2,
    });

    const hours = await stack.api(
      'GET',
      '/v1/usage/breakdown?bucket=hour&from=2026-03-28T22:00:00Z&to=2026-03-29T00:00:00Z&tz=Europe/Berlin&group=model',
      { key },
    );
    expect(hours.status).toBe(200);
    expect(
      hours.body.buckets.map((b: { key: string; start: string; requests: number }) => [b.key, b.start, b.requests]),
    ).toEqual([
      ['2026-03-28T23:00', '2026-03-28T22:00:00.000Z', 1],
      ['2026-03-29T00:00', '2026-03-28T23:00:00.000Z', 1],
    ]);
  });
});

describe('usage routes', () => {
  let account: Awaited<ReturnType<typeof newAccount>>;
  const models = ['house', 'house-omni', 'gpt-6.1-sol'];

  beforeAll(async () => {
    account = await newAccount();
    const events: UsageEventInit[] = [];
    for (let i = 0; i < 12; i++) {
      events.push(
        event(account.userId, `2026-05-0${1 + (i % 3)}T1${i % 10}:00:00Z`, {
          requestId: `req_routes_${String(i).padStart(2, '0')}`,
          model: models[i % 3],
          keyId: `key_${i % 2}`,
          keyLabel: `key ${i % 2}`,
          upstream: i % 3 === 2 ? 'provider:openai' : 'house',
          provider: i % 3 === 2 ? 'openai' : 'sim',
          status: i === 11 ? 402 : 200,
          sessionId: 'ses_visible',
        }),
      );
    }
    await stack.sendEvents(events);
  });

  it('GET /v1/usage totals a window, per model and per key', async () => {
    const usage = await stack.api('GET', '/v1/usage?from=2026-05-01&to=2026-05-04', { key: account.key });
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({
      object: 'usage',
      tz: 'UTC',
      totals: { requests: 12, tokens_in: 1200, tokens_out: 600 },
    });
    expect(usage.body.totals.tokens).toBeCloseTo(0.72, 6);
    expect(usage.body.models.map((m: { id: string; requests: number }) => [m.id, m.requests]).sort()).toEqual([
      ['gpt-6.1-sol', 4],
      ['house', 4],
      ['house-omni', 4],
    ]);
    expect(usage.body.keys.map((k: { label: string; requests: number }) => [k.label, k.requests]).sort()).toEqual([
      ['key 0', 6],
      ['key 1', 6],
    ]);
  });

  it(
    'GET /v1/usage/requests pages newest first with ' + 'after_id and before_id, and filters by key and model',
    async () => {
      const first = await stack.api('GET', '/v1/usage/requests?limit=5', { key: account.key });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ object: 'list', has_more: true });
      const ts = first.body.data.map((row: { ts: string }) => row.ts);
      expect([...ts].sort().reverse()).toEqual(ts);
      expect(first.body.data[0]).toMatchObject({
        object: 'usage_generation',
        native_tokens_prompt: 100,
        native_tokens_completion: 50,
        session_id: 'ses_visible',
        is_byok: false,
      });
      const all: string[] = [];
      let page = first;
      for (;;) {
        all.push(...page.body.data.map((row: { id: string }) => row.id));
        if (!page.body.has_more) break;
        page = await stack.api('GET', `/v1/usage/requests?limit=5&after_id=${page.body.last_id}`, { key: account.key });
      }
      expect(all).toHaveLength(12);
      expect(new Set(all).size).toBe(12);
      const back = await stack.api('GET', `/v1/usage/requests?limit=5&before_id=${all[7]}`, { key: account.key });
      expect(back.body.data.map((row: { id: string }) => row.id)).toEqual(all.slice(2, 7));
      const filtered = await stack.api('GET', '/v1/usage/requests?key_id=key_1&model=house', { key: account.key });
      expect(
        filtered.body.data.every(
          (row: { key_id: string; model: string }) => row.key_id === 'key_1' && row.model === 'house',
        ),
      ).toBe(true);
      expect(filtered.body.data).toHaveLength(2);
      const both = await stack.api('GET', `/v1/usage/requests?after_id=${all[0]}&before_id=${all[1]}`, {
        key: account.key,
      });
      expect(both).toMatchObject({ status: 400, body: { error: 'invalid_request', param: 'before_id' } });
    },
  );

  it(
    'GET /v1/usage/requests and the export show the target that served each call and its attempts; calls from an ' +
      'edge before routing policy show their upstream, tried once when they reached it',
    async () => {
      const { userId, key } = await newAccount();
      await stack.sendEvents([
        event(userId, '2026-06-01T10:00:00Z', {
          requestId: 'req_failed_over',
          upstream: 'byo:primary',
          servedBy: 'byo:backup',
          attempts: 3,
        }),
        event(userId, '2026-06-01T10:00:01Z', { requestId: 'req_older_edge', upstream: 'house' }),
        event(userId, '2026-06-01T10:00:02Z', {
          requestId: 'req_older_refused',
          upstream: 'house',
          provider: '',
          status: 402,
        }),
      ]);
      const list = await stack.api('GET', '/v1/usage/requests?from=2026-06-01&to=2026-06-02', { key });
      expect(list.status).toBe(200);
      const shown = (rows: Array<{ request_id: string; served_by: string; attempts: number }>) =>
        rows.map((row) => [row.request_id, row.served_by, row.attempts]);
      expect(shown(list.body.data)).toEqual([
        ['req_older_refused', 'house', 0],
        ['req_older_edge', 'house', 1],
        ['req_failed_over', 'byo:backup', 3],
      ]);
      const exported = await fetch(`${stack.edge.url}/v1/usage/export?from=2026-06-01&to=2026-06-02`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const lines = (await exported.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(shown(lines)).toEqual(shown(list.body.data).reverse());
    },
  );

  it('GET /v1/usage/breakdown buckets by day or hour and groups by key, model, provider or upstream', async () => {
    const byProvider = await stack.api('GET', '/v1/usage/breakdown?from=2026-05-01&to=2026-05-04&group=provider', {
      key: account.key,
    });
    expect(byProvider.status).toBe(200);
    expect(byProvider.body).toMatchObject({
      bucket: 'day',
      group: 'provider',
      tz: 'UTC',
      from: '2026-05-01T00:00:00.000Z',
      to: '2026-05-04T00:00:00.000Z',
      totals: { requests: 12 },
    });
    expect(byProvider.body.buckets).toHaveLength(3);
    expect(byProvider.body.groups.map((g: { id: string; requests: number }) => [g.id, g.requests]).sort()).toEqual([
      ['openai', 4],
      ['sim', 8],
    ]);
    for (const bucket of byProvider.body.buckets) {
      expect(bucket.requests).toBe(4);
      const parts = Object.values(bucket.by as Record<string, { requests: number }>).reduce(
        (sum, m) => sum + m.requests,
        0,
      );
      expect(parts).toBe(bucket.requests);
    }
    const byUpstream = await stack.api(
      'GET',
      '/v1/usage/breakdown?from=2026-05-01T10:00:00Z&to=2026-05-03T20:00:00Z&bucket=hour&group=upstream',
      { key: account.key },
    );
    expect(byUpstream.body.buckets).toHaveLength(58);
    expect(byUpstream.body.totals.requests).toBe(12);
    expect(byUpstream.body.groups.map((g: { id: string }) => g.id).sort()).toEqual(['house', 'provider:openai']);
  });

  it('bad values are 400 invalid_request naming the parameter', async () => {
    const cases: Array<[string, string]> = [
      ['/v1/usage/breakdown?bucket=week', 'bucket'],
      ['/v1/usage/breakdown?group=colour', 'group'],
      ['/v1/usage/breakdown?tz=Mars/Olympus', 'tz'],
      ['/v1/usage/daily?from=2026-05-04&to=2026-05-01', 'from'],
      ['/v1/usage/daily?from=yesterday', 'from'],
      ['/v1/usage/breakdown?bucket=hour&from=2026-01-01&to=2026-03-01', 'from'],
      ['/v1/usage/daily?from=2020-01-01&to=2026-01-01', 'from'],
      ['/v1/usage/export?format=xml', 'format'],
      ['/v1/usage/requests?limit=1000', 'limit'],
    ];
    for (const [path, param] of cases) {
      const answer = await stack.api('GET', path, { key: account.key });
      expect({ path, status: answer.status, error: answer.body.error, param: answer.body.param }).toEqual({
        path,
        status: 400,
        error: 'invalid_request',
        param,
      });
    }
  });

  it('GET /v1/usage/report summarises a period: totals, top models and keys, a day series', async () => {
    const report = await stack.api('GET', '/v1/usage/report?from=2026-05-01&to=2026-05-04', { key: account.key });
    expect(report.status).toBe(200);
    expect(report.body).toMatchObject({
      object: 'usage_report',
      from: '2026-05-01',
      to: '2026-05-03',
      failed_requests: 1,
      totals: { requests: 12 },
    });
    expect(report.body.top_models).toHaveLength(3);
    expect(report.body.top_keys).toHaveLength(2);
    expect(report.body.days.map((d: { turns: number }) => d.turns)).toEqual([4, 4, 4]);
    expect(report.body.summary).toContain('12 calls (1 refused or failed)');
    expect(report.body.summary).toContain('Busiest day: 2026-05-01');
  });

  it('without a credential it is 401; without usage:read or billing:read it is 403 naming the scope', async () => {
    for (const path of [
      '/v1/usage',
      '/v1/usage/requests',
      '/v1/usage/daily',
      '/v1/usage/breakdown',
      '/v1/usage/export',
      '/v1/usage/report',
      '/v1/credits',
      '/v1/spend',
    ]) {
      expect((await stack.api('GET', path)).status).toBe(401);
    }
    const gatewayOnly = await stack.seedKey({ userId: account.userId, scopes: ['gateway:invoke'] });
    const usageOnly = await stack.seedKey({ userId: account.userId, scopes: ['usage:read'] });
    expect((await stack.api('GET', '/v1/usage/daily', { key: gatewayOnly.secret })).body).toMatchObject({
      error: 'insufficient_scope',
      required_scopes: ['usage:read'],
    });
    expect((await stack.api('GET', '/v1/credits', { key: usageOnly.secret })).body).toMatchObject({
      error: 'insufficient_scope',
      required_scopes: ['billing:read'],
    });
    expect((await stack.api('GET', '/v1/spend', { key: usageOnly.secret })).status).toBe(200);
  });
});

describe('team and incognito keys', () => {
  it("a team key reads its team's calls, from every member; a personal key reads its account's", async () => {
    const alice = await stack.seedUser();
    const bob = await stack.seedUser();
    const orgId = `org_${randomUUID().slice(0, 8)}`;
    const teamKey = await stack.seedKey({ userId: alice, orgId, scopes: ['usage:read'] });
    const bobKey = await stack.seedKey({ userId: bob, scopes: ['usage:read'] });
    await stack.sendEvents([
      event(alice, '2026-06-01T10:00:00Z', { orgId }),
      event(bob, '2026-06-01T11:00:00Z', { orgId }),
      event(bob, '2026-06-01T12:00:00Z'),
    ]);
    const team = await stack.api('GET', '/v1/usage/daily?from=2026-06-01&to=2026-06-02', { key: teamKey.secret });
    expect(team.body.totals.turns).toBe(2);
    expect((await stack.api('GET', '/v1/usage/requests', { key: teamKey.secret })).body.data).toHaveLength(2);
    expect(
      (await stack.api('GET', '/v1/usage/daily?from=2026-06-01&to=2026-06-02', { key: bobKey.secret })).body.totals
        .turns,
    ).toBe(2);
  });

  it('an incognito key is shown counts and cost but no session ids', async () => {
    const userId = await stack.seedUser();
    const incognito = await stack.seedKey({ userId, incognito: true, scopes: ['usage:read'] });
    const plain = await stack.seedKey({ userId, scopes: ['usage:read'] });
    await stack.sendEvents([event(userId, '2026-06-02T10:00:00Z', { sessionId: 'ses_private' })]);
    const seen = (await stack.api('GET', '/v1/usage/requests', { key: incognito.secret })).body.data[0];
    expect(seen).toMatchObject({ native_tokens_prompt: 100, credits_charged: 0.06 });
    expect(seen).not.toHaveProperty('session_id');
    expect((await stack.api('GET', '/v1/usage/requests', { key: plain.secret })).body.data[0]).toMatchObject({
      session_id: 'ses_private',
    });
  });
});

describe('credits', () => {
  const now = () => new Date().toISOString();
  const published = (userId: string) => stack.store.get(`credits:available:${userId}`).then(Number);

  it('a new account is on Free with a 10,000-credit beta pot, published to the edge in millicredits', async () => {
    const { userId, key } = await newAccount();
    const credits = await stack.api('GET', '/v1/credits', { key });
    expect(credits.status).toBe(200);
    expect(credits.body).toMatchObject({
      plan: 'free',
      balance_credits: 10_000,
      balance_tokens: 10_000,
      capacity_tokens: 10_000,
      credits: { beta: 10_000, plan: 0, permanent: 0, total: 10_000 },
    });
    expect(credits.body.renews_at).toBe(
      new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1)).toISOString(),
    );
    expect(await published(userId)).toBe(10_000_000);
  });

  it(
    'pots are spent plan first, then beta, then permanent; ' + 'plans, packs and grants move the published balance',
    async () => {
      const { userId, key } = await newAccount();
      await stack.ledgerRpc.getCredits({ userId });
      await stack.ledgerRpc.setPlan({ userId, plan: 'plus' }); // upgrade: this month's 20,000 plan credits
      await stack.ledgerRpc.purchasePack({ userId, packUsd: 5 }); // 5,000 permanent
      expect(await published(userId)).toBe(35_000_000);

      await stack.sendEvents([
        event(userId, now(), { creditsChargedMicrocredits: 21_000_000_000n, listCostNanoUsd: 21_000_000_000n }),
      ]);
      let credits = (await stack.api('GET', '/v1/credits', { key })).body;
      expect(credits.credits).toMatchObject({ plan: 0, beta: 9_000, permanent: 5_000, total: 14_000 });
      expect(credits).toMatchObject({ plan: 'plus', period_usage_tokens: 21_000, capacity_tokens: 35_000 });

      await stack.sendEvents([
        event(userId, now(), { creditsChargedMicrocredits: 9_500_000_000n, listCostNanoUsd: 9_500_000_000n }),
      ]);
      credits = (await stack.api('GET', '/v1/credits', { key })).body;
      expect(credits.credits).toMatchObject({ plan: 0, beta: 0, permanent: 4_500, total: 4_500 });
      expect(credits.credits.pots.permanent).toMatchObject({ granted: 5_000, used: 500, remaining: 4_500 });

      // Calls fed straight to the ledger never passed the edge's counter; once the account is quiet, the
      // ledger reconciles the published balance to the derived one.
      expect(await published(userId)).toBe(35_000_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await stack.ledger.balances.sweep();
      expect(await published(userId)).toBe(4_500_000);

      await stack.ledgerRpc.grantCredits({ userId, credits: 500, reason: 'support credit' });
      await stack.ledgerRpc.setPlan({ userId, plan: 'plus', overageLimitCredits: 1_000 });
      expect(await published(userId)).toBe(6_000_000);
      expect((await stack.api('GET', '/v1/credits', { key })).body).toMatchObject({
        balance_credits: 5_000,
        overage: { limit_credits: 1_000, used_credits: 0 },
      });
    },
  );

  it('unknown plans and packs are refused', async () => {
    const userId = await stack.seedUser();
    await expect(stack.ledgerRpc.setPlan({ userId, plan: 'enterprise' })).rejects.toMatchObject({
      code: 'invalid_request',
      param: 'plan',
    });
    await expect(stack.ledgerRpc.purchasePack({ userId, packUsd: 7 })).rejects.toMatchObject({
      code: 'invalid_request',
      param: 'pack_usd',
    });
  });

  it(
    'through the edge, the call whose worst case no longer fits the balance is refused 402 budget_exhausted, and not ' +
      'one before it',
    async () => {
      const { userId, key } = await newAccount();
      await stack.api('GET', '/v1/credits', { key });
      await stack.ledgerRpc.grantCredits({ userId, credits: -9_999.95, reason: 'leave 50 millicredits' });
      expect(await published(userId)).toBe(50);
      const body = {
        model: 'house',
        max_tokens: 4,
        messages: [{ role: 'user', content: 'sim-tokens:4 count my credits' }],
      };
      // A call is admitted while its worst case fits: at most every byte of the body as an input token, at
      // least its 4 output tokens (the prompt's counted tokens lie between).
      const bytesWorst = Math.ceil((Buffer.byteLength(JSON.stringify(body)) * 200 + body.max_tokens * 800) / 1_000);
      const outputWorst = Math.ceil((body.max_tokens * 800) / 1_000);
      let served = 0;
      let refused = false;
      for (let i = 0; i < 100 && !refused; i++) {
        const before = await published(userId);
        const res = await fetch(`${stack.edge.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const answer = (await res.json()) as { error?: { code?: string; budget?: string } };
        if (res.status === 200) {
          expect(before).toBeGreaterThanOrEqual(outputWorst);
          served += 1;
          continue;
        }
        expect(res.status).toBe(402);
        expect(before).toBeLessThan(bytesWorst);
        expect(answer.error).toMatchObject({ code: 'budget_exhausted', budget: 'account' });
        refused = true;
      }
      expect(refused).toBe(true);
      expect(served).toBeGreaterThanOrEqual(2);
      expect(await published(userId)).toBeGreaterThanOrEqual(0);
    },
  );
});

describe('export', () => {
  it('streams 100,000 rows as JSON lines without holding them in memory, and as CSV', async () => {
    const { userId, key } = await newAccount();
    const rows = 100_000;
    await stack.ledger.database.sql.query(
      `INSERT INTO usage_generations (event_id, request_id, account_id, user_id, key_id, key_label, model, upstream, ` +
        `provider, tokens_prompt, tokens_completion, total_cost_usd, ` +
        `credits_charged, status, latency_ms, session_id, ` +
        `ts)
       SELECT 'evt_export_' || lpad(g::text, 6, '0'), 'req_export_' || lpad(g::text, 6, '0'), $1, $1, 'key_export', ` +
        `'exporter, "quoted" ' || repeat('x', 300), 'house', 'house', 'sim', g % 1000, 50, 0.00006, 0.06, 200, 40, ` +
        `'ses_' || g,
              '2026-04-01T00:00:00Z'::timestamptz + g * interval '1 second'
       FROM generate_series(1, $2::int) AS g`,
      [userId, rows],
    );
    // Live heap, measured after a full collection, so garbage waiting to be collected does not count.
    setFlagsFromString('--expose-gc');
    const collect = runInNewContext('gc') as () => void;
    const liveHeap = () => {
      collect();
      return process.memoryUsage().heapUsed;
    };
    const baseline = liveHeap();
    let peak = baseline;
    let chunks = 0;
    let bytes = 0;
    let lines = 0;
    let firstLine = '';
    let lastLine = '';
    let tail = '';
    const res = await fetch(`${stack.edge.url}/v1/usage/export`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.byteLength;
      const text = tail + decoder.decode(chunk, { stream: true });
      const parts = text.split('\n');
      tail = parts.pop()!;
      if (!firstLine && parts.length > 0) firstLine = parts[0]!;
      if (parts.length > 0) lastLine = parts.at(-1)!;
      lines += parts.length;
      if (++chunks % 200 === 0) peak = Math.max(peak, liveHeap());
      if (chunks === 1) {
        // A call recorded after the export began, later than every other row: an export that reads the table
        // as the caller reads the response reaches it; one that read everything up front would not.
        await stack.ledger.database.sql.query(
          `INSERT INTO usage_generations (event_id, request_id, account_id, model, status, ts) VALUES ` +
            `('evt_export_late', 'req_export_late', $1, 'house', 200, '2026-04-30T00:00:00Z')`,
          [userId],
        );
      }
    }
    expect(tail).toBe('');
    expect(lines).toBe(rows + 1);
    expect(JSON.parse(lastLine)).toMatchObject({ request_id: 'req_export_late' });
    expect(JSON.parse(firstLine)).toMatchObject({
      object: 'usage_generation',
      request_id: 'req_export_000001',
      key_label: `exporter, "quoted" ${'x'.repeat(300)}`,
      native_tokens_prompt: 1,
      credits_charged: 0.06,
    });
    // The body is ~80 MB; an edge or ledger that buffered it would hold all of it (and more, as row objects).
    expect(bytes).toBeGreaterThan(70_000_000);
    expect(peak - baseline).toBeLessThan(bytes / 2);

    const csv = await fetch(
      `${stack.edge.url}/v1/usage/export?format=csv&from=2026-04-01T00:00:01Z&to=2026-04-01T00:00:04Z`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const text = (await csv.text()).trim().split('\r\n');
    expect(text[0]).toBe(
      'request_id,ts,model,key_id,key_label,session_id,upstream,provider,served_by,attempts,status,stream,is_byok,' +
        'native_tokens_prompt,native_tokens_completion,cache_read,cache_write,reasoning_tokens,' +
        'total_cost_usd,cache_discount,credits_charged,latency_ms,ttft_ms',
    );
    expect(text.slice(1).map((line) => line.split(',')[0])).toEqual([
      'req_export_000001',
      'req_export_000002',
      'req_export_000003',
    ]);
    expect(text[1]).toContain('"exporter, ""quoted"" xxx');
  }, 120_000);
});

describe('spend', () => {
  it(
    'per provider: the service bill, measured vendor ' + 'cost where a report answers, estimates for the rest',
    async () => {
      const { userId, key } = await newAccount();
      await stack.ledgerRpc.setPlan({ userId, plan: 'pro' });
      await stack.ledgerRpc.purchasePack({ userId, packUsd: 20 });
      const y = `${yesterday()}T12:00:00Z`;
      const t = new Date().toISOString();
      await stack.sendEvents([
        event(userId, y, {
          upstream: 'byo:my-openai',
          model: 'gpt-6.1-sol',
          isByok: true,
          creditsChargedMicrocredits: 0n,
          listCostNanoUsd: 1_600_000_000n,
        }),
        event(userId, t, {
          upstream: 'byo:my-openai',
          model: 'gpt-6.1-sol',
          isByok: true,
          creditsChargedMicrocredits: 0n,
          listCostNanoUsd: 400_000_000n,
        }),
        event(userId, t, {
          upstream: 'byo:claude',
          model: 'claude-sonnet-5-5',
          isByok: true,
          creditsChargedMicrocredits: 0n,
          listCostNanoUsd: 2_000_000_000n,
        }),
        event(userId, t, {
          upstream: 'byo:local',
          model: 'my-own-llama',
          isByok: true,
          creditsChargedMicrocredits: 0n,
          listCostNanoUsd: 0n,
        }),
        event(userId, t, { creditsChargedMicrocredits: 100_000_000n, listCostNanoUsd: 100_000_000n }),
      ]);
      const spend = await stack.api('GET', `/v1/spend?from=${yesterday()}`, { key });
      expect(spend.status).toBe(200);
      expect(spend.body).toMatchObject({
        from: yesterday(),
        to: today(),
        currency: 'USD',
        unpriced_models: ['my-own-llama'],
      });
      const provider = (id: string) => spend.body.providers.find((p: { provider: string }) => p.provider === id);

      expect(provider('house')).toMatchObject({
        status: 'caught_up',
        plan_usd: 100,
        purchase_usd: 20,
        total_usd: 120,
        estimated_usd: 0.1,
        sources: [{ source: 'usage_ledger', status: 'ok' }],
      });
      // Yesterday is in OpenAI's report ($1.50 + $0.25 over two pages); today is still an estimate.
      expect(provider('openai')).toMatchObject({
        status: 'residual',
        measured_usd: 1.75,
        estimated_usd: 2,
        residual_usd: 0.4,
        usage_usd: 2.15,
        total_usd: 2.15,
      });
      expect(provider('openai').sources).toEqual([
        { source: 'openai_costs_api', fresh_at: expect.any(String), status: 'ok' },
      ]);
      expect(
        provider('openai')
          .services.map((s: { service: string }) => s.service)
          .sort(),
      ).toEqual(['gpt-6.1-sol, input', 'gpt-6.1-sol, output']);
      // Anthropic's report is down: its spend is the estimate alone.
      expect(provider('anthropic')).toMatchObject({
        status: 'estimate_only',
        measured_usd: 0,
        estimated_usd: 2,
        residual_usd: null,
        total_usd: 2,
        sources: [{ source: 'anthropic_cost_report', fresh_at: null, status: 'missing' }],
      });
      expect(spend.body.total_usd).toBeCloseTo(120 + 2.15 + 2, 6);
      expect(spend.body.estimated_usd).toBeCloseTo(0.4 + 2, 6);
      expect(spend.body.tied_usd).toBeCloseTo(120 + 1.75, 6);
      expect(spend.body.series.map((s: { day: string }) => s.day)).toEqual([yesterday(), today()]);
      expect(spend.body.series[0].providers.openai).toEqual({ measured: 1.75, estimated: 1.6, plan: 0 });

      const openaiCall = providerCalls.find((c) => c.provider === 'openai')!;
      expect(openaiCall.url.pathname).toBe('/v1/organization/costs');
      expect(openaiCall.headers.authorization).toBe('Bearer sk-admin-fake-openai');
      expect(openaiCall.url.searchParams.get('bucket_width')).toBe('1d');
      const anthropicCall = providerCalls.find((c) => c.provider === 'anthropic')!;
      expect(anthropicCall.url.pathname).toBe('/v1/organizations/cost_report');
      expect(anthropicCall.headers['x-api-key']).toBe('sk-ant-admin-fake');
      expect(anthropicCall.headers['anthropic-version']).toBe('2023-06-01');

      // A second read within the refresh interval uses the stored report.
      const reads = providerCalls.filter((c) => c.provider === 'openai').length;
      await stack.api('GET', `/v1/spend?from=${yesterday()}`, { key });
      expect(providerCalls.filter((c) => c.provider === 'openai').length).toBe(reads);
    },
  );
});
