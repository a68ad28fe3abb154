import { createLogger, type Logger } from '@sbc/logging';
import { invokeHandler, type MessageHandler, type PubSub } from './pubsub';

export interface MemoryPubSubOptions {
  /** Where a failing handler is reported; default a `cache` logger. */
  logger?: Logger;
}

/**
 * Embedded-mode PubSub. Like Redis, delivery happens after `publish` returns (never inside its call stack),
 * only to handlers subscribed when the message was published, in publish order per channel.
 */
export function createMemoryPubSub(options: MemoryPubSubOptions = {}): PubSub {
  const logger = options.logger ?? createLogger({ service: 'cache' });
  const channels = new Map<string, Set<MessageHandler>>();
  let closed = false;

  return {
    async publish(channel, message) {
      if (closed) throw new Error('pubsub is closed');
      const handlers = [...(channels.get(channel) ?? [])];
      if (handlers.length === 0) return;
      // One macrotask per publish keeps per-channel order (timers of equal delay run in creation order).
      setImmediate(() => {
        for (const handler of handlers) {
          if (!channels.get(channel)?.has(handler)) continue; // unsubscribed meanwhile: Redis would not deliver either
          invokeHandler(handler, message, channel, (err) => logger.error({ err, channel }, 'pubsub handler failed'));
        }
      });
    },

    async subscribe(channel, handler) {
      if (closed) throw new Error('pubsub is closed');
      const wrapped: MessageHandler = (message, ch) => handler(message, ch); // distinct identity per subscription
      let set = channels.get(channel);
      if (!set) channels.set(channel, (set = new Set()));
      set.add(wrapped);
      return async () => {
        const current = channels.get(channel);
        current?.delete(wrapped);
        if (current?.size === 0) channels.delete(channel);
      };
    },

    barrier() {
      // Each delivery is a macrotask scheduled at publish: one scheduled now runs after all of them.
      return new Promise<void>((resolve) => setImmediate(resolve));
    },

    async close() {
      closed = true;
      channels.clear();
    },
  };
}
