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
const ACCOUNT = 'usr_money';

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

/** 2^53 + 1: the first whole number a double cannot hold, so a float anywhere on the way would change it. */
const PAST_DOUBLES = 2n ** 53n + 1n;

const calls = {
  paid: call({
    eventId: 'evt_paid',
    requestId: 'req_paid',
    listCostNanoUsd: 123_456n,
    creditsChargedMicrocredits: 123_456n,
  }),
  capped: call({
    eventId: 'evt_capped',
    requestId: 'req_capped',
    listCostNanoUsd: 2_000_000n,
    creditsChargedMicrocredits: 1_500_000n,
  }),
  fairUse: call({
    eventId: 'evt_fair',
    requestId: 'req_fair',
    listCostNanoUsd: 300_000n,
    fairUseMicrocredits: 300_000n,
  }),
  byo: call({ eventId: 'evt_byo', requestId: 'req_byo', route: 'byo', isByok: true, listCostNanoUsd: 45_000n }),
  large: call({
    eventId: 'evt_large',
    requestId: 'req_large',
    listCostNanoUsd: PAST_DOUBLES,
    creditsChargedMicrocredits: PAST_DOUBLES,
  }),
  // An event without amounts (an edge from before whole units, which no longer runs): a free call.
  bare: call({ eventId: 'evt_bare', requestId: 'req_bare' }),
};

describe('money from the wire to the ledger, in whole units only', () => {
  let db: TestDatabase;
  let dataDir: string;
  let bus: Bus;
  let running: RunningUsageLedger | undefined;
  const prisma = () => running!.database.prisma;

  beforeAll(async () => {
    db = await createTestDatabase('usage_whole_money');
    dataDir = await mkdtemp(path.join(tmpdir(), 'usage-ledger-money-'));
    bus = createBus({ clientId: 'usage-ledger-test', logger, retry: { initialMs: 10, maxMs: 50 } });
    running = await startTestLedger({ databaseUrl: db.databaseUrl, dataDir, bus, logger });
    for (const init of Object.values(calls)) {
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

  it('every call is recorded at its exact amounts, even one no double could hold', async () => {
    expect(await amountsOf('req_paid')).toEqual({ cost: '0.000123456', charged: '0.123456', fairUse: '0' });
    expect(await amountsOf('req_capped')).toEqual({ cost: '0.002', charged: '1.5', fairUse: '0' });
    expect(await amountsOf('req_fair')).toEqual({ cost: '0.0003', charged: '0', fairUse: '0.3' });
    expect(await amountsOf('req_byo')).toEqual({ cost: '0.000045', charged: '0', fairUse: '0' });
    expect(await amountsOf('req_large')).toEqual({
      cost: '9007199.254740993',
      charged: '9007199254.740993',
      fairUse: '0',
    });
    expect(await amountsOf('req_bare')).toEqual({ cost: '0', charged: '0', fairUse: '0' });
  });

  it("the account's totals and daily rollup add the calls exactly", async () => {
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
    }).toEqual({ rows: 6, cost: '9007199.257209449', charged: '9007199256.364449', fairUse: '0.3' });
    const daily = await prisma().usageDaily.aggregate({
      where: { accountId: ACCOUNT },
      _sum: { listUsd: true, credits: true },
    });
    expect({ listUsd: daily._sum.listUsd?.toString(), credits: daily._sum.credits?.toString() }).toEqual({
      listUsd: '9007199.257209449',
      credits: '9007199256.364449',
    });
  });
});
