import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { findCatalogModel } from '@sbc/catalog';
import { createLogger } from '@sbc/logging';
import type { Principal } from '../auth/authenticator';
import { createBudget, MILLI } from './budget';
import { createRateLimiter } from './rate-limit';
import { createWindowLeases } from './window-leases';

const logger = createLogger({ service: 'test', level: 'silent' });
const keyed = (id: string) => ({ kind: 'key', userId: 'usr_1', key: { id }, scopes: [] }) as unknown as Principal;
const settled = () => new Promise((resolve) => setImmediate(resolve));
const withTpm = (id: string, tpm: number) =>
  ({ kind: 'key', userId: 'usr_1', key: { id, tpm: BigInt(tpm) }, scopes: [] }) as unknown as Principal;
const tokenHeaders = (limit: number, remaining: number) => ({ 'x-tokens-remaining': `${remaining}/${limit}` });
const MINUTE = 60_000;

/** A store that counts the round trips a caller makes to it. */
function countingStore(): { store: SharedStore; trips: () => number } {
  const inner = createMemoryStore();
  let trips = 0;
  return {
    store: {
      ...inner,
      batch: (ops) => {
        trips++;
        return inner.batch(ops);
      },
    },
    trips: () => trips,
  };
}

describe('per-key request bucket on leases', () => {
  it('a busy key is hit with no round trip, its headers count down, and past its limit the store refuses', async () => {
    const { store, trips } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const hit = createRateLimiter({ store, limitPerMinute: 1_200, leases });
    for (let i = 0; i < 8; i++) await hit(keyed('key_busy'));
    await settled();
    const before = trips();
    const first = await hit(keyed('key_busy'));
    const second = await hit(keyed('key_busy'));
    expect(trips()).toBe(before);
    expect(first).toMatchObject({ 'x-ratelimit-limit': '1200', 'x-ratelimit-remaining': '1191' });
    expect(second).toMatchObject({ 'x-ratelimit-remaining': '1190' });
    await leases.close();

    const small = createWindowLeases({ store, logger });
    const limited = createRateLimiter({ store, limitPerMinute: 40, leases: small });
    let refused = 0;
    for (let i = 0; i < 60; i++) {
      await limited(keyed('key_small')).catch((error: unknown) => {
        expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
        refused++;
      });
      await settled();
    }
    // A lease takes nothing it cannot spend past the limit: exactly the limit is admitted.
    expect(refused).toBe(20);
    await small.close();
  });
});

describe("a key's tokens per minute on leases", () => {
  it('a busy key takes its request hit and tokens from leases, corrects them there at settle, ends exact', async () => {
    const { store, trips } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const limiter = createRateLimiter({ store, limitPerMinute: 1_200, leases });
    const principal = withTpm('key_tpm', 100_000);
    // Each call counts 300 tokens (its prompt and output limit) and uses 100.
    for (let i = 0; i < 8; i++)
      await (await limiter.take(limiter.bucket(principal, tokenHeaders), () => 300)).tokens!.settle(100);
    await settled();
    const before = trips();
    const first = await limiter.take(limiter.bucket(principal, tokenHeaders), () => 300);
    expect(first.headers).toMatchObject({
      'x-ratelimit-remaining': '1191',
      // 800 used before, and this call's 300 counted.
      'x-tokens-remaining': `${100_000 - 800 - 300}/100000`,
    });
    await first.tokens!.settle(100);
    const second = await limiter.take(limiter.bucket(principal, tokenHeaders), () => 300);
    expect(second.headers).toMatchObject({ 'x-tokens-remaining': `${100_000 - 900 - 300}/100000` });
    await second.tokens!.settle(450);
    expect(trips()).toBe(before);
    await leases.close();
    const window = async (key: string, limit: number) =>
      limit - (await store.slidingWindowHit(key, { limit, windowMs: MINUTE, cost: 0 })).remaining;
    // Given back on close: the windows hold what was used, not what was leased.
    expect(await window('tpm:key_tpm', 100_000)).toBe(800 + 100 + 450);
    expect(await window('rl:key_tpm', 1_200)).toBe(10);
  });

  it('calls too large for a slice of the key tpm go per call, and the store refuses past it as before', async () => {
    const { store, trips } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const limiter = createRateLimiter({ store, limitPerMinute: 1_200, leases });
    const principal = withTpm('key_small_tpm', 10_000);
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      const before = trips();
      await limiter
        .take(limiter.bucket(principal, tokenHeaders), () => 600)
        .catch((error: unknown) => {
          expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
          refused++;
        });
      // 8 × 600 is more than 10,000 / 32: every call is the store's, with no lease taken.
      expect(trips()).toBeGreaterThan(before);
      await settled();
    }
    expect(refused).toBe(20 - 16);
    await leases.close();
  });

  it('a call its budget refuses gives its tokens back to the lease they came from', async () => {
    const { store } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const limiter = createRateLimiter({ store, limitPerMinute: 1_200, leases });
    const budget = createBudget({ store });
    const principal = withTpm('key_refused', 100_000);
    for (let i = 0; i < 8; i++) await (await limiter.take(limiter.bucket(principal), () => 300)).tokens!.settle(300);
    await settled();
    await store.set('credits:available:usr_r', '1');
    const call = {
      price: findCatalogModel('house')!.price,
      inputTokens: { bound: 100, count: () => 100 },
      requestedOutputTokens: 200,
      modelOutputTokens: 128_000,
    };
    await expect(
      budget.reserveCall({ userId: 'usr_r' }, call, { bucket: limiter.bucket(principal, tokenHeaders) }),
    ).rejects.toMatchObject({ code: 'budget_exhausted' });
    await store.set('credits:available:usr_r', String(10 * MILLI));
    const admitted = await budget.reserveCall({ userId: 'usr_r' }, call, {
      bucket: limiter.bucket(principal, tokenHeaders),
    });
    // The refused call's 300 tokens are no longer counted: only the 8 before and this one's.
    expect(admitted.headers).toMatchObject({ 'x-tokens-remaining': `${100_000 - 2_400 - 300}/100000` });
    await leases.close();
    expect(
      100_000 -
        (await store.slidingWindowHit('tpm:key_refused', { limit: 100_000, windowMs: MINUTE, cost: 0 })).remaining,
    ).toBe(2_400 + 300);
  });
});
