import { randomUUID } from 'node:crypto';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { createKafkaConsumer } from './kafka-consumer';
import { kafkaLogCreator } from './kafka-logger';
import { createKafkaProducer } from './kafka-producer';
import type { IncomingMessage } from './types';

/** Runs only against a real broker (TEST_KAFKA_BROKERS or compose); otherwise reported as skipped. */
const brokers = testBackends().kafkaBrokers;
const logger = createLogger({ service: 'bus-test', level: 'warn' });
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (m: IncomingMessage) => new TextDecoder().decode(m.value);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor(condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the condition');
    await sleep(50);
  }
}

(brokers ? describe : describe.skip)('Kafka bus against a real broker', () => {
  jest.setTimeout(120_000);
  let kafka: Kafka;
  let admin: Admin;
  const topics: string[] = [];

  async function newTopic(partitions: number): Promise<string> {
    const topic = `sbc-test-${randomUUID()}`;
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
    topics.push(topic);
    return topic;
  }

  beforeAll(async () => {
    kafka = new Kafka({
      clientId: 'sbc-bus-test',
      brokers: brokers!,
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(logger),
    });
    admin = kafka.admin();
    await admin.connect();
  });

  afterAll(async () => {
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
  });

  it('a sent event round-trips with key, value and headers, in order per key, and flush means acked', async () => {
    const topic = await newTopic(3);
    const producer = createKafkaProducer(kafka, { lingerMs: 5, logger });
    const consumer = createKafkaConsumer(kafka, { logger });
    const received: IncomingMessage[] = [];
    try {
      await consumer.subscribe({
        topic,
        groupId: `g-${randomUUID()}`,
        fromBeginning: true,
        handler: async (m) => void received.push(m),
      });
      for (let i = 0; i < 10; i++)
        producer.send(topic, { key: `k${i % 2}`, value: encode(String(i)), headers: { 'event-type': 'usage' } });
      await producer.flush();
      expect(producer.stats()).toEqual({ pending: 0, sent: 10, failed: 0, dropped: 0 });
      await waitFor(() => received.length === 10);
      expect(received[0]).toMatchObject({ topic, headers: { 'event-type': 'usage' } });
      for (const key of ['k0', 'k1']) {
        const values = received.filter((m) => m.key === key).map(decode);
        expect(values).toEqual([...values].sort((a, b) => Number(a) - Number(b)));
        expect(values).toHaveLength(5);
      }
    } finally {
      await producer.close();
      await consumer.close();
    }
  });

  it(
    'an offset is committed only after its handler succeeds; ' + 'a failing handler is retried, then redelivered',
    async () => {
      const topic = await newTopic(1);
      const groupId = `g-${randomUUID()}`;
      const producer = createKafkaProducer(kafka, { lingerMs: 1, logger });
      const consumer = createKafkaConsumer(kafka, { logger, retry: { initialMs: 50, maxMs: 200 } });
      try {
        // 1. Fails twice, then succeeds: three attempts at the same message, and its offset is committed.
        const attempts: string[] = [];
        const first = await consumer.subscribe({
          topic,
          groupId,
          fromBeginning: true,
          handler: async (m) => {
            attempts.push(decode(m));
            if (attempts.length < 3) throw new Error('transient');
          },
        });
        producer.send(topic, { key: 'k', value: encode('one') });
        await producer.flush();
        await waitFor(() => attempts.length === 3);
        await first.stop();
        expect(attempts).toEqual(['one', 'one', 'one']);

        // 2. A handler that never succeeds: its message must not be committed.
        const failing: string[] = [];
        const second = await consumer.subscribe({
          topic,
          groupId,
          fromBeginning: true,
          handler: async (m) => {
            failing.push(decode(m));
            throw new Error('permanent');
          },
        });
        producer.send(topic, { key: 'k', value: encode('two') });
        await producer.flush();
        await waitFor(() => failing.length >= 1);
        await second.stop();
        expect(failing.every((v) => v === 'two')).toBe(true); // 'one' was committed, so not seen again

        // 3. The next member of the group gets 'two' again, and only it.
        const redelivered: string[] = [];
        await consumer.subscribe({
          topic,
          groupId,
          fromBeginning: true,
          handler: async (m) => void redelivered.push(decode(m)),
        });
        await waitFor(() => redelivered.length >= 1);
        await sleep(500);
        expect(redelivered).toEqual(['two']);
      } finally {
        await producer.close();
        await consumer.close();
      }
    },
  );
});
