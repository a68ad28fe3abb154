import { createMemoryCaptureStore } from './capture-store';

describe('the memory capture store', () => {
  it('answers only the account that made a capture, and only until it expires', async () => {
    let now = 1_000;
    const store = createMemoryCaptureStore({ ttlMs: 600_000, maxBytes: 1_000, now: () => now });
    await store.put('usr_a', 'req_1', '{"a":1}');
    expect(await store.get('usr_a', 'req_1')).toBe('{"a":1}');
    expect(await store.get('usr_b', 'req_1')).toBeUndefined();
    now += 600_000;
    expect(await store.get('usr_a', 'req_1')).toBeUndefined();
  });

  it('drops the least recently stored captures past its byte bound', async () => {
    const store = createMemoryCaptureStore({ ttlMs: 60_000, maxBytes: 25 });
    await store.put('usr_a', 'req_1', 'x'.repeat(10));
    await store.put('usr_a', 'req_2', 'y'.repeat(10));
    await store.put('usr_a', 'req_3', 'z'.repeat(10));
    expect(await store.get('usr_a', 'req_1')).toBeUndefined();
    expect(await store.get('usr_a', 'req_2')).toBe('y'.repeat(10));
    expect(await store.get('usr_a', 'req_3')).toBe('z'.repeat(10));
    // One capture larger than the whole bound is not kept (and evicts nothing).
    await store.put('usr_a', 'req_4', 'w'.repeat(30));
    expect(await store.get('usr_a', 'req_4')).toBeUndefined();
    expect(await store.get('usr_a', 'req_3')).toBe('z'.repeat(10));
  });
});
