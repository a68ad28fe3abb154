import type { Admin } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import { createKafka, type KafkaClientOptions } from './kafka-client';

/** The admin calls the lag watch makes: a group's committed offsets and each partition's end. */
export type LagAdmin = Pick<Admin, 'connect' | 'disconnect' | 'fetchOffsets' | 'fetchTopicOffsets'>;

export interface PartitionLag {
  partition: number;
  /** Events on the partition the group has not committed yet. */
  lag: number;
  /** Lag above 0 and the group's committed offset unchanged for `stallAfterMs`: the consumer is not moving. */
  stalled: boolean;
}

/**
 * Lag per partition: its end offset less the group's committed one. A partition the group never committed on
 * counts from its oldest retained event (the ledger's group starts from the beginning).
 */
export function lagByPartition(
  ends: { partition: number; high: string; low: string }[],
  committed: { partition: number; offset: string }[],
): { partition: number; lag: number; committed: number }[] {
  const committedBy = new Map(committed.map((c) => [c.partition, Number(c.offset)]));
  return ends.map(({ partition, high, low }) => {
    const at = committedBy.get(partition) ?? -1;
    const from = at >= 0 ? at : Number(low);
    return { partition, lag: Math.max(0, Number(high) - from), committed: from };
  });
}

/** Tells, per partition, since when the committed offset has stood still while lag was above 0. */
export function createStallTracker(stallAfterMs: number) {
  const still = new Map<number, { committed: number; since: number }>();
  return {
    observe(partition: number, committed: number, lag: number, now: number): boolean {
      const seen = still.get(partition);
      if (lag === 0 || !seen || seen.committed !== committed) {
        still.set(partition, { committed, since: now });
        return false;
      }
      return now - seen.since >= stallAfterMs;
    },
  };
}

export interface LagWatchOptions {
  topic: string;
  groupId: string;
  intervalMs: number;
  stallAfterMs: number;
  /** Each sample, every partition of the topic. */
  onSample: (partitions: PartitionLag[]) => void;
  logger: Logger;
}

/**
 * Reads the group's lag from the admin API on a timer, so a consumer that commits nothing (stuck, crashed,
 * evicted) still shows lag, which lag measured on commit cannot. A partition that becomes stalled, and one that
 * moves again, is logged once each; a failed read is logged and the next tick tries again.
 */
export function watchConsumerLag(admin: LagAdmin, options: LagWatchOptions): { stop(): Promise<void> } {
  const { topic, groupId, logger } = options;
  const stalls = createStallTracker(options.stallAfterMs);
  const stalled = new Set<number>();
  let connected: Promise<void> | undefined;
  let sampling: Promise<void> | undefined;

  const sample = async () => {
    connected ??= admin.connect().catch((error: unknown) => {
      connected = undefined;
      throw error;
    });
    await connected;
    const [ends, [offsets]] = await Promise.all([
      admin.fetchTopicOffsets(topic),
      admin.fetchOffsets({ groupId, topics: [topic] }),
    ]);
    const now = Date.now();
    const partitions = lagByPartition(ends, offsets?.partitions ?? []).map(({ partition, lag, committed }) => {
      const isStalled = stalls.observe(partition, committed, lag, now);
      if (isStalled && !stalled.has(partition)) {
        stalled.add(partition);
        logger.warn(
          { topic, groupId, partition, lag, committedOffset: committed, stalledForMs: options.stallAfterMs },
          'usage consumer stalled: events are waiting and the group has committed nothing on this partition',
        );
      } else if (!isStalled && stalled.delete(partition)) {
        logger.info({ topic, groupId, partition, lag }, 'usage consumer moving again on this partition');
      }
      return { partition, lag, stalled: isStalled };
    });
    options.onSample(partitions);
  };

  const timer = setInterval(() => {
    sampling ??= sample()
      .catch((error: unknown) => logger.warn({ err: error, topic, groupId }, 'could not read the consumer lag'))
      .finally(() => (sampling = undefined));
  }, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await sampling;
      if (connected) await admin.disconnect().catch(() => undefined);
    },
  };
}

/** An admin client of its own for the lag watch. */
export function createLagAdmin(options: KafkaClientOptions): LagAdmin {
  return createKafka(options).admin();
}
