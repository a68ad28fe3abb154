import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { findCatalogModel } from '@sbc/catalog';
import { ApiError } from '@sbc/errors';
import type { CallerKey } from '@sbc/proto/sbc/account/v1/account_pb';
import type { Principal } from '../auth/authenticator';
import { createBudget, MILLI, type BudgetSubject } from './budget';
import { createRateLimiter } from './rate-limit';
import type { SpendCap } from './team-caps';

/** A caller key's principal, with the key's own per-minute limits when given. */
function keyPrincipal(id: string, limits: { rpm?: number; tpm?: number } = {}): Principal {
  const key = {
    id,
    rpm: limits.rpm === undefined ? undefined : BigInt(limits.rpm),
    tpm: limits.tpm === undefined ? undefined : BigInt(limits.tpm),
  } as CallerKey;
  return { kind: 'key', userId: 'usr_k', key, scopes: [], revoked: false, operator: false };
}

describe('call budgets', () => {
  const subject = { userId: 'usr_1', keyId: 'key_1', dailyCapCredits: 10 };

  it('refuses a call whose worst case would pass the daily cap, naming the budget', async () => {
    const budget = createBudget({ store: createMemoryStore() });
    const refusal = await budget.reserve(subject, 11 * MILLI).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(ApiError);
    expect(refusal).toMatchObject({
      code: 'budget_exhausted',
      status: 402,
      extra: { budget: 'key_daily' },
      headers: { 'x-should-retry': 'false' },
    });
  });

  it('holds a cap under concurrency: parallel reservations cannot overshoot it together', async () => {
    const budget = createBudget({ store: createMemoryStore() });
    const results = await Promise.allSettled(Array.from({ length: 10 }, () => budget.reserve(subject, 3 * MILLI)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
  });

  it('settles to the real cost and frees the rest of the reservation', async () => {
    const store = createMemoryStore();
    const budget = createBudget({ store });
    const first = await budget.reserve(subject, 9 * MILLI);
    await first.settle(1 * MILLI);
    await expect(budget.reserve(subject, 9 * MILLI)).resolves.toBeDefined();
  });

  it('resets the daily cap at 00:00 UTC', async () => {
    let now = new Date('2026-11-22T23:59:00Z');
    const budget = createBudget({ store: createMemoryStore(), now: () => now });
    await budget.reserve(subject, 10 * MILLI);
    await expect(budget.reserve(subject, 1)).rejects.toMatchObject({ extra: { budget: 'key_daily' } });
    now = new Date('2026-11-23T00:00:01Z');
    await expect(budget.reserve(subject, 10 * MILLI)).resolves.toBeDefined();
  });

  it('enforces the monthly cap across days and resets it on the 1st', async () => {
    let now = new Date('2026-11-29T10:00:00Z');
    const monthly = { userId: 'usr_1', keyId: 'key_m', monthlyCapCredits: 5 };
    const budget = createBudget({ store: createMemoryStore(), now: () => now });
    await budget.reserve(monthly, 5 * MILLI);
    now = new Date('2026-11-30T10:00:00Z');
    await expect(budget.reserve(monthly, 1)).rejects.toMatchObject({ extra: { budget: 'key_monthly' } });
    now = new Date('2026-12-01T00:00:00Z');
    await expect(budget.reserve(monthly, 5 * MILLI)).resolves.toBeDefined();
  });

  it('enforces the account balance once the ledger has published one', async () => {
    const store = createMemoryStore();
    const budget = createBudget({ store });
    await expect(budget.reserve({ userId: 'usr_2' }, 1_000 * MILLI)).resolves.toBeDefined();
    await store.set('credits:available:usr_2', String(2 * MILLI));
    await expect(budget.reserve({ userId: 'usr_2' }, 3 * MILLI)).rejects.toMatchObject({
      extra: { budget: 'account' },
    });
    const ok = await budget.reserve({ userId: 'usr_2' }, 2 * MILLI);
    await ok.settle(MILLI / 2);
    expect(Number(await store.get('credits:available:usr_2'))).toBe(1.5 * MILLI);
  });

  it('names fair use when a spent house-fast allowance meets an empty balance', async () => {
    const store = createMemoryStore();
    await store.set('credits:available:usr_3', '0');
    const budget = createBudget({ store });
    await expect(budget.reserve({ userId: 'usr_3' }, MILLI, { fairUse: true })).rejects.toMatchObject({
      extra: { budget: 'fair_use' },
    });
  });

  it('gives house-fast 500 credits per 5 hours free, then bills', async () => {
    const now = new Date('2026-11-22T12:00:00Z');
    const budget = createBudget({ store: createMemoryStore(), now: () => now });
    expect(await budget.fairUseLeft('usr_4')).toBe(true);
    await budget.recordFairUse('usr_4', 499 * MILLI);
    expect(await budget.fairUseLeft('usr_4')).toBe(true);
    await budget.recordFairUse('usr_4', 1 * MILLI);
    expect(await budget.fairUseLeft('usr_4')).toBe(false);
  });
});

describe('admitting a priced call', () => {
  const price = findCatalogModel('house')!.price; // 0.2 / 0.8 millicredits per token in / out
  const call = (requestedOutputTokens?: number) => ({
    price,
    inputTokens: { bound: 100, count: () => 10 },
    requestedOutputTokens,
    modelOutputTokens: 128_000,
  });

  /** A memory store that counts its round trips. */
  function countingStore() {
    const store = createMemoryStore();
    let trips = 0;
    const counted: SharedStore = {
      ...store,
      batch: (ops) => (trips++, store.batch(ops)),
      get: (key) => (trips++, store.get(key)),
      incrBy: (...args) => (trips++, store.incrBy(...args)),
    };
    return { store: counted, trips: () => trips };
  }

  it('takes the request bucket and the reservation in one round trip when the call fits', async () => {
    const { store, trips } = countingStore();
    const limiter = createRateLimiter({ store, limitPerMinute: 10 });
    const budget = createBudget({ store });
    const admitted = await budget.reserveCall({ userId: 'usr_a', keyId: 'key_a', dailyCapCredits: 1_000 }, call(), {
      bucket: limiter.bucket(keyPrincipal('key_a')),
    });
    expect(trips()).toBe(1);
    expect(admitted.outputTokens).toBe(128_000);
    expect(admitted.headers).toMatchObject({ 'x-ratelimit-remaining': '9' });
  });

  it('with team and member caps too, admission is still one round trip', async () => {
    const { store, trips } = countingStore();
    const limiter = createRateLimiter({ store, limitPerMinute: 10 });
    const budget = createBudget({ store });
    const cap = {
      credits: 1_000,
      period: { kind: 'monthly' },
      periodText: 'monthly',
      timeZone: 'Asia/Tokyo',
      anchor: '',
    };
    const subject = {
      userId: 'usr_a',
      keyId: 'key_a',
      dailyCapCredits: 1_000,
      team: { teamId: 'org_1', team: cap, member: cap },
    };
    await budget.reserveCall(subject as BudgetSubject, call(), {
      bucket: limiter.bucket(keyPrincipal('key_a', { tpm: 10 ** 6 })),
    });
    expect(trips()).toBe(1);
  });

  it(
    'without an output limit, shrinks the call to the room ' + 'its first try found, and counts the request once',
    async () => {
      const store = createMemoryStore();
      const limiter = createRateLimiter({ store, limitPerMinute: 10 });
      const budget = createBudget({ store });
      // 1 credit of daily cap: at 0.8 millicredits a token, about 1,200 output tokens after the prompt.
      const admitted = await budget.reserveCall({ userId: 'usr_b', keyId: 'key_b', dailyCapCredits: 1 }, call(), {
        bucket: limiter.bucket(keyPrincipal('key_b')),
      });
      expect(admitted.outputTokens).toBeGreaterThan(1_000);
      expect(admitted.outputTokens).toBeLessThanOrEqual(1_250);
      expect(admitted.reservation.reservedMilli).toBeLessThanOrEqual(1_000);
      expect(admitted.headers).toMatchObject({ 'x-ratelimit-remaining': '9' });
    },
  );

  it('a refusal for budget carries the bucket headers and leaves no counter changed', async () => {
    const store = createMemoryStore();
    const limiter = createRateLimiter({ store, limitPerMinute: 10 });
    const budget = createBudget({ store });
    await store.set('credits:available:usr_c', '50');
    const refusal = await budget
      .reserveCall({ userId: 'usr_c', keyId: 'key_c' }, call(100), { bucket: limiter.bucket(keyPrincipal('key_c')) })
      .catch((e: unknown) => e);
    expect(refusal).toMatchObject({
      code: 'budget_exhausted',
      extra: { budget: 'account' },
      headers: { 'x-ratelimit-remaining': '9' },
    });
    expect(await store.get('credits:available:usr_c')).toBe('50');
  });

  it('a spent request bucket is a 429 that leaves the budget untouched', async () => {
    const store = createMemoryStore();
    const limiter = createRateLimiter({ store, limitPerMinute: 1 });
    const budget = createBudget({ store });
    await budget.reserveCall({ userId: 'usr_d', keyId: 'key_d', dailyCapCredits: 5 }, call(10), {
      bucket: limiter.bucket(keyPrincipal('key_d')),
    });
    const spentBefore = await store.getMany([
      `spend:key:key_d:d:${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`,
    ]);
    const refusal = await budget
      .reserveCall({ userId: 'usr_d', keyId: 'key_d', dailyCapCredits: 5 }, call(10), {
        bucket: limiter.bucket(keyPrincipal('key_d')),
      })
      .catch((e: unknown) => e);
    expect(refusal).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(
      await store.getMany([`spend:key:key_d:d:${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`]),
    ).toEqual(spentBefore);
  });
});

describe('team and member caps', () => {
  const weekly = (credits: number, timeZone = 'UTC'): SpendCap => ({
    credits,
    period: { kind: 'weekly' },
    periodText: 'weekly',
    timeZone,
    anchor: '2026-11-01',
  });
  const member = (userId: string, keyId: string, caps: { team?: SpendCap; member?: SpendCap }): BudgetSubject => ({
    userId,
    keyId,
    team: { teamId: 'org_1', ...caps },
  });

  it("holds the team's cap over every member's keys, naming the team, its period and when it resets", async () => {
    const now = new Date('2026-11-27T12:00:00Z');
    const budget = createBudget({ store: createMemoryStore(), now: () => now });
    const team = weekly(10);
    await budget.reserve(member('usr_a', 'key_a', { team }), 6 * MILLI);
    await budget.reserve(member('usr_b', 'key_b', { team }), 4 * MILLI);
    const refusal = await budget.reserve(member('usr_c', 'key_c', { team }), 1).catch((e: unknown) => e);
    expect(refusal).toMatchObject({ status: 402, extra: { budget: 'team' } });
    expect((refusal as Error).message).toBe(
      "The team's weekly budget of 10 credits is spent; it resets at 2026-11-30T00:00:00.000Z (UTC).",
    );
  });

  it("a member's cap refuses that member while the team has room, and not the others", async () => {
    const budget = createBudget({ store: createMemoryStore() });
    const caps = { team: weekly(100), member: weekly(2) };
    await budget.reserve(member('usr_a', 'key_a', caps), 2 * MILLI);
    await expect(budget.reserve(member('usr_a', 'key_a2', caps), 1)).rejects.toMatchObject({
      extra: { budget: 'member' },
    });
    await expect(budget.reserve(member('usr_b', 'key_b', caps), 2 * MILLI)).resolves.toBeDefined();
  });

  it("a weekly cap starts afresh at Monday 00:00 in the team's time zone", async () => {
    let now = new Date('2026-11-29T22:59:00Z'); // Sunday 23:59 in Paris
    const budget = createBudget({ store: createMemoryStore(), now: () => now });
    const subject = member('usr_a', 'key_a', { team: weekly(5, 'Europe/Paris') });
    await budget.reserve(subject, 5 * MILLI);
    await expect(budget.reserve(subject, 1)).rejects.toMatchObject({ extra: { budget: 'team' } });
    now = new Date('2026-11-29T23:00:00Z'); // Monday 00:00 in Paris, still Sunday in UTC
    await expect(budget.reserve(subject, 5 * MILLI)).resolves.toBeDefined();
  });

  it('a refused reservation leaves the team and member counters as they were', async () => {
    const store = createMemoryStore();
    const budget = createBudget({ store });
    const caps = { team: weekly(10), member: weekly(3) };
    await budget.reserve(member('usr_a', 'key_a', caps), 2 * MILLI);
    await expect(budget.reserve(member('usr_a', 'key_a', caps), 2 * MILLI)).rejects.toMatchObject({
      extra: { budget: 'member' },
    });
    // The team still has 8 credits: only the first reservation counts.
    await expect(budget.reserve(member('usr_b', 'key_b', { team: weekly(10) }), 8 * MILLI)).resolves.toBeDefined();
  });
});

describe('an account short because calls in flight hold its balance', () => {
  const price = findCatalogModel('house')!.price;

  it('says what is reserved, what the call needs, and that its output limit lowers it', async () => {
    const store = createMemoryStore();
    const budget = createBudget({ store });
    await store.set('credits:available:usr_h', String(10_000 * MILLI));
    const inFlight = await budget.reserve({ userId: 'usr_h' }, 9_999 * MILLI);
    const refusal = await budget
      .reserveCall(
        { userId: 'usr_h' },
        { price, inputTokens: { bound: 10, count: () => 10 }, requestedOutputTokens: 2_000_000, modelOutputTokens: 1 },
        { outputLimitField: 'max_tokens' },
      )
      .catch((e: unknown) => e);
    expect(refusal).toMatchObject({ status: 402, extra: { budget: 'account' } });
    expect((refusal as Error).message).toBe(
      "Calls in flight have reserved 9,999 credits of the account's balance, leaving 1; this call's worst case " +
        'needs 1,600.002. Setting max_tokens lowers it.',
    );
    // Once the call in flight settles, what it held is released.
    await inFlight.settle(0);
    expect(Number(await store.get('credits:held:usr_h'))).toBe(0);
  });
});

describe("a key's tokens per minute", () => {
  const price = findCatalogModel('house')!.price;
  const call = (requestedOutputTokens: number) => ({
    price,
    inputTokens: { bound: 400, count: () => 100 },
    requestedOutputTokens,
    modelOutputTokens: 128_000,
  });

  it('counts the prompt and output limit in admission, refuses past the limit, and corrects at settle', async () => {
    const store = createMemoryStore();
    const limiter = createRateLimiter({ store, limitPerMinute: 100 });
    const budget = createBudget({ store });
    const principal = keyPrincipal('key_t', { tpm: 1_000 });
    const headers = (limit: number, remaining: number) => ({ tokens: `${remaining}/${limit}` });
    const first = await budget.reserveCall({ userId: 'usr_t' }, call(500), {
      bucket: limiter.bucket(principal, headers),
    });
    expect(first.headers).toMatchObject({ tokens: '400/1000' });
    const refusal = await budget
      .reserveCall({ userId: 'usr_t' }, call(500), { bucket: limiter.bucket(principal, headers) })
      .catch((e: unknown) => e);
    expect(refusal).toMatchObject({ status: 429, headers: { tokens: '400/1000' } });
    expect((refusal as ApiError).headers['retry-after']).toBeDefined();
    // The first call used 150 of its 600: the window gets the rest back.
    await first.reservation.settle(0, 150);
    const again = await budget.reserveCall({ userId: 'usr_t' }, call(500), {
      bucket: limiter.bucket(principal, headers),
    });
    expect(again.headers).toMatchObject({ tokens: '250/1000' });
  });

  it("a key's own rpm binds under the service ceiling and is what the headers describe", async () => {
    const limiter = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 100 });
    const principal = keyPrincipal('key_r', { rpm: 2 });
    await expect(limiter(principal)).resolves.toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
    await limiter(principal);
    await expect(limiter(principal)).rejects.toMatchObject({ status: 429 });
  });
});
