import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { loadUsageLedgerConfig, start, type RunningUsageLedger } from '../main';
import { applyGenerations, type GenerationRow } from '../store/generations';
import { balanceKey, createBalancePublisher } from './balance-publisher';

const logger = createLogger({ service: 'usage-ledger-test', level: 'silent' });

function call(accountId: string, requestId: string, at: string, credits: number): GenerationRow {
  return {
    eventId: requestId,
    requestId,
    accountId,
    model: 'house',
    status: 200,
    ts: new Date(at),
    // A credit is $0.001: its microcredits are as many nano-USD.
    totalCostNanoUsd: BigInt(credits * 1_000_000),
    cacheDiscountNanoUsd: 0n,
    creditsChargedMicrocredits: BigInt(credits * 1_000_000),
    fairUseMicrocredits: 0n,
  };
}

describe('published balances across a month boundary', () => {
  let db: TestDatabase;
  let running: RunningUsageLedger;
  let store: SharedStore;
  let clock: Date;
  beforeAll(async () => {
    db = await createTestDatabase('usage_balances');
    store = createMemoryStore();
    running = await start(
      loadUsageLedgerConfig({
        USAGE_LEDGER_GRPC_PORT: '0',
        USAGE_LEDGER_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: 'memory://',
        LOG_LEVEL: 'silent',
      }),
      { store, logger },
    );
  });
  afterAll(async () => {
    await running?.stop();
    await store?.close();
    await db?.drop();
  });

  it(
    'on the 1st the beta pot is refilled and what was left of the old one expires, as one delta that keeps in-flight ' +
      'reservations',
    async () => {
      const prisma = running.database.prisma;
      const publisher = createBalancePublisher({ db: prisma, store, logger, quietMs: 60_000, now: () => clock });
      clock = new Date('2026-10-20T12:00:00Z');
      await applyGenerations(prisma, [call('usr_month', 'req_m1', '2026-10-20T11:00:00Z', 4_000)], clock);
      await publisher.publishNew(['usr_month']);
      expect(await store.get(balanceKey('usr_month'))).toBe('6000000');

      // A call in flight at midnight: the edge has reserved 1,000 credits and not settled yet.
      await store.incrBy(balanceKey('usr_month'), -1_000_000);
      // A call made just after midnight, already applied when the sweep runs.
      clock = new Date('2026-11-01T00:00:30Z');
      await applyGenerations(prisma, [call('usr_month', 'req_m2', '2026-11-01T00:00:10Z', 100)], clock);
      await store.incrBy(balanceKey('usr_month'), -100_000); // the edge settled that call

      expect(await publisher.sweep()).toMatchObject({ refilled: 1 });
      // 6,000 left in October expire, 10,000 arrive; the in-flight reservation and the new call stay taken off.
      expect(await store.get(balanceKey('usr_month'))).toBe(String(10_000_000 - 1_000_000 - 100_000));
      const journal = await prisma.creditJournalEntry.findMany({
        where: { accountId: 'usr_month' },
        orderBy: { id: 'asc' },
      });
      expect(journal.map((entry) => [entry.kind, entry.period, entry.credits.toString()])).toEqual([
        ['beta_refill', '2026-10', '10000'],
        ['beta_refill', '2026-11', '10000'],
      ]);
      // A second sweep in the same month grants nothing more.
      expect(await publisher.sweep()).toMatchObject({ refilled: 0 });
      expect(await prisma.creditJournalEntry.count({ where: { accountId: 'usr_month' } })).toBe(2);

      // Once quiet (the reservation settled or released), the counter is reconciled to the derived balance.
      await store.incrBy(balanceKey('usr_month'), 1_000_000);
      clock = new Date('2026-11-01T01:00:00Z');
      expect(await publisher.sweep()).toMatchObject({ reconciled: 1 });
      expect(await store.get(balanceKey('usr_month'))).toBe('9900000');
    },
  );

  it('a store that lost its data gets every balance published again by the next sweep', async () => {
    const prisma = running.database.prisma;
    const publisher = createBalancePublisher({ db: prisma, store, logger, quietMs: 60_000, now: () => clock });
    clock = new Date('2026-11-02T00:00:00Z');
    await store.del(balanceKey('usr_month'));
    expect(await publisher.sweep()).toMatchObject({ published: 1 });
    expect(await store.get(balanceKey('usr_month'))).toBe('9900000');
  });

  it('a balance an edge may hold a lease on is not reconciled until the lease marker is gone', async () => {
    const prisma = running.database.prisma;
    const publisher = createBalancePublisher({ db: prisma, store, logger, quietMs: 60_000, now: () => clock });
    clock = new Date('2026-11-03T00:00:00Z');
    await applyGenerations(prisma, [call('usr_lease', 'req_l1', '2026-11-02T20:00:00Z', 1_000)], clock);
    await publisher.publishNew(['usr_lease']);
    expect(await store.get(balanceKey('usr_lease'))).toBe('9000000');
    // An edge took a slice of 50,000 millicredits for calls to come, and marked it.
    await store.set('credits:leased:usr_lease', '1', 60_000);
    await store.incrBy(balanceKey('usr_lease'), -50_000);
    clock = new Date('2026-11-03T02:00:00Z');
    await publisher.sweep();
    // Quiet, but a lease may be held: reconciling now would give the slice back twice.
    expect(await store.get(balanceKey('usr_lease'))).toBe('8950000');
    // The edge died with its slice; once the marker expires the slice is absorbed by the next sweep.
    await store.del('credits:leased:usr_lease');
    await publisher.sweep();
    expect(await store.get(balanceKey('usr_lease'))).toBe('9000000');
  });
});
