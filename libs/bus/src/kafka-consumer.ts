import type { IHeaders, Kafka } from 'kafkajs';
import type { Logger } from '@sbc/logging';
import { backoffDelay, interruptibleSleep, type BackoffOptions } from './backoff';
import type { EventConsumer, IncomingMessage, MessageHeaders, Subscription } from './types';

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
 * per-key order.
 */
export function createKafkaConsumer(kafka: Kafka, options: KafkaConsumerOptions = {}): EventConsumer {
  const subscriptions = new Set<Subscription>();

  return {
    async subscribe({ topic, groupId, handler, fromBeginning }) {
      const consumer = kafka.consumer({ groupId });
      let stopping = false;
      let wake: (() => void) | undefined;
      await consumer.connect();
      try {
        await consumer.subscribe({ topics: [topic], fromBeginning: fromBeginning ?? false });
        await consumer.run({
          autoCommit: true,
          eachMessage: async ({ partition, message, heartbeat }) => {
            const incoming: IncomingMessage = {
              topic,
              key: message.key?.toString('utf8') ?? '',
              value: message.value ?? new Uint8Array(0),
              headers: decodeHeaders(message.headers),
              partition,
              offset: message.offset,
            };
            for (let attempt = 1; ; attempt++) {
              if (stopping) throw new SubscriptionStoppedError();
              try {
                await handler(incoming);
                return;
              } catch (err) {
                const delay = backoffDelay(attempt, options.retry);
                options.logger?.warn({ err, topic, partition, offset: message.offset, attempt, retryInMs: delay }, 'event handler failed; will retry');
                const sleep = interruptibleSleep(delay);
                wake = sleep.wake;
                await sleep.done;
                wake = undefined;
                if (!stopping) await heartbeat();
              }
            }
          },
        });
      } catch (err) {
        await consumer.disconnect().catch(() => undefined);
        throw err;
      }
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
    },

    async close() {
      await Promise.all([...subscriptions].map((s) => s.stop()));
    },
  };
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
