import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import { createBudget, MILLI } from './budget';
import { createCounterLeases } from './counter-leases';

const logger = createLogger({ service: 'test', level: 'silent' });
const settled = () => new Promise((resolve) => setImmediate(resolve));
const utcDay = () => new Date().toISOString().slice(0, 10).replace(/-/g, '');

/** A store that counts the round trips a caller makes to it. */
function countingStore(): { store: SharedStore; trips: () => number } {
  const inner = createMemoryStore();
  let trips = 0;
  const store: SharedStore = {
    ...inner,
    batch: (ops) => {
      trips++;
      return inner.batch(ops);
    },
  };
  return { store, trips: () => trips };
}

describe('call budgets on leases', () => {
  it('a busy key reserves and settles with no round trip, and its counters end exact', async () => {
    const { store, trips } = countingStore();
    const leases = createCounterLeases({ store, logger });
    const budget = createBudget({ store, leases });
    const subject = { userId: 'usr_l', keyId: 'key_l', dailyCapCredits: 1_000 };
    await store.set('credits:available:usr_l', String(1_000 * MILLI));
    for (let i = 0; i < 8; i++) await (await budget.reserve(subject, 100)).settle(40);
    await settled();
    const before = trips();
    for (let i = 0; i < 20; i++) await (await budget.reserve(subject, 100)).settle(40);
    expect(trips()).toBe(before);
    // The ledger sees that a lease is held on the balance, and does not reconcile under it.
    expect(await store.get('credits:leased:usr_l')).toBe('1');
    await leases.close();
    expect(await store.get(`spend:key:key_l:d:${utcDay()}`)).toBe(String(28 * 40));
    expect(await store.get('credits:available:usr_l')).toBe(String(1_000 * MILLI - 28 * 40));
  });

  it("near a cap the refusal is the store's, naming the budget, as without leases", async () => {
    const { store } = countingStore();
    const leases = createCounterLeases({ store, logger });
    const budget = createBudget({ store, leases });
    const subject = { userId: 'usr_m', keyId: 'key_m', dailyCapCredits: 10 };
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => budget.reserve(subject, 3 * MILLI)));
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(3);
    expect(results.find((result) => result.status === 'rejected')).toMatchObject({
      reason: { code: 'budget_exhausted', extra: { budget: 'key_daily' } },
    });
    await leases.close();
  });
});
