import type { Consumer, ConsumerCrashEvent, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import { registerKafkaCodecs } from './compression';
import { backoffDelay, interruptibleSleep, type BackoffOptions } from './backoff';
import { settleBatch } from './poison';
import type {
  BatchHandler,
  EventConsumer,
  IncomingMessage,
  MessageHeaders,
  PoisonOptions,
  Subscription,
} from './types';

/** The default of `subscribeBatches` `maxBatchSize`. */
const DEFAULT_MAX_BATCH = 500;

export interface KafkaConsumerOptions {
  /** Backoff between attempts at a message whose handler failed. */
  retry?: BackoffOptions;
  logger?: Logger;
}

/** Raised out of `eachMessage` when a subscription stops mid-retry, so kafkajs leaves the offset uncommitted. */
class SubscriptionStoppedError extends Error {
  constructor() {
    super('subscription stopped before the handler succeeded; the message will be redelivered');
    this.name = 'SubscriptionStoppedError';
  }
}

/**
 * One kafkajs consumer (one group member) per subscription. At-least-once: kafkajs commits, with autoCommit,
 * only offsets whose `eachMessage` resolved, and ours resolves only after the handler did. A failing handler
 * is retried in place with backoff (heartbeating, so the group does not evict us) rather than thrown to
 * kafkajs, which would restart the consumer and refetch; messages behind it on the partition wait, keeping
 * per-key order. `subscribeBatches` does the same per slice of a fetched batch (a slice is one partition's
 * consecutive messages), committing a slice's offsets only after its handler call resolved. With poison
 * options a slice's poison is parked and the partition moves on (settleBatch, shared with the in-process bus).
 */
export function createKafkaConsumer(kafka: Kafka, options: KafkaConsumerOptions = {}): EventConsumer {
  registerKafkaCodecs(); // reads batches that producers compressed with lz4
  const subscriptions = new Set<Subscription>();

  return {
    subscribe({ topic, groupId, handler, fromBeginning, poison }) {
      return run({
        topic,
        groupId,
        fromBeginning,
        poison,
        maxBatch: 1,
        handle: async ([message]) => handler(message!),
      });
    },

    subscribeBatches({ topic, groupId, handler, fromBeginning, maxBatchSize, poison }) {
      return run({
        topic,
        groupId,
        fromBeginning,
        poison,
        maxBatch: Math.max(1, maxBatchSize ?? DEFAULT_MAX_BATCH),
        handle: handler,
      });
    },

    async close() {
      await Promise.all([...subscriptions].map((s) => s.stop()));
    },
  };

  /**
   * One group member. `maxBatch` 1 runs kafkajs `eachMessage`; more runs `eachBatch`, handing over slices of
   * the fetched batch and resolving each slice's last offset only after the handler succeeded for it.
   */
  async function run(member: {
    topic: string;
    groupId: string;
    fromBeginning?: boolean;
    poison: PoisonOptions | undefined;
    maxBatch: number;
    handle: BatchHandler;
  }): Promise<Subscription> {
    const { topic, groupId, handle, fromBeginning } = member;
    let consumer: Consumer;
    let stopping = false;
    let wake: (() => void) | undefined;
    let restarts = 0;

    /**
     * kafkajs restarts a consumer itself after a retriable crash, but after any other (`restart: false`) it
     * leaves it disconnected for good while the process looks healthy. Such a member is started again here,
     * with backoff, as a new kafkajs consumer; what it had not committed is redelivered.
     */
    const onCrash = ({ payload }: ConsumerCrashEvent) => {
      if (payload.restart || stopping) return;
      const delay = backoffDelay(++restarts, options.retry);
      const fields = { err: payload.error, topic, groupId, restartInMs: delay };
      options.logger?.error(fields, 'event consumer crashed; starting it again');
      const sleep = interruptibleSleep(delay);
      wake = sleep.wake;
      void sleep.done.then(async () => {
        wake = undefined;
        if (stopping) return;
        try {
          await startConsumer();
        } catch (err) {
          onCrash({ payload: { error: err as Error, groupId, restart: false } } as ConsumerCrashEvent);
        }
      });
    };

    const startConsumer = async () => {
      consumer = kafka.consumer({ groupId });
      consumer.on(consumer.events.CRASH, onCrash);
      await consumer.connect();
      try {
        await consumer.subscribe({ topics: [topic], fromBeginning: fromBeginning ?? false });
        await runConsumer(consumer);
      } catch (err) {
        await consumer.disconnect().catch(() => undefined);
        throw err;
      }
    };

    const runConsumer = async (consumer: Consumer) => {
      const toIncoming = (partition: number, message: KafkaMessage): IncomingMessage => ({
        topic,
        key: message.key?.toString('utf8') ?? '',
        value: message.value ?? new Uint8Array(0),
        headers: decodeHeaders(message.headers),
        partition,
        offset: message.offset,
      });
      /** Retries in place until the handler succeeds, heartbeating, or throws once the subscription stops. */
      const handleWithRetry = async (messages: IncomingMessage[], heartbeat: () => Promise<void>) => {
        for (let attempt = 1; ; attempt++) {
          if (stopping) throw new SubscriptionStoppedError();
          try {
            await settleBatch(messages, handle, member.poison, options.logger, { number: attempt, heartbeat });
            return;
          } catch (err) {
            const delay = backoffDelay(attempt, options.retry);
            const first = messages[0]!;
            options.logger?.warn(
              {
                err,
                topic,
                partition: first.partition,
                offset: first.offset,
                messages: messages.length,
                attempt,
                retryInMs: delay,
              },
              'event handler failed; will retry',
            );
            const sleep = interruptibleSleep(delay);
            wake = sleep.wake;
            await sleep.done;
            wake = undefined;
            if (!stopping) await heartbeat();
          }
        }
      };
      if (member.maxBatch === 1) {
        await consumer.run({
          autoCommit: true,
          eachMessage: ({ partition, message, heartbeat }) =>
            handleWithRetry([toIncoming(partition, message)], heartbeat),
        });
      } else {
        await consumer.run({
          autoCommit: true,
          // Without a threshold `commitOffsetsIfNecessary` commits nothing between fetches: a slice's worth.
          autoCommitThreshold: member.maxBatch,
          eachBatchAutoResolve: false,
          eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
            for (let from = 0; from < batch.messages.length; from += member.maxBatch) {
              if (!isRunning() || isStale()) return; // a rebalance took the partition: the rest is refetched
              const slice = batch.messages.slice(from, from + member.maxBatch);
              await handleWithRetry(
                slice.map((message) => toIncoming(batch.partition, message)),
                heartbeat,
              );
              resolveOffset(slice.at(-1)!.offset);
              await commitOffsetsIfNecessary();
              await heartbeat();
            }
          },
        });
      }
    };
    await startConsumer();
    let stopped: Promise<void> | undefined;
    const subscription: Subscription = {
      stop() {
        stopped ??= (async () => {
          stopping = true;
          wake?.();
          subscriptions.delete(subscription);
          await consumer.disconnect(); // waits for the running eachMessage, commits what resolved
        })();
        return stopped;
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }
}

/** kafkajs headers may be Buffers or arrays of them; events use single UTF-8 string values. */
function decodeHeaders(headers: IHeaders | undefined): MessageHeaders {
  const out: MessageHeaders = {};
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (value !== undefined) out[name] = value.toString();
  }
  return out;
}
