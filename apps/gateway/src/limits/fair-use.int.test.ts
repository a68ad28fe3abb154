import { randomUUID } from 'node:crypto';
import { createRedisStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { Redis } from 'ioredis';
import { createBudget, MILLI, type Budget } from './budget';
import { createFairUseViews, fairUseKeys, type FairUseViewOptions, type FairUseViews } from './fair-use';

/**
 * Two edges' house-fast fair use on one real Redis, each with its own connection and its own views, used by one
 * user the way the model path does (is fair use left? then count what the call used): the busy phase makes no
 * round trip per call, the allowance refuses once it is spent, within the documented overshoot, and once the
 * edges stop the counters hold exactly what was used.
 */
const redisUrl = testBackends().redisUrl;
const prefix = `sbc-test:${randomUUID()}:`;
const logger = createLogger({ service: 'test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

(redisUrl ? describe : describe.skip)('house-fast fair use on Redis, two edges', () => {
  const stores: SharedStore[] = [];
  const views: FairUseViews[] = [];
  const budgets: Budget[] = [];
  let commands = 0;

  function edges(options: Partial<FairUseViewOptions> = {}) {
    for (let i = 0; i < 2; i++) {
      const redis = createRedisStore(redisUrl!, { keyPrefix: prefix });
      const store: SharedStore = {
        ...redis,
        batch: (ops) => (commands++, redis.batch(ops)),
        getMany: (keys) => (commands++, redis.getMany(keys)),
        get: (key) => (commands++, redis.get(key)),
        incrBy: (...args) => (commands++, redis.incrBy(...args)),
      };
      stores.push(store);
      views.push(createFairUseViews({ store, logger, options }));
      budgets.push(createBudget({ store, fairUse: views[i] }));
    }
  }
  afterEach(async () => {
    await Promise.all(views.splice(0).map((edge) => edge.close()));
    await Promise.all(stores.splice(0).map((store) => store.close()));
    budgets.splice(0);
    commands = 0;
  });
  afterAll(async () => {
    const redis = new Redis(redisUrl!);
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }))
      if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
    await redis.quit();
  });

  /** What the store holds of the user's 5-hour and 7-day windows, in credits. */
  async function inStore(userId: string): Promise<{ hours: number; days: number }> {
    const values = (await stores[0]!.getMany(fairUseKeys(userId, Date.now()))).map((value) => Number(value ?? 0));
    const sum = (from: number, to: number) => values.slice(from, to).reduce((a, b) => a + b, 0) / MILLI;
    return { hours: sum(0, 5), days: sum(5, 12) };
  }

  /** A house-fast call: free while fair use is left, and then counted. */
  async function call(edge: number, userId: string, credits: number): Promise<boolean> {
    if (!(await budgets[edge]!.fairUseLeft(userId))) return false;
    await new Promise((resolve) => setImmediate(resolve));
    await budgets[edge]!.recordFairUse(userId, credits * MILLI);
    return true;
  }

  it('far from the allowance, 200 calls on two edges cost a few commands, and the counters end exact', async () => {
    edges();
    const userId = `usr_${randomUUID()}`;
    for (let from = 0; from < 200; from += 10)
      await Promise.all(Array.from({ length: 10 }, (_, i) => call((from + i) % 2, userId, 1)));
    // A read per edge, and perhaps a flush each if their second came round; per call it would be 3 each.
    expect(commands).toBeLessThanOrEqual(6);
    await Promise.all(views.map((edge) => edge.close()));
    expect(await inStore(userId)).toEqual({ hours: 200, days: 200 });
  });

  it('refuses once spent, past it by the calls in flight at most, and the counters hold what was used', async () => {
    // Short intervals, so a test second holds many of them: an edge sees the other's use within 40 ms.
    edges({ refreshMs: 20, flushMs: 20 });
    const userId = `usr_${randomUUID()}`;
    let used = 0;
    let usedAtFirstRefusal: number | undefined;
    for (let round = 0; round < 1_000; round++) {
      const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => call(i % 2, userId, 1)));
      for (const served of outcomes)
        if (served) used++;
        else usedAtFirstRefusal ??= used;
      if (outcomes.every((served) => !served)) break;
      await sleep(5);
    }
    // A refusal only ever comes from use that happened: 500 credits of the 5-hour window.
    expect(usedAtFirstRefusal).toBeGreaterThanOrEqual(500);
    // Each edge was within a tenth of the allowance, and so per call, before the other passed it (it learns of the
    // other's use within 40 ms, about 8 rounds of 4 calls); per call, the overshoot is the 8 calls of one round.
    expect(used).toBeLessThanOrEqual(500 + 8);
    await Promise.all(views.map((edge) => edge.close()));
    expect(await inStore(userId)).toEqual({ hours: used, days: used });
  }, 60_000);
});
