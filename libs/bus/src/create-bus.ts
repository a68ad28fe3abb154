import { Kafka, logLevel } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import type { BackoffOptions } from './backoff';
import { openFileOutbox } from './file-outbox';
import { createInProcessBus } from './in-process-bus';
import { createKafkaConsumer } from './kafka-consumer';
import { kafkaLogCreator } from './kafka-logger';
import { createKafkaProducer } from './kafka-producer';
import type { EventConsumer, EventProducer } from './types';

export interface BusOptions {
  /** Set in services mode (KAFKA_BROKERS); absent means the in-process bus of embedded mode. */
  kafkaBrokers?: string[];
  clientId: string;
  logger: Logger;
  lingerMs?: number;
  maxBatchSize?: number;
  maxBuffered?: number;
  /** Backoff for failed sends and failed handlers. */
  retry?: BackoffOptions;
  closeTimeoutMs?: number;
  /**
   * Embedded mode: a directory for the in-process bus's durable outbox (see file-outbox.ts), so an event
   * acknowledged by `sendDurable` survives a crash. Ignored with Kafka, whose acks are durable already.
   */
  outboxDir?: string;
}

export interface Bus {
  producer: EventProducer;
  consumer: EventConsumer;
  kind: 'kafka' | 'in-process';
  /** Flushes the producer (bounded by closeTimeoutMs), then stops every subscription. */
  close(): Promise<void>;
}

/** The one place that picks Kafka or the in-process bus, called once from an app's main.ts. */
export function createBus(options: BusOptions): Bus {
  const { kafkaBrokers, clientId, logger, retry } = options;
  const batching = { lingerMs: options.lingerMs, maxBatchSize: options.maxBatchSize, maxBuffered: options.maxBuffered, closeTimeoutMs: options.closeTimeoutMs, retry, logger };
  let producer: EventProducer;
  let consumer: EventConsumer;
  if (kafkaBrokers && kafkaBrokers.length > 0) {
    const kafka = new Kafka({ clientId, brokers: kafkaBrokers, logLevel: logLevel.WARN, logCreator: kafkaLogCreator(logger) });
    producer = createKafkaProducer(kafka, batching);
    consumer = createKafkaConsumer(kafka, { retry, logger });
  } else {
    const outbox = options.outboxDir ? openFileOutbox({ dir: options.outboxDir, logger }) : undefined;
    ({ producer, consumer } = createInProcessBus({ maxBuffered: options.maxBuffered, closeTimeoutMs: options.closeTimeoutMs, retry, logger, outbox }));
  }
  return {
    producer,
    consumer,
    kind: kafkaBrokers && kafkaBrokers.length > 0 ? 'kafka' : 'in-process',
    async close() {
      await producer.close();
      await consumer.close();
    },
  };
}
