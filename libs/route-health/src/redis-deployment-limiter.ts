import { Redis } from 'ioredis';
import { createLogger, type Logger } from '@sbc/logging';
import { validTokens, type DeploymentLimiter } from './deployment-limiter';
import { countInLastMinute, fitsLimits, minuteCellOf, MINUTE_MS, type MinuteCell } from './minute-window';

export interface RedisDeploymentLimiterOptions {
  /** Prepended to every key, e.g. `sbc:route-limits:` (the default) or a per-test prefix. */
  keyPrefix?: string;
  /** How often local counts are added to the shared ones and the totals read back. Default 250 ms. */
  flushIntervalMs?: number;
  logger?: Logger;
}

type Counts = Map<number, { requests: number; tokens: number }>;

interface KeyCounts {
  /** Totals of every edge as of this edge's last flush (ours included). */
  shared: Counts;
  /** Sent in the flush under way, not yet in `shared`. */
  sending: Counts;
  /** Taken here since the last flush. */
  pending: Counts;
  lastUsedMs: number;
}

/** A key no edge here has used for this long stops being flushed (its cells have left the window). */
const IDLE_AFTER_MS = 2 * MINUTE_MS;
/** Redis keeps a cell a little longer than the window can reach back. */
const CELL_TTL_MS = 2 * MINUTE_MS + 30_000;

/**
 * A deployment limiter shared by N edges with no Redis call per request: each edge counts locally and, every
 * `flushIntervalMs`, adds its counts to a per-deployment, per-minute hash (HINCRBY, which answers the new
 * total) and so reads back what all edges have taken.
 *
 * An edge learns a deployment's shared counts at its first flush after it first uses it.
 *
 * How far over: an edge sees another edge's requests only after both have flushed, about two intervals plus a
 * round trip (~0.5 s at the default). So N edges together may admit the limit plus what the other N - 1
 * admitted in that half second: at a steady rate near the limit ≈ (N - 1) × rpm / 120 extra per minute; in a
 * burst, up to each edge's burst in that half second. `tpm` also runs over by the tokens of calls in flight
 * (tokens are only known when a call ends). With Redis away each edge enforces the limit on its own counts
 * (N edges then admit up to N × the limit) until Redis answers again.
 */
export function redisDeploymentLimiter(url: string, options: RedisDeploymentLimiterOptions = {}): DeploymentLimiter {
  const prefix = options.keyPrefix ?? 'sbc:route-limits:';
  const logger = options.logger ?? createLogger({ service: 'route-health' });
  const client = new Redis(url, { connectionName: 'sbc-route-limits', commandTimeout: 1_000, maxRetriesPerRequest: 1 });
  const keys = new Map<string, KeyCounts>();
  let failing = false;
  const reportFailure = (err: unknown) => {
    if (failing) return;
    failing = true;
    logger.warn({ err: (err as Error)?.message }, 'deployment limits: Redis unavailable, counting on this edge alone');
  };
  client.on('error', reportFailure);

  const countsOf = (key: string, now: number): KeyCounts => {
    let counts = keys.get(key);
    if (!counts)
      keys.set(key, (counts = { shared: new Map(), sending: new Map(), pending: new Map(), lastUsedMs: now }));
    counts.lastUsedMs = Math.max(counts.lastUsedMs, now);
    return counts;
  };

  let flushing = false;
  const flush = async () => {
    if (flushing || keys.size === 0) return;
    flushing = true;
    const now = Date.now();
    const batch = client.pipeline();
    const sent: Array<{ counts: KeyCounts; cell: number }> = [];
    for (const [key, counts] of keys) {
      if (now - counts.lastUsedMs > IDLE_AFTER_MS && counts.pending.size === 0) {
        keys.delete(key);
        continue;
      }
      counts.sending = counts.pending;
      counts.pending = new Map();
      const newest = Math.max(minuteCellOf(now), ...counts.sending.keys(), ...counts.shared.keys());
      for (const cell of [newest - 1, newest]) {
        const add = counts.sending.get(cell) ?? { requests: 0, tokens: 0 };
        const hash = `${prefix}${key}:${cell}`;
        batch.hincrby(hash, 'requests', add.requests).hincrby(hash, 'tokens', add.tokens).pexpire(hash, CELL_TTL_MS);
        sent.push({ counts, cell });
      }
    }
    try {
      const replies = (await batch.exec()) ?? [];
      sent.forEach(({ counts, cell }, i) => {
        const [requestsReply, tokensReply] = [replies[i * 3], replies[i * 3 + 1]];
        if (requestsReply?.[0] || tokensReply?.[0]) throw requestsReply?.[0] ?? tokensReply?.[0];
        counts.shared.set(cell, { requests: Number(requestsReply?.[1]), tokens: Number(tokensReply?.[1]) });
      });
      for (const { counts, cell } of sent) {
        counts.sending = new Map();
        for (const old of counts.shared.keys()) if (old < cell - 1) counts.shared.delete(old);
      }
      failing = false;
    } catch (err) {
      reportFailure(err);
      const oldest = minuteCellOf(Date.now()) - 1; // older cells have left every window
      for (const { counts } of sent) {
        for (const [cell, add] of counts.sending) if (cell >= oldest) addTo(counts.pending, cell, add);
        counts.sending = new Map();
      }
    } finally {
      flushing = false;
    }
  };
  const timer = setInterval(() => void flush(), options.flushIntervalMs ?? 250);
  timer.unref();

  const lastMinute = (counts: KeyCounts, now: number) => {
    const cell = minuteCellOf(now);
    const cellCounts = (at: number): MinuteCell => {
      const sum = { cell: at, requests: 0, tokens: 0 };
      for (const source of [counts.shared, counts.sending, counts.pending]) {
        const part = source.get(at);
        sum.requests += part?.requests ?? 0;
        sum.tokens += part?.tokens ?? 0;
      }
      return sum;
    };
    return countInLastMinute({ current: cellCounts(cell), previous: cellCounts(cell - 1) }, now);
  };

  return {
    tryTake(key, limits, now = Date.now()) {
      const counts = countsOf(key, now);
      if (!fitsLimits(lastMinute(counts, now), limits)) return false;
      addTo(counts.pending, minuteCellOf(now), { requests: 1, tokens: 0 });
      return true;
    },
    addTokens(key, tokens, now = Date.now()) {
      addTo(countsOf(key, now).pending, minuteCellOf(now), { requests: 0, tokens: validTokens(tokens) });
    },
    async close() {
      clearInterval(timer);
      await flush();
      keys.clear();
      if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
      else client.disconnect();
    },
  };
}

function addTo(counts: Counts, cell: number, add: { requests: number; tokens: number }): void {
  const current = counts.get(cell) ?? { requests: 0, tokens: 0 };
  counts.set(cell, { requests: current.requests + add.requests, tokens: current.tokens + add.tokens });
}
