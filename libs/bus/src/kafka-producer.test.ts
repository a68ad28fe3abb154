import { createLogger } from '@sbc/logging';
import { Kafka, logLevel } from 'kafkajs';
import { createKafkaProducer } from './kafka-producer';

/**
 * No broker needed: the real kafkajs client pointed at a port where nothing listens, to pin down what the
 * gateway sees while Kafka is down. (Round trips against a real broker are in kafka.int.test.ts.)
 */
const logger = createLogger({ service: 'bus-test', level: 'silent' });

describe('Kafka producer while the broker is unreachable', () => {
  it('send still returns at once; the events stay pending and are retried; close drops them after its timeout', async () => {
    const kafka = new Kafka({
      clientId: 'sbc-bus-test',
      brokers: ['127.0.0.1:1'],
      connectionTimeout: 200,
      retry: { retries: 1, initialRetryTime: 10 }, // idempotence needs >= 1; keep kafkajs' own retries short here
      logLevel: logLevel.NOTHING,
    });
    const producer = createKafkaProducer(kafka, { lingerMs: 1, retry: { initialMs: 20, maxMs: 50 }, closeTimeoutMs: 1_500, logger });
    const started = Date.now();
    producer.send('usage.events.v1', { key: 'k', value: new Uint8Array([1, 2, 3]) });
    producer.send('usage.events.v1', { key: 'k', value: new Uint8Array([4]) });
    expect(Date.now() - started).toBeLessThan(50);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(producer.stats()).toMatchObject({ pending: 2, sent: 0 });
    expect(producer.stats().failed).toBeGreaterThanOrEqual(4); // at least two attempts at the 2-message batch
    await producer.close();
    expect(producer.stats()).toMatchObject({ pending: 0, sent: 0, dropped: 2 });
  });
});
