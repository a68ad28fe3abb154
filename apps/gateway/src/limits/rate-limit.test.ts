import { createMemoryStore } from '@sbc/cache';
import type { Principal } from '../auth/authenticator';
import { createRateLimiter } from './rate-limit';

const keyed = (id: string) => ({ kind: 'key', userId: 'usr_1', key: { id }, scopes: [] }) as unknown as Principal;

describe('per-key request bucket', () => {
  it('answers with x-ratelimit headers and refuses past the limit with Retry-After', async () => {
    const hit = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 2 });
    const first = await hit(keyed('key_a'));
    expect(first).toMatchObject({ 'x-ratelimit-limit': '2', 'x-ratelimit-remaining': '1' });
    expect(Number(first['x-ratelimit-reset'])).toBeGreaterThan(0);
    await hit(keyed('key_a'));
    const refusal = await hit(keyed('key_a')).catch((e: unknown) => e);
    expect(refusal).toMatchObject({ code: 'rate_limited', status: 429 });
    expect(Number((refusal as { headers: Record<string, string> }).headers['retry-after'])).toBeGreaterThan(0);
  });

  it('counts each key on its own', async () => {
    const hit = createRateLimiter({ store: createMemoryStore(), limitPerMinute: 1 });
    await hit(keyed('key_a'));
    await expect(hit(keyed('key_b'))).resolves.toMatchObject({ 'x-ratelimit-remaining': '0' });
  });
});
