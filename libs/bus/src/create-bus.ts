import type { Kafka } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import type { BackoffOptions } from './backoff';
import { openFileOutbox } from './file-outbox';
import { createInProcessBus } from './in-process-bus';
import { createKafka, type KafkaConnection } from './kafka-client';
import { createKafkaConsumer } from './kafka-consumer';
import type { KafkaCompression } from './compression';
import { createKafkaProducer, type KafkaProducerOptions } from './kafka-producer';
import { createSpoolingProducer, type SpoolOptions } from './spooling-producer';
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
   * survives a crash. Embedded mode: every event is appended to it (one process per directory). With Kafka it is
   * the spool's root, which edges may share: each spools into a directory of its own under it, and adopts those
   * of edges that are gone (spool-root.ts, spooling-producer.ts).
   */
  outboxDir?: string;
  /** With Kafka and an outbox: how long an event waits for the broker's ack before it is spooled; default 500 ms. */
  spoolAfterMs?: number;
  /** With Kafka and an outbox: the spool's byte bound, lease and directory name (spooling-producer.ts). */
  spool?: Pick<SpoolOptions, 'maxBytes' | 'leaseMs' | 'owner'>;
  /** With Kafka: TLS and SASL (kafka-client.ts). */
  connection?: KafkaConnection;
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
  if (kafkaBrokers && kafkaBrokers.length > 0) {
    const kafka = createKafka({ clientId, brokers: kafkaBrokers, logger, connection: options.connection });
    const { compression, spoolAfterMs, outboxDir } = options;
    const spool = outboxDir ? { dir: outboxDir, spoolAfterMs, ...options.spool } : undefined;
    ({ producer, consumer } = prefixTopics(options.topicPrefix ?? '', {
      producer: createKafkaEventProducer(kafka, { ...batching, compression, spool }),
      consumer: createKafkaConsumer(kafka, { retry, logger }),
    }));
  } else {
    const outbox = options.outboxDir ? openFileOutbox({ dir: options.outboxDir, logger }) : undefined;
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
 * The services-mode producer: Kafka, behind the spool when there is one. The spool bounds memory
 * (`maxBuffered` events in memory) and decides when `close` gives up, so the Kafka producer under it holds
 * whatever it is handed and closes at once.
 */
export function createKafkaEventProducer(
  kafka: Kafka,
  options: KafkaProducerOptions & { spool?: Omit<SpoolOptions, 'maxInMemory' | 'closeTimeoutMs' | 'logger'> },
): EventProducer {
  const { spool, ...kafkaOptions } = options;
  if (!spool) return createKafkaProducer(kafka, kafkaOptions);
  const unbounded = { maxBuffered: Number.MAX_SAFE_INTEGER, closeTimeoutMs: 0 };
  const broker = createKafkaProducer(kafka, { ...kafkaOptions, ...unbounded });
  const { maxBuffered: maxInMemory, closeTimeoutMs, logger } = kafkaOptions;
  return createSpoolingProducer(broker, { ...spool, maxInMemory, closeTimeoutMs, logger });
}
