import { CompressionTypes, Partitioners, type Kafka, type Message } from 'kafkajs';
import { createBatchingProducer, type BatchingOptions } from './batching-producer';
import type { EventProducer, QueuedMessage } from './types';

/**
 * The Kafka producer: the batching core over one kafkajs producer. Idempotent with acks from all in-sync
 * replicas, so a batch that kafkajs retries internally is written once, and an ack means the event survives a
 * broker loss. kafkajs needs at most one request in flight for idempotence to keep order, which the batching
 * core already guarantees (one batch at a time). Create one per process: it is meant to be shared.
 */
export function createKafkaProducer(kafka: Kafka, options: BatchingOptions = {}): EventProducer {
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    // Java-compatible murmur2 partitioning: the same key lands on the same partition as from any other client.
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  let connecting: Promise<void> | undefined;

  function connect(): Promise<void> {
    // Lazily, and again after a failure: a broker that is down at start-up is one more retried batch.
    connecting ??= producer.connect().catch((err: unknown) => {
      connecting = undefined;
      throw err;
    });
    return connecting;
  }

  async function sendBatch(messages: readonly QueuedMessage[]): Promise<void> {
    await connect();
    const byTopic = new Map<string, Message[]>(); // Map keeps first-seen order, messages keep send order
    for (const m of messages) {
      let list = byTopic.get(m.topic);
      if (!list) byTopic.set(m.topic, (list = []));
      list.push({ key: m.key, value: Buffer.from(m.value.buffer, m.value.byteOffset, m.value.byteLength), headers: m.headers });
    }
    await producer.sendBatch({
      acks: -1,
      compression: CompressionTypes.None,
      topicMessages: [...byTopic].map(([topic, list]) => ({ topic, messages: list })),
    });
  }

  return createBatchingProducer(sendBatch, {
    ...options,
    onClose: async () => {
      await options.onClose?.();
      if (connecting) await producer.disconnect();
    },
  });
}
