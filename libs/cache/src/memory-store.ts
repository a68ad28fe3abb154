import {
  counterLeaseGrant,
  validateAmount,
  validateOps,
  validateTtl,
  type CounterLeaseOptions,
  type CounterLeaseResult,
  type SharedStore,
} from './shared-store';
import {
  adjustWindow,
  evaluateSlidingWindow,
  evaluateWindowLease,
  locateCell,
  returnToWindow,
  validateWindowOptions,
  type SlidingWindowOptions,
  type SlidingWindowResult,
  type WindowLeaseOptions,
  type WindowLeaseResult,
  type WindowState,
} from './sliding-window';

export interface MemoryStoreOptions {
  /** Clock in epoch ms; injectable so tests can step time. */
  now?: () => number;
  /** How often expired keys nobody reads again are swept out; default 30 s. */
  sweepIntervalMs?: number;
}

interface Entry {
  value: string | WindowState;
  expiresAt: number | undefined;
}

/**
 * The embedded-mode SharedStore: one process, so a Map is the shared state. Every method does its work
 * synchronously before resolving, which is what makes increments and window hits atomic here, the way a Lua
 * script is in Redis. Expiry is checked on read, and a timer sweeps keys that are never read again.
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): SharedStore {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  let closed = false;

  const sweep = setInterval(() => {
    const at = now();
    for (const [key, entry] of entries) if (entry.expiresAt !== undefined && entry.expiresAt <= at) entries.delete(key);
  }, options.sweepIntervalMs ?? 30_000);
  sweep.unref(); // a cache must never keep the process alive

  function live(key: string): Entry | undefined {
    const entry = entries.get(key);
    if (entry && entry.expiresAt !== undefined && entry.expiresAt <= now()) {
      entries.delete(key);
      return undefined;
    }
    return entry;
  }

  function stringAt(key: string): string | null {
    const entry = live(key);
    if (!entry) return null;
    if (typeof entry.value !== 'string')
      throw new Error(`WRONGTYPE key ${key} holds a rate-limit window, not a string`);
    return entry.value;
  }

  function ensureOpen(): void {
    if (closed) throw new Error('memory store is closed');
  }

  return {
    async get(key) {
      ensureOpen();
      return stringAt(key);
    },

    async set(key, value, ttlMs) {
      ensureOpen();
      const ttl = validateTtl(ttlMs);
      entries.set(key, { value, expiresAt: ttl === undefined ? undefined : now() + ttl });
    },

    async del(key) {
      ensureOpen();
      entries.delete(key);
    },

    async incrBy(key, amount, ttlMs) {
      ensureOpen();
      return incrBy(key, amount, ttlMs);
    },

    async getMany(keys) {
      ensureOpen();
      return keys.map((key) => stringAt(key));
    },

    async slidingWindowHit(key, hitOptions: SlidingWindowOptions): Promise<SlidingWindowResult> {
      ensureOpen();
      return windowHit(key, hitOptions);
    },

    async batch(ops) {
      ensureOpen();
      validateOps(ops); // nothing runs when any operation is malformed
      return ops.map((op) => {
        switch (op.op) {
          case 'incrBy':
            return incrBy(op.key, op.amount, op.ttlMs);
          case 'incrIfExists':
            return live(op.key) ? incrBy(op.key, op.amount) : null;
          case 'window':
            return windowHit(op.key, op.options);
          case 'windowAdjust':
            return windowAdjust(op.key, op.windowMs, op.amount);
          case 'windowLease':
            return windowLease(op.key, op.lease);
          case 'windowReturn':
            return windowReturn(op.key, op.cell, op.amount);
          case 'counterLease':
            return counterLease(op.key, op.lease);
          case 'set':
            entries.set(op.key, { value: op.value, expiresAt: now() + validateTtl(op.ttlMs)! });
            return null;
        }
      });
    },

    async close() {
      closed = true;
      clearInterval(sweep);
      entries.clear();
    },
  };

  function incrBy(key: string, amount: number, ttlMs?: number): number {
    validateAmount(amount);
    const ttl = validateTtl(ttlMs);
    const entry = live(key);
    if (!entry) {
      entries.set(key, { value: String(amount), expiresAt: ttl === undefined ? undefined : now() + ttl });
      return amount;
    }
    const current = typeof entry.value === 'string' && /^-?\d+$/.test(entry.value) ? Number(entry.value) : NaN;
    if (!Number.isSafeInteger(current)) throw new Error(`ERR value at ${key} is not an integer or out of range`);
    entry.value = String(current + amount);
    return current + amount;
  }

  function counterLease(key: string, lease: CounterLeaseOptions): CounterLeaseResult {
    const value = stringAt(key);
    if (value === null && lease.sign === -1) return { granted: 0, present: false };
    const granted = counterLeaseGrant(lease, Number(value ?? 0));
    if (granted > 0) incrBy(key, lease.sign * granted, lease.ttlMs);
    return { granted, present: true };
  }

  function windowAdjust(key: string, windowMs: number, amount: number): null {
    const entry = live(key);
    if (!entry || typeof entry.value === 'string') return null;
    const adjusted = adjustWindow(entry.value, locateCell(now(), windowMs).cell, amount);
    if (adjusted) entry.value = adjusted;
    return null;
  }

  /** The window at `key` rolled forward to now, as the Lua scripts read it. */
  function windowNow(key: string, windowMs: number) {
    const { cell, elapsedMs } = locateCell(now(), windowMs);
    const entry = live(key);
    if (entry && typeof entry.value === 'string')
      throw new Error(`WRONGTYPE key ${key} holds a string, not a rate-limit window`);
    const stored = entry?.value as WindowState | undefined;
    // Same roll-forward as the Lua script: a state from this cell is used as is, one from the cell before
    // becomes the previous count, anything older has fully left the window.
    const previous = stored?.cell === cell ? stored.previous : stored?.cell === cell - 1 ? stored.current : 0;
    const current = stored?.cell === cell ? stored.current : 0;
    return { cell, elapsedMs, previous, current };
  }

  function windowLease(key: string, lease: WindowLeaseOptions): WindowLeaseResult {
    const { cell, elapsedMs, previous, current } = windowNow(key, lease.windowMs);
    const result = evaluateWindowLease(lease, { previous, current, elapsedMs }, cell);
    if (result.granted > 0)
      entries.set(key, {
        value: { cell, previous, current: current + result.granted },
        expiresAt: now() + 2 * lease.windowMs,
      });
    return result;
  }

  function windowReturn(key: string, leaseCell: number, amount: number): null {
    const entry = live(key);
    if (!entry || typeof entry.value === 'string') return null;
    const returned = returnToWindow(entry.value, leaseCell, amount);
    if (returned) entry.value = returned;
    return null;
  }

  function windowHit(key: string, hitOptions: SlidingWindowOptions): SlidingWindowResult {
    const opts = validateWindowOptions(hitOptions);
    const { cell, elapsedMs, previous, current } = windowNow(key, opts.windowMs);
    const result = evaluateSlidingWindow(opts, { previous, current, elapsedMs });
    if (result.allowed) {
      entries.set(key, {
        value: { cell, previous, current: current + opts.cost },
        expiresAt: now() + 2 * opts.windowMs,
      });
    }
    return result;
  }
}
