import { randomUUID } from 'node:crypto';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import type { DeploymentLimiter } from './deployment-limiter';
import { redisDeploymentLimiter } from './redis-deployment-limiter';

const redisUrl = testBackends().redisUrl;
const quiet = createLogger({ service: 'route-health-test', level: 'silent' });
const FLUSH_MS = 50;
// Both edges flush, each on its own tick; a loaded machine gets slack on top.
const SETTLE_MS = 4 * FLUSH_MS + 300;
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

(redisUrl ? describe : describe.skip)('deployment limiter shared through Redis', () => {
  const open: DeploymentLimiter[] = [];
  let keyPrefix = '';
  const edge = (url = redisUrl!) => {
    const limiter = redisDeploymentLimiter(url, { keyPrefix, flushIntervalMs: FLUSH_MS, logger: quiet });
    open.push(limiter);
    return limiter;
  };
  const takeMany = (limiter: DeploymentLimiter, n: number, rpm: number) =>
    Array.from({ length: n }, () => limiter.tryTake('provider:openai/east', { rpm })).filter(Boolean).length;

  beforeEach(() => {
    keyPrefix = `test:route-limits:${randomUUID()}:`;
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((limiter) => limiter.close()));
  });

  // An edge learns a deployment's shared counts at its first flush after it first uses it, so each edge here
  // takes one request before the other's count is checked.
  it('two edges share one rpm: what one took, the other cannot', async () => {
    const [one, two] = [edge(), edge()];
    expect(takeMany(one, 1, 10) + takeMany(two, 1, 10)).toBe(2);
    await settle();
    expect(takeMany(one, 5, 10)).toBe(5);
    await settle();
    expect(takeMany(two, 10, 10)).toBe(3);
    await settle();
    expect(takeMany(one, 10, 10)).toBe(0);
  });

  it('tokens reported on one edge close the tpm on the other', async () => {
    const [one, two] = [edge(), edge()];
    expect(one.tryTake('d', { tpm: 1_000 }) && two.tryTake('d', { tpm: 1_000 })).toBe(true);
    one.addTokens('d', 1_000);
    await settle();
    expect(two.tryTake('d', { tpm: 1_000 })).toBe(false);
    expect(two.tryTake('other', { tpm: 1_000 })).toBe(true);
  });

  it('with Redis out of reach an edge still holds the limit on its own counts', async () => {
    const alone = edge('redis://127.0.0.1:1');
    expect(takeMany(alone, 5, 3)).toBe(3);
    await settle();
    expect(takeMany(alone, 5, 3)).toBe(0);
  });
});
