import { createMemoryStore } from '@sbc/cache';
import { createSharedReplyStore, MemoryReplyStore } from './reply-store';

describe('MemoryReplyStore', () => {
  it('returns what it holds until its TTL passes', async () => {
    let now = 1_000;
    const store = new MemoryReplyStore({ maxBytes: 1_000, maxEntryBytes: 100 }, () => now);
    await store.set('k', 'value', 500);
    expect(await store.get('k')).toBe('value');
    now += 499;
    expect(await store.get('k')).toBe('value');
    now += 1;
    expect(await store.get('k')).toBeUndefined();
    expect(store.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('drops the least recently used entries to stay within its bytes', async () => {
    // Each entry: key "kN" (2 chars) and a 48-char value, 100 bytes at two a character.
    const store = new MemoryReplyStore({ maxBytes: 300, maxEntryBytes: 100 });
    const value = 'x'.repeat(48);
    await store.set('k1', value, 60_000);
    await store.set('k2', value, 60_000);
    await store.set('k3', value, 60_000);
    await store.get('k1');
    await store.set('k4', value, 60_000);
    expect(await store.get('k2')).toBeUndefined();
    expect(await store.get('k1')).toBe(value);
    expect(await store.get('k3')).toBe(value);
    expect(await store.get('k4')).toBe(value);
    expect(store.size.bytes).toBeLessThanOrEqual(300);
  });

  it('does not keep a value over the per-entry cap', async () => {
    const store = new MemoryReplyStore({ maxBytes: 10_000, maxEntryBytes: 10 });
    await store.set('k', 'é'.repeat(6), 60_000);
    expect(await store.get('k')).toBeUndefined();
  });

  it('replaces an entry written again, counting its bytes once', async () => {
    const store = new MemoryReplyStore({ maxBytes: 10_000, maxEntryBytes: 100 });
    await store.set('k', 'one', 60_000);
    await store.set('k', 'two', 60_000);
    expect(await store.get('k')).toBe('two');
    expect(store.size).toEqual({ entries: 1, bytes: 8 });
  });
});

describe('createSharedReplyStore', () => {
  it('keeps entries in the shared store with their TTL, under its own prefix, capped per entry', async () => {
    const shared = createMemoryStore();
    const store = createSharedReplyStore(shared, { maxEntryBytes: 10 });
    await store.set('k', 'value', 60_000);
    expect(await store.get('k')).toBe('value');
    expect(await shared.get('k')).toBeNull();
    await store.set('big', 'x'.repeat(11), 60_000);
    expect(await store.get('big')).toBeUndefined();
    expect(await store.get('missing')).toBeUndefined();
    await shared.close();
  });
});
