import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { startStack, type UsageStack } from '../support/stack';

/**
 * The ledger's promise, end to end: every call through the edge is one usage row, and the daily, breakdown
 * and credits views add up to exactly those rows; feeding the same events again, shuffled and across a ledger
 * restart, changes nothing.
 */
const CALLS = 10_000;
const KEYS = 10;
const CONCURRENCY = 32;

let stack: UsageStack;
let userId: string;
let reader: string;
const keys: Array<{ id: string; secret: string }> = [];
const recorded: Uint8Array[] = [];

beforeAll(async () => {
  // The test runs the reconciling sweep itself: the ledger's own (every minute by default) would, on a slow
  // run, reconcile the account first and leave the test's sweep nothing to do.
  stack = await startStack({
    label: 'usage_burst',
    edgeEnv: { RATE_LIMIT_PER_MINUTE: '1000000' },
    ledger: { env: { LEDGER_RECONCILE_QUIET_MS: '300', LEDGER_RECONCILE_INTERVAL_MS: '3600000' } },
  });
  userId = await stack.seedUser();
  for (let i = 0; i < KEYS; i++) keys.push(await stack.seedKey({ userId, name: `burst key ${i}` }));
  reader = keys[0]!.secret;
  // A second consumer group keeps a copy of every event the edge emits, to feed them again later.
  await stack.bus.consumer.subscribe({
    topic: USAGE_EVENTS_TOPIC,
    groupId: 'test-recorder',
    handler: async (message) => void recorded.push(message.value),
  });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

async function call(n: number): Promise<number> {
  const res = await fetch(`${stack.edge.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys[n % KEYS]!.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'house', max_tokens: 8, messages: [{ role: 'user', content: `burst call ${n}` }] }),
  });
  await res.arrayBuffer();
  return res.status;
}

async function waitForRequests(count: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const usage = await stack.api('GET', '/v1/usage?from=2020-01-01', { key: reader });
    if (usage.body.totals.requests >= count) return;
    if (Date.now() > deadline) throw new Error(`the ledger holds ${usage.body.totals.requests} of ${count} calls`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Every row of /v1/usage/requests, following last_id. */
async function allRequests(): Promise<
  Array<{
    id: string;
    credits_charged: number;
    native_tokens_prompt: number;
    native_tokens_completion: number;
    key_id: string;
  }>
> {
  const rows = [];
  let after = '';
  for (;;) {
    const page = await stack.api('GET', `/v1/usage/requests?limit=100${after ? `&after_id=${after}` : ''}`, {
      key: reader,
    });
    expect(page.status).toBe(200);
    rows.push(...page.body.data);
    if (!page.body.has_more) return rows;
    after = page.body.last_id;
  }
}

/** What the read routes say, with the request ids of the response envelopes taken out. */
async function views() {
  const get = async (path: string) => {
    const answer = await stack.api('GET', path, { key: reader });
    expect(answer.status).toBe(200);
    const { request_id: _requestId, ...body } = answer.body;
    return body;
  };
  const today = new Date().toISOString().slice(0, 10);
  return {
    daily: await get(`/v1/usage/daily?from=${today}`),
    breakdown: await get(`/v1/usage/breakdown?from=${today}&group=key`),
    hourly: await get(`/v1/usage/breakdown?bucket=hour&group=model`),
    credits: await get('/v1/credits'),
  };
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

it(
  `${CALLS} calls through the edge are exactly ${CALLS} usage ` +
    `rows, and daily, breakdown and credits add up to them`,
  async () => {
    // Reading the credits sets the account up (Free plan) and publishes its balance before the first call.
    expect((await stack.api('GET', '/v1/credits', { key: reader })).body).toMatchObject({
      plan: 'free',
      balance_credits: 10_000,
    });
    const statuses = new Map<number, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          const status = await call(next++);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 200: CALLS });
    await waitForRequests(CALLS);
    await stack.bus.producer.flush();

    const rows = await allRequests();
    expect(rows).toHaveLength(CALLS);
    expect(new Set(rows.map((row) => row.id)).size).toBe(CALLS);
    const credits = Math.round(sum(rows.map((row) => row.credits_charged)) * 1e6) / 1e6;
    const tokensIn = sum(rows.map((row) => row.native_tokens_prompt));
    const tokensOut = sum(rows.map((row) => row.native_tokens_completion));
    expect(credits).toBeGreaterThan(0);

    const { daily, breakdown, hourly, credits: balance } = await views();
    expect(daily.totals).toMatchObject({
      turns: CALLS,
      tokens_in: tokensIn,
      tokens_out: tokensOut,
      tokens: tokensIn + tokensOut,
    });
    expect(daily.totals.credits).toBeCloseTo(credits, 6);
    expect(daily.totals.charged_usd).toBeCloseTo(credits / 1000, 9);
    expect(sum(daily.days.map((day: { turns: number }) => day.turns))).toBe(CALLS);

    expect(breakdown.totals).toMatchObject({ requests: CALLS, tokens_in: tokensIn, tokens_out: tokensOut });
    expect(breakdown.totals.tokens).toBeCloseTo(credits, 6);
    expect(breakdown.groups).toHaveLength(KEYS);
    for (const key of keys) {
      const group = breakdown.groups.find((g: { id: string }) => g.id === key.id);
      expect(group).toMatchObject({ requests: CALLS / KEYS });
      expect(group.tokens).toBeCloseTo(
        sum(rows.filter((row) => row.key_id === key.id).map((row) => row.credits_charged)),
        6,
      );
    }
    expect(sum(hourly.buckets.map((b: { requests: number }) => b.requests))).toBe(CALLS);

    // The Free plan's beta pot pays for all of it.
    expect(balance.period_usage_tokens).toBeCloseTo(credits, 6);
    expect(balance.credits.beta).toBeCloseTo(10_000 - credits, 6);
    expect(balance.balance_credits).toBeCloseTo(10_000 - credits, 6);
    // The edge charged every call's cost rounded up to a whole millicredit against the published balance...
    const exact = Math.floor(Math.round((10_000 - credits) * 1e6) / 1e3);
    const published = () => stack.store.get(`credits:available:${userId}`).then(Number);
    expect(await published()).toBeLessThanOrEqual(exact);
    expect(await published()).toBeGreaterThanOrEqual(exact - CALLS);
    // ...and once the account is quiet (no event applied for LEDGER_RECONCILE_QUIET_MS, which on a loaded machine
    // may be a while after the last answer), a sweep reconciles it to the derived balance.
    let reconciled = 0;
    for (const deadline = Date.now() + 15_000; reconciled === 0 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      reconciled = (await stack.ledger.balances.sweep()).reconciled;
    }
    expect(reconciled).toBe(1);
    expect(await published()).toBe(exact);

    // Feeding every event again, shuffled, with the ledger restarted half way, changes nothing.
    expect(recorded.length).toBeGreaterThanOrEqual(CALLS);
    const before = await views();
    const replay = [...recorded];
    for (let i = replay.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [replay[i], replay[j]] = [replay[j]!, replay[i]!];
    }
    const half = Math.floor(replay.length / 2);
    for (const value of replay.slice(0, half)) stack.bus.producer.send(USAGE_EVENTS_TOPIC, { key: userId, value });
    await stack.restartLedger();
    for (const value of replay.slice(half)) stack.bus.producer.send(USAGE_EVENTS_TOPIC, { key: userId, value });
    await stack.bus.producer.flush();
    expect(await allRequests()).toHaveLength(CALLS);
    expect(await views()).toEqual(before);
  },
  180_000,
);
