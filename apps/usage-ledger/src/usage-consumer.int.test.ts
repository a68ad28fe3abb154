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

/** The shared bus the embedded app hands every service: `createBus` without brokers is the in-process bus. */
const inProcessBus = (): Bus =>
  createBus({ clientId: 'usage-ledger-test', logger, retry: { initialMs: 10, maxMs: 50 } });

function usageEvent(init: EventInit = {}): EventInit {
  return {
    requestId: 'req_default',
    accountId: 'usr_default',
    userId: 'usr_default',
    keyId: 'key_1',
    keyLabel: 'laptop',
    orgId: 'org_1',
    model: 'claude-sonnet',
    upstreamModel: 'claude-sonnet-4-5-20250929',
    upstream: 'provider:anthropic',
    provider: 'anthropic',
    dialectIn: 'chat',
    dialectOut: 'anthropic',
    route: 'credits',
    inputTokens: 1200n,
    outputTokens: 300n,
    cacheReadTokens: 800n,
    cacheWriteTokens: 100n,
    reasoningTokens: 40n,
    listCostNanoUsd: 12_345_000n,
    creditsChargedMicrocredits: 12_500_000n,
    isByok: false,
    status: 200,
    latencyMs: 850n,
    ttftMs: 210n,
    sessionId: 'ses_1',
    ts: timestampFromMs(AT),
    stream: true,
    fairUseMicrocredits: 0n,
    ...init,
  };
}

function send(bus: Bus, init: EventInit): void {
  const event = create(UsageEventSchema, init);
  bus.producer.send(USAGE_EVENTS_TOPIC, { key: event.accountId, value: toBinary(UsageEventSchema, event) });
}

