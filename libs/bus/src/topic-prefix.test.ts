import { createLogger } from '@sbc/logging';
import { createKafkaConsumer } from './kafka-consumer';
import { createKafkaProducer } from './kafka-producer';
import { FakeKafkaCluster } from './testing/fake-kafka';
import { prefixTopics } from './topic-prefix';

const logger = createLogger({ service: 'bus-test', level: 'silent' });

describe('a topic prefix (KAFKA_TOPIC_PREFIX)', () => {
  it('puts what the apps send under the prefix on the broker, and consumes it back from there', async () => {
    const cluster = new FakeKafkaCluster();
    const { producer, consumer } = prefixTopics('staging.', {
      producer: createKafkaProducer(cluster.client(), { lingerMs: 1, logger }),
      consumer: createKafkaConsumer(cluster.client(), { logger }),
    });
    const seen: string[] = [];
    const subscription = await consumer.subscribeBatches({
      topic: 'usage.events.v1',
      groupId: 'usage-ledger',
      handler: async (messages) => void seen.push(...messages.map((m) => `${m.topic}:${m.key}`)),
    });
    await producer.sendDurable('usage.events.v1', { key: 'acct_1', value: new TextEncoder().encode('evt_1') });
    expect(cluster.log.map((record) => record.topic)).toEqual(['staging.usage.events.v1']);
    for (const deadline = Date.now() + 5_000; seen.length === 0 && Date.now() < deadline;)
      await new Promise((resolve) => setTimeout(resolve, 5));
    expect(seen).toEqual(['staging.usage.events.v1:acct_1']);
    await subscription.stop();
    await producer.close();
  });
});
