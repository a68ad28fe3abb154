import { randomUUID } from 'node:crypto';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { redisTargetHealth } from './redis-target-health';
import type { TargetHealth } from './target-health';

const redisUrl = testBackends().redisUrl;
const quiet = createLogger({ service: 'route-health-test', level: 'silent' });
// A loaded CI machine may take longer than the ~100 ms an idle one needs; the bound still rules out polling.
const PROPAGATION_BOUND_MS = 400;

async function within(ms: number, check: () => boolean): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`not seen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return Date.now() - started;
}

(redisUrl ? describe : describe.skip)('target health shared through Redis', () => {
  const open: TargetHealth[] = [];
  let keyPrefix = '';
  const edge = async () => {
    const health = await redisTargetHealth(redisUrl!, { keyPrefix, logger: quiet });
    open.push(health);
    return health;
  };

  beforeEach(() => {
    keyPrefix = `test:route-health:${randomUUID()}:`;
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((health) => health.close()));
  });

  it('a 429 with retry-after 5 s recorded on one edge makes the other skip the key within ~100 ms', async () => {
    const [one, two] = [await edge(), await edge()];
    const now = Date.now();
    one.record('byo:u1:openai', { ok: false, status: 429, retryAfterMs: 5_000 }, now);
    await within(PROPAGATION_BOUND_MS, () => two.coolingUntil('byo:u1:openai') !== undefined);
    expect(two.coolingUntil('byo:u1:openai')).toBe(now + 5_000);
    expect(two.cooling()).toEqual([{ key: 'byo:u1:openai', untilMs: now + 5_000 }]);
  });

  it('an edge that starts late loads the cooldowns already running', async () => {
    const one = await edge();
    const now = Date.now();
    one.record('provider:openai/east', { ok: false, status: 429, retryAfterMs: 5_000 }, now);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const late = await edge();
    expect(late.coolingUntil('provider:openai/east')).toBe(now + 5_000);
  });

  it('a success on one edge lifts the cooldown on the others and for late starters', async () => {
    const [one, two] = [await edge(), await edge()];
    one.record('k', { ok: false, status: 429, retryAfterMs: 30_000 });
    await within(PROPAGATION_BOUND_MS, () => two.coolingUntil('k') !== undefined);
    two.record('k', { ok: true });
    await within(PROPAGATION_BOUND_MS, () => one.coolingUntil('k') === undefined);
    const late = await edge();
    expect(late.coolingUntil('k')).toBeUndefined();
  });

  it("the cooldown's level is shared: the next trip anywhere doubles it", async () => {
    const [one, two] = [await edge(), await edge()];
    const now = Date.now();
    for (let i = 0; i < 3; i++) one.record('k', { ok: false, status: 503 }, now + i);
    await within(PROPAGATION_BOUND_MS, () => two.coolingUntil('k', now + 2) === now + 5_002);
    const later = now + 5_100; // the first cooldown is over and the key fails again, this time on the other edge
    for (let i = 0; i < 3; i++) two.record('k', { ok: false, status: 503 }, later + i);
    expect(two.coolingUntil('k', later + 2)).toBe(later + 2 + 10_000);
    await within(PROPAGATION_BOUND_MS, () => one.coolingUntil('k', later + 2) === later + 10_002);
  });

  it('Redis out of reach never fails a call: the edge decides alone', async () => {
    const lines: string[] = [];
    const logger = createLogger({ service: 'route-health-test', destination: { write: (l: string) => lines.push(l) } });
    const started = Date.now();
    const alone = await redisTargetHealth('redis://127.0.0.1:1', { keyPrefix, logger, loadWaitMs: 200 });
    open.push(alone);
    expect(Date.now() - started).toBeLessThan(2_000);
    const now = Date.now();
    for (let i = 0; i < 5; i++) alone.record('k', { ok: false, status: 429, retryAfterMs: 2_000 }, now);
    expect(alone.coolingUntil('k', now)).toBe(now + 2_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(lines.filter((line) => line.includes('Redis unavailable'))).toHaveLength(1);
  });
});
