import type { SharedStore } from '@sbc/cache';

/**
 * Where captures wait to be read: keyed by account and request id, so one account can never reach another's,
 * and kept a short time only. Values are the capture's JSON.
 */
export interface CaptureStore {
  put(accountId: string, requestId: string, json: string): Promise<void>;
  /** The capture's JSON; undefined when there is none for this account (expired, evicted or never made). */
  get(accountId: string, requestId: string): Promise<string | undefined>;
}

const keyOf = (accountId: string, requestId: string) => `capture:${accountId}:${requestId}`;

export interface MemoryCaptureStoreOptions {
  ttlMs: number;
  /** Past this many bytes of JSON held, the least recently stored captures go first. */
  maxBytes: number;
  now?: () => number;
}

/** One process's captures (embedded mode): least recently stored evicted first, bounded in bytes. */
export function createMemoryCaptureStore(options: MemoryCaptureStoreOptions): CaptureStore {
  const now = options.now ?? Date.now;
  // A Map iterates in insertion order: re-inserting on put keeps the oldest first.
  const entries = new Map<string, { json: string; expiresAt: number }>();
  let held = 0;
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    held -= entry.json.length;
    entries.delete(key);
  };
  return {
    async put(accountId, requestId, json) {
      const key = keyOf(accountId, requestId);
      remove(key);
      if (json.length > options.maxBytes) return;
      entries.set(key, { json, expiresAt: now() + options.ttlMs });
      held += json.length;
      for (const oldest of entries.keys()) {
        if (held <= options.maxBytes) break;
        remove(oldest);
      }
    },
    async get(accountId, requestId) {
      const key = keyOf(accountId, requestId);
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt <= now()) {
        remove(key);
        return undefined;
      }
      return entry.json;
    },
  };
}

/** Captures in the shared store (Redis in services mode), so any edge can answer the read; expired by TTL. */
export function createSharedCaptureStore(store: SharedStore, ttlMs: number): CaptureStore {
  return {
    put: (accountId, requestId, json) => store.set(keyOf(accountId, requestId), json, ttlMs),
    async get(accountId, requestId) {
      return (await store.get(keyOf(accountId, requestId))) ?? undefined;
    },
  };
}
