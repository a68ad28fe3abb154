import { ConfigResourceTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import { kafkaLogCreator } from './kafka-logger';

/** The part of the kafkajs admin client that provisioning and the start check use. */
export type TopicAdmin = Pick<
  Admin,
  'connect' | 'disconnect' | 'describeCluster' | 'createTopics' | 'fetchTopicMetadata' | 'describeConfigs'
>;

/** A week: a ledger down over a long weekend still finds every event it has not applied. */
export const MIN_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
export const DEFAULT_TOPIC_PARTITIONS = 12;

export interface TopicSettings {
  topic: string;
  partitions: number;
  /** At least MIN_RETENTION_MS. */
  retentionMs: number;
}

/** What the topic is, after provisioning. */
export interface ProvisionedTopic {
  created: boolean;
  partitions: number;
  replicationFactor: number;
  minInsyncReplicas: number;
  warnings: string[];
}

/**
 * Replication for a cluster of `brokers`: 3 replicas with `min.insync.replicas=2` survive the loss of one
 * broker without refusing `acks=all` writes. A smaller cluster gets all its brokers, and one fewer in sync
 * (so one broker down still takes writes), with a warning.
 */
export function replicationFor(brokers: number): { replicationFactor: number; minInsyncReplicas: number } {
  const replicationFactor = Math.max(1, Math.min(3, brokers));
  return { replicationFactor, minInsyncReplicas: Math.max(1, Math.min(2, replicationFactor - 1)) };
}

/** kafkajs's answer for a topic the cluster does not have, bare or behind its retries. */
function isUnknownTopic(error: unknown): boolean {
  const found = error as { type?: string; originalError?: { type?: string } } | undefined;
  return found?.type === 'UNKNOWN_TOPIC_OR_PARTITION' || found?.originalError?.type === 'UNKNOWN_TOPIC_OR_PARTITION';
}

async function describeTopic(admin: TopicAdmin, topic: string) {
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] }).catch((error: unknown) => {
    if (isUnknownTopic(error)) return { topics: [] };
    throw error;
  });
  const partitions = metadata.topics.find((found) => found.name === topic)?.partitions ?? [];
  if (partitions.length === 0) return { partitions: 0, replicationFactor: 0, minInsyncReplicas: 0, retentionMs: 0 };
  const configs = await admin.describeConfigs({
    resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['min.insync.replicas', 'retention.ms'] }],
    includeSynonyms: false,
  });
  const entries = configs.resources[0]?.configEntries ?? [];
  const valueOf = (name: string) => Number(entries.find((entry) => entry.configName === name)?.configValue);
  return {
    partitions: partitions.length,
    replicationFactor: Math.min(...partitions.map((partition) => partition.replicas.length)),
    minInsyncReplicas: valueOf('min.insync.replicas'),
    retentionMs: valueOf('retention.ms'),
  };
}

/** Creates the topic with `settings`; a topic that already exists is left as it is, and what falls short is said. */
export async function provisionTopic(
  admin: TopicAdmin,
  settings: TopicSettings,
  logger: Logger,
): Promise<ProvisionedTopic> {
  if (settings.retentionMs < MIN_RETENTION_MS)
    throw new Error(`retention of ${settings.topic} must be at least ${MIN_RETENTION_MS} ms (7 days)`);
  await admin.connect();
  try {
    const { brokers } = await admin.describeCluster();
    const wanted = replicationFor(brokers.length);
    const warnings: string[] = [];
    if (wanted.replicationFactor < 3)
      warnings.push(
        `the cluster has ${brokers.length} broker(s): ${settings.topic} gets ${wanted.replicationFactor} ` +
          `replica(s) and min.insync.replicas=${wanted.minInsyncReplicas}, so losing a broker can lose acked events ` +
          'or stop writes; run 3 brokers',
      );
    const created = await admin.createTopics({
      waitForLeaders: true,
      topics: [
        {
          topic: settings.topic,
          numPartitions: settings.partitions,
          replicationFactor: wanted.replicationFactor,
          configEntries: [
            { name: 'min.insync.replicas', value: String(wanted.minInsyncReplicas) },
            { name: 'retention.ms', value: String(settings.retentionMs) },
          ],
        },
      ],
    });
    const found = await describeTopic(admin, settings.topic);
    // An existing topic is not altered: fewer partitions cannot be undone, more would move accounts between
    // partitions mid-stream, and kafkajs's alterConfigs replaces every override the operator set.
    if (!created) {
      if (found.partitions < settings.partitions)
        warnings.push(
          `${settings.topic} exists with ${found.partitions} partitions, fewer than ${settings.partitions}`,
        );
      if (found.replicationFactor < wanted.replicationFactor)
        warnings.push(`${settings.topic} exists with replication factor ${found.replicationFactor}`);
      if (found.minInsyncReplicas < wanted.minInsyncReplicas)
        warnings.push(`${settings.topic} exists with min.insync.replicas=${found.minInsyncReplicas}`);
      if (found.retentionMs >= 0 && found.retentionMs < MIN_RETENTION_MS)
        warnings.push(`${settings.topic} exists with retention.ms=${found.retentionMs}, under 7 days`);
    }
    for (const warning of warnings) logger.warn({ topic: settings.topic }, warning);
    logger.info({ topic: settings.topic, created, ...found }, created ? 'topic created' : 'topic exists');
    return {
      created,
      partitions: found.partitions,
      replicationFactor: found.replicationFactor,
      minInsyncReplicas: found.minInsyncReplicas,
      warnings,
    };
  } finally {
    await admin.disconnect();
  }
}

/**
 * The ledger's start check: warns when the topic has fewer partitions than the ledger may run replicas (the
 * extra ones idle), or `min.insync.replicas` is below 2 (an acked event may live on one broker only).
 */
export async function checkTopic(
  admin: TopicAdmin,
  options: { topic: string; consumers?: number },
  logger: Logger,
): Promise<string[]> {
  await admin.connect();
  try {
    const found = await describeTopic(admin, options.topic);
    const warnings: string[] = [];
    if (found.partitions === 0) warnings.push(`${options.topic} does not exist: run the ledger's migrate job`);
    else {
      if (options.consumers !== undefined && found.partitions < options.consumers)
        warnings.push(
          `${options.topic} has ${found.partitions} partitions for up to ${options.consumers} ledger replicas: ` +
            'the replicas past the partition count sit idle',
        );
      if (!(found.minInsyncReplicas >= 2))
        warnings.push(
          `${options.topic} has min.insync.replicas=${found.minInsyncReplicas}: an acked event may be lost`,
        );
    }
    for (const warning of warnings) logger.warn({ topic: options.topic }, warning);
    return warnings;
  } finally {
    await admin.disconnect();
  }
}

/** The kafkajs admin client for `brokers`, logging through `logger`. */
export function createTopicAdmin(brokers: string[], clientId: string, logger: Logger): TopicAdmin {
  return new Kafka({ clientId, brokers, logLevel: logLevel.WARN, logCreator: kafkaLogCreator(logger) }).admin();
}
