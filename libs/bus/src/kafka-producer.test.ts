import { createLogger } from '@sbc/logging';
import { Kafka, logLevel } from 'kafkajs';
import { createKafkaProducer } from './kafka-producer';
import { FakeKafkaCluster } from './testing/fake-kafka';

/**
 * No broker needed: the real kafkajs client pointed at a port where nothing listens, to pin down what the
 * gateway sees while Kafka is down. (Round trips against a real broker are in kafka.int.test.ts.)
 */
const logger = createLogger({ service: 'bus-test', level: 'silent' });

describe('Kafka producer while the broker is unreachable', () => {
  it(
    'send still returns at once; the events stay pending ' + 'and are retried; close drops them after its timeout',
    async () => {
      const kafka = new Kafka({
        clientId: 'sbc-bus-test',
        brokers: ['127.0.0.1:1'],
        connectionTimeout: 200,
        retry: { retries: 1, initialRetryTime: 10 }, // idempotence needs >= 1; keep kafkajs' own retries short here
        logLevel: logLevel.NOTHING,
      });
      const producer = createKafkaProducer(kafka, {
        lingerMs: 1,
        retry: { initialMs: 20, maxMs: 50 },
        closeTimeoutMs: 1_500,
        logger,
      });
      const started = Date.now();
      producer.send('usage.events.v1', { key: 'k', value: new Uint8Array([1, 2, 3]) });
      producer.send('usage.events.v1', { key: 'k', value: new Uint8Array([4]) });
      expect(Date.now() - started).toBeLessThan(50);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(producer.stats()).toMatchObject({ pending: 2, sent: 0 });
      expect(producer.stats().failed).toBeGreaterThanOrEqual(4); // at least two attempts at the 2-message batch
      await producer.close();
      expect(producer.stats()).toMatchObject({ pending: 0, sent: 0, dropped: 2 });
    },
  );
});

/** Each event carries its id as its value, so the log can be read the way the ledger reads it: by event id. */
const event = (id: string) => ({ key: 'acct_1', value: new TextEncoder().encode(id) });
const idsIn = (cluster: FakeKafkaCluster) => cluster.log.map((r) => r.value.toString('utf8'));
/** What the ledger applies: each event id once, however often the log repeats it. */
const appliedOnce = (cluster: FakeKafkaCluster) => [...new Set(idsIn(cluster))];

describe('Kafka producer against kafkajs error semantics (fake cluster)', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  it(
    'asks kafkajs for acks from all in-sync replicas, one ' + 'request in flight, and no idempotent sequence state',
    async () => {
      const cluster = new FakeKafkaCluster();
      const producer = createKafkaProducer(cluster.client(), { lingerMs: 1, logger });
      producer.send('usage.events.v1', event('evt_1'));
      await jest.advanceTimersByTimeAsync(10);
      await producer.close();
      expect(cluster.producerConfigs).toEqual([expect.objectContaining({ idempotent: false, maxInFlightRequests: 1 })]);
      expect(cluster.acks).toEqual([-1]);
    },
  );

  it(
    'a batch the broker wrote but whose reply timed out ' + 'is sent again as it was: nothing lost, applied once',
    async () => {
      const cluster = new FakeKafkaCluster();
      const producer = createKafkaProducer(cluster.client(), {
        lingerMs: 1,
        retry: { initialMs: 100, maxMs: 100 },
        logger,
      });
      cluster.fault('timeout-after-write');
      const first = ['evt_1', 'evt_2'].map((id) => producer.sendDurable('usage.events.v1', event(id)));
      await jest.advanceTimersByTimeAsync(5);
      producer.send('usage.events.v1', event('evt_3')); // arrives during the backoff: not merged into the retry
      await jest.advanceTimersByTimeAsync(1_000);
      await Promise.all(first);
      expect(idsIn(cluster)).toEqual(['evt_1', 'evt_2', 'evt_1', 'evt_2', 'evt_3']);
      expect(cluster.requestSizes).toEqual([2, 2, 1]); // the retry repeats the written request exactly
      expect(appliedOnce(cluster)).toEqual(['evt_1', 'evt_2', 'evt_3']);
      expect(producer.stats()).toMatchObject({ pending: 0, sent: 3, dropped: 0 });
    },
  );

  it(
    'after OUT_OF_ORDER_SEQUENCE_NUMBER (45) the kafkajs ' + 'producer is replaced, and later sends go through',
    async () => {
      const cluster = new FakeKafkaCluster();
      const producer = createKafkaProducer(cluster.client(), {
        lingerMs: 1,
        retry: { initialMs: 100, maxMs: 100 },
        logger,
      });
      cluster.fault('out-of-order-sequence');
      const acked = producer.sendDurable('usage.events.v1', event('evt_1'));
      await jest.advanceTimersByTimeAsync(1_000);
      await acked;
      for (let i = 2; i <= 20; i++) producer.send('usage.events.v1', event(`evt_${i}`));
      await jest.advanceTimersByTimeAsync(1_000);
      expect(cluster.producerConfigs).toHaveLength(2); // the refused instance was dropped, once
      expect(appliedOnce(cluster)).toHaveLength(20);
      expect(producer.stats()).toMatchObject({ pending: 0, sent: 20, dropped: 0 });
    },
  );

  it(
    'a broker down for 60 s then back: events wait (below ' + 'the buffer nothing is dropped) and are all delivered',
    async () => {
      const cluster = new FakeKafkaCluster();
      const producer = createKafkaProducer(cluster.client(), {
        lingerMs: 5,
        retry: { initialMs: 100, maxMs: 5_000 },
        logger,
      });
      cluster.takeDown();
      for (let second = 0; second < 60; second++) {
        for (let i = 0; i < 10; i++) producer.send('usage.events.v1', event(`evt_${second}_${i}`));
        await jest.advanceTimersByTimeAsync(1_000);
      }
      expect(producer.stats()).toMatchObject({ pending: 600, sent: 0, dropped: 0 });
      cluster.bringUp();
      await jest.advanceTimersByTimeAsync(10_000);
      expect(appliedOnce(cluster)).toHaveLength(600);
      expect(producer.stats()).toMatchObject({ pending: 0, sent: 600, dropped: 0 });
    },
  );
});
