import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import fc from 'fast-check';
import { createWindowLeases, type WindowLeaseOptions, type WindowLeases } from './window-leases';

const logger = createLogger({ service: 'test', level: 'silent' });
/** An hour-long window: a test takes milliseconds, so it never crosses a cell's end. */
const HOUR = 3_600_000;
const settled = () => new Promise((resolve) => setImmediate(resolve));

/** What the store's window holds for everyone now. */
async function storeRemaining(store: SharedStore, key: string, limit: number): Promise<number> {
  return (await store.slidingWindowHit(key, { limit, windowMs: HOUR, cost: 0 })).remaining;
}

/** A hit as the rate limiter makes it: from the lease when it covers it, else the store decides. */
async function admit(
  leases: WindowLeases,
  store: SharedStore,
  key: string,
  limit: number,
): Promise<'leased' | 'store' | false> {
  if (leases.hit(key, limit, HOUR, 1)) return 'leased';
  return (await store.slidingWindowHit(key, { limit, windowMs: HOUR })).allowed && 'store';
}

describe('window leases', () => {
  let clock = 0;
  const now = () => clock;
  const made: WindowLeases[] = [];
  const leasesOn = (store: SharedStore, options: Partial<WindowLeaseOptions> = {}) => {
    const leases = createWindowLeases({ store, logger, now, options: { idleMs: 60_000, ...options } });
    made.push(leases);
    return leases;
  };
  beforeEach(() => {
    clock = 1_000;
  });
  afterEach(async () => {
    await Promise.all(made.splice(0).map((leases) => leases.close()));
  });

  it('a window hit now and then takes no lease: every hit goes to the store', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    for (let i = 0; i < 5; i++) {
      clock += 400;
      expect(leases.hit('rl:a', 1_200, HOUR, 1)).toBeUndefined();
      await settled();
    }
    expect(await storeRemaining(store, 'rl:a', 1_200)).toBe(1_200);
  });

  it('a busy window is served from a lease taken in the background, and its rest goes back on close', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    for (let i = 0; i < 8; i++) expect(leases.hit('rl:b', 1_200, HOUR, 1)).toBeUndefined();
    await settled();
    // The take was sized from the rate (8 hits in a moment), capped at 1/32 of the limit.
    expect(await storeRemaining(store, 'rl:b', 1_200)).toBe(1_200 - 37);
    const hit = leases.hit('rl:b', 1_200, HOUR, 1);
    expect(hit).toMatchObject({ limit: 1_200, remaining: 1_200 - 1 });
    expect(leases.hit('rl:b', 1_200, HOUR, 5)).toMatchObject({ remaining: 1_200 - 6 });
    await leases.close();
    // Only what was spent stays counted.
    expect(await storeRemaining(store, 'rl:b', 1_200)).toBe(1_200 - 6);
    expect(leases.hit('rl:b', 1_200, HOUR, 1)).toBeUndefined();
  });

  it('a lease unused for its idle time is given back', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store, { idleMs: 40 });
    clock = 0;
    for (let i = 0; i < 9; i++) leases.hit('rl:c', 1_200, HOUR, 1);
    await settled();
    expect(leases.hit('rl:c', 1_200, HOUR, 1)).toBeDefined();
    clock = 1_000;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await storeRemaining(store, 'rl:c', 1_200)).toBe(1_200 - 1);
  });

  it('one costly hit is not demand: it takes no lease', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    expect(leases.hit('rl:e', 1_200, HOUR, 20)).toBeUndefined();
    await settled();
    expect(await storeRemaining(store, 'rl:e', 1_200)).toBe(1_200);
  });

  it('a small limit is never leased: a key with rpm 20 is judged per call', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    let admitted = 0;
    for (let i = 0; i < 30; i++) {
      if (await admit(leases, store, 'rl:d', 20)) admitted++;
      await settled();
    }
    expect(admitted).toBe(20);
  });

  it('edges sharing a window never admit more than its limit together, and return every unspent hit', async () => {
    let fromLeases = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 40, max: 600 }),
        fc.array(fc.tuple(fc.nat(3), fc.integer({ min: 0, max: 3 })), { minLength: 50, maxLength: 900 }),
        async (edgeCount, limit, steps) => {
          const store = createMemoryStore();
          const edges = Array.from({ length: edgeCount }, () => leasesOn(store));
          const key = 'rl:shared';
          let admitted = 0;
          for (const [edge, pause] of steps) {
            const how = await admit(edges[edge % edgeCount]!, store, key, limit);
            if (how) admitted++;
            if (how === 'leased') fromLeases++;
            // Background takes land between hits at random points.
            for (let i = 0; i < pause; i++) await settled();
            // Every hit admitted is counted in the store (a lease's before it is spent), so no edge sees room
            // that another has used, and the limit is never passed.
            expect(limit - (await storeRemaining(store, key, limit))).toBeGreaterThanOrEqual(admitted);
            expect(admitted).toBeLessThanOrEqual(limit);
          }
          await settled();
          await Promise.all(edges.map((leases) => leases.close()));
          // Nothing leased and unspent stays counted: the window holds exactly the hits admitted.
          expect(limit - (await storeRemaining(store, key, limit))).toBe(admitted);
        },
      ),
      { numRuns: 60 },
    );
    // The runs did exercise leases, not only the store.
    expect(fromLeases).toBeGreaterThan(1_000);
  });
});
