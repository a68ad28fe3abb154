import { randomUUID } from 'node:crypto';
import { createRedisStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { createSharedCaptureStore } from './capture-store';

const redisUrl = testBackends().redisUrl;

(redisUrl ? describe : describe.skip)('captures in Redis', () => {
  let store: SharedStore;

  beforeAll(() => {
    store = createRedisStore(redisUrl!, {
      keyPrefix: `test:captures:${randomUUID()}:`,
      logger: createLogger({ service: 'capture-test', level: 'silent' }),
    });
  });
  afterAll(() => store.close());

  it('any edge reads a capture back for its own account only, until its TTL runs out', async () => {
    const written = createSharedCaptureStore(store, 300);
    const otherEdge = createSharedCaptureStore(store, 300);
    await written.put('usr_a', 'req_1', '{"a":1}');
    expect(await otherEdge.get('usr_a', 'req_1')).toBe('{"a":1}');
    expect(await otherEdge.get('usr_b', 'req_1')).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await otherEdge.get('usr_a', 'req_1')).toBeUndefined();
  });
});
