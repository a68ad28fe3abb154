import { randomUUID } from 'node:crypto';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { createCacheAdapters } from './adapters';

const redisUrl = testBackends().redisUrl;
const logger = createLogger({ service: 'cache-test', level: 'silent' });

describe('createCacheAdapters', () => {
  it('without a Redis URL it returns the memory adapters', async () => {
    const adapters = createCacheAdapters({ logger });
    expect(adapters.kind).toBe('memory');
    await adapters.store.set('k', 'v');
    expect(await adapters.store.get('k')).toBe('v');
    await adapters.close();
  });

  (redisUrl ? it : it.skip)(
    'with a Redis URL it returns Redis adapters that share state between instances',
    async () => {
      const keyPrefix = `sbc-test:${randomUUID()}:`;
      const one = createCacheAdapters({ redisUrl, keyPrefix, logger });
      const two = createCacheAdapters({ redisUrl, keyPrefix, logger });
      try {
        expect(one.kind).toBe('redis');
        const heard = new Promise<string>((resolve) => void two.pubsub.subscribe('invalidate', resolve));
        await new Promise((resolve) => setTimeout(resolve, 50)); // let the subscription register
        await one.store.incrBy('hits', 1, 60_000);
        expect(await two.store.incrBy('hits', 1)).toBe(2);
        await one.pubsub.publish('invalidate', 'key-1');
        expect(await heard).toBe('key-1');
        await one.store.del('hits');
      } finally {
        await Promise.all([one.close(), two.close()]);
      }
    },
  );
});
