import { Recency, type Placed, type SharedStore } from '@sbc/cache';

/** Where cached replies live: Redis in services mode (shared by every edge), a bounded LRU when embedded. */
export interface ReplyStore {
  /** The entry's value, or undefined when there is none or it expired. */
  get(key: string): Promise<string | undefined>;
  /** Keeps `value` for `ttlMs`; a value over the per-entry cap is not kept. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
}

export interface ReplyStoreLimits {
  /** Bytes the memory store holds in all (keys and values); the least recently used go first. */
  maxBytes: number;
  /** Bytes one value may take; a larger reply is not cached. */
  maxEntryBytes: number;
}

interface MemoryEntry extends Placed {
  value: string;
  bytes: number;
  expiresAt: number;
}

/**
 * A least-recently-used store bounded by bytes, for one process. A Map keeps insertion order, so eviction takes
 * from the front; a read moves its entry to the end as Recency (@sbc/cache) decides. Strings are counted at two
 * bytes a character, the most V8 spends on one.
 */
export class MemoryReplyStore implements ReplyStore {
  private readonly entries = new Map<string, MemoryEntry>();
  private bytes = 0;
  private readonly recency = new Recency();

  constructor(
    private readonly limits: ReplyStoreLimits,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  get(key: string): Promise<string | undefined> {
    const entry = this.entries.get(key);
    if (!entry) return Promise.resolve(undefined);
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      this.bytes -= entry.bytes;
      return Promise.resolve(undefined);
    }
    this.recency.read(this.entries, key, entry);
    return Promise.resolve(entry.value);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    if (Buffer.byteLength(value) > this.limits.maxEntryBytes) return Promise.resolve();
    const bytes = 2 * (key.length + value.length);
    const earlier = this.entries.get(key);
    if (earlier) {
      this.entries.delete(key);
      this.bytes -= earlier.bytes;
    }
    if (bytes > this.limits.maxBytes) return Promise.resolve();
    this.recency.place(this.entries, key, { value, bytes, expiresAt: this.now() + ttlMs, placedAt: 0 });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.limits.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
    return Promise.resolve();
  }
}

/** Namespace of the entries in the shared store. */
const SHARED_PREFIX = 'sbc:response-cache:';

/**
 * The entries in the shared store (Redis): each a string with its TTL (PX), capped per entry here. Redis's
 * own memory bound is the operator's: `maxmemory` with an eviction policy such as `volatile-lru` (docs).
 */
export function createSharedReplyStore(
  store: SharedStore,
  limits: Pick<ReplyStoreLimits, 'maxEntryBytes'>,
): ReplyStore {
  return {
    async get(key) {
      return (await store.get(SHARED_PREFIX + key)) ?? undefined;
    },
    async set(key, value, ttlMs) {
      if (Buffer.byteLength(value) > limits.maxEntryBytes) return;
      await store.set(SHARED_PREFIX + key, value, ttlMs);
    },
  };
}
