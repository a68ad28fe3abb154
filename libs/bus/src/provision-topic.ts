import { ConfigResourceTypes, type Admin } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import { createKafka, type KafkaClientOptions } from './kafka-client';

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

/** A topic's settings as the cluster reports them; 0 partitions when it does not exist. */
export interface FoundTopic {
  partitions: number;
  replicationFactor: number;
  minInsyncReplicas: number;
  /** -1: kept forever. */
  retentionMs: number;
}

/** Reads the topic's partitions, replication, `min.insync.replicas` and retention (the admin is connected). */
export async function describeTopic(admin: TopicAdmin, topic: string): Promise<FoundTopic> {
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

/** What the topic must have: the configured partitions (when known) and what `replicationFor` the cluster gives. */
export interface RequiredTopic {
  partitions?: number;
  replicationFactor: number;
  minInsyncReplicas: number;
  retentionMs: number;
}

/** Each way `found` falls short of `required`, in words an operator can act on. */
export function topicShortfalls(topic: string, found: FoundTopic, required: RequiredTopic): string[] {
  const shortfalls: string[] = [];
  if (required.partitions !== undefined && found.partitions < required.partitions)
    shortfalls.push(`${topic} has ${found.partitions} partitions, fewer than ${required.partitions}`);
  if (found.replicationFactor < required.replicationFactor)
    shortfalls.push(`${topic} has replication factor ${found.replicationFactor}, under ${required.replicationFactor}`);
  if (!(found.minInsyncReplicas >= required.minInsyncReplicas))
    shortfalls.push(`${topic} has min.insync.replicas=${found.minInsyncReplicas}, under ${required.minInsyncReplicas}`);
  if (found.retentionMs >= 0 && found.retentionMs < required.retentionMs)
    shortfalls.push(`${topic} keeps events ${found.retentionMs} ms, under ${required.retentionMs} ms`);
  return shortfalls;
}

/** Thrown by `provisionTopic` when the topic exists with less than it needs: `migrate` then exits non-zero. */
export class TopicShortfallError extends Error {
  constructor(
    readonly topic: string,
    readonly shortfalls: string[],
  ) {
    super(
      `${topic} exists but falls short: ${shortfalls.join('; ')}. It is never altered here (fewer partitions cannot ` +
        "be undone, more would move accounts between partitions mid-stream): fix it with Kafka's own tools " +
        '(kafka-topics.sh --alter, kafka-configs.sh) or recreate it while nothing uses it, then run migrate again.',
    );
    this.name = 'TopicShortfallError';
  }
}

/**
 * Creates the topic with `settings`. A topic that already exists is left as it is, and when it falls short
 * (fewer partitions, a lower replication factor or `min.insync.replicas`, a shorter retention: what broker
 * auto-creation leaves) this throws `TopicShortfallError`, so the migrate job fails instead of letting the
 * apps run on a topic where `acks=-1` protects nothing.
 */
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
    for (const warning of warnings) logger.warn({ topic: settings.topic }, warning);
    if (!created) {
      const shortfalls = topicShortfalls(settings.topic, found, { ...wanted, ...settings });
      if (shortfalls.length > 0) throw new TopicShortfallError(settings.topic, shortfalls);
    }
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

/** Where `awaitTopic` ended: the topic as required, or why not. */
export type TopicWait =
  | { state: 'ready'; found: FoundTopic }
  | { state: 'missing' | 'short' | 'unreachable'; problems: string[]; found?: FoundTopic };

export interface AwaitTopicOptions {
  topic: string;
  /** The partitions the topic must have; the edge, which does not know them, leaves it out. */
  partitions?: number;
  /** How long to wait in all; default 60 s. */
  timeoutMs?: number;
  /** Between two looks; default 2 s. */
  pollMs?: number;
  /** The app that waits, named in the log line. */
  app: string;
}

/**
 * Waits, bounded, until the topic exists with what `provisionTopic` makes: the partitions asked for, the
 * replication the cluster's size calls for, and a week's retention. Nothing here creates a topic (kafkajs's
 * admin never auto-creates), so an app started before the migrate job waits for it instead of writing to a
 * topic the broker made with its defaults. Says what it waits for when it starts and every 15 s, and returns
 * where it ended; the caller decides what a topic still missing, short or unreachable means.
 */
export async function awaitTopic(admin: TopicAdmin, options: AwaitTopicOptions, logger: Logger): Promise<TopicWait> {
  const { topic, app } = options;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const pollMs = options.pollMs ?? 2_000;
  const started = Date.now();
  let lastSaid = -Infinity;
  let outcome: TopicWait;
  for (;;) {
    outcome = await lookAtTopic(admin, options);
    if (outcome.state === 'ready') break;
    const waited = Date.now() - started;
    if (waited >= timeoutMs) break;
    if (waited - lastSaid >= 15_000) {
      lastSaid = waited;
      const hint =
        outcome.state === 'unreachable'
          ? 'the brokers do not answer'
          : "run the usage ledger's migrate (`usage-ledger migrate`, the usage-ledger-migrate init container)";
      logger.warn(
        { topic, state: outcome.state, problems: outcome.problems, waitedMs: waited, timeoutMs },
        `${app} waits for ${topic} to exist as provisioned: ${hint}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return outcome;
}

async function lookAtTopic(admin: TopicAdmin, options: AwaitTopicOptions): Promise<TopicWait> {
  try {
    await admin.connect();
    try {
      const { brokers } = await admin.describeCluster();
      const found = await describeTopic(admin, options.topic);
      if (found.partitions === 0) return { state: 'missing', problems: [`${options.topic} does not exist`] };
      const required = {
        ...replicationFor(brokers.length),
        retentionMs: MIN_RETENTION_MS,
        partitions: options.partitions,
      };
      const problems = topicShortfalls(options.topic, found, required);
      return problems.length > 0 ? { state: 'short', problems, found } : { state: 'ready', found };
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  } catch (error) {
    return { state: 'unreachable', problems: [error instanceof Error ? error.message : String(error)] };
  }
}

/** The kafkajs admin client (which never auto-creates a topic) over the app's connection. */
export function createTopicAdmin(options: KafkaClientOptions): TopicAdmin {
  return createKafka(options).admin();
}
