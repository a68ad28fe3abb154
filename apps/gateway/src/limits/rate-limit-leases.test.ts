import { createMemoryStore, type SharedStore } from '@sbc/cache';
import { createLogger } from '@sbc/logging';
import type { Principal } from '../auth/authenticator';
import { createRateLimiter } from './rate-limit';
import { createWindowLeases } from './window-leases';

const logger = createLogger({ service: 'test', level: 'silent' });
const keyed = (id: string) => ({ kind: 'key', userId: 'usr_1', key: { id }, scopes: [] }) as unknown as Principal;
const settled = () => new Promise((resolve) => setImmediate(resolve));

/** A store that counts the round trips a caller makes to it. */
function countingStore(): { store: SharedStore; trips: () => number } {
  const inner = createMemoryStore();
  let trips = 0;
  return {
    store: {
      ...inner,
      batch: (ops) => {
        trips++;
        return inner.batch(ops);
      },
    },
    trips: () => trips,
  };
}

describe('per-key request bucket on leases', () => {
  it('a busy key is hit with no round trip, its headers count down, and past its limit the store refuses', async () => {
    const { store, trips } = countingStore();
    const leases = createWindowLeases({ store, logger });
    const hit = createRateLimiter({ store, limitPerMinute: 1_200, leases });
    for (let i = 0; i < 8; i++) await hit(keyed('key_busy'));
    await settled();
    const before = trips();
    const first = await hit(keyed('key_busy'));
    const second = await hit(keyed('key_busy'));
    expect(trips()).toBe(before);
    expect(first).toMatchObject({ 'x-ratelimit-limit': '1200', 'x-ratelimit-remaining': '1191' });
    expect(second).toMatchObject({ 'x-ratelimit-remaining': '1190' });
    await leases.close();

    const small = createWindowLeases({ store, logger });
    const limited = createRateLimiter({ store, limitPerMinute: 40, leases: small });
    let refused = 0;
    for (let i = 0; i < 60; i++) {
      await limited(keyed('key_small')).catch((error: unknown) => {
        expect(error).toMatchObject({ code: 'rate_limited', status: 429 });
        refused++;
      });
      await settled();
    }
    // A lease takes nothing it cannot spend past the limit: exactly the limit is admitted.
    expect(refused).toBe(20);
    await small.close();
  });
});
