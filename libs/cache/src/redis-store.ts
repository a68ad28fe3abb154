import { Redis } from 'ioredis';
import { createLogger, type Logger } from '@sbc/logging';
import {
  COUNTER_LEASE_LUA,
  INCR_BY_LUA,
  INCR_IF_EXISTS_LUA,
  SLIDING_WINDOW_LUA,
  WINDOW_ADJUST_LUA,
  WINDOW_LEASE_LUA,
  WINDOW_RETURN_LUA,
} from './redis-scripts';
import { validateAmount, validateOps, validateTtl, type SharedStore, type StoreOpResult } from './shared-store';
import { evaluateSlidingWindow, evaluateWindowLease, validateWindowOptions } from './sliding-window';

export interface RedisStoreOptions {
  /** Prepended to every key (ioredis `keyPrefix`), e.g. `sbc:` or a per-test-run prefix. */
  keyPrefix?: string;
  /**
   * A command that gets no reply within this many ms fails instead of stalling the hot path; the caller
   * decides whether that means fail-open or fail-closed. Default 1000.
   */
  commandTimeoutMs?: number;
  logger?: Logger;
}

/** The Lua commands registered with `defineCommand`; ioredis adds them at run time (and to pipelines), typed here. */
type ScriptedRedis = Redis & {
  sbcIncrBy(key: string, amount: number, ttlMs: number): Promise<number>;
  sbcSlidingWindow(
    key: string,
    limit: number,
    windowMs: number,
    cost: number,
  ): Promise<[number, number, number, number]>;
};
type ScriptedPipeline = ReturnType<Redis['pipeline']> & {
  sbcIncrBy(key: string, amount: number, ttlMs: number): ScriptedPipeline;
  sbcIncrIfExists(key: string, amount: number): ScriptedPipeline;
  sbcSlidingWindow(key: string, limit: number, windowMs: number, cost: number): ScriptedPipeline;
  sbcWindowAdjust(key: string, windowMs: number, amount: number): ScriptedPipeline;
  sbcWindowLease(
    key: string,
    limit: number,
    windowMs: number,
    want: number,
    min: number,
    share: number,
  ): ScriptedPipeline;
  sbcWindowReturn(key: string, cell: number, amount: number): ScriptedPipeline;
  sbcCounterLease(
    key: string,
    sign: number,
    limit: number,
    want: number,
    min: number,
    share: number,
    ttlMs: number,
  ): ScriptedPipeline;
};

