import type { EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { createLogger } from '@sbc/logging';
import { createInProcessBus } from './in-process-bus';
import { createKafkaConsumer } from './kafka-consumer';
import { createKafkaProducer } from './kafka-producer';
import { settleBatch } from './poison';
import { FakeKafkaCluster } from './testing/fake-kafka';
import type { BatchHandler, FailureKind, IncomingMessage, PoisonOptions } from './types';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (m: IncomingMessage) => new TextDecoder().decode(m.value);
const messagesOf = (...values: string[]): IncomingMessage[] =>
  values.map((value, i) => ({
    topic: 't',
    key: 'k',
    value: encode(value),
    headers: {},
    partition: 0,
    offset: String(i),
  }));

class DataError extends Error {
  readonly kind = 'data';
}
class ConnectionError extends Error {
  readonly kind = 'transient';
}
const classify = (error: unknown): FailureKind =>
  error instanceof DataError ? 'data' : error instanceof ConnectionError ? 'transient' : 'unknown';

/** A store that applies values in one all-or-nothing write and refuses any value holding "poison". */
function store(options: { down?: () => boolean } = {}) {
  const applied: string[] = [];
  const parked: string[] = [];
  const handler: BatchHandler = async (ms) => {
    if (options.down?.()) throw new ConnectionError('connection refused');
    const values = ms.map(decode);
    if (values.some((v) => v.includes('poison'))) throw new Error('the store refused the write');
    applied.push(...values);
  };
  const poison: PoisonOptions = { deadLetter: async (m) => void parked.push(decode(m)), classify };
  return { applied, parked, handler, poison };
}

describe('settleBatch: split and park', () => {
  it(
    'a failing batch is applied one by one and the message ' + 'that fails while its neighbours succeed is parked',
    async () => {
      const s = store();
      await settleBatch(messagesOf('a', 'poison-b', 'c'), s.handler, s.poison, logger);
      expect(s.applied).toEqual(['a', 'c']);
      expect(s.parked).toEqual(['poison-b']);
    },
  );

  it('an outage (every message fails) parks nothing and rejects, so the batch is retried', async () => {
    const s = store({ down: () => true });
    await expect(
      settleBatch(messagesOf('a', 'b'), s.handler, { ...s.poison, classify: () => 'unknown' }, logger),
    ).rejects.toThrow('connection refused');
    expect(s.parked).toEqual([]);
  });

  it('a transient error mid-pass stops the pass and parks nothing, even after neighbours succeeded', async () => {
    let calls = 0;
    const s = store({ down: () => ++calls > 3 }); // the batch and "poison" fail, "a" succeeds, then the store goes down
    await expect(settleBatch(messagesOf('poison', 'a', 'b', 'c'), s.handler, s.poison, logger)).rejects.toBeInstanceOf(
      ConnectionError,
    );
    expect(s.parked).toEqual([]);
  });

  it('a message alone is parked only when its error is a data error; an unknown one is retried', async () => {
    const refuse: BatchHandler = async () => {
      throw new DataError('22P05 unsupported Unicode escape sequence');
    };
    const parked: string[] = [];
    await settleBatch(
      messagesOf('x'),
      refuse,
      { deadLetter: async (m) => void parked.push(decode(m)), classify },
      logger,
    );
    expect(parked).toEqual(['x']);
    const s = store();
    await expect(settleBatch(messagesOf('poison'), s.handler, s.poison, logger)).rejects.toThrow('refused');
    expect(s.parked).toEqual([]);
  });

  it('messages a handler names as rejected are parked and the rest count as applied', async () => {
    const parked: string[] = [];
    const handler: BatchHandler = async (ms) => ({
      rejected: ms
        .filter((m) => decode(m) === 'garbage')
        .map((message) => ({ message, error: new Error('does not decode') })),
    });
    await settleBatch(
      messagesOf('a', 'garbage', 'b'),
      handler,
      { deadLetter: async (m) => void parked.push(decode(m)) },
      logger,
    );
    expect(parked).toEqual(['garbage']);
  });

  it('a dead-letter sink that fails rejects, so the message is retried rather than lost', async () => {
    const s = store();
    const failingSink: PoisonOptions = {
      classify,
      deadLetter: () => Promise.reject(new ConnectionError('dead-letter table unreachable')),
    };
    await expect(settleBatch(messagesOf('a', 'poison'), s.handler, failingSink, logger)).rejects.toThrow('unreachable');
  });

  it('heartbeats after each message of the one-by-one pass, so a slow database does not evict the member', async () => {
    const s = store();
    const beats: number[] = [];
    await settleBatch(messagesOf('a', 'poison-b', 'c', 'd'), s.handler, s.poison, logger, {
      heartbeat: async () => void beats.push(s.applied.length + s.parked.length),
    });
    // One beat after each of the four statements of the pass (the count of messages settled so far, plus the poison).
    expect(beats).toEqual([1, 1, 2, 3]);
    expect(s.parked).toEqual(['poison-b']);
  });

  it(
    'parks a lone message that keeps failing with an ' + 'unknown error after parkLoneAfterAttempts, not before',
    async () => {
      const s = store();
      const poison = { ...s.poison, parkLoneAfterAttempts: 3 };
      for (const number of [1, 2])
        await expect(settleBatch(messagesOf('poison'), s.handler, poison, logger, { number })).rejects.toThrow(
          'refused',
        );
      expect(s.parked).toEqual([]);
      await settleBatch(messagesOf('poison'), s.handler, poison, logger, { number: 3 });
      expect(s.parked).toEqual(['poison']);
    },
  );

  it('never parks a lone message for an outage, however many attempts', async () => {
    const s = store({ down: () => true });
    const poison = { ...s.poison, parkLoneAfterAttempts: 3 };
    await expect(settleBatch(messagesOf('a'), s.handler, poison, logger, { number: 50 })).rejects.toBeInstanceOf(
      ConnectionError,
    );
    expect(s.parked).toEqual([]);
  });

  it('without poison options any failure rejects, as before', async () => {
    const s = store();
    await expect(settleBatch(messagesOf('a', 'poison'), s.handler, undefined, logger)).rejects.toThrow('refused');
    expect(s.applied).toEqual([]);
  });
});

describe('in-process bus with poison options', () => {
  it('parks a poison message and keeps delivering the messages behind it', async () => {
    const { producer, consumer } = createInProcessBus({ logger, retry: { initialMs: 5, maxMs: 10 } });
    const s = store();
    for (const v of ['a', 'poison', 'b', 'c']) producer.send('t', { key: 'k', value: encode(v) });
    await consumer.subscribeBatches({
      topic: 't',
      groupId: 'g',
      fromBeginning: true,
      maxBatchSize: 10,
      handler: s.handler,
      poison: s.poison,
    });
    await producer.flush();
    expect(s.applied).toEqual(['a', 'b', 'c']);
    expect(s.parked).toEqual(['poison']);
    await consumer.close();
  });

  it('retries through an outage without parking, then applies everything once the store is back', async () => {
    const { producer, consumer } = createInProcessBus({ logger, retry: { initialMs: 5, maxMs: 10 } });
    let downFor = 5;
    const s = store({ down: () => downFor-- > 0 });
    for (const v of ['a', 'b', 'c']) producer.send('t', { key: 'k', value: encode(v) });
    await consumer.subscribeBatches({
      topic: 't',
      groupId: 'g',
      fromBeginning: true,
      handler: s.handler,
      poison: { ...s.poison, classify: () => 'unknown' },
    });
    await producer.flush();
    expect(s.applied).toEqual(['a', 'b', 'c']);
    expect(s.parked).toEqual([]);
    await consumer.close();
  });

  it('a lone poison message with an unknown error is parked once later messages succeed beside it', async () => {
    const { producer, consumer } = createInProcessBus({ logger, retry: { initialMs: 5, maxMs: 10 } });
    const s = store();
    await consumer.subscribeBatches({
      topic: 't',
      groupId: 'g',
      handler: s.handler,
      poison: { ...s.poison, classify: () => 'unknown' },
    });
    producer.send('t', { key: 'k', value: encode('poison') });
    await new Promise((resolve) => setTimeout(resolve, 20)); // handed over alone, and retried alone
    for (const v of ['a', 'b']) producer.send('t', { key: 'k', value: encode(v) });
    await producer.flush();
    expect(s.applied).toEqual(['a', 'b']);
    expect(s.parked).toEqual(['poison']);
    await consumer.close();
  });
});

/**
 * Just enough of kafkajs for one consumer: `run` hands the given batches to `eachBatch` one after the other
 * and records the offsets the consumer resolved. The broker is what is faked; the consumer under test is ours.
 */
function fakeKafka(batches: { partition: number; values: string[] }[]) {
  const resolved: string[] = [];
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const kafka = {
    consumer: () => ({
      events: { CRASH: 'consumer.crash' },
      on: () => () => undefined, // this broker never crashes a consumer
      connect: async () => undefined,
      subscribe: async () => undefined,
      disconnect: async () => undefined,
      run: async ({ eachBatch }: { eachBatch: (payload: EachBatchPayload) => Promise<void> }) => {
        void (async () => {
          let offset = 0;
          for (const { partition, values } of batches) {
            const messages = values.map(
              (v) =>
                ({
                  key: Buffer.from('k'),
                  value: Buffer.from(v),
                  headers: {},
                  offset: String(offset++),
                  timestamp: '0',
                  attributes: 0,
                }) as KafkaMessage,
            );
            await eachBatch({
              batch: { topic: 't', partition, messages },
              resolveOffset: (o: string) => void resolved.push(o),
              heartbeat: async () => undefined,
              commitOffsetsIfNecessary: async () => undefined,
              isRunning: () => true,
              isStale: () => false,
            } as unknown as EachBatchPayload);
          }
          finished();
        })();
      },
    }),
  } as unknown as Kafka;
  return { kafka, resolved, done };
}

describe('Kafka consumer with poison options', () => {
  it('parks a poison message of a fetched batch and resolves the partition past it', async () => {
    const { kafka, resolved, done } = fakeKafka([
      { partition: 3, values: ['a', 'poison', 'b'] },
      { partition: 3, values: ['c'] },
    ]);
    const s = store();
    const consumer = createKafkaConsumer(kafka, { logger, retry: { initialMs: 5, maxMs: 10 } });
    await consumer.subscribeBatches({ topic: 't', groupId: 'g', handler: s.handler, poison: s.poison });
    await done;
    expect(s.applied).toEqual(['a', 'b', 'c']);
    expect(s.parked).toEqual(['poison']);
    expect(resolved).toEqual(['2', '3']);
    await consumer.close();
  });

  it('holds the partition through an outage, parking nothing, and commits once the store is back', async () => {
    const cluster = new FakeKafkaCluster();
    const producer = createKafkaProducer(cluster.client(), { lingerMs: 1, logger });
    for (const value of ['a', 'b']) producer.send('t', { key: 'k', value: encode(value) });
    await producer.flush();
    let downFor = 4;
    const s = store({ down: () => downFor-- > 0 });
    const consumer = createKafkaConsumer(cluster.client(), { logger, retry: { initialMs: 5, maxMs: 10 } });
    await consumer.subscribeBatches({ topic: 't', groupId: 'g', handler: s.handler, poison: s.poison });
    for (const until = Date.now() + 5_000; cluster.committed.get('g/0') !== 2 && Date.now() < until;)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(s.applied).toEqual(['a', 'b']);
    expect(s.parked).toEqual([]);
    expect(cluster.pauses).toBe(4); // one backoff per failed attempt, the partition paused each time
    expect(cluster.committed.get('g/0')).toBe(2);
    await consumer.close();
    await producer.close();
  });
});
