import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { createBus, createKafkaConsumer, type Bus } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { deadLettersCommand } from './consumer/dead-letters-command';
import { classifyLedgerFailure } from './consumer/failure-kind';
import { decodeUsageEvent, subscribeUsageEvents } from './consumer/usage-consumer';
import { loadUsageLedgerConfig, start, type RunningUsageLedger } from './main';
import { recordDeadLetter } from './store/dead-letters';
import { applyGenerations } from './store/generations';

type EventInit = MessageInitShape<typeof UsageEventSchema>;

const logger = createLogger({ service: 'usage-ledger-test', level: 'silent' });
const AT = Date.parse('2026-11-01T12:00:00.000Z');
// A JavaScript date PostgreSQL's timestamptz cannot hold (SQLSTATE 22009): it passes the decoder, so the
// database is what refuses it, as it would any value a future bug lets through.
const BEFORE_POSTGRES_TIME = -8.64e15;

const event = (init: EventInit): Uint8Array =>
  toBinary(
    UsageEventSchema,
    create(UsageEventSchema, {
      requestId: 'req_x',
      model: 'house',
      status: 200,
      creditsChargedMicrocredits: 2_000_000n,
      outputTokens: 10n,
      ts: timestampFromMs(AT),
      ...init,
    }),
  );

/**
 * Just enough of a Kafka broker for one consumer group member: `run` hands one fetched batch of one
 * partition to `eachBatch` and records the offsets the consumer resolved. The broker is faked; the consumer
 * and the ledger's handler are the real ones.
 */
function brokerWithOneBatch(partition: number, firstOffset: number, values: Uint8Array[]) {
  const resolved: string[] = [];
  let delivered!: () => void;
  const done = new Promise<void>((resolve) => (delivered = resolve));
  const messages = values.map(
    (value, i) =>
      ({
        key: Buffer.from('k'),
        value: Buffer.from(value),
        headers: {},
        offset: String(firstOffset + i),
        timestamp: '0',
        attributes: 0,
      }) as KafkaMessage,
  );
  const kafka = {
    consumer: () => ({
      // kafkajs's instrumentation events: the consumer listens for CRASH to start a new member.
      events: { CRASH: 'consumer.crash' },
      on: () => () => undefined,
      connect: async () => undefined,
      subscribe: async () => undefined,
      disconnect: async () => undefined,
      run: async ({ eachBatch }: { eachBatch: (payload: EachBatchPayload) => Promise<void> }) => {
        const payload = {
          batch: { topic: USAGE_EVENTS_TOPIC, partition, messages },
          resolveOffset: (offset: string) => void resolved.push(offset),
          heartbeat: async () => undefined,
          commitOffsetsIfNecessary: async () => undefined,
          isRunning: () => true,
          isStale: () => false,
        } as unknown as EachBatchPayload;
        void eachBatch(payload).then(delivered);
      },
    }),
  } as unknown as Kafka;
  return { kafka, resolved, done };
}

