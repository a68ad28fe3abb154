import { randomUUID } from 'node:crypto';
import { createRedisStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { Redis } from 'ioredis';
import { createBudget, MILLI, type Budget } from './budget';
import { createCounterLeases, type CounterLeases } from './counter-leases';

/**
 * Two edges' budgets on one real Redis, each with its own connection and its own leases, reserving for one team
 * cap and one balance concurrently: the cap is never overdrawn, the busy phase is served from leases, and once
 * the edges stop the counters hold exactly what was charged.
 */
const redisUrl = testBackends().redisUrl;
const prefix = `sbc-test:${randomUUID()}:`;
const logger = createLogger({ service: 'test', level: 'silent' });
const utcDay = () => new Date().toISOString().slice(0, 10).replace(/-/g, '');

(redisUrl ? describe : describe.skip)('budget leases on Redis, two edges', () => {
  const stores: SharedStore[] = [];
  const leases: CounterLeases[] = [];
  const budgets: Budget[] = [];
  let trips = 0;

  beforeEach(() => {
    for (let i = 0; i < 2; i++) {
      const redis = createRedisStore(redisUrl!, { keyPrefix: prefix });
      const store: SharedStore = {
        ...redis,
        batch: (ops) => {
          trips++;
          return redis.batch(ops);
        },
      };
      stores.push(store);
      leases.push(createCounterLeases({ store, logger }));
      budgets.push(createBudget({ store, leases: leases[i] }));
    }
  });
  afterEach(async () => {
    await Promise.all(leases.splice(0).map((edge) => edge.close()));
    await Promise.all(stores.splice(0).map((store) => store.close()));
    budgets.splice(0);
  });
  afterAll(async () => {
    const redis = new Redis(redisUrl!);
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }))
      if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
    await redis.quit();
  });

  it('a daily cap reserved from both edges at once is never overdrawn, and ends exact', async () => {
    const userId = `usr_${randomUUID()}`;
    const subject = { userId, keyId: `key_${randomUUID()}`, dailyCapCredits: 200 };
    await stores[0]!.set(`credits:available:${userId}`, String(1_000 * MILLI));
    const capKey = `spend:key:${subject.keyId}:d:${utcDay()}`;
    let charged = 0;
    let held = 0;
    let admitted = 0;
    let refused = 0;
    const call = async (edge: number) => {
      try {
        const reservation = await budgets[edge]!.reserve(subject, 300);
        admitted++;
        held += 300;
        // Spend and every reservation in flight, leased or not, fit the cap.
        expect(charged + held).toBeLessThanOrEqual(200 * MILLI);
        await new Promise((resolve) => setImmediate(resolve));
        await reservation.settle(120);
        held -= 300;
        charged += 120;
      } catch (error) {
        expect(error).toMatchObject({ code: 'budget_exhausted', extra: { budget: 'key_daily' } });
        refused++;
      }
    };
    // 2,000 calls of 0.3 credits' worst case, 0.12 charged, against 200 credits: the cap binds part way.
    for (let from = 0; from < 2_000; from += 20) {
      await Promise.all(Array.from({ length: 20 }, (_, i) => call((from + i) % 2)));
      // Far from the cap, most calls made no round trip (a per-call reservation costs two: reserve and settle).
      if (from + 20 === 1_000) expect(trips).toBeLessThan(1_000 / 4);
    }
    expect(refused).toBeGreaterThan(0);
    expect(charged).toBeLessThanOrEqual(200 * MILLI);
    // Near the cap the last credits went per call: at most one call's worst case was left unused.
    expect(charged).toBeGreaterThan(200 * MILLI - 2 * 300 - 2 * 8 * 300);
    await Promise.all(leases.map((edge) => edge.close()));
    expect(Number(await stores[0]!.get(capKey))).toBe(charged);
    expect(Number(await stores[0]!.get(`credits:available:${userId}`))).toBe(1_000 * MILLI - charged);
    expect(admitted).toBe(charged / 120);
  }, 120_000);
});