export function createRedisStore(url: string, options: RedisStoreOptions = {}): SharedStore {
  const logger = options.logger ?? createLogger({ service: 'cache' });
  const client = new Redis(url, {
    keyPrefix: options.keyPrefix ?? '',
    commandTimeout: options.commandTimeoutMs ?? 1000,
    // Queue commands across a short blip, but give up after a couple of reconnect attempts rather than
    // letting requests pile up behind a dead server.
    maxRetriesPerRequest: 2,
    connectionName: 'sbc-cache',
  });
  // ioredis emits connection errors as events; without a listener they would be silent, with one they are
  // logged once per reconnect attempt (its backoff caps the rate).
  client.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis store connection error'));
  client.defineCommand('sbcIncrBy', { numberOfKeys: 1, lua: INCR_BY_LUA });
  client.defineCommand('sbcSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_LUA });
  client.defineCommand('sbcIncrIfExists', { numberOfKeys: 1, lua: INCR_IF_EXISTS_LUA });
  client.defineCommand('sbcWindowAdjust', { numberOfKeys: 1, lua: WINDOW_ADJUST_LUA });
  client.defineCommand('sbcWindowLease', { numberOfKeys: 1, lua: WINDOW_LEASE_LUA });
  client.defineCommand('sbcWindowReturn', { numberOfKeys: 1, lua: WINDOW_RETURN_LUA });
  client.defineCommand('sbcCounterLease', { numberOfKeys: 1, lua: COUNTER_LEASE_LUA });
  const redis = client as ScriptedRedis;

  return {
    async get(key) {
      return redis.get(key);
    },

    async set(key, value, ttlMs) {
      const ttl = validateTtl(ttlMs);
      if (ttl === undefined) await redis.set(key, value);
      else await redis.set(key, value, 'PX', ttl);
    },

    async del(key) {
      await redis.del(key);
    },

    async incrBy(key, amount, ttlMs) {
      validateAmount(amount);
      return Number(await redis.sbcIncrBy(key, amount, validateTtl(ttlMs) ?? 0));
    },

    async getMany(keys) {
      if (keys.length === 0) return []; // MGET with no keys is a Redis syntax error
      return redis.mget(...keys);
    },

    async slidingWindowHit(key, hitOptions) {
      const opts = validateWindowOptions(hitOptions);
      const [, previous, current, elapsedMs] = await redis.sbcSlidingWindow(key, opts.limit, opts.windowMs, opts.cost);
      return evaluateSlidingWindow(opts, {
        previous: Number(previous),
        current: Number(current),
        elapsedMs: Number(elapsedMs),
      });
    },

    async batch(ops) {
      if (ops.length === 0) return [];
      validateOps(ops); // nothing is sent when any operation is malformed
      const pipeline = redis.pipeline() as ScriptedPipeline;
      for (const op of ops) {
        if (op.op === 'incrBy') pipeline.sbcIncrBy(op.key, op.amount, validateTtl(op.ttlMs) ?? 0);
        else if (op.op === 'incrIfExists') pipeline.sbcIncrIfExists(op.key, op.amount);
        else if (op.op === 'windowAdjust') pipeline.sbcWindowAdjust(op.key, op.windowMs, op.amount);
        else if (op.op === 'windowLease') {
          const { limit, windowMs, want, min, share } = op.lease;
          pipeline.sbcWindowLease(op.key, limit, windowMs, want, min, share);
        } else if (op.op === 'windowReturn') pipeline.sbcWindowReturn(op.key, op.cell, op.amount);
        else if (op.op === 'set') pipeline.set(op.key, op.value, 'PX', validateTtl(op.ttlMs)!);
        else if (op.op === 'counterLease') {
          const { sign, limit, want, min, share, ttlMs } = op.lease;
          pipeline.sbcCounterLease(op.key, sign, limit ?? 0, want, min, share, validateTtl(ttlMs) ?? 0);
        } else {
          const opts = validateWindowOptions(op.options);
          pipeline.sbcSlidingWindow(op.key, opts.limit, opts.windowMs, opts.cost);
        }
      }
      const replies = (await pipeline.exec()) ?? [];
      return replies.map(([error, reply], i): StoreOpResult => {
        if (error) throw error;
        const op = ops[i]!;
        if (op.op === 'window') {
          const [, previous, current, elapsedMs] = reply as [number, number, number, number];
          return evaluateSlidingWindow(validateWindowOptions(op.options), {
            previous: Number(previous),
            current: Number(current),
            elapsedMs: Number(elapsedMs),
          });
        }
        if (op.op === 'windowLease') {
          const [, previous, current, elapsedMs, cell] = (reply as number[]).map(Number) as [
            number,
            number,
            number,
            number,
            number,
          ];
          return evaluateWindowLease(op.lease, { previous, current, elapsedMs }, cell);
        }
        if (op.op === 'counterLease') {
          const [granted, present] = reply as [number, number];
          return { granted: Number(granted), present: Number(present) === 1 };
        }
        if (op.op === 'windowAdjust' || op.op === 'windowReturn' || op.op === 'set') return null;
        return reply === null ? null : Number(reply);
      });
    },

    async close() {
      await closeRedis(redis);
    },
  };
}

/** QUIT lets queued replies arrive; on a connection that is not up, QUIT would wait for it, so just drop it. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  await redis.quit().catch(() => redis.disconnect());
}
