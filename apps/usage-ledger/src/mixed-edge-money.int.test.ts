import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { createBus, type Bus } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import type { RunningUsageLedger } from './main';
import { startTestLedger } from './test-ledger';

type EventInit = MessageInitShape<typeof UsageEventSchema>;

const logger = createLogger({ service: 'usage-ledger-test', level: 'silent' });
const AT = Date.parse('2026-11-01T12:00:00.000Z');
const ACCOUNT = 'usr_mixed';

function call(init: EventInit): EventInit {
  return {
    accountId: ACCOUNT,
    userId: ACCOUNT,
    keyId: 'key_1',
    model: 'house',
    upstream: 'house',
    route: 'auto',
    inputTokens: 1_000n,
    outputTokens: 500n,
    status: 200,
    ts: timestampFromMs(AT),
    ...init,
  };
}

/**
 * One release runs edges of both kinds side by side: an edge from before the whole units writes the decimal
 * doubles only; a current edge writes the whole units and, for older ledgers, the doubles too.
 */
const oldEdge = {
  paid: call({
    eventId: 'evt_old_paid',
    requestId: 'req_old_paid',
    listCostUsd: 0.000_123_456,
    creditsCharged: 0.123_456,
  }),
  capped: call({ eventId: 'evt_old_capped', requestId: 'req_old_capped', listCostUsd: 0.002, creditsCharged: 1.5 }),
  fairUse: call({ eventId: 'evt_old_fair', requestId: 'req_old_fair', listCostUsd: 0.000_3, fairUseCredits: 0.3 }),
};
const newEdge = {
  paid: call({
    eventId: 'evt_new_paid',
    requestId: 'req_new_paid',
    listCostNanoUsd: 123_456n,
    creditsChargedMicrocredits: 123_456n,
    fairUseMicrocredits: 0n,
    listCostUsd: 0.000_123_456,
    creditsCharged: 0.123_456,
  }),
  capped: call({
    eventId: 'evt_new_capped',
    requestId: 'req_new_capped',
    listCostNanoUsd: 2_000_000n,
    creditsChargedMicrocredits: 1_500_000n,
    fairUseMicrocredits: 0n,
    listCostUsd: 0.002,
    creditsCharged: 1.5,
  }),
  fairUse: call({
    eventId: 'evt_new_fair',
    requestId: 'req_new_fair',
    listCostNanoUsd: 300_000n,
    creditsChargedMicrocredits: 0n,
    fairUseMicrocredits: 300_000n,
    // What the previous edge wrote for this amount (list cost x 1,000, unrounded).
    listCostUsd: 0.000_3,
    fairUseCredits: 0.000_3 * 1_000,
  }),
  byo: call({
    eventId: 'evt_new_byo',
    requestId: 'req_new_byo',
    route: 'byo',
    isByok: true,
    listCostNanoUsd: 45_000n,
    creditsChargedMicrocredits: 0n,
    fairUseMicrocredits: 0n,
    listCostUsd: 0.000_045,
  }),
};

describe('a ledger fed by old and new edges at once', () => {
  let db: TestDatabase;
  let dataDir: string;
  let bus: Bus;
  let running: RunningUsageLedger | undefined;
  const prisma = () => running!.database.prisma;

  beforeAll(async () => {
    db = await createTestDatabase('usage_mixed_money');
    dataDir = await mkdtemp(path.join(tmpdir(), 'usage-ledger-mixed-'));
    bus = createBus({ clientId: 'usage-ledger-test', logger, retry: { initialMs: 10, maxMs: 50 } });
    running = await startTestLedger({ databaseUrl: db.databaseUrl, dataDir, bus, logger });
    // Interleaved, as a rolling deploy delivers them.
    const interleaved = [
      oldEdge.paid,
      newEdge.paid,
      newEdge.capped,
      oldEdge.capped,
      oldEdge.fairUse,
      newEdge.fairUse,
      newEdge.byo,
    ];
    for (const init of interleaved) {
      const event = create(UsageEventSchema, init);
      bus.producer.send(USAGE_EVENTS_TOPIC, { key: event.accountId, value: toBinary(UsageEventSchema, event) });
    }
    await bus.producer.flush(); // resolves only when the ledger's handler has resolved
  });

  afterAll(async () => {
    await running?.stop();
    await bus?.close();
    await db?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  const amountsOf = async (requestId: string) => {
    const row = await prisma().usageGeneration.findFirstOrThrow({ where: { requestId } });
    const [cost, charged, fairUse] = [row.totalCostUsd, row.creditsCharged, row.fairUseCredits].map(String);
    return { cost, charged, fairUse };
  };

  it('the same call from either edge is billed the same amounts', async () => {
    for (const kind of ['paid', 'capped', 'fairUse'] as const) {
      const fromOld = await amountsOf(oldEdge[kind].requestId!);
      const fromNew = await amountsOf(newEdge[kind].requestId!);
      expect({ kind, ...fromNew }).toEqual({ kind, ...fromOld });
    }
  });

  it('every call is billed at its exact amounts, whichever edge sent it', async () => {
    expect(await amountsOf('req_old_paid')).toEqual({ cost: '0.000123456', charged: '0.123456', fairUse: '0' });
    expect(await amountsOf('req_new_paid')).toEqual({ cost: '0.000123456', charged: '0.123456', fairUse: '0' });
    expect(await amountsOf('req_new_capped')).toEqual({ cost: '0.002', charged: '1.5', fairUse: '0' });
    expect(await amountsOf('req_new_fair')).toEqual({ cost: '0.0003', charged: '0', fairUse: '0.3' });
    expect(await amountsOf('req_new_byo')).toEqual({ cost: '0.000045', charged: '0', fairUse: '0' });
  });

  it("the account's totals and daily rollup add both edges' calls exactly", async () => {
    const sums = await prisma().usageGeneration.aggregate({
      where: { accountId: ACCOUNT },
      _count: true,
      _sum: { totalCostUsd: true, creditsCharged: true, fairUseCredits: true },
    });
    expect({
      rows: sums._count,
      cost: sums._sum.totalCostUsd?.toString(),
      charged: sums._sum.creditsCharged?.toString(),
      fairUse: sums._sum.fairUseCredits?.toString(),
    }).toEqual({ rows: 7, cost: '0.004891912', charged: '3.246912', fairUse: '0.6' });
    const daily = await prisma().usageDaily.aggregate({
      where: { accountId: ACCOUNT },
      _sum: { listUsd: true, credits: true },
    });
    expect({ listUsd: daily._sum.listUsd?.toString(), credits: daily._sum.credits?.toString() }).toEqual({
      listUsd: '0.004891912',
      credits: '3.246912',
    });
  });
});
