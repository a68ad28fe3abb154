import { isLoopback } from '../routes/faults';
import { FaultInjector } from './fault-injector';
import { parseFaultPlan, type FaultPlanInput } from './fault-plan';

function injectorWith(input: FaultPlanInput, clock: { now: number }): FaultInjector {
  const check = parseFaultPlan(input);
  if (!check.ok) throw new Error(check.message);
  const injector = new FaultInjector(() => clock.now);
  injector.set(check.plan);
  return injector;
}

describe('fault injector', () => {
  it('without a plan every call is served and nothing is logged', () => {
    const injector = new FaultInjector();
    expect(injector.next()).toEqual({ kind: 'none' });
    expect(injector.report()).toMatchObject({ plan: null, counts: { calls: 1, served: 1 }, calls_while_active: [] });
  });

  it('is down for down_for_ms from when the plan is set, then applies the failure rate', () => {
    const clock = { now: 1_000 };
    const injector = injectorWith(
      { down_for_ms: 500, failure_rate: 1, failures: { '429': 1 }, retry_after_s: 2 },
      clock,
    );
    expect(injector.next()).toEqual({ kind: 'reset' });
    clock.now = 1_499;
    expect(injector.next()).toEqual({ kind: 'reset' });
    clock.now = 1_500;
    expect(injector.next()).toEqual({ kind: 'status', status: 429, retryAfterS: 2 });
    expect(injector.report().calls_while_active).toEqual([
      { at_ms: 1_000, outcome: 'down' },
      { at_ms: 1_499, outcome: 'down' },
      { at_ms: 1_500, outcome: '429' },
    ]);
  });

  it('a seeded plan fails the same calls every run, in proportion to the weights', () => {
    const outcomes = () => {
      const injector = injectorWith({ failure_rate: 0.5, failures: { '503': 3, hang: 1 }, seed: 99 }, { now: 0 });
      for (let i = 0; i < 4_000; i++) injector.next();
      return injector.report().counts.by_outcome;
    };
    const first = outcomes();
    expect(outcomes()).toEqual(first);
    expect(first.ok! / 4_000).toBeCloseTo(0.5, 1);
    expect(first['503']! / first.hang!).toBeGreaterThan(2.4);
    expect(first['503']! / first.hang!).toBeLessThan(3.6);
  });

  it('names reset kinds by how many chunks go out first', () => {
    const clock = { now: 0 };
    const mid = injectorWith({ failure_rate: 1, failures: { reset_mid_stream: 1 }, reset_after_chunks: 3 }, clock);
    expect(mid.next()).toEqual({ kind: 'cut', afterChunks: 3 });
    const before = injectorWith({ failure_rate: 1, failures: { reset_before_first_chunk: 1 } }, clock);
    expect(before.next()).toEqual({ kind: 'cut', afterChunks: 0 });
  });

  it('a plan with a failure rate and no mix fails with 503', () => {
    expect(injectorWith({ failure_rate: 1 }, { now: 0 }).next()).toEqual({ kind: 'status', status: 503 });
  });
});

describe('isLoopback', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.5', false],
    ['::ffff:10.0.0.5', false],
    ['fe80::1', false],
    [undefined, false],
  ])('%s → %s', (address, loopback) => {
    expect(isLoopback(address)).toBe(loopback);
  });
});