describe('usage ledger: a poisoned event cannot block the ledger', () => {
  let db: TestDatabase;
  let bus: Bus;
  let running: RunningUsageLedger;
  const prisma = () => running.database.prisma;
  const creditsOf = async (accountId: string) =>
    (
      await prisma().usageGeneration.aggregate({ where: { accountId }, _sum: { creditsCharged: true } })
    )._sum.creditsCharged?.toString();

  beforeAll(async () => {
    db = await createTestDatabase('usage_dead_letters');
    bus = createBus({ clientId: 'usage-ledger-test', logger, retry: { initialMs: 10, maxMs: 50 } });
    running = await start(
      loadUsageLedgerConfig({
        USAGE_LEDGER_GRPC_PORT: '0',
        USAGE_LEDGER_HTTP_PORT: '0',
        DATABASE_URL: db.databaseUrl,
        SBC_DATA_DIR: db.dataDir,
        LOG_LEVEL: 'silent',
      }),
      { bus, logger },
    );
  });

  afterAll(async () => {
    await running?.stop();
    await bus?.close();
    await db?.drop();
  });

  it(
    'other accounts keep being billed after an event the ' + 'database refuses, which is parked as a dead letter',
    async () => {
      bus.producer.send(USAGE_EVENTS_TOPIC, {
        key: 'usr_before',
        value: event({ eventId: 'evt_before', accountId: 'usr_before' }),
      });
      bus.producer.send(USAGE_EVENTS_TOPIC, {
        key: 'usr_poison',
        value: event({ eventId: 'evt_poison', accountId: 'usr_poison', ts: timestampFromMs(BEFORE_POSTGRES_TIME) }),
      });
      for (let i = 0; i < 5; i++)
        bus.producer.send(USAGE_EVENTS_TOPIC, {
          key: 'usr_after',
          value: event({ eventId: `evt_after_${i}`, accountId: 'usr_after' }),
        });
      await bus.producer.flush();

      expect(await creditsOf('usr_before')).toBe('2');
      expect(await creditsOf('usr_after')).toBe('10');
      expect(await prisma().usageGeneration.count({ where: { accountId: 'usr_poison' } })).toBe(0);
      const [letter] = await prisma().usageDeadLetter.findMany({ where: { eventId: 'evt_poison' } });
      expect(letter).toMatchObject({
        topic: USAGE_EVENTS_TOPIC,
        key: 'usr_poison',
        replayedAt: null,
        error: expect.stringMatching(/22009/),
      });
      expect(await running.metrics.getSingleMetricAsString('sbc_usage_dead_letters_total')).toMatch(
        /reason="refused"[^}]*} 1$/m,
      );
    },
  );

  it(
    'the error PostgreSQL raises for a refused row, as Prisma ' +
      'hands it over, is classed as data (parked even alone)',
    async () => {
      const decoded = decodeUsageEvent(
        event({ eventId: 'evt_classify', accountId: 'usr_classify', ts: timestampFromMs(BEFORE_POSTGRES_TIME) }),
      );
      if (!('row' in decoded)) throw new Error(decoded.problem);
      const refused = await applyGenerations(prisma(), [decoded.row]).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(classifyLedgerFailure(refused)).toBe('data');
    },
  );

  it(
    'a model id with a NUL written straight with toBinary ' + '(no edge sanitiser) is applied with the NUL dropped',
    async () => {
      bus.producer.send(USAGE_EVENTS_TOPIC, {
        key: 'usr_nul',
        value: event({ eventId: 'evt_nul', accountId: 'usr_nul', model: 'x\u0000y' }),
      });
      bus.producer.send(USAGE_EVENTS_TOPIC, {
        key: 'usr_nul_next',
        value: event({ eventId: 'evt_nul_next', accountId: 'usr_nul_next' }),
      });
      await bus.producer.flush();

      expect((await prisma().usageGeneration.findUniqueOrThrow({ where: { eventId: 'evt_nul' } })).model).toBe('xy');
      expect(await creditsOf('usr_nul_next')).toBe('2');
    },
  );

  it('a poisoned Kafka batch is applied around its poison and the partition is resolved past it', async () => {
    const values = [
      event({ eventId: 'evt_k0', accountId: 'usr_kafka_a' }),
      event({ eventId: 'evt_k1', accountId: 'usr_kafka_poison', ts: timestampFromMs(BEFORE_POSTGRES_TIME) }),
      new Uint8Array([0xff, 0xff]), // not a UsageEvent at all
      event({ eventId: 'evt_k3', accountId: 'usr_kafka_b' }),
    ];
    const broker = brokerWithOneBatch(7, 1_000, values);
    const consumer = createKafkaConsumer(broker.kafka, { logger, retry: { initialMs: 10, maxMs: 50 } });
    await subscribeUsageEvents(consumer, { db: prisma(), logger, batchSize: 500 });
    await broker.done;
    await consumer.close();

    expect(broker.resolved).toEqual(['1003']);
    expect(await creditsOf('usr_kafka_a')).toBe('2');
    expect(await creditsOf('usr_kafka_b')).toBe('2');
    const parked = await prisma().usageDeadLetter.findMany({ where: { partition: 7 }, orderBy: { offset: 'asc' } });
    expect(parked.map((l) => [l.offset, l.eventId])).toEqual([
      ['1001', 'evt_k1'],
      ['1002', null],
    ]);
  });

  it(
    'an operator lists dead letters and replays them: an ' +
      'applicable one lands once and is marked, a refused one stays',
    async () => {
      // Parked while the database refused it for a reason since fixed; its bytes still carry a NUL the decoder cleans.
      await recordDeadLetter(prisma(), {
        eventId: 'evt_replay',
        topic: USAGE_EVENTS_TOPIC,
        partition: 0,
        offset: '42',
        key: 'usr_replay',
        error: '22P05: unsupported Unicode escape sequence',
        event: event({ eventId: 'evt_replay', accountId: 'usr_replay', model: 'm\u0000' }),
      });
      const lines: string[] = [];
      const run = (...args: string[]) => deadLettersCommand(prisma(), args, (line) => lines.push(line));

      expect(await run('list')).toBe(0);
      expect(
        lines
          .filter((l) => l.includes('\tpending\t'))
          .map((l) => l.split('\t')[3])
          .sort(),
      ).toEqual(expect.arrayContaining(['evt_poison', 'evt_replay']));
      const replayId = lines.find((l) => l.includes('evt_replay'))!.split('\t')[0]!;
      const poisonId = lines.find((l) => l.includes('evt_poison'))!.split('\t')[0]!;

      lines.length = 0;
      expect(await run('replay', replayId, poisonId)).toBe(1);
      expect(lines).toEqual([
        expect.stringMatching(new RegExp(`^${poisonId} not replayed: .*22009`)),
        `${replayId} replayed`,
      ]);
      expect(await creditsOf('usr_replay')).toBe('2');
      expect(
        (await prisma().usageDeadLetter.findFirstOrThrow({ where: { eventId: 'evt_replay' } })).replayedAt,
      ).not.toBeNull();

      lines.length = 0;
      expect(await run('replay', replayId)).toBe(0);
      expect(lines[0]).toMatch(/already replayed/);
      expect(await creditsOf('usr_replay')).toBe('2');
      expect(await run('bogus')).toBe(2);
    },
  );
});
