import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import fc from 'fast-check';
import { createCounterLeases, type CounterLeases, type LeasedCounter, type LeasedReservation } from './counter-leases';

const logger = createLogger({ service: 'test', level: 'silent' });
const settled = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A reservation as the budget makes one: from the leases when they cover it, else on the store, checked against
 * the cap and taken back when it does not fit.
 */
async function reserve(
  leases: CounterLeases,
  store: SharedStore,
  cap: LeasedCounter,
  amount: number,
): Promise<{ leased?: LeasedReservation; stored?: number } | undefined> {
  const leased = leases.reserve([cap], amount);
  if (leased) return { leased };
  const value = await store.incrBy(cap.key, amount);
  if (value <= cap.limit!) return { stored: amount };
  await store.incrBy(cap.key, -amount);
  return undefined;
}

describe('counter leases', () => {
  let clock = 0;
  const now = () => clock;
  const made: CounterLeases[] = [];
  const leasesOn = (store: SharedStore) => {
    const leases = createCounterLeases({ store, logger, now, options: { idleMs: 60_000 } });
    made.push(leases);
    return leases;
  };
  beforeEach(() => {
    clock = 1_000;
  });
  afterEach(async () => {
    await Promise.all(made.splice(0).map((leases) => leases.close()));
  });

  it('a busy cap is reserved from a lease, settles give back to it, and the rest goes back on close', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    const cap: LeasedCounter = { key: 'spend:a', sign: 1, limit: 100_000 };
    for (let i = 0; i < 8; i++) expect(leases.reserve([cap], 50)).toBeUndefined();
    await settled();
    // Eight calls' worst case at the least, a quarter of the room at the most.
    const taken = Number(await store.get('spend:a'));
    expect(taken).toBeGreaterThanOrEqual(400);
    expect(taken).toBeLessThanOrEqual(25_000);
    const reservation = leases.reserve([cap], 50)!;
    expect(reservation).toBeDefined();
    expect(leases.settle(reservation, 20)).toEqual([]);
    await leases.close();
    // Only the 20 charged stays counted.
    expect(await store.get('spend:a')).toBe('20');
  });

  it('a settle after its lease was given back goes to the store', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    const cap: LeasedCounter = { key: 'spend:b', sign: 1, limit: 100_000 };
    for (let i = 0; i < 8; i++) leases.reserve([cap], 50);
    await settled();
    const reservation = leases.reserve([cap], 50)!;
    await leases.close();
    expect(await store.get('spend:b')).toBe('50');
    const ops = leases.settle(reservation, 30);
    expect(ops).toEqual([{ op: 'incrBy', key: 'spend:b', amount: -20 }]);
    await store.batch(ops);
    expect(await store.get('spend:b')).toBe('30');
  });

  it('a call is leased only when every counter it needs covers it; an unpublished balance never is', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    const cap: LeasedCounter = { key: 'spend:c', sign: 1, limit: 100_000 };
    const balance: LeasedCounter = { key: 'credits:available:u', sign: -1 };
    for (let i = 0; i < 10; i++) {
      expect(leases.reserve([cap, balance], 10)).toBeUndefined();
      await settled();
    }
    expect(await store.get('credits:available:u')).toBeNull();
    clock += 5_000; // past the backoff after the balance had no lease
    await store.set('credits:available:u', '100000');
    for (let i = 0; i < 8; i++) leases.reserve([cap, balance], 10);
    await settled();
    expect(leases.reserve([cap, balance], 10)).toBeDefined();
    expect(Number(await store.get('credits:available:u'))).toBeLessThan(100_000);
  });

  it('near a cap no lease is taken: less room than a few calls is shared per call', async () => {
    const store = createMemoryStore();
    const leases = leasesOn(store);
    const cap: LeasedCounter = { key: 'spend:d', sign: 1, limit: 10_000 };
    let admitted = 0;
    for (let i = 0; i < 50; i++) {
      if (await reserve(leases, store, cap, 800)) admitted++;
      await settled();
    }
    expect(admitted).toBe(12);
    expect(await store.get('spend:d')).toBe('9600');
  });

  it('edges sharing a cap never reserve past it together, and leave exactly what was charged', async () => {
    let fromLeases = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1_000, max: 200_000 }),
        fc.array(
          fc.record({
            edge: fc.nat(3),
            amount: fc.integer({ min: 1, max: 300 }),
            charge: fc.integer({ min: 0, max: 100 }),
            settleNow: fc.boolean(),
            pause: fc.integer({ min: 0, max: 2 }),
          }),
          { minLength: 20, maxLength: 400 },
        ),
        async (edgeCount, limit, steps) => {
          const store = createMemoryStore();
          const edges = Array.from({ length: edgeCount }, () => leasesOn(store));
          const cap: LeasedCounter = { key: 'spend:shared', sign: 1, limit, ttlMs: 60_000 };
          let held = 0;
          let charged = 0;
          const open: { edge: CounterLeases; amount: number; charge: number; leased?: LeasedReservation }[] = [];
          const settleOne = async (call: (typeof open)[number]) => {
            const charge = Math.floor((call.amount * call.charge) / 100);
            held -= call.amount;
            charged += charge;
            if (call.leased) await store.batch(call.edge.settle(call.leased, charge));
            else await store.incrBy(cap.key, charge - call.amount);
          };
          for (const step of steps) {
            const edge = edges[step.edge % edgeCount]!;
            const got = await reserve(edge, store, cap, step.amount);
            if (got) {
              held += step.amount;
              if (got.leased) fromLeases++;
              const call = { edge, amount: step.amount, charge: step.charge, leased: got.leased };
              if (step.settleNow) await settleOne(call);
              else open.push(call);
            }
            for (let i = 0; i < step.pause; i++) await settled();
            // Spend and every reservation, leased or not, fit the cap, and the store counts at least all of it.
            expect(charged + held).toBeLessThanOrEqual(limit);
            expect(Number((await store.get(cap.key)) ?? 0)).toBeGreaterThanOrEqual(charged + held);
            expect(Number((await store.get(cap.key)) ?? 0)).toBeLessThanOrEqual(limit);
          }
          for (const call of open.splice(0)) await settleOne(call);
          await settled();
          await Promise.all(edges.map((leases) => leases.close()));
          expect(Number((await store.get(cap.key)) ?? 0)).toBe(charged);
        },
      ),
      { numRuns: 60 },
    );
    expect(fromLeases).toBeGreaterThan(500);
  });
});
