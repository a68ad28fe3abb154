import type { Logger } from '@sbc/logging';
import { createMemoryPubSub } from './memory-pubsub';
import { createMemoryStore } from './memory-store';
import type { PubSub } from './pubsub';
import { createRedisPubSub } from './redis-pubsub';
import { createRedisStore } from './redis-store';
import type { SharedStore } from './shared-store';

export interface CacheAdaptersOptions {
  /** Set in services mode (REDIS_URL); absent means one process owns all state (embedded mode). */
  redisUrl?: string;
  /** Namespace for keys and channels, so several deployments or test runs can share one Redis. */
  keyPrefix?: string;
  logger?: Logger;
}

export interface CacheAdapters {
  store: SharedStore;
  pubsub: PubSub;
  kind: 'redis' | 'memory';
  /** Closes both; for the composition root's shutdown. */
  close(): Promise<void>;
}

/** The one place that picks Redis or memory, called from an app's main.ts; nothing downstream branches on it. */
export function createCacheAdapters(options: CacheAdaptersOptions): CacheAdapters {
  const { redisUrl, keyPrefix, logger } = options;
  const store = redisUrl ? createRedisStore(redisUrl, { keyPrefix, logger }) : createMemoryStore();
  const pubsub = redisUrl
    ? createRedisPubSub(redisUrl, { channelPrefix: keyPrefix, logger })
    : createMemoryPubSub({ logger });
  return {
    store,
    pubsub,
    kind: redisUrl ? 'redis' : 'memory',
    async close() {
      await Promise.all([store.close(), pubsub.close()]);
    },
  };
}
