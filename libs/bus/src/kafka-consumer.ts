import type { Consumer, ConsumerCrashEvent, EachBatchPayload, IHeaders, Kafka, KafkaMessage } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import { registerKafkaCodecs } from './compression';
import { backoffDelay, type BackoffOptions } from './backoff';
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
  /** Backoff of a partition whose handler failed: paused this long before its slice is fetched again. */
  retry?: BackoffOptions;
  logger?: Logger;
  /**
   * How often a handler call that is still running heartbeats for its member; default 3 s (kafkajs's heartbeat
   * interval). A handler slower than the session timeout (a database that stopped answering) then keeps its
   * partitions instead of being evicted and setting off a rebalance of the whole group.
   */
  heartbeatEveryMs?: number;
}

const DEFAULT_HEARTBEAT_EVERY_MS = 3_000;

/**
 * One kafkajs consumer (one group member) per subscription, run with `eachBatch` in slices of at most
 * `maxBatch` messages of one partition. At-least-once: a slice's last offset is resolved, and committed, only
 * after its handler call resolved. A failing slice pauses its partition alone and returns, leaving the slice
 * unresolved; a timer resumes the partition after an exponential backoff, and kafkajs fetches it again from
 * that slice. The other partitions of the member keep flowing meanwhile, and the member keeps heartbeating
 * from kafkajs's own loop. Consecutive failures at one offset count as the attempts of `settleBatch`, which
 * parks poison (and, after `parkLoneAfterAttempts`, a lone message that keeps failing) so a partition moves on.
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

  /** One group member, handing each fetched batch over in slices of at most `maxBatch` messages. */
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
    let restarts = 0;
    const timers = new Set<NodeJS.Timeout>();
    /** Per partition, the first offset of the slice that failed last and how many times in a row it failed. */
    const failures = new Map<number, { offset: string; attempts: number }>();

    const after = (delay: number, action: () => void) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!stopping) action();
      }, delay);
      timers.add(timer);
    };

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
      after(delay, () => {
        startConsumer().catch((err: unknown) =>
          onCrash({ payload: { error: err as Error, groupId, restart: false } } as ConsumerCrashEvent),
        );
      });
    };

    const startConsumer = async () => {
      // Never auto-created by subscribing: the migrate job makes the topic with its partitions and replication.
      consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false });
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

    const toIncoming = (partition: number, message: KafkaMessage): IncomingMessage => ({
      topic,
      key: message.key?.toString('utf8') ?? '',
      value: message.value ?? new Uint8Array(0),
      headers: decodeHeaders(message.headers),
      partition,
      offset: message.offset,
    });

    /** One attempt at a slice; false when it failed and its partition is paused for a backoff. */
    const settleSlice = async (messages: IncomingMessage[], kafkaBatch: EachBatchPayload): Promise<boolean> => {
      const { partition, offset } = messages[0]!;
      const previous = failures.get(partition);
      const attempt = previous?.offset === offset ? previous.attempts + 1 : 1;
      const { heartbeat } = kafkaBatch;
      try {
        await whileHeartbeating(heartbeat, options.heartbeatEveryMs ?? DEFAULT_HEARTBEAT_EVERY_MS, () =>
          settleBatch(messages, handle, member.poison, options.logger, { number: attempt, heartbeat }),
        );
        failures.delete(partition);
        return true;
      } catch (err) {
        failures.set(partition, { offset, attempts: attempt });
        const delay = backoffDelay(attempt, options.retry);
        const fields = { err, topic, partition, offset, messages: messages.length, attempt, retryInMs: delay };
        options.logger?.warn(fields, 'event handler failed; its partition is paused until the retry');
        after(delay, kafkaBatch.pause());
        return false;
      }
    };

    const runConsumer = (consumer: Consumer) =>
      consumer.run({
        autoCommit: true,
        // Without a threshold `commitOffsetsIfNecessary` commits nothing between fetches: a slice's worth.
        autoCommitThreshold: member.maxBatch,
        eachBatchAutoResolve: false,
        eachBatch: async (kafkaBatch) => {
          const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = kafkaBatch;
          for (let from = 0; from < batch.messages.length; from += member.maxBatch) {
            if (!isRunning() || isStale() || stopping) return; // what is left is fetched again
            const slice = batch.messages.slice(from, from + member.maxBatch);
            const settled = await settleSlice(
              slice.map((message) => toIncoming(batch.partition, message)),
              kafkaBatch,
            );
            if (!settled) return; // the slice stays unresolved: fetched again once its partition resumes
            resolveOffset(slice.at(-1)!.offset);
            await commitOffsetsIfNecessary();
            await heartbeat();
          }
        },
      });

    await startConsumer();
    let stopped: Promise<void> | undefined;
    const subscription: Subscription = {
      stop() {
        stopped ??= (async () => {
          stopping = true;
          for (const timer of timers) clearTimeout(timer);
          timers.clear();
          subscriptions.delete(subscription);
          await consumer.disconnect(); // waits for the running eachBatch, commits what resolved
        })();
        return stopped;
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }
}

/**
 * Runs `work`, heartbeating every `everyMs` until it settles. kafkajs heartbeats only between batches and when
 * told to, and shares one heartbeat request among concurrent callers; a failed one (a rebalance under way) is
 * left to the heartbeat after the slice, which hands the rebalance to kafkajs.
 */
async function whileHeartbeating<T>(
  heartbeat: () => Promise<void>,
  everyMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const timer = setInterval(() => void heartbeat().catch(() => undefined), everyMs);
  try {
    return await work();
  } finally {
    clearInterval(timer);
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
