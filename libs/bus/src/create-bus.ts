import { Kafka, logLevel } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import type { BackoffOptions } from './backoff';
import { openFileOutbox, type FileOutbox } from './file-outbox';
import { createInProcessBus } from './in-process-bus';
import { createKafkaConsumer } from './kafka-consumer';
import { kafkaLogCreator } from './kafka-logger';
import type { KafkaCompression } from './compression';
import { createKafkaProducer, type KafkaProducerOptions } from './kafka-producer';
import { createSpoolingProducer } from './spooling-producer';
import { prefixTopics } from './topic-prefix';
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
   * A directory for the durable outbox (see file-outbox.ts), so an event acknowledged by `sendDurable`
   * survives a crash. Embedded mode: every event is appended to it. With Kafka it is the spool: an event the
   * broker has not acked within `spoolAfterMs` is appended to it, and sent from it once the broker is back
   * (spooling-producer.ts). One process per directory.
   */
  outboxDir?: string;
  /** With Kafka and an outbox: how long an event waits for the broker's ack before it is spooled; default 500 ms. */
  spoolAfterMs?: number;
  /** With Kafka; default `lz4`. */
  compression?: KafkaCompression;
  /** With Kafka: put before every topic name (`KAFKA_TOPIC_PREFIX`), so environments can share a cluster. */
  topicPrefix?: string;
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
  const batching = {
    lingerMs: options.lingerMs,
    maxBatchSize: options.maxBatchSize,
    maxBuffered: options.maxBuffered,
    closeTimeoutMs: options.closeTimeoutMs,
    retry,
    logger,
  };
  let producer: EventProducer;
  let consumer: EventConsumer;
  const outbox = options.outboxDir ? openFileOutbox({ dir: options.outboxDir, logger }) : undefined;
  if (kafkaBrokers && kafkaBrokers.length > 0) {
    const kafka = new Kafka({
      clientId,
      brokers: kafkaBrokers,
      logLevel: logLevel.WARN,
      logCreator: kafkaLogCreator(logger),
    });
    const { compression, spoolAfterMs } = options;
    ({ producer, consumer } = prefixTopics(options.topicPrefix ?? '', {
      producer: createKafkaEventProducer(kafka, { ...batching, compression, outbox, spoolAfterMs }),
      consumer: createKafkaConsumer(kafka, { retry, logger }),
    }));
  } else {
    ({ producer, consumer } = createInProcessBus({
      maxBuffered: options.maxBuffered,
      closeTimeoutMs: options.closeTimeoutMs,
      retry,
      logger,
      outbox,
    }));
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

/**
 * The services-mode producer: Kafka, behind the spool when there is an outbox. The spool bounds memory
 * (`maxBuffered` events in memory) and decides when `close` gives up, so the Kafka producer under it holds
 * whatever it is handed and closes at once.
 */
export function createKafkaEventProducer(
  kafka: Kafka,
  options: KafkaProducerOptions & { outbox?: FileOutbox; spoolAfterMs?: number },
): EventProducer {
  const { outbox, spoolAfterMs, ...kafkaOptions } = options;
  if (!outbox) return createKafkaProducer(kafka, kafkaOptions);
  const unbounded = { maxBuffered: Number.MAX_SAFE_INTEGER, closeTimeoutMs: 0 };
  const broker = createKafkaProducer(kafka, { ...kafkaOptions, ...unbounded });
  const { maxBuffered: maxInMemory, closeTimeoutMs, logger } = kafkaOptions;
  return createSpoolingProducer(broker, { outbox, spoolAfterMs, maxInMemory, closeTimeoutMs, logger });
}
