import { Partitioners, type Kafka, type Message, type Producer } from 'kafkajs';
import { createBatchingProducer, type BatchingOptions } from './batching-producer';
import { compressionType, registerKafkaCodecs, type KafkaCompression } from './compression';
import type { EventProducer, QueuedMessage } from './types';

/**
 * Broker error codes that leave a kafkajs producer unable to send again: OUT_OF_ORDER_SEQUENCE_NUMBER (45) and
 * UNKNOWN_PRODUCER_ID (59). kafkajs never re-initialises its producer id after them (kafkajs#598), so only a
 * new producer instance gets out.
 */
const FATAL_PRODUCER_CODES = new Set([45, 59]);

export interface KafkaProducerOptions extends BatchingOptions {
  /** Default `lz4`. */
  compression?: KafkaCompression;
}

/**
 * The Kafka producer: the batching core over one kafkajs producer, with acks from all in-sync replicas
 * (`acks=-1`), so an ack means the event survives a broker loss.
 *
 * Idempotence is off, on purpose. kafkajs's idempotent producer rolls its sequence numbers back on any
 * failed produce, a timeout after the broker wrote included; after that, one differently shaped retry earns
 * OUT_OF_ORDER_SEQUENCE_NUMBER, which kafkajs treats as final and never recovers from, and an idle producer
 * id expiring earns UNKNOWN_PRODUCER_ID the same way. What idempotence would buy (no duplicate from a retry)
 * the ledger already has: it applies each event id once, as it must anyway for the spool's replays. What it
 * would keep (order across retries) one request in flight keeps too. So the producer holds no state a
 * broker can disown; a fatal code seen anyway (a broker-side fault) makes it drop the kafkajs producer and
 * start a new one. Create one per process: it is meant to be shared.
 */
export function createKafkaProducer(kafka: Kafka, options: KafkaProducerOptions = {}): EventProducer {
  registerKafkaCodecs();
  const compression = compressionType(options.compression ?? 'lz4');
  const newProducer = () =>
    kafka.producer({
      idempotent: false,
      maxInFlightRequests: 1,
      // The topic is made on purpose, by the migrate job: a send to a missing topic fails (and is retried or
      // spooled) instead of having the broker create it with its defaults (1 partition, 1 replica).
      allowAutoTopicCreation: false,
      // Java-compatible murmur2 partitioning: the same key lands on the same partition as from any other client.
      createPartitioner: Partitioners.DefaultPartitioner,
    });
  let producer: Producer = newProducer();
  let connecting: Promise<void> | undefined;

  function connect(): Promise<void> {
    // Lazily, and again after a failure: a broker that is down at start-up is one more retried batch.
    connecting ??= producer.connect().catch((err: unknown) => {
      connecting = undefined;
      throw err;
    });
    return connecting;
  }

  async function replaceProducer(): Promise<void> {
    const old = producer;
    producer = newProducer();
    connecting = undefined;
    await old.disconnect().catch(() => undefined);
  }

  async function sendBatch(messages: readonly QueuedMessage[]): Promise<void> {
    await connect();
    const byTopic = new Map<string, Message[]>(); // Map keeps first-seen order, messages keep send order
    for (const m of messages) {
      let list = byTopic.get(m.topic);
      if (!list) byTopic.set(m.topic, (list = []));
      list.push({
        key: m.key,
        value: Buffer.from(m.value.buffer, m.value.byteOffset, m.value.byteLength),
        headers: m.headers,
      });
    }
    try {
      await producer.sendBatch({
        acks: -1,
        compression,
        topicMessages: [...byTopic].map(([topic, list]) => ({ topic, messages: list })),
      });
    } catch (err) {
      if (FATAL_PRODUCER_CODES.has(protocolErrorCode(err) ?? -1)) {
        options.logger?.warn({ err }, 'the kafka producer was refused for good; replacing it before the retry');
        await replaceProducer();
      }
      throw err;
    }
  }

  return createBatchingProducer(sendBatch, {
    ...options,
    onClose: async () => {
      await options.onClose?.();
      if (connecting) await producer.disconnect();
    },
  });
}

/** The broker's error code, on a kafkajs protocol error or on the error kafkajs wrapped it in after retrying. */
function protocolErrorCode(err: unknown): number | undefined {
  let e = err;
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const { code, cause } = e as { code?: unknown; cause?: unknown };
    if (typeof code === 'number') return code;
    e = cause;
  }
  return undefined;
}
