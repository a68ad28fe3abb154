import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { findCatalogModel } from '@sbc/catalog';
import { ApiError } from '@sbc/errors';
import { createBudget, MILLI } from './budget';
import { createRateLimiter } from './rate-limit';

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
      bucket: limiter.bucket('key_a'),
    });
    expect(trips()).toBe(1);
    expect(admitted.outputTokens).toBe(128_000);
    expect(admitted.headers).toMatchObject({ 'x-ratelimit-remaining': '9' });
  });

  it(
    'without an output limit, shrinks the call to the room ' + 'its first try found, and counts the request once',
    async () => {
      const store = createMemoryStore();
      const limiter = createRateLimiter({ store, limitPerMinute: 10 });
      const budget = createBudget({ store });
      // 1 credit of daily cap: at 0.8 millicredits a token, about 1,200 output tokens after the prompt.
      const admitted = await budget.reserveCall({ userId: 'usr_b', keyId: 'key_b', dailyCapCredits: 1 }, call(), {
        bucket: limiter.bucket('key_b'),
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
      .reserveCall({ userId: 'usr_c', keyId: 'key_c' }, call(100), { bucket: limiter.bucket('key_c') })
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
      bucket: limiter.bucket('key_d'),
    });
    const spentBefore = await store.getMany([
      `spend:key:key_d:d:${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`,
    ]);
    const refusal = await budget
      .reserveCall({ userId: 'usr_d', keyId: 'key_d', dailyCapCredits: 5 }, call(10), {
        bucket: limiter.bucket('key_d'),
      })
      .catch((e: unknown) => e);
    expect(refusal).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(
      await store.getMany([`spend:key:key_d:d:${new Date().toISOString().slice(0, 10).replace(/-/g, '')}`]),
    ).toEqual(spentBefore);
  });
});
