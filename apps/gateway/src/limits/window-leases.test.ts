import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import fc from 'fast-check';
import { createWindowLeases, type WindowHit, type WindowLeaseOptions, type WindowLeases } from './window-leases';

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

describe('window leases sized in calls (a key tokens per minute)', () => {
  let clock = 0;
  const now = () => clock;
  const made: WindowLeases[] = [];
  const leasesOn = (store: SharedStore) => {
    const leases = createWindowLeases({ store, logger, now, options: { idleMs: 60_000 } });
    made.push(leases);
    return leases;
  };
  const request = (limit = 100_000): WindowHit => ({ key: 'rl:t', limit, windowMs: HOUR, cost: 1 });
  const tokens = (cost: number, limit = 64_000): WindowHit => ({
    key: 'tpm:t',
    limit,
    windowMs: HOUR,
    cost,
    sizing: 'calls',
  });
  beforeEach(() => {
    clock = 1_000;
  });
  afterEach(async () => {
    await Promise.all(made.splice(0).map((leases) => leases.close()));
  });

  it('a slice is at most 1/32 of the limit, and at least 8 of the largest recent calls', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    // 8 calls of 200 tokens at once: the rate asks for far more than 1/32 of 64,000, which is 2,000.
    for (let i = 0; i < 8; i++) expect(leases.hitAll([request(), tokens(200)])).toBeUndefined();
    await settled();
    expect(await storeRemaining(store, 'tpm:t', 64_000)).toBe(64_000 - 2_000);
    // 7 calls of 10 tokens and one of 200 within 0.7 s: the rate asks for under 400, the smallest slice is 8 × 200.
    for (let i = 0; i < 8; i++) {
      clock += 100;
      expect(leases.hitAll([request(), tokens(i === 0 ? 200 : 10, 640_000)])).toBeUndefined();
    }
    await settled();
    expect(await storeRemaining(store, 'tpm:t', 640_000)).toBe(640_000 - 1_600);
  });

  it('calls too large for a slice of 1/32 of the limit are never leased', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    // 8 × 300 = 2,400 tokens is more than 64,000 / 32: every call goes to the store.
    for (let i = 0; i < 20; i++) {
      expect(leases.hitAll([request(), tokens(300)])).toBeUndefined();
      await settled();
    }
    expect(await storeRemaining(store, 'tpm:t', 64_000)).toBe(64_000);
  });

  it('a call is taken from both leases or from neither', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    for (let i = 0; i < 8; i++) leases.hitAll([request(), tokens(100)]);
    await settled();
    // Both leases are held now (3,125 hits, 2,000 tokens); a call of 2,100 tokens fits the request lease only.
    expect(leases.hitAll([request(), tokens(2_100)])).toBeUndefined();
    const [hit, counted] = leases.hitAll([request(), tokens(100)])!;
    // The call that did not fit took nothing from the request lease: this one is its first hit.
    expect(hit!.remaining).toBe(100_000 - 1);
    expect(counted!.remaining).toBe(64_000 - 100);
  });

  it('a correction is made on the lease while it is held, and in the store once it is given back', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    for (let i = 0; i < 8; i++) leases.hitAll([request(), tokens(100)]);
    await settled();
    const [, first] = leases.hitAll([request(), tokens(100)])!;
    const [, second] = leases.hitAll([request(), tokens(100)])!;
    // 40 of 100 used: the 60 go back to the lease, no store operation.
    expect(first!.correct(40)).toBeUndefined();
    // 150 used: the 50 past the count are taken from the lease.
    expect(second!.correct(150)).toBeUndefined();
    await leases.close();
    expect(await storeRemaining(store, 'tpm:t', 64_000)).toBe(64_000 - 40 - 150);
    // After the lease went back, a correction is the store's to make.
    const late = leasesOn(store);
    for (let i = 0; i < 8; i++) late.hitAll([request(), tokens(100)]);
    await settled();
    const [, third] = late.hitAll([request(), tokens(100)])!;
    await late.close();
    const op = third!.correct(30);
    expect(op).toMatchObject({ op: 'windowReturn', key: 'tpm:t', amount: 70 });
    await store.batch([op!]);
    expect(await storeRemaining(store, 'tpm:t', 64_000)).toBe(64_000 - 40 - 150 - 30);
  });

  it('edges sharing a tokens window never pass its limit together, and end holding what was used', async () => {
    let fromLeases = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 2_000, max: 40_000 }),
        fc.array(fc.tuple(fc.nat(2), fc.integer({ min: 1, max: 60 }), fc.nat(100), fc.nat(2)), {
          minLength: 50,
          maxLength: 600,
        }),
        async (edgeCount, limit, steps) => {
          const store = createMemoryStore();
          const edges = Array.from({ length: edgeCount }, () => leasesOn(store));
          const key = 'tpm:shared';
          let admitted = 0;
          let used = 0;
          // A call uses at most what it was counted for (its prompt and its output limit).
          for (const [edge, counted, percentUsed, pause] of steps) {
            const actual = Math.floor((counted * percentUsed) / 100);
            const hit: WindowHit = { key, limit, windowMs: HOUR, cost: counted, sizing: 'calls' };
            const [leased] = edges[edge % edgeCount]!.hitAll([hit]) ?? [];
            if (leased) {
              fromLeases++;
              const op = leased.correct(actual);
              if (op) await store.batch([op]);
              admitted++;
              used += actual;
            } else if ((await store.slidingWindowHit(key, { limit, windowMs: HOUR, cost: counted })).allowed) {
              await store.batch([{ op: 'windowAdjust', key, windowMs: HOUR, amount: actual - counted }]);
              admitted++;
              used += actual;
            }
            for (let i = 0; i < pause; i++) await settled();
            // What was used is counted in the store (with every lease's rest), so it never passes the limit.
            expect(limit - (await storeRemaining(store, key, limit))).toBeGreaterThanOrEqual(used);
          }
          await settled();
          await Promise.all(edges.map((leases) => leases.close()));
          expect(limit - (await storeRemaining(store, key, limit))).toBe(used);
          expect(admitted).toBeGreaterThan(0);
        },
      ),
      { numRuns: 60 },
    );
    expect(fromLeases).toBeGreaterThan(1_000);
  });
});
