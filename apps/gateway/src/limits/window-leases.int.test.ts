import { randomUUID } from 'node:crypto';
import { createRedisStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { Redis } from 'ioredis';
import { createWindowLeases, type WindowLeases } from './window-leases';

/**
 * Two edges' leases on one request bucket in a real Redis: each edge its own connection and its own leases, hit
 * concurrently the way the rate limiter hits them (the lease when it covers the hit, else the store).
 */
const redisUrl = testBackends().redisUrl;
const prefix = `sbc-test:${randomUUID()}:`;
const logger = createLogger({ service: 'test', level: 'silent' });
const MINUTE = 60_000;

(redisUrl ? describe : describe.skip)('window leases on Redis, two edges', () => {
  const stores: SharedStore[] = [];
  const edges: WindowLeases[] = [];

  beforeEach(() => {
    for (let i = 0; i < 2; i++) {
      const store = createRedisStore(redisUrl!, { keyPrefix: prefix });
      stores.push(store);
      edges.push(createWindowLeases({ store, logger }));
    }
  });
  afterEach(async () => {
    await Promise.all(edges.splice(0).map((edge) => edge.close()));
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });
  afterAll(async () => {
    const redis = new Redis(redisUrl!);
    for await (const keys of redis.scanStream({ match: `${prefix}*`, count: 500 }))
      if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
    await redis.quit();
  });

  async function hit(edge: number, key: string, limit: number): Promise<'leased' | 'store' | 'refused'> {
    if (edges[edge]!.hit(key, limit, MINUTE, 1)) return 'leased';
    const result = await stores[edge]!.slidingWindowHit(key, { limit, windowMs: MINUTE });
    return result.allowed ? 'store' : 'refused';
  }

  it('1,500 hits at 1,200 a minute across two edges admit at most 1,200, most of them with no round trip', async () => {
    // Away from a cell's end, so the window's previous cell plays no part.
    const left = MINUTE - (Date.now() % MINUTE);
    if (left < 15_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    const key = `rl:${randomUUID()}`;
    const outcomes: string[] = [];
    for (let from = 0; from < 1_500; from += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, (_, i) => hit((from + i) % 2, key, 1_200)));
      outcomes.push(...batch);
    }
    const admitted = outcomes.filter((outcome) => outcome !== 'refused').length;
    expect(admitted).toBeLessThanOrEqual(1_200);
    // Leases in flight when the window filled are spent by the calls that follow; none is stranded here.
    expect(admitted).toBeGreaterThanOrEqual(1_200 - 2 * 37);
    expect(outcomes.filter((outcome) => outcome === 'leased').length).toBeGreaterThan(600);
    await Promise.all(edges.map((edge) => edge.close()));
    const counted = await stores[0]!.slidingWindowHit(key, { limit: 1_200, windowMs: MINUTE, cost: 0 });
    // Given back on close: the window holds what was admitted, not what was leased.
    expect(1_200 - counted.remaining).toBe(admitted);
  }, 60_000);
});
