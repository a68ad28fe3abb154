import { Recency, type Placed } from './recency';

/**
 * A process-local, bounded LRU for read-through caching on the hot path (key lookups, model resolution).
 * Each entry has two horizons: until `freshMs` it is served as is; until `staleMs` it is still served, but a
 * single background load refreshes it (stale-while-revalidate), so a hit never waits on the network. Absence
 * (`null` from the loader) is cached too, with its own, usually shorter, horizons, so a flood of unknown keys
 * does not reach the database on every request.
 */

export type CacheState = 'fresh' | 'stale';

export interface CacheHit<V> {
  value: V | null;
  state: CacheState;
}

export interface EntryWindows {
  /** How long after `set` the value is fresh. */
  freshMs?: number;
  /** How long after `set` the value may still be served stale; counted from `set`, so it is >= freshMs. */
  staleMs?: number;
}

export interface LocalCacheOptions {
  /** Most entries kept; the least recently used one is evicted past it. Default 10,000. */
  maxEntries?: number;
  /** Windows for values; defaults 60 s fresh, 5 min stale. */
  freshMs?: number;
  staleMs?: number;
  /** Windows for cached `null`s; defaults 10 s fresh, 30 s stale. */
  negativeFreshMs?: number;
  negativeStaleMs?: number;
  /** Clock in ms; injectable for tests. */
  now?: () => number;
  /** A background refresh failed; the stale value stays until its stale window ends. */
  onRefreshError?: (err: unknown, key: string) => void;
}

interface Entry<V> extends Placed {
  value: V | null;
  freshUntil: number;
  staleUntil: number;
}

export class LocalCache<V> {
  private readonly entries = new Map<string, Entry<V>>(); // insertion order doubles as recency order
  private readonly recency = new Recency();
  private readonly loads = new Map<string, Promise<V | null>>();
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(private readonly options: LocalCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 10_000;
    if (!Number.isInteger(this.maxEntries) || this.maxEntries < 1)
      throw new RangeError('maxEntries must be a positive integer');
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): CacheHit<V> | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const at = this.now();
    if (at >= entry.staleUntil) {
      this.entries.delete(key);
      return undefined;
    }
    this.recency.read(this.entries, key, entry);
    return { value: entry.value, state: at < entry.freshUntil ? 'fresh' : 'stale' };
  }

  set(key: string, value: V | null, windows: EntryWindows = {}): void {
    const negative = value === null;
    const freshMs =
      windows.freshMs ?? (negative ? (this.options.negativeFreshMs ?? 10_000) : (this.options.freshMs ?? 60_000));
    const staleMs = Math.max(
      freshMs,
      windows.staleMs ?? (negative ? (this.options.negativeStaleMs ?? 30_000) : (this.options.staleMs ?? 300_000)),
    );
    const at = this.now();
    // An explicit write is newer than any load in flight: forget the load so its result cannot overwrite this.
    this.loads.delete(key);
    this.recency.place(this.entries, key, { value, freshUntil: at + freshMs, staleUntil: at + staleMs, placedAt: 0 });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  delete(key: string): void {
    this.loads.delete(key); // an invalidation must not be undone by a load that started before it
    this.entries.delete(key);
  }

  clear(): void {
    this.loads.clear();
    this.entries.clear();
  }

  /**
   * Read-through: a fresh value is returned without calling `loader`; a stale one is returned at once while one
   * background load replaces it; a miss waits for the loader. Concurrent misses and refreshes of one key share a
   * single load. A loader that throws on a miss rejects every waiter and caches nothing.
   */
  async swr(key: string, loader: () => Promise<V | null>, windows?: EntryWindows): Promise<V | null> {
    const hit = this.get(key);
    if (hit?.state === 'fresh') return hit.value;
    if (hit) {
      if (!this.loads.has(key)) {
        this.load(key, loader, windows).catch((err: unknown) => this.options.onRefreshError?.(err, key));
      }
      return hit.value;
    }
    return this.loads.get(key) ?? this.load(key, loader, windows);
  }

  private load(key: string, loader: () => Promise<V | null>, windows: EntryWindows | undefined): Promise<V | null> {
    // Deferred one microtask so `pending` is registered before the loader can settle (or throw synchronously).
    const pending: Promise<V | null> = Promise.resolve()
      .then(loader)
      .then(
        (value) => {
          // Only the load still registered may write: set(), delete() or clear() meanwhile take precedence.
          if (this.loads.get(key) === pending) this.set(key, value, windows);
          return value;
        },
        (err: unknown) => {
          if (this.loads.get(key) === pending) this.loads.delete(key);
          throw err;
        },
      );
    this.loads.set(key, pending);
    return pending;
  }
}
