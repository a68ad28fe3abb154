import { Redis } from 'ioredis';
import { createLogger, type Logger } from '@sbc/logging';
import { LEVEL_MEMORY_MS, type Cooldown } from './cooldown-rules';
import { LocalTargetHealth, type TargetHealth, type TargetHealthOptions } from './target-health';

export interface RedisTargetHealthOptions extends TargetHealthOptions {
  /** Prepended to the channel and the keys, e.g. `sbc:route-health:` (the default) or a per-test prefix. */
  keyPrefix?: string;
  /** How long `redisTargetHealth` waits for the current cooldowns before it answers from the local view. */
  loadWaitMs?: number;
  logger?: Logger;
}

/** A cooldown on the wire and in its key; `untilMs: 0` clears the key (a success somewhere). */
interface CooldownMessage {
  key: string;
  untilMs: number;
  level: number;
}

const SCAN_COUNT = 500;

/**
 * Target health shared by every edge through Redis, with no Redis round trip on the hot path: `coolingUntil`
 * and `claimHalfOpen` read this edge's map, which a subscriber connection keeps fresh. Each change to a key's
 * cooldown is published and also kept in a key with a TTL (its end plus LEVEL_MEMORY_MS, so its level outlives
 * it), which an edge loads when its subscriber (re)connects: a late starter, or one back from an outage, sees the
 * cooldowns already running. Failure streaks stay per edge; the cooldown and its level are shared.
 *
 * Redis down never fails a call: writes are fire-and-forget, the local view goes on deciding, and the outage is
 * logged once (again after Redis has come back and failed anew).
 */
export async function redisTargetHealth(url: string, options: RedisTargetHealthOptions = {}): Promise<TargetHealth> {
  const prefix = options.keyPrefix ?? 'sbc:route-health:';
  const channel = `${prefix}cooldowns`;
  const keyOf = (target: string) => `${prefix}cooldown:${target}`;
  const logger = options.logger ?? createLogger({ service: 'route-health' });
  const client = new Redis(url, { connectionName: 'sbc-route-health', commandTimeout: 1_000, maxRetriesPerRequest: 1 });
  // Waits out outages and re-subscribes on every reconnect (ioredis' autoResubscribe).
  const subscriber = new Redis(url, {
    connectionName: 'sbc-route-health-sub',
    maxRetriesPerRequest: null,
    autoResubscribe: true,
  });
  let failing = false;
  const reportFailure = (err: unknown) => {
    if (failing) return;
    failing = true;
    logger.warn({ err: (err as Error)?.message }, 'route health: Redis unavailable, deciding on this edge alone');
  };
  const reportSuccess = () => {
    failing = false;
  };
  client.on('error', reportFailure);
  subscriber.on('error', reportFailure);

  const view = new LocalTargetHealth(options, (target, cooldown) => {
    const message: CooldownMessage = { key: target, untilMs: cooldown?.untilMs ?? 0, level: cooldown?.level ?? 0 };
    const body = JSON.stringify(message);
    const ttlMs = Math.max(1, message.untilMs - Date.now() + LEVEL_MEMORY_MS);
    const kept = cooldown ? client.set(keyOf(target), body, 'PX', ttlMs) : client.del(keyOf(target));
    Promise.all([kept, client.publish(channel, body)]).then(reportSuccess, reportFailure);
  });

  const apply = (raw: string | null) => {
    const message = parseMessage(raw);
    if (message) view.applyShared(message.key, message.untilMs > 0 ? toCooldown(message) : undefined);
  };
  subscriber.on('message', (from: string, raw: string) => {
    if (from === channel) apply(raw);
  });

  // Every (re)connect of the subscriber: subscribe (ioredis repeats it itself on reconnects) and load what was
  // published while this edge was not listening.
  const loadCurrent = async () => {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}cooldown:*`, 'COUNT', SCAN_COUNT);
      cursor = next;
      if (keys.length > 0) for (const raw of await client.mget(...keys)) apply(raw);
    } while (cursor !== '0');
    reportSuccess();
  };
  let connectedBefore = false;
  subscriber.on('ready', () => {
    if (connectedBefore) loadCurrent().catch(reportFailure);
    connectedBefore = true;
  });
  const ready = subscriber.subscribe(channel).then(loadCurrent);
  ready.catch(reportFailure);
  await waitAtMost(ready, options.loadWaitMs ?? 1_000);

  return {
    coolingUntil: (key, now) => view.coolingUntil(key, now),
    claimHalfOpen: (keys, now) => view.claimHalfOpen(keys, now),
    record: (key, outcome, now) => view.record(key, outcome, now),
    cooling: (now) => view.cooling(now),
    async close() {
      await view.close();
      await Promise.all([quit(client), quit(subscriber)]);
    },
  };
}

function toCooldown(message: CooldownMessage): Cooldown {
  return { untilMs: message.untilMs, level: message.level };
}

/** Another edge's message, or undefined when it is not one (a foreign publisher on the channel). */
function parseMessage(raw: string | null): CooldownMessage | undefined {
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<CooldownMessage>;
    const { key, untilMs, level } = value;
    if (typeof key !== 'string' || !Number.isSafeInteger(untilMs) || !Number.isSafeInteger(level)) return undefined;
    return { key, untilMs: untilMs as number, level: Math.max(0, level as number) };
  } catch {
    return undefined;
  }
}

async function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const cut = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([
      promise.then(
        () => undefined,
        () => undefined,
      ),
      cut,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** QUIT when connected, else drop the connection (QUIT would queue until Redis is back). */
async function quit(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}
