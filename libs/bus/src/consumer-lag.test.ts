import { createLogger } from '@sbc/logging';
import { createStallTracker, lagByPartition, watchConsumerLag, type PartitionLag } from './consumer-lag';
import { createKafkaConsumer } from './kafka-consumer';
import { createKafkaProducer } from './kafka-producer';
import { FakeKafkaCluster } from './testing/fake-kafka';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TOPIC = 'usage.events.v1';

describe('consumer lag by partition', () => {
  it('is the end offset less the committed one, from the oldest retained event where nothing was committed', () => {
    const ends = [
      { partition: 0, high: '120', low: '0' },
      { partition: 1, high: '50', low: '20' },
      { partition: 2, high: '7', low: '7' },
    ];
    expect(
      lagByPartition(ends, [
        { partition: 0, offset: '100' },
        { partition: 1, offset: '-1' },
      ]),
    ).toEqual([
      { partition: 0, lag: 20, committed: 100 },
      { partition: 1, lag: 30, committed: 20 },
      { partition: 2, lag: 0, committed: 7 },
    ]);
  });

  it('a partition is stalled once its committed offset stood still with lag for the whole window', () => {
    const stalls = createStallTracker(1_000);
    expect(stalls.observe(0, 10, 5, 0)).toBe(false);
    expect(stalls.observe(0, 10, 9, 999)).toBe(false);
    expect(stalls.observe(0, 10, 9, 1_000)).toBe(true);
    expect(stalls.observe(0, 11, 9, 1_500)).toBe(false); // it moved: the window starts again
    expect(stalls.observe(0, 11, 0, 5_000)).toBe(false); // caught up: nothing waits, nothing is stalled
    expect(stalls.observe(0, 11, 0, 9_000)).toBe(false);
  });
});

describe('the lag watch over the admin API (fake cluster)', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('shows lag and a stall while the consumer commits nothing, and neither once it catches up', async () => {
    const cluster = new FakeKafkaCluster(2);
    const producer = createKafkaProducer(cluster.client(), { lingerMs: 1, logger });
    for (let i = 0; i < 10; i++)
      producer.send(TOPIC, { key: `acct_${i}`, value: new TextEncoder().encode(`evt_${i}`) });
    await producer.flush();
    const samples: PartitionLag[][] = [];
    const watch = watchConsumerLag(cluster.admin(), {
      topic: TOPIC,
      groupId: 'usage-ledger',
      intervalMs: 20,
      stallAfterMs: 100,
      onSample: (partitions) => samples.push(partitions),
      logger,
    });
    await sleep(250);
    // No member yet: every event waits, and nothing moves.
    expect(samples.at(-1)!.reduce((sum, p) => sum + p.lag, 0)).toBe(10);
    expect(
      samples
        .at(-1)!
        .filter((p) => p.lag > 0)
        .every((p) => p.stalled),
    ).toBe(true);
    const consumer = createKafkaConsumer(cluster.client(), { logger });
    const subscription = await consumer.subscribeBatches({
      topic: TOPIC,
      groupId: 'usage-ledger',
      handler: async () => {},
    });
    await sleep(250);
    expect(samples.at(-1)).toEqual([
      { partition: 0, lag: 0, stalled: false },
      { partition: 1, lag: 0, stalled: false },
    ]);
    await watch.stop();
    await subscription.stop();
    await producer.close();
  });
});
