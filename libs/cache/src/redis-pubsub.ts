import { Redis } from 'ioredis';
import { createLogger, type Logger } from '@sbc/logging';
import { BARRIER_WAIT_MS, invokeHandler, type MessageHandler, type PubSub } from './pubsub';
import { closeRedis } from './redis-store';

export interface RedisPubSubOptions {
  /** Prepended to every channel name; channels are not keys, so ioredis' keyPrefix would not apply. */
  channelPrefix?: string;
  /** CLIENT SETNAME of the subscriber connection, to find it in CLIENT LIST. */
  connectionName?: string;
  logger?: Logger;
}

/**
 * Redis PubSub over two connections: a connection in subscriber mode can run nothing but (un)subscribe
 * commands, so publishing needs its own. Handlers are multiplexed per channel so that N local subscribers cost
 * one Redis subscription.
 */
export function createRedisPubSub(url: string, options: RedisPubSubOptions = {}): PubSub {
  const prefix = options.channelPrefix ?? '';
  const logger = options.logger ?? createLogger({ service: 'cache' });
  const publisher = new Redis(url, { connectionName: 'sbc-pubsub-pub', maxRetriesPerRequest: 2 });
  // The subscriber waits out outages (no per-request retry cap) and, with ioredis' autoResubscribe, re-issues
  // SUBSCRIBE for every live channel on each reconnect: a killed connection or a Redis restart costs the
  // messages published while it was down, never the subscriptions.
  const subscriber = new Redis(url, {
    connectionName: options.connectionName ?? 'sbc-pubsub-sub',
    maxRetriesPerRequest: null,
    autoResubscribe: true,
  });
  const channels = new Map<string, { handlers: Set<MessageHandler>; ready: Promise<void> }>();
  let closed = false;

  publisher.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis publisher connection error'));
  subscriber.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis subscriber connection error'));
  subscriber.on('message', (fullChannel: string, message: string) => {
    if (!fullChannel.startsWith(prefix)) return;
    const channel = fullChannel.slice(prefix.length);
    for (const handler of [...(channels.get(channel)?.handlers ?? [])]) {
      invokeHandler(handler, message, channel, (err) => logger.error({ err, channel }, 'pubsub handler failed'));
    }
  });

  return {
    async publish(channel, message) {
      if (closed) throw new Error('pubsub is closed');
      await publisher.publish(prefix + channel, message);
    },

    async subscribe(channel, handler) {
      if (closed) throw new Error('pubsub is closed');
      const wrapped: MessageHandler = (message, ch) => handler(message, ch); // distinct identity per subscription
      let entry = channels.get(channel);
      if (!entry) {
        // Commands on one connection run in order, so an UNSUBSCRIBE still in flight is followed by this
        // SUBSCRIBE and the channel ends up subscribed, matching the map.
        const ready = subscriber.subscribe(prefix + channel).then(() => undefined);
        entry = { handlers: new Set(), ready };
        channels.set(channel, entry);
        const created = entry;
        ready.catch(() => {
          if (channels.get(channel) === created) channels.delete(channel);
        });
      }
      entry.handlers.add(wrapped);
      await entry.ready; // a second subscriber to a channel also waits until the SUBSCRIBE is confirmed
      return async () => {
        const current = channels.get(channel);
        if (!current?.handlers.delete(wrapped) || current.handlers.size > 0) return;
        channels.delete(channel);
        if (!closed) await subscriber.unsubscribe(prefix + channel);
      };
    },

    async barrier() {
      // Redis answers a PING on the subscriber connection after the messages it queued there before the
      // PING, and ioredis hands those to the handlers as it reads them. A connection that is down has nothing
      // to deliver until it is back, so it is not waited for.
      if (closed || subscriber.status !== 'ready') return;
      let timer: NodeJS.Timeout | undefined;
      const cut = new Promise<void>((resolve) => (timer = setTimeout(resolve, BARRIER_WAIT_MS)));
      try {
        await Promise.race([subscriber.ping().then(() => undefined), cut]);
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'pubsub barrier: the subscriber connection did not answer');
      } finally {
        clearTimeout(timer);
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      channels.clear();
      await Promise.all([closeRedis(publisher), closeRedis(subscriber)]);
    },
  };
}
