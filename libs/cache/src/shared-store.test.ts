import { randomUUID } from 'node:crypto';
import { testBackends } from '@sbc/testing';
import { Redis } from 'ioredis';
import { createMemoryStore } from './memory-store';
import { createRedisStore } from './redis-store';
import type { SharedStore } from './shared-store';
import type { WindowLeaseResult } from './sliding-window';

/**
 * One contract for every SharedStore: the memory adapter always, Redis when the run has one. Keys live under a
 * random prefix per run so parallel runs against one Redis never see each other's counters.
 */
const redisUrl = testBackends().redisUrl;
const runPrefix = `sbc-test:${randomUUID()}:`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `offsetMs` into the next cell of `windowMs`, so a test starts at a known point of the window. */
async function alignToCell(windowMs: number, offsetMs: number): Promise<void> {
  const now = Date.now();
  await sleep(Math.floor(now / windowMs) * windowMs + windowMs + offsetMs - now);
}

function storeContract(makeStore: () => SharedStore): void {
  let store: SharedStore;
  let n = 0;
  const key = (name: string) => `${name}:${++n}`;

  beforeAll(() => {
    store = makeStore();
  });
  afterAll(async () => {
    await store.close();
  });

  describe('strings', () => {
    it('a value that was set is read back until it is deleted', async () => {
      const k = key('s');
      expect(await store.get(k)).toBeNull();
      await store.set(k, 'v1');
      expect(await store.get(k)).toBe('v1');
      await store.set(k, 'v2');
      expect(await store.get(k)).toBe('v2');
      await store.del(k);
      expect(await store.get(k)).toBeNull();
    });

    it('a value set with a ttl disappears after it', async () => {
      const k = key('ttl');
      await store.set(k, 'v', 80);
      expect(await store.get(k)).toBe('v');
      await sleep(160);
      expect(await store.get(k)).toBeNull();
    });

    it('getMany returns values in key order with null for missing and expired keys', async () => {
      const [a, b, c, d] = [key('m'), key('m'), key('m'), key('m')];
      await store.set(a, 'A');
      await store.set(c, 'C');
      await store.set(d, 'D', 50);
      await sleep(120);
      expect(await store.getMany([a, b, c, d])).toEqual(['A', null, 'C', null]);
      expect(await store.getMany([])).toEqual([]);
    });

    it('a non-positive ttl is refused', async () => {
      await expect(store.set(key('bad'), 'v', 0)).rejects.toThrow(RangeError);
      await expect(store.incrBy(key('bad'), 1, -5)).rejects.toThrow(RangeError);
    });
  });

  describe('incrBy', () => {
    it('creates, adds and subtracts, returning the new value', async () => {
      const k = key('c');
      expect(await store.incrBy(k, 5)).toBe(5);
      expect(await store.incrBy(k, -2)).toBe(3);
      expect(await store.get(k)).toBe('3');
    });

    it('concurrent increments are never lost', async () => {
      const k = key('c');
      await Promise.all(Array.from({ length: 100 }, () => store.incrBy(k, 3)));
      expect(await store.get(k)).toBe('300');
    });

    it('the ttl is set by the increment that creates the key and not extended by later ones', async () => {
      const k = key('c');
      await store.incrBy(k, 1, 100);
      await store.incrBy(k, 1, 60_000);
      expect(await store.get(k)).toBe('2');
      await sleep(200);
      expect(await store.get(k)).toBeNull();
      expect(await store.incrBy(k, 1, 60_000)).toBe(1); // a new period starts from zero
    });

    it('a counter lease takes a share of the room up to the limit, or of a balance, in one step', async () => {
      const cap = key('cap');
      const lease = { sign: 1 as const, limit: 1_000, want: 300, min: 50, share: 4, ttlMs: 60_000 };
      expect(await store.batch([{ op: 'counterLease', key: cap, lease }])).toEqual([{ granted: 250, present: true }]);
      expect(await store.get(cap)).toBe('250');
      expect(await store.batch([{ op: 'counterLease', key: cap, lease }])).toEqual([{ granted: 187, present: true }]);
      await store.incrBy(cap, 400);
      // 163 left: a quarter of it is under the smallest slice worth taking.
      expect(await store.batch([{ op: 'counterLease', key: cap, lease }])).toEqual([{ granted: 0, present: true }]);
      expect(await store.get(cap)).toBe('837');

      const balance = key('bal');
      const down = { sign: -1 as const, want: 100, min: 10, share: 2 };
      // A balance nobody published has no lease and is not created.
      expect(await store.batch([{ op: 'counterLease', key: balance, lease: down }])).toEqual([
        { granted: 0, present: false },
      ]);
      expect(await store.get(balance)).toBeNull();
      await store.set(balance, '120');
      expect(await store.batch([{ op: 'counterLease', key: balance, lease: down }])).toEqual([
        { granted: 60, present: true },
      ]);
      expect(await store.get(balance)).toBe('60');
    });

    it('a set in a batch expires after its ttl', async () => {
      const marker = key('set');
      expect(await store.batch([{ op: 'set', key: marker, value: '1', ttlMs: 80 }])).toEqual([null]);
      expect(await store.get(marker)).toBe('1');
      await sleep(160);
      expect(await store.get(marker)).toBeNull();
    });

    it('concurrent counter leases never hand out more than the limit', async () => {
      const cap = key('cap');
      const lease = { sign: 1 as const, limit: 10_000, want: 3_000, min: 1, share: 2 };
      const results = await Promise.all(
        Array.from({ length: 30 }, () => store.batch([{ op: 'counterLease', key: cap, lease }])),
      );
      const granted = results.reduce((sum, [result]) => sum + (result as { granted: number }).granted, 0);
      expect(granted).toBeLessThanOrEqual(10_000);
      expect(Number(await store.get(cap))).toBe(granted);
    });

    it('a fractional amount and a non-integer value are refused', async () => {
      const k = key('c');
      await expect(store.incrBy(k, 1.5)).rejects.toThrow(RangeError);
      await store.set(k, 'not a number');
      await expect(store.incrBy(k, 1)).rejects.toThrow(/not an integer/);
    });
  });

  describe('slidingWindowHit', () => {
    // An hour-long window: a test takes milliseconds, so crossing a cell edge mid-test is vanishingly rare.
    const hour = 3_600_000;

    it('allows up to the limit, then refuses without counting the refused hit', async () => {
      const k = key('w');
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await store.slidingWindowHit(k, { limit: 5, windowMs: hour }));
      expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
      expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
      const last = results[5]!;
      expect(last.limit).toBe(5);
      expect(last.resetMs).toBeGreaterThan(0);
      expect(last.resetMs).toBeLessThanOrEqual(hour);
      expect(last.retryAfterMs).toBeGreaterThan(0);
      // A cost-0 hit reads the window: still 0 remaining, so the refused hits were not counted.
      expect(await store.slidingWindowHit(k, { limit: 5, windowMs: hour, cost: 0 })).toMatchObject({
        allowed: true,
        remaining: 0,
      });
    });

    it('a hit with a cost consumes that many units and is refused when they do not fit', async () => {
      const k = key('w');
      expect(await store.slidingWindowHit(k, { limit: 10, windowMs: hour, cost: 7 })).toMatchObject({
        allowed: true,
        remaining: 3,
      });
      expect(await store.slidingWindowHit(k, { limit: 10, windowMs: hour, cost: 4 })).toMatchObject({
        allowed: false,
        remaining: 3,
      });
      expect(await store.slidingWindowHit(k, { limit: 10, windowMs: hour, cost: 3 })).toMatchObject({
        allowed: true,
        remaining: 0,
      });
    });

    it('concurrent hits never admit more than the limit', async () => {
      const k = key('w');
      const results = await Promise.all(
        Array.from({ length: 60 }, () => store.slidingWindowHit(k, { limit: 25, windowMs: hour })),
      );
      expect(results.filter((r) => r.allowed)).toHaveLength(25);
    });

    it('keys are independent', async () => {
      const a = key('w');
      const b = key('w');
      await store.slidingWindowHit(a, { limit: 1, windowMs: hour });
      expect((await store.slidingWindowHit(a, { limit: 1, windowMs: hour })).allowed).toBe(false);
      expect((await store.slidingWindowHit(b, { limit: 1, windowMs: hour })).allowed).toBe(true);
    });

    it('the previous cell counts in proportion to its overlap with the window, then drops out', async () => {
      const windowMs = 1000;
      const k = key('w');
      await alignToCell(windowMs, 20);
      for (let i = 0; i < 10; i++)
        expect((await store.slidingWindowHit(k, { limit: 10, windowMs })).allowed).toBe(true);
      expect((await store.slidingWindowHit(k, { limit: 10, windowMs })).allowed).toBe(false);
      // Half way through the next cell the 10 earlier hits weigh ~5, leaving room for ~5 more (4..6 allows for
      // timer jitter of a few tens of ms either side of the midpoint).
      await alignToCell(windowMs, 500);
      let admitted = 0;
      for (let i = 0; i < 10; i++) if ((await store.slidingWindowHit(k, { limit: 10, windowMs })).allowed) admitted++;
      expect(admitted).toBeGreaterThanOrEqual(4);
      expect(admitted).toBeLessThanOrEqual(6);
      // Two cells later neither counted cell overlaps the window any more.
      await sleep(2 * windowMs);
      const fresh = await store.slidingWindowHit(k, { limit: 10, windowMs, cost: 0 });
      expect(fresh.remaining).toBe(10);
    });

    it('a batch runs its operations in order, in one round trip, each on its own key', async () => {
      const [counter, balance, missing, window] = [key('b'), key('b'), key('b'), key('b')];
      await store.set(balance, '100');
      const results = await store.batch([
        { op: 'window', key: window, options: { limit: 2, windowMs: 60_000 } },
        { op: 'incrBy', key: counter, amount: 7, ttlMs: 60_000 },
        { op: 'incrIfExists', key: balance, amount: -30 },
        { op: 'incrIfExists', key: missing, amount: -30 },
        { op: 'window', key: window, options: { limit: 2, windowMs: 60_000, cost: 2 } },
      ]);
      expect(results[0]).toMatchObject({ allowed: true, remaining: 1 });
      expect(results.slice(1, 4)).toEqual([7, 70, null]);
      expect(results[4]).toMatchObject({ allowed: false });
      // A balance nobody published is not created by spending from it.
      expect(await store.get(missing)).toBeNull();
      expect(await store.batch([])).toEqual([]);
    });

    it('a window charged more than a hit cost is corrected down, never below zero', async () => {
      const window = key('t');
      const windowMs = 60_000;
      await store.batch([{ op: 'window', key: window, options: { limit: 1000, windowMs, cost: 600 } }]);
      expect(await store.batch([{ op: 'windowAdjust', key: window, windowMs, amount: -450 }])).toEqual([null]);
      const read = await store.slidingWindowHit(window, { limit: 1000, windowMs, cost: 0 });
      // Read in the same minute-long cell as the hit (a cell edge in between only lowers it further).
      expect(read.remaining).toBeGreaterThanOrEqual(850);
      await store.batch([{ op: 'windowAdjust', key: window, windowMs, amount: -5_000 }]);
      expect((await store.slidingWindowHit(window, { limit: 1000, windowMs, cost: 0 })).remaining).toBe(1000);
      // A window nobody hit is not created by a correction.
      await store.batch([{ op: 'windowAdjust', key: key('t'), windowMs, amount: -5 }]);
    });

    it('a batch with a malformed operation runs none of them', async () => {
      const counter = key('b');
      await expect(
        store.batch([
          { op: 'incrBy', key: counter, amount: 1 },
          { op: 'incrBy', key: counter, amount: 1.5 },
        ]),
      ).rejects.toThrow(RangeError);
      expect(await store.get(counter)).toBeNull();
    });

    it('a lease takes a share of the room at once, counted at once, and what is given back frees it', async () => {
      const window = key('lease');
      const lease = { limit: 100, windowMs: hour, want: 40, min: 5, share: 4 };
      const [first] = (await store.batch([{ op: 'windowLease', key: window, lease }])) as WindowLeaseResult[];
      // At most a quarter of the room: 25 of the 40 wanted.
      expect(first).toMatchObject({ granted: 25, remaining: 75, limit: 100 });
      expect(first!.resetMs).toBeGreaterThan(0);
      expect((await store.slidingWindowHit(window, { limit: 100, windowMs: hour, cost: 0 })).remaining).toBe(75);
      const [second] = (await store.batch([{ op: 'windowLease', key: window, lease }])) as WindowLeaseResult[];
      expect(second).toMatchObject({ granted: 18, remaining: 57, cell: first!.cell });
      const returned = await store.batch([
        { op: 'windowReturn', key: window, windowMs: hour, cell: first!.cell, amount: 20 },
      ]);
      expect(returned).toEqual([null]);
      expect((await store.slidingWindowHit(window, { limit: 100, windowMs: hour, cost: 0 })).remaining).toBe(77);
      // Giving back more than was counted stops at zero; a cell long gone is left alone.
      await store.batch([
        { op: 'windowReturn', key: window, windowMs: hour, cell: first!.cell, amount: 500 },
        { op: 'windowReturn', key: window, windowMs: hour, cell: first!.cell - 5, amount: 500 },
      ]);
      expect((await store.slidingWindowHit(window, { limit: 100, windowMs: hour, cost: 0 })).remaining).toBe(100);
    });

    it('near its limit a window grants no lease and counts nothing', async () => {
      const window = key('lease');
      await store.slidingWindowHit(window, { limit: 100, windowMs: hour, cost: 90 });
      const lease = { limit: 100, windowMs: hour, want: 40, min: 5, share: 4 };
      expect(await store.batch([{ op: 'windowLease', key: window, lease }])).toEqual([
        expect.objectContaining({ granted: 0, remaining: 10 }),
      ]);
      expect((await store.slidingWindowHit(window, { limit: 100, windowMs: hour, cost: 10 })).allowed).toBe(true);
    });

    it('concurrent leases never hand out more than the limit', async () => {
      const window = key('lease');
      const lease = { limit: 1000, windowMs: hour, want: 200, min: 1, share: 2 };
      const results = (await Promise.all(
        Array.from({ length: 40 }, () => store.batch([{ op: 'windowLease', key: window, lease }])),
      )) as WindowLeaseResult[][];
      const granted = results.reduce((sum, [result]) => sum + result!.granted, 0);
      expect(granted).toBeLessThanOrEqual(1000);
      expect(granted).toBeGreaterThan(900);
      expect((await store.slidingWindowHit(window, { limit: 1000, windowMs: hour, cost: 0 })).remaining).toBe(
        1000 - granted,
      );
    });

    it('invalid limits, windows and costs are refused', async () => {
      await expect(store.slidingWindowHit(key('w'), { limit: 0, windowMs: 1000 })).rejects.toThrow(RangeError);
      await expect(store.slidingWindowHit(key('w'), { limit: 5, windowMs: 1.5 })).rejects.toThrow(RangeError);
      await expect(store.slidingWindowHit(key('w'), { limit: 5, windowMs: 1000, cost: -1 })).rejects.toThrow(
        RangeError,
      );
    });
  });
}

afterAll(async () => {
  if (!redisUrl) return;
  // Leave the shared Redis as we found it: drop everything this run wrote under its prefix.
  const redis = new Redis(redisUrl);
  for await (const keys of redis.scanStream({ match: `${runPrefix}*`, count: 500 })) {
    if ((keys as string[]).length > 0) await redis.del(...(keys as string[]));
  }
  await redis.quit();
});

describe('SharedStore contract: memory', () => {
  storeContract(() => createMemoryStore());
});

(redisUrl ? describe : describe.skip)('SharedStore contract: redis', () => {
  storeContract(() => createRedisStore(redisUrl!, { keyPrefix: runPrefix }));
});

(redisUrl ? describe : describe.skip)('Redis store specifics', () => {
  it('keys are namespaced by keyPrefix, so two prefixes never share a counter', async () => {
    const a = createRedisStore(redisUrl!, { keyPrefix: `${runPrefix}a:` });
    const b = createRedisStore(redisUrl!, { keyPrefix: `${runPrefix}b:` });
    try {
      await a.incrBy('shared', 2);
      await b.incrBy('shared', 5);
      expect(await a.get('shared')).toBe('2');
      expect(await b.get('shared')).toBe('5');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
