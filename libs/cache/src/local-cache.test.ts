import { LocalCache } from './local-cache';

/** A loader whose calls are counted and whose results are released by the test. */
function controlledLoader<V>() {
  const calls: { resolve: (value: V | null) => void; reject: (err: Error) => void }[] = [];
  const loader = () => new Promise<V | null>((resolve, reject) => calls.push({ resolve, reject }));
  return { loader, calls };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('LocalCache', () => {
  let now: number;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000_000;
  });

  it('a value is fresh until freshMs, stale until staleMs, then gone', () => {
    const cache = new LocalCache<string>({ now: clock });
    cache.set('k', 'v', { freshMs: 100, staleMs: 300 });
    expect(cache.get('k')).toEqual({ value: 'v', state: 'fresh' });
    now += 100;
    expect(cache.get('k')).toEqual({ value: 'v', state: 'stale' });
    now += 199;
    expect(cache.get('k')?.state).toBe('stale');
    now += 1;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('a stale window shorter than the fresh one is raised to it', () => {
    const cache = new LocalCache<string>({ now: clock });
    cache.set('k', 'v', { freshMs: 100, staleMs: 10 });
    now += 99;
    expect(cache.get('k')?.state).toBe('fresh');
    now += 1;
    expect(cache.get('k')).toBeUndefined();
  });

  it('past maxEntries the least recently used entry is evicted, and a read counts as use', () => {
    const cache = new LocalCache<number>({ now: clock, maxEntries: 3 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('c', 3);
    cache.get('a'); // a is now the most recently used
    cache.set('d', 4);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.value).toBe(1);
    expect(cache.get('c')?.value).toBe(3);
    expect(cache.get('d')?.value).toBe(4);
    expect(cache.size).toBe(3);
  });

  it('keeps an entry read at least once every half a cache of new entries, however many pass through', () => {
    const cache = new LocalCache<number>({ now: clock, maxEntries: 8 });
    cache.set('hot', 0);
    for (let i = 1; i <= 1_000; i++) {
      cache.set(`cold-${i}`, i);
      if (i % 4 === 0) expect(cache.get('hot')?.value).toBe(0);
    }
    expect(cache.size).toBe(8);
    // The coldest entries went first: the newest ones are all still there.
    for (let i = 994; i <= 1_000; i++) expect(cache.get(`cold-${i}`)?.value).toBe(i);
  });

  it('delete and clear remove entries', () => {
    const cache = new LocalCache<number>({ now: clock });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
    cache.clear();
    expect(cache.get('b')).toBeUndefined();
  });

  describe('swr', () => {
    it('a fresh value is returned without calling the loader', async () => {
      const cache = new LocalCache<string>({ now: clock });
      cache.set('k', 'cached');
      const loader = jest.fn(async () => 'loaded');
      expect(await cache.swr('k', loader)).toBe('cached');
      expect(loader).not.toHaveBeenCalled();
    });

    it('concurrent misses share one load and all get its value, which is then cached', async () => {
      const cache = new LocalCache<string>({ now: clock });
      const { loader, calls } = controlledLoader<string>();
      const waiters = [cache.swr('k', loader), cache.swr('k', loader), cache.swr('k', loader)];
      await flush();
      expect(calls).toHaveLength(1);
      calls[0]!.resolve('v');
      expect(await Promise.all(waiters)).toEqual(['v', 'v', 'v']);
      expect(cache.get('k')).toEqual({ value: 'v', state: 'fresh' });
    });

    it('a stale value is returned at once while exactly one background refresh replaces it', async () => {
      const cache = new LocalCache<string>({ now: clock, freshMs: 100, staleMs: 1000 });
      cache.set('k', 'old');
      now += 500;
      const { loader, calls } = controlledLoader<string>();
      expect(await cache.swr('k', loader)).toBe('old');
      expect(await cache.swr('k', loader)).toBe('old');
      await flush();
      expect(calls).toHaveLength(1);
      calls[0]!.resolve('new');
      await flush();
      expect(cache.get('k')).toEqual({ value: 'new', state: 'fresh' });
    });

    it('a failed refresh keeps the stale value and is reported', async () => {
      const errors: unknown[] = [];
      const cache = new LocalCache<string>({
        now: clock,
        freshMs: 100,
        staleMs: 1000,
        onRefreshError: (err) => errors.push(err),
      });
      cache.set('k', 'old');
      now += 500;
      expect(await cache.swr('k', async () => Promise.reject(new Error('db down')))).toBe('old');
      await flush();
      expect(errors).toHaveLength(1);
      expect(cache.get('k')).toEqual({ value: 'old', state: 'stale' });
      // The failed load no longer blocks the next refresh.
      expect(await cache.swr('k', async () => 'new')).toBe('old');
      await flush();
      expect(cache.get('k')?.value).toBe('new');
    });

    it('a loader that fails on a miss rejects every waiter and caches nothing', async () => {
      const cache = new LocalCache<string>({ now: clock });
      const { loader, calls } = controlledLoader<string>();
      const a = cache.swr('k', loader);
      const b = cache.swr('k', loader);
      await flush();
      calls[0]!.reject(new Error('db down'));
      await expect(a).rejects.toThrow('db down');
      await expect(b).rejects.toThrow('db down');
      expect(cache.get('k')).toBeUndefined();
      const thrower = () => {
        throw new Error('sync throw');
      };
      await expect(cache.swr('k', thrower)).rejects.toThrow('sync throw');
    });

    it('a null result is cached with the shorter negative windows', async () => {
      const cache = new LocalCache<string>({
        now: clock,
        freshMs: 60_000,
        negativeFreshMs: 1_000,
        negativeStaleMs: 2_000,
      });
      const loader = jest.fn(async () => null);
      expect(await cache.swr('unknown', loader)).toBeNull();
      expect(await cache.swr('unknown', loader)).toBeNull();
      expect(loader).toHaveBeenCalledTimes(1);
      expect(cache.get('unknown')).toEqual({ value: null, state: 'fresh' });
      now += 1_000;
      expect(cache.get('unknown')?.state).toBe('stale');
      now += 1_000;
      expect(cache.get('unknown')).toBeUndefined();
    });

    it('a delete or set during a load is not overwritten by the load', async () => {
      const cache = new LocalCache<string>({ now: clock });
      const first = controlledLoader<string>();
      const pending = cache.swr('k', first.loader);
      await flush();
      cache.delete('k'); // e.g. a revocation arriving over pub/sub
      first.calls[0]!.resolve('revoked value');
      expect(await pending).toBe('revoked value'); // the waiter still gets its answer
      expect(cache.get('k')).toBeUndefined();

      const second = controlledLoader<string>();
      const again = cache.swr('k', second.loader);
      await flush();
      cache.set('k', 'newer');
      second.calls[0]!.resolve('older');
      await again;
      expect(cache.get('k')?.value).toBe('newer');
    });

    it('per-call windows override the defaults', async () => {
      const cache = new LocalCache<string>({ now: clock });
      await cache.swr('k', async () => 'v', { freshMs: 10, staleMs: 20 });
      now += 10;
      expect(cache.get('k')?.state).toBe('stale');
    });
  });
});
