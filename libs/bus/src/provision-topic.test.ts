import { createLogger } from '@sbc/logging';
import { FakeKafkaAdmin } from './testing/fake-kafka-admin';
import { awaitTopic, MIN_RETENTION_MS, provisionTopic, replicationFor, TopicShortfallError } from './provision-topic';

const TOPIC = 'usage.events.v1';
const settings = { topic: TOPIC, partitions: 12, retentionMs: MIN_RETENTION_MS };

function recordingLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = createLogger({
    service: 'bus-test',
    level: 'info',
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  return { logger, warnings: () => lines.filter((line) => line.level === 40).map((line) => line.msg) };
}

describe('provisioning the usage topic', () => {
  it(
    'creates it on a 3-broker cluster with the configured ' + 'partitions, 3 replicas, 2 in sync and a week kept',
    async () => {
      const cluster = new FakeKafkaAdmin(3);
      const { logger, warnings } = recordingLogger();
      const topic = await provisionTopic(cluster.client(), settings, logger);
      expect(topic).toEqual({
        created: true,
        partitions: 12,
        replicationFactor: 3,
        minInsyncReplicas: 2,
        warnings: [],
      });
      expect(cluster.created).toEqual([
        expect.objectContaining({
          topic: TOPIC,
          numPartitions: 12,
          replicationFactor: 3,
          configEntries: [
            { name: 'min.insync.replicas', value: '2' },
            { name: 'retention.ms', value: String(7 * 24 * 3600 * 1000) },
          ],
        }),
      ]);
      expect(warnings()).toEqual([]);
      expect(cluster.connected).toBe(false);
    },
  );

  it('gives a smaller cluster all its brokers, and warns', async () => {
    const cluster = new FakeKafkaAdmin(1);
    const { logger, warnings } = recordingLogger();
    const topic = await provisionTopic(cluster.client(), { ...settings, partitions: 6 }, logger);
    expect(topic).toMatchObject({ created: true, partitions: 6, replicationFactor: 1, minInsyncReplicas: 1 });
    expect(warnings()).toEqual([expect.stringContaining('the cluster has 1 broker(s)')]);
    expect(replicationFor(2)).toEqual({ replicationFactor: 2, minInsyncReplicas: 1 });
    expect(replicationFor(5)).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 });
  });

  it(
    'fails on a topic that exists with less than it needs (auto-created: 1 partition, 1 replica, a day kept), ' +
      'naming every shortfall, and leaves it as it is',
    async () => {
      const cluster = new FakeKafkaAdmin(3).withTopic(TOPIC, {
        partitions: 1,
        replicationFactor: 1,
        configs: { 'min.insync.replicas': '1', 'retention.ms': '86400000' },
      });
      const provisioned = provisionTopic(cluster.client(), settings, recordingLogger().logger);
      await expect(provisioned).rejects.toThrow(TopicShortfallError);
      await expect(provisioned).rejects.toThrow(
        new RegExp(
          [
            `${TOPIC} has 1 partitions, fewer than 12`,
            `${TOPIC} has replication factor 1, under 3`,
            `${TOPIC} has min.insync.replicas=1, under 2`,
            `${TOPIC} keeps events 86400000 ms, under 604800000 ms`,
          ].join('; '),
        ),
      );
      expect(cluster.created).toEqual([]);
      expect(cluster.topics.get(TOPIC)?.partitions).toBe(1);
      expect(cluster.connected).toBe(false);
    },
  );

  it('accepts a topic that exists with more than it needs (more partitions, kept forever)', async () => {
    const cluster = new FakeKafkaAdmin(3).withTopic(TOPIC, {
      partitions: 24,
      replicationFactor: 3,
      configs: { 'min.insync.replicas': '2', 'retention.ms': '-1' },
    });
    await expect(provisionTopic(cluster.client(), settings, recordingLogger().logger)).resolves.toMatchObject({
      created: false,
      partitions: 24,
    });
  });

  it('is idempotent: a second run finds the topic it created and warns about nothing', async () => {
    const cluster = new FakeKafkaAdmin(3);
    await provisionTopic(cluster.client(), settings, recordingLogger().logger);
    const { logger, warnings } = recordingLogger();
    expect(await provisionTopic(cluster.client(), settings, logger)).toMatchObject({ created: false, warnings: [] });
    expect(warnings()).toEqual([]);
  });

  it('refuses a retention under 7 days before touching the cluster', async () => {
    const cluster = new FakeKafkaAdmin(3);
    await expect(
      provisionTopic(cluster.client(), { ...settings, retentionMs: 3_600_000 }, recordingLogger().logger),
    ).rejects.toThrow(/at least/);
    expect(cluster.topics.size).toBe(0);
  });
});

describe('waiting for the topic at start', () => {
  const fast = { topic: TOPIC, app: 'gateway', timeoutMs: 300, pollMs: 20 };

  it('is ready at once on a provisioned topic, and reports its settings', async () => {
    const cluster = new FakeKafkaAdmin(3);
    await provisionTopic(cluster.client(), settings, recordingLogger().logger);
    expect(await awaitTopic(cluster.client(), { ...fast, partitions: 12 }, recordingLogger().logger)).toEqual({
      state: 'ready',
      found: { partitions: 12, replicationFactor: 3, minInsyncReplicas: 2, retentionMs: MIN_RETENTION_MS },
    });
  });

  it('waits for a missing topic, saying to run migrate, and goes on as soon as migrate made it', async () => {
    const cluster = new FakeKafkaAdmin(3);
    const { logger, warnings } = recordingLogger();
    const waiting = awaitTopic(cluster.client(), { ...fast, timeoutMs: 5_000, partitions: 12 }, logger);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(warnings()).toEqual([expect.stringMatching(/gateway waits for usage.events.v1 .*migrate/)]);
    await provisionTopic(cluster.client(), settings, recordingLogger().logger);
    expect(await waiting).toMatchObject({ state: 'ready' });
  });

  it('ends, bounded, on a topic that stays missing or that falls short of what provisioning makes', async () => {
    expect(await awaitTopic(new FakeKafkaAdmin(3).client(), fast, recordingLogger().logger)).toEqual({
      state: 'missing',
      problems: [`${TOPIC} does not exist`],
    });
    const autoCreated = new FakeKafkaAdmin(3).withTopic(TOPIC, { partitions: 1, replicationFactor: 1, configs: {} });
    expect(await awaitTopic(autoCreated.client(), { ...fast, partitions: 12 }, recordingLogger().logger)).toMatchObject(
      {
        state: 'short',
        problems: [
          `${TOPIC} has 1 partitions, fewer than 12`,
          `${TOPIC} has replication factor 1, under 3`,
          `${TOPIC} has min.insync.replicas=1, under 2`,
        ],
      },
    );
  });
});
