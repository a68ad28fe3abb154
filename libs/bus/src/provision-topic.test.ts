import { createLogger } from '@sbc/logging';
import { FakeKafkaAdmin } from './testing/fake-kafka-admin';
import { checkTopic, MIN_RETENTION_MS, provisionTopic, replicationFor } from './provision-topic';

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
    'leaves a topic that exists as it is, and says what ' + 'falls short (auto-created: 1 partition, 1 replica)',
    async () => {
      const cluster = new FakeKafkaAdmin(3).withTopic(TOPIC, {
        partitions: 1,
        replicationFactor: 1,
        configs: { 'min.insync.replicas': '1', 'retention.ms': '86400000' },
      });
      const { logger, warnings } = recordingLogger();
      const topic = await provisionTopic(cluster.client(), settings, logger);
      expect(topic).toMatchObject({ created: false, partitions: 1, replicationFactor: 1, minInsyncReplicas: 1 });
      expect(cluster.created).toEqual([]);
      expect(warnings()).toEqual([
        `${TOPIC} exists with 1 partitions, fewer than 12`,
        `${TOPIC} exists with replication factor 1`,
        `${TOPIC} exists with min.insync.replicas=1`,
        `${TOPIC} exists with retention.ms=86400000, under 7 days`,
      ]);
    },
  );

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

describe("the ledger's start check of the topic", () => {
  it('warns when the topic has fewer partitions than ledger replicas, or min.insync.replicas below 2', async () => {
    const cluster = new FakeKafkaAdmin(3).withTopic(TOPIC, {
      partitions: 1,
      replicationFactor: 3,
      configs: { 'min.insync.replicas': '1' },
    });
    const { logger, warnings } = recordingLogger();
    const found = await checkTopic(cluster.client(), { topic: TOPIC, consumers: 6 }, logger);
    expect(found).toEqual([
      `${TOPIC} has 1 partitions for up to 6 ledger replicas: the replicas past the partition count sit idle`,
      `${TOPIC} has min.insync.replicas=1: an acked event may be lost`,
    ]);
    expect(warnings()).toEqual(found);
  });

  it('is quiet on a provisioned topic, and names the migrate job when the topic is missing', async () => {
    const cluster = new FakeKafkaAdmin(3);
    expect(await checkTopic(cluster.client(), { topic: TOPIC, consumers: 6 }, recordingLogger().logger)).toEqual([
      `${TOPIC} does not exist: run the ledger's migrate job`,
    ]);
    await provisionTopic(cluster.client(), settings, recordingLogger().logger);
    expect(await checkTopic(cluster.client(), { topic: TOPIC, consumers: 6 }, recordingLogger().logger)).toEqual([]);
  });
});
