export { createCacheAdapters, type CacheAdapters, type CacheAdaptersOptions } from './adapters';
export { LocalCache, type CacheHit, type CacheState, type EntryWindows, type LocalCacheOptions } from './local-cache';
export { createMemoryPubSub, type MemoryPubSubOptions } from './memory-pubsub';
export { createMemoryStore, type MemoryStoreOptions } from './memory-store';
export { Recency, type Placed } from './recency';
export type { MessageHandler, PubSub, Unsubscribe } from './pubsub';
export { createRedisPubSub, type RedisPubSubOptions } from './redis-pubsub';
export { createRedisStore, type RedisStoreOptions } from './redis-store';
export type { CounterLeaseOptions, CounterLeaseResult, SharedStore, StoreOp, StoreOpResult } from './shared-store';
export {
  evaluateSlidingWindow,
  type SlidingWindowOptions,
  type SlidingWindowResult,
  type WindowCounts,
  type WindowLeaseOptions,
  type WindowLeaseResult,
} from './sliding-window';
