import { createLogger } from '@sbc/logging';
import { createKafkaConsumer } from './kafka-consumer';
import { createKafkaProducer } from './kafka-producer';
import { MIN_RETENTION_MS, provisionTopic } from './provision-topic';
import { FakeKafkaCluster } from './testing/fake-kafka';
import type { IncomingMessage } from './types';

// Finding 3 of issue 53 in the bus: on a broker with auto-create on (the broker's default), neither the producer
// nor the consumer makes the topic with broker defaults (1 partition, 1 replica). Only provisioning makes it.

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TOPIC = 'usage.events.v1';

async function eventually(check: () => boolean, ms = 3_000): Promise<void> {
  for (const deadline = Date.now() + ms; !check(); await new Promise((resolve) => setTimeout(resolve, 10)))
    if (Date.now() > deadline) throw new Error('condition not met in time');
}

describe('one topic, made on purpose (fake kafkajs cluster, broker auto-create on)', () => {
  it('apps started before migrate create no topic; once migrate made it, events flow on its partitions', async () => {
    const cluster = new FakeKafkaCluster(1, { topicsExist: false, autoCreateTopics: true, brokers: 3 });
    const producer = createKafkaProducer(cluster.client(), {
      lingerMs: 1,
      retry: { initialMs: 10, maxMs: 50 },
      logger,
    });
    const consumer = createKafkaConsumer(cluster.client(), { retry: { initialMs: 10, maxMs: 50 }, logger });
    const seen: IncomingMessage[] = [];
    const subscribe = () =>
      consumer.subscribe({
        topic: TOPIC,
        groupId: 'ledger',
        fromBeginning: true,
        handler: async (m) => void seen.push(m),
      });

    producer.send(TOPIC, { key: 'acct_1', value: new Uint8Array([1]) });
    await expect(subscribe()).rejects.toThrow(/topic/i);
    await eventually(() => cluster.produceRequests >= 2); // the send is refused and retried, not auto-created
    expect(cluster.topicAdmin.topics.has(TOPIC)).toBe(false);
    expect(cluster.producerConfigs.every((config) => config.allowAutoTopicCreation === false)).toBe(true);
    expect(cluster.consumerConfigs.every((config) => config.allowAutoTopicCreation === false)).toBe(true);

    await provisionTopic(cluster.admin(), { topic: TOPIC, partitions: 12, retentionMs: MIN_RETENTION_MS }, logger);
    expect(cluster.topicAdmin.topics.get(TOPIC)).toMatchObject({ partitions: 12, replicationFactor: 3 });
    await subscribe();
    await producer.flush();
    await eventually(() => seen.length === 1);
    expect(cluster.log).toHaveLength(1);
    await producer.close();
    await consumer.close();
  });
});