describe('usage-ledger consumer of usage.events.v1', () => {
  let db: TestDatabase;
  let dataDir: string;
  let bus: Bus;
  let running: RunningUsageLedger | undefined;

  const startLedger = async () => {
    running = await startTestLedger({ databaseUrl: db.databaseUrl, dataDir, bus, logger });
    return running;
  };
  const stopLedger = async () => {
    await running?.stop();
    running = undefined;
  };
  const prisma = () => running!.database.prisma;
  const rowsOf = (accountId: string) =>
    prisma().usageGeneration.findMany({ where: { accountId }, orderBy: { requestId: 'asc' } });
  const totalsOf = async (accountId: string) => {
    const sums = await prisma().usageGeneration.aggregate({
      where: { accountId },
      _count: true,
      _sum: { tokensPrompt: true, tokensCompletion: true, totalCostUsd: true, creditsCharged: true },
    });
    return {
      rows: sums._count,
      tokensPrompt: sums._sum.tokensPrompt,
      tokensCompletion: sums._sum.tokensCompletion,
      totalCostUsd: sums._sum.totalCostUsd?.toString(),
      creditsCharged: sums._sum.creditsCharged?.toString(),
    };
  };

  beforeAll(async () => {
    db = await createTestDatabase('usage_consumer');
    dataDir = await mkdtemp(path.join(tmpdir(), 'usage-ledger-'));
    bus = inProcessBus();
    await startLedger();
  });

  afterAll(async () => {
    await stopLedger();
    await bus?.close();
    await db?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('once the bus has acked a usage event its row is committed, with every field of the event', async () => {
    send(bus, usageEvent({ requestId: 'req_fields', accountId: 'usr_fields', userId: 'usr_fields' }));
    await bus.producer.flush(); // resolves only when the ledger's handler has resolved

    const row = await prisma().usageGeneration.findFirstOrThrow({ where: { requestId: 'req_fields' } });
    expect({
      ...row,
      totalCostUsd: row.totalCostUsd.toString(),
      cacheDiscountUsd: row.cacheDiscountUsd.toString(),
      creditsCharged: row.creditsCharged.toString(),
      fairUseCredits: row.fairUseCredits.toString(),
    }).toEqual({
      eventId: 'req_fields', // an event from before event ids is keyed by its request id
      requestId: 'req_fields',
      accountId: 'usr_fields',
      userId: 'usr_fields',
      keyId: 'key_1',
      keyLabel: 'laptop',
      orgId: 'org_1',
      model: 'claude-sonnet',
      upstreamModel: 'claude-sonnet-4-5-20250929',
      upstream: 'provider:anthropic',
      provider: 'anthropic',
      dialectIn: 'chat',
      dialectOut: 'anthropic',
      route: 'credits',
      tokensPrompt: 1200n,
      tokensCompletion: 300n,
      cacheRead: 800n,
      cacheWrite: 100n,
      reasoningTokens: 40n,
      totalCostUsd: '0.012345',
      cacheDiscountUsd: '0', // needs prices the event does not carry
      creditsCharged: '12.5',
      fairUseCredits: '0',
      guardrailAction: null,
      guardrailId: null,
      isByok: false,
      status: 200,
      latencyMs: 850,
      ttftMs: 210,
      stream: true,
      sessionId: 'ses_1',
      // An event from before routing policy: its one target, tried once (it names the provider it reached).
      servedBy: 'provider:anthropic',
      attempts: 1,
      cacheHit: false,
      ts: new Date(AT),
    });
  });

  it('a call replayed from the response cache is stored with cache_hit', async () => {
    send(
      bus,
      usageEvent({
        requestId: 'req_hit',
        accountId: 'usr_cache',
        cacheHit: true,
        creditsChargedMicrocredits: 0n,
        attempts: 0,
      }),
    );
    send(bus, usageEvent({ requestId: 'req_miss', accountId: 'usr_cache' }));
    await bus.producer.flush();
    const rows = await rowsOf('usr_cache');
    expect(rows.map((row) => [row.requestId, row.cacheHit])).toEqual([
      ['req_hit', true],
      ['req_miss', false],
    ]);
  });

  it('a call a guardrail blocked is stored with the guardrail and its action', async () => {
    send(
      bus,
      usageEvent({
        requestId: 'req_blocked',
        accountId: 'usr_guarded',
        status: 400,
        guardrailId: 'grd_words',
        guardrailAction: 'block',
      }),
    );
    await bus.producer.flush();
    const rows = await rowsOf('usr_guarded');
    expect(rows.map((row) => [row.requestId, row.status, row.guardrailId, row.guardrailAction])).toEqual([
      ['req_blocked', 400, 'grd_words', 'block'],
    ]);
  });

  it('the target that served a call and its attempts are stored as the edge sent them', async () => {
    send(
      bus,
      usageEvent({
        requestId: 'req_failover',
        accountId: 'usr_failover',
        upstream: 'byo:primary',
        servedBy: 'byo:backup',
        attempts: 3,
      }),
    );
    // Every target failed: the last one tried, and every attempt counted.
    send(
      bus,
      usageEvent({
        requestId: 'req_exhausted',
        accountId: 'usr_failover',
        status: 502,
        servedBy: 'provider:openai/east',
        attempts: 4,
      }),
    );
    await bus.producer.flush();

    const rows = await rowsOf('usr_failover');
    expect(rows.map((row) => [row.requestId, row.servedBy, row.attempts])).toEqual([
      ['req_exhausted', 'provider:openai/east', 4],
      ['req_failover', 'byo:backup', 3],
    ]);
  });

  it(
    'an event from an edge before routing policy is served by its upstream, tried once when it reached one and ' +
      'never when it was refused before dispatch',
    async () => {
      send(bus, usageEvent({ requestId: 'req_old_reached', accountId: 'usr_old_edge', upstream: 'byo:mine' }));
      send(
        bus,
        usageEvent({
          requestId: 'req_old_refused',
          accountId: 'usr_old_edge',
          upstream: 'provider:openai',
          provider: '',
          dialectOut: '',
          status: 402,
        }),
      );
      send(
        bus,
        usageEvent({
          requestId: 'req_old_unrouted',
          accountId: 'usr_old_edge',
          upstream: '',
          provider: '',
          status: 400,
        }),
      );
      await bus.producer.flush();

      const rows = await rowsOf('usr_old_edge');
      expect(rows.map((row) => [row.requestId, row.servedBy, row.attempts])).toEqual([
        ['req_old_reached', 'byo:mine', 1],
        ['req_old_refused', 'provider:openai', 0],
        ['req_old_unrouted', null, 0],
      ]);
    },
  );

  it('a BYO call without org, session or first token is recorded with those left empty', async () => {
    send(
      bus,
      usageEvent({
        requestId: 'req_byo',
        accountId: 'usr_byo',
        orgId: undefined,
        sessionId: undefined,
        route: 'byo',
        upstream: 'byo:my-endpoint',
        isByok: true,
        creditsChargedMicrocredits: 0n,
        status: 499,
        outputTokens: 0n,
        ttftMs: 0n,
        stream: false,
      }),
    );
    await bus.producer.flush();

    const [row] = await rowsOf('usr_byo');
    expect(row).toMatchObject({
      orgId: null,
      sessionId: null,
      ttftMs: null,
      isByok: true,
      status: 499,
      route: 'byo',
      upstream: 'byo:my-endpoint',
      stream: false,
    });
    expect(row!.creditsCharged.toString()).toBe('0');
  });

  it('the same event delivered twice leaves one row with the totals of the first delivery', async () => {
    const event = usageEvent({ eventId: 'evt_twice', requestId: 'req_twice', accountId: 'usr_twice' });
    send(bus, event);
    send(bus, event);
    // A redelivery never carries other numbers, but if one did, the first write still wins.
    send(bus, { ...event, outputTokens: 9_999n, listCostNanoUsd: 9_990_000_000n, creditsChargedMicrocredits: 999n });
    await bus.producer.flush();

    expect(await totalsOf('usr_twice')).toEqual({
      rows: 1,
      tokensPrompt: 1200n,
      tokensCompletion: 300n,
      totalCostUsd: '0.012345',
      creditsCharged: '12.5',
    });
  });

  it(
    'an event redelivered after the ledger restarts is not applied again, and events sent while it was down are ' +
      'applied',
    async () => {
      const first = usageEvent({ requestId: 'req_restart_1', accountId: 'usr_restart' });
      send(bus, first);
      await bus.producer.flush();
      const before = await totalsOf('usr_restart');

      await stopLedger();
      expect(() =>
        send(bus, usageEvent({ requestId: 'req_restart_2', accountId: 'usr_restart', outputTokens: 7n })),
      ).not.toThrow(); // the shared bus stays open
      await startLedger();
      send(bus, first);
      await bus.producer.flush();

      expect(before).toEqual({
        rows: 1,
        tokensPrompt: 1200n,
        tokensCompletion: 300n,
        totalCostUsd: '0.012345',
        creditsCharged: '12.5',
      });
      expect(await totalsOf('usr_restart')).toEqual({
        rows: 2,
        tokensPrompt: 2400n,
        tokensCompletion: 307n,
        totalCostUsd: '0.02469',
        creditsCharged: '25',
      });
    },
  );

  it('replaying the whole topic to a ledger that lost its offsets changes no row', async () => {
    const accountId = 'usr_replay';
    const events = [1, 2, 3].map((n) =>
      usageEvent({ requestId: `req_replay_${n}`, accountId, outputTokens: BigInt(n * 100) }),
    );
    for (const event of events) send(bus, event);
    await bus.producer.flush();
    const before = await prisma().usageGeneration.findMany({ orderBy: { requestId: 'asc' } });

    // A new bus is a consumer group with no committed position: with fromBeginning it reads everything again.
    await stopLedger();
    await bus.close();
    bus = inProcessBus();
    for (const event of [
      ...events,
      usageEvent({ requestId: 'req_fields', accountId: 'usr_fields', userId: 'usr_fields' }),
    ])
      send(bus, event);
    await startLedger();
    await bus.producer.flush();

    expect(await prisma().usageGeneration.findMany({ orderBy: { requestId: 'asc' } })).toEqual(before);
    expect((await rowsOf(accountId)).map((row) => row.tokensCompletion)).toEqual([100n, 200n, 300n]);
  });

  it('calls sharing a request id, in one account or across accounts, are each applied', async () => {
    for (const [n, accountId] of ['usr_shared_a', 'usr_shared_a', 'usr_shared_b'].entries())
      send(bus, usageEvent({ eventId: `evt_shared_${n}`, requestId: 'same-id-every-time', accountId }));
    await bus.producer.flush();

    expect(await totalsOf('usr_shared_a')).toMatchObject({ rows: 2, creditsCharged: '25' });
    expect(await totalsOf('usr_shared_b')).toMatchObject({ rows: 1, creditsCharged: '12.5' });
    expect((await rowsOf('usr_shared_b')).map((row) => row.requestId)).toEqual(['same-id-every-time']);
  });

  it(
    'a message that is not a usage event is parked as a ' + 'dead letter, and later events behind it still land',
    async () => {
      const accountId = 'usr_garbage';
      const countBefore = await prisma().usageGeneration.count();
      // not protobuf
      bus.producer.send(USAGE_EVENTS_TOPIC, { key: accountId, value: new Uint8Array([0xff, 0xff, 0xff, 0xff]) });
      bus.producer.send(USAGE_EVENTS_TOPIC, {
        key: accountId,
        value: new TextEncoder().encode('{"request_id":"req_json"}'),
      });
      // decodes, but has no request id
      bus.producer.send(USAGE_EVENTS_TOPIC, { key: accountId, value: new Uint8Array(0) });
      send(bus, usageEvent({ requestId: 'req_after_garbage', accountId }));
      await bus.producer.flush();

      expect((await rowsOf(accountId)).map((row) => row.requestId)).toEqual(['req_after_garbage']);
      expect(await prisma().usageGeneration.count()).toBe(countBefore + 1);
      expect(bus.producer.stats()).toMatchObject({ pending: 0, failed: 0 }); // parked, not retried
      const parked = await prisma().usageDeadLetter.findMany({ where: { key: accountId }, orderBy: { id: 'asc' } });
      expect(parked.map((letter) => letter.error)).toEqual([
        expect.stringMatching(/not a UsageEvent/),
        expect.stringMatching(/not a UsageEvent/),
        expect.stringMatching(/no request_id/),
      ]);
      expect(Buffer.from(parked[0]!.event)).toEqual(Buffer.from([0xff, 0xff, 0xff, 0xff]));
    },
  );
});
