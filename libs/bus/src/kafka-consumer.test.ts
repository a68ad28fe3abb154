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

describe('Kafka consumer backing off a failing partition (fake cluster)', () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  const decode = (value: Uint8Array) => new TextDecoder().decode(value);

  /** Two account keys that land on different partitions of `cluster`. */
  function keysOnTwoPartitions(cluster: FakeKafkaCluster): [string, string] {
    const first = 'acct_0';
    for (let i = 1; ; i++)
      if (cluster.partitionOf(`acct_${i}`) !== cluster.partitionOf(first)) return [first, `acct_${i}`];
  }

  it('pauses only the failing partition and retries it after a backoff; the other keeps flowing', async () => {
    const cluster = new FakeKafkaCluster(2);
    const [failing, healthy] = keysOnTwoPartitions(cluster);
    const producer = createKafkaProducer(cluster.client(), { lingerMs: 1, logger });
    const consumer = createKafkaConsumer(cluster.client(), { retry: { initialMs: 50, maxMs: 200 }, logger });
    const applied: string[] = [];
    let attemptsAtFailing = 0;
    let healthyAppliedWhileFailing = 0;
    let outageOver = false;
    const subscription = await consumer.subscribeBatches({
      topic: TOPIC,
      groupId: 'usage-ledger',
      handler: async (messages) => {
        if (messages[0]!.key === failing && !outageOver) {
          attemptsAtFailing++;
          throw new Error('the store refused this partition for now');
        }
        if (messages[0]!.key === healthy && attemptsAtFailing > 0) healthyAppliedWhileFailing += messages.length;
        applied.push(...messages.map((m) => decode(m.value)));
      },
    });
    producer.send(TOPIC, { key: failing, value: encode('f_1') });
    await eventually(() => attemptsAtFailing >= 1);
    for (let i = 1; i <= 5; i++) producer.send(TOPIC, { key: healthy, value: encode(`h_${i}`) });
    await eventually(() => applied.length === 5);
    expect(healthyAppliedWhileFailing).toBe(5);
    expect(cluster.pauses).toBeGreaterThanOrEqual(1);
    outageOver = true;
    await eventually(() => applied.includes('f_1'));
    expect(applied.filter((id) => id === 'f_1')).toHaveLength(1);
    expect(attemptsAtFailing).toBeLessThan(20); // backed off, not spun
    await subscription.stop();
    await producer.close();
  });

  it('parks a lone event that keeps failing with an unknown error after K attempts, then moves on', async () => {
    const cluster = new FakeKafkaCluster();
    const producer = createKafkaProducer(cluster.client(), { lingerMs: 1, logger });
    const consumer = createKafkaConsumer(cluster.client(), { retry: { initialMs: 5, maxMs: 20 }, logger });
    const attempts: string[] = [];
    const parked: string[] = [];
    const applied: string[] = [];
    const subscription = await consumer.subscribeBatches({
      topic: TOPIC,
      groupId: 'usage-ledger',
      poison: { deadLetter: async (m) => void parked.push(decode(m.value)), parkLoneAfterAttempts: 3 },
      handler: async (messages) => {
        for (const m of messages) {
          attempts.push(decode(m.value));
          if (decode(m.value) === 'evt_bad') throw new Error('no idea why');
        }
        applied.push(...messages.map((m) => decode(m.value)));
      },
    });
    producer.send(TOPIC, { key: 'acct_1', value: encode('evt_bad') });
    await eventually(() => parked.length === 1);
    producer.send(TOPIC, { key: 'acct_1', value: encode('evt_next') });
    await eventually(() => applied.includes('evt_next'));
    expect(parked).toEqual(['evt_bad']);
    expect(attempts.filter((id) => id === 'evt_bad')).toHaveLength(3);
    expect(applied).toEqual(['evt_next']);
    await subscription.stop();
    await producer.close();
  });

  it('heartbeats while a slow handler call runs, so a stalled store does not evict the member', async () => {
    const cluster = new FakeKafkaCluster();
    const producer = createKafkaProducer(cluster.client(), { lingerMs: 1, logger });
    const consumer = createKafkaConsumer(cluster.client(), { heartbeatEveryMs: 10, logger });
    let heartbeatsDuringCall = -1;
    const subscription = await consumer.subscribeBatches({
      topic: TOPIC,
      groupId: 'usage-ledger',
      handler: async () => {
        const before = cluster.heartbeats;
        await sleep(300);
        heartbeatsDuringCall = cluster.heartbeats - before;
      },
    });
    producer.send(TOPIC, { key: 'acct_1', value: encode('evt_1') });
    await eventually(() => heartbeatsDuringCall >= 0);
    expect(heartbeatsDuringCall).toBeGreaterThanOrEqual(5);
    await subscription.stop();
    await producer.close();
  });
});
