import { randomUUID } from 'node:crypto';
import { createRedisStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { Redis } from 'ioredis';
import type { Principal } from '../auth/authenticator';
import { createRateLimiter, type RateLimiter } from './rate-limit';
import { createWindowLeases, type WindowLeases } from './window-leases';

/**
 * Two edges' rate limiters on one real Redis, each with its own connection and its own leases, admitting calls of
 * one key with a tokens-per-minute limit concurrently the way the model path does (the request hit and the
 * tokens in one take, the real tokens at settle): the limit is never passed, the busy phase makes no round trip
 * per call, and once the edges stop the window holds exactly the tokens used.
 */
const redisUrl = testBackends().redisUrl;
const prefix = `sbc-test:${randomUUID()}:`;
const logger = createLogger({ service: 'test', level: 'silent' });
const MINUTE = 60_000;
const TPM = 600_000;

/** A key of its own for each test, limited to TPM tokens a minute: its id (naming its windows) and its principal. */
function newKey(): { keyId: string; principal: Principal } {
  const keyId = `key_${randomUUID()}`;
  const principal = {
    kind: 'key',
    userId: 'usr_t',
    key: { id: keyId, tpm: BigInt(TPM) },
    scopes: [],
  } as unknown as Principal;
  return { keyId, principal };
}

(redisUrl ? describe : describe.skip)("a key's tokens per minute on Redis, two edges", () => {
  const stores: SharedStore[] = [];
  const edges: WindowLeases[] = [];
  const limiters: RateLimiter[] = [];
  let commands = 0;

  beforeEach(() => {
    for (let i = 0; i < 2; i++) {
      const redis = createRedisStore(redisUrl!, { keyPrefix: prefix });
      // Every way this edge reaches Redis, counted.
      const store: SharedStore = {
        ...redis,
        batch: (ops) => (commands++, redis.batch(ops)),
        slidingWindowHit: (key, options) => (commands++, redis.slidingWindowHit(key, options)),
        getMany: (keys) => (commands++, redis.getMany(keys)),
        get: (key) => (commands++, redis.get(key)),
        incrBy: (...args) => (commands++, redis.incrBy(...args)),
      };
      stores.push(store);
      edges.push(createWindowLeases({ store, logger }));
      limiters.push(createRateLimiter({ store, limitPerMinute: 5_000, leases: edges[i] }));
    }
  });
  afterEach(async () => {
    await Promise.all(edges.splice(0).map((edge) => edge.close()));
    await Promise.all(stores.splice(0).map((store) => store.close()));
    limiters.splice(0);
  });
  afterAll(async () => {
    const redis = new Redis(redisUrl!);
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }))
      if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
    await redis.quit();
  });

  it('calls of 500 counted tokens from both edges never pass the limit together, and end exact', async () => {
    // Away from a cell's end, so the window's previous cell plays no part and the bound over a cell is zero.
    const left = MINUTE - (Date.now() % MINUTE);
    if (left < 20_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    const { keyId, principal } = newKey();
    let used = 0;
    let admitted = 0;
    let refused = 0;
    const call = async (edge: number, i: number) => {
      const limiter = limiters[edge]!;
      try {
        const taken = await limiter.take(limiter.bucket(principal), () => 500);
        admitted++;
        await new Promise((resolve) => setImmediate(resolve));
        // Each call uses part of what it was counted for: its output stopped short of its limit.
        const actual = 250 + (i % 6) * 50;
        await taken.tokens!.settle(actual);
        used += actual;
      } catch (error) {
        expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
        refused++;
      }
    };
    // 2,000 calls of about 375 tokens against 600,000 a minute: the limit binds some way past 1,500.
    for (let from = 0; from < 2_000; from += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => call((from + i) % 2, from + i)));
      // Far from the limit, most calls made no command at all: per call, each costs two (the take and the
      // settle), 800 for these 400; leased, the first calls of each edge, a take every few dozen calls, and the
      // calls of a burst that find a lease spent before its next slice lands (82 when this was written).
      if (from + 20 === 400) expect(commands).toBeLessThan(800 / 6);
      // Used tokens are counted (with every lease's rest) before they are spent: never past the limit.
      expect(used).toBeLessThanOrEqual(TPM);
    }
    expect(refused).toBeGreaterThan(0);
    // Near the limit calls went per call: little of it was left unused.
    expect(used).toBeGreaterThan(TPM - 2 * (TPM / 32) - 20 * 500);
    await Promise.all(edges.map((edge) => edge.close()));
    const window = await stores[0]!.slidingWindowHit(`tpm:${keyId}`, { limit: TPM, windowMs: MINUTE, cost: 0 });
    // Given back on close: the window holds the tokens used, not what was leased or counted.
    expect(TPM - window.remaining).toBe(used);
    const requests = await stores[0]!.slidingWindowHit(`rl:${keyId}`, { limit: 5_000, windowMs: MINUTE, cost: 0 });
    expect(5_000 - requests.remaining).toBe(admitted);
  }, 90_000);

  it('in the steady state a call and its settle make no command at all', async () => {
    const { principal } = newKey();
    const limiter = limiters[0]!;
    const oneCall = async () => (await limiter.take(limiter.bucket(principal), () => 500)).tokens!.settle(300);
    for (let i = 0; i < 16; i++) await oneCall();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = commands;
    for (let i = 0; i < 20; i++) await oneCall();
    expect(commands).toBe(before);
  });
});
