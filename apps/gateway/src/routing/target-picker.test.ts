import { memoryDeploymentLimiter, memoryTargetHealth, type TargetHealth } from '@sbc/route-health';
import { TargetPicker } from './target-picker';
import type { Target } from './targets';

const target = (name: string, limits?: Target['limits']): Target => ({
  engine: { dialect: 'openai', baseUrl: `http://${name}`, model: 'm', headers: {}, label: name },
  kind: 'provider',
  label: `provider:v/${name}`,
  upstream: 'provider:v',
  healthKey: `provider:v/${name}`,
  callerModel: 'm',
  limits,
});

describe('picking a call’s targets', () => {
  let health: TargetHealth;
  let now: number;
  const picker = (targets: Target[]) =>
    new TargetPicker(targets, { health, limiter: memoryDeploymentLimiter() }, () => now);
  const drain = (pick: TargetPicker) => {
    const picked: string[] = [];
    for (let next = pick.next(); next; next = pick.next()) {
      picked.push(next.claim ? `${next.target.engine.label} (half-open)` : next.target.engine.label);
      next.claim?.release();
    }
    return picked;
  };

  beforeEach(() => {
    health = memoryTargetHealth();
    now = Date.UTC(2026, 0, 1);
  });
  afterEach(() => health.close());

  it('hands out every target in order when none is cooling', () => {
    expect(drain(picker([target('a'), target('b'), target('c')]))).toEqual(['a', 'b', 'c']);
  });

  it('passes over a cooling target, and gives it one half-open call once no other is left', () => {
    health.record('provider:v/a', { ok: false, status: 429, retryAfterMs: 10_000 }, now);
    expect(drain(picker([target('a'), target('b')]))).toEqual(['b', 'a (half-open)']);
  });

  it('with every target cooling, calls only the one whose cooldown ends first', () => {
    health.record('provider:v/a', { ok: false, status: 429, retryAfterMs: 20_000 }, now);
    health.record('provider:v/b', { ok: false, status: 429, retryAfterMs: 10_000 }, now);
    expect(drain(picker([target('a'), target('b')]))).toEqual(['b (half-open)']);
  });

  it('does not give a second half-open call while this edge’s is under way', () => {
    health.record('provider:v/a', { ok: false, status: 429, retryAfterMs: 10_000 }, now);
    const first = picker([target('a')]).next();
    expect(first?.claim).toBeDefined();
    expect(picker([target('a')]).next()).toBeUndefined();
    first?.claim?.release();
  });

  it('skips a deployment at its requests per minute without waiting', () => {
    const limited = target('limited', { rpm: 2 });
    const shared = { health, limiter: memoryDeploymentLimiter() };
    const pickFirst = () => new TargetPicker([limited, target('other')], shared, () => now).next()?.target.engine.label;
    expect([pickFirst(), pickFirst(), pickFirst()]).toEqual(['limited', 'limited', 'other']);
  });

  it('retries the lone target only while it is not cooling', () => {
    const lone = target('lone');
    const pick = picker([lone]);
    expect(pick.retry(lone)?.target).toBe(lone);
    health.record('provider:v/lone', { ok: false, status: 429, retryAfterMs: 1_000 }, now);
    expect(pick.retry(lone)).toBeUndefined();
  });
});
