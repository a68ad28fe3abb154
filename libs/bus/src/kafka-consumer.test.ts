import { createLogger } from '@sbc/logging';
import { KafkaJSNonRetriableError } from 'kafkajs';
import { createKafkaConsumer } from './kafka-consumer';
import { createKafkaProducer } from './kafka-producer';
import { FakeKafkaCluster } from './testing/fake-kafka';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TOPIC = 'usage.events.v1';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

describe('Kafka consumer against kafkajs crash semantics (fake cluster)', () => {
  it('after a crash kafkajs does not restart, the member starts again: nothing lost, none applied twice', async () => {
    const cluster = new FakeKafkaCluster();
    const producer = createKafkaProducer(cluster.client(), { lingerMs: 1, logger });
    const consumer = createKafkaConsumer(cluster.client(), { retry: { initialMs: 10, maxMs: 10 }, logger });
    const applied = new Map<string, number>(); // event id → times applied, as the ledger would count them
    const subscription = await consumer.subscribeBatches({
      topic: TOPIC,
      groupId: 'usage-ledger',
      handler: async (messages) => {
        for (const m of messages) {
          const id = new TextDecoder().decode(m.value);
          applied.set(id, (applied.get(id) ?? 0) + 1);
        }
      },
    });
    for (let i = 1; i <= 3; i++) producer.send(TOPIC, { key: 'acct_1', value: new TextEncoder().encode(`evt_${i}`) });
    await eventually(() => applied.size === 3);
    cluster.crashConsumers(new KafkaJSNonRetriableError('The group member was fenced'));
    for (let i = 4; i <= 6; i++) producer.send(TOPIC, { key: 'acct_1', value: new TextEncoder().encode(`evt_${i}`) });
    await eventually(() => applied.size === 6);
    expect(cluster.consumersCreated).toBe(2);
    expect([...applied.values()].every((times) => times === 1)).toBe(true);
    await subscription.stop();
    await producer.close();
  });
});
