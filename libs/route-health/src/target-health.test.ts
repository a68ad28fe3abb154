import { LocalTargetHealth, memoryTargetHealth } from './target-health';

const T0 = 1_700_000_000_000;
const FAIL_503 = { ok: false, status: 503 } as const;
const OK = { ok: true } as const;

function failTimes(health: ReturnType<typeof memoryTargetHealth>, key: string, times: number[]): void {
  for (const at of times) health.record(key, FAIL_503, at);
}

describe('target health (memory)', () => {
  it('a 429 with retry-after cools the key for exactly that long', () => {
    const health = memoryTargetHealth();
    health.record('a', { ok: false, status: 429, retryAfterMs: 5_000 }, T0);
    expect(health.coolingUntil('a', T0)).toBe(T0 + 5_000);
    expect(health.coolingUntil('a', T0 + 4_999)).toBe(T0 + 5_000);
    expect(health.coolingUntil('a', T0 + 5_000)).toBeUndefined();
    expect(health.coolingUntil('b', T0)).toBeUndefined();
  });

  it('a retry-after longer than 60 s cools for 60 s', () => {
    const health = memoryTargetHealth();
    health.record('a', { ok: false, status: 429, retryAfterMs: 3_600_000 }, T0);
    expect(health.coolingUntil('a', T0)).toBe(T0 + 60_000);
  });

  it('a 429 without retry-after only counts toward the streak', () => {
    const health = memoryTargetHealth();
    health.record('a', { ok: false, status: 429 }, T0);
    expect(health.coolingUntil('a', T0)).toBeUndefined();
  });

  it('three counted failures within 30 s cool the key 5 s; two do not', () => {
    const health = memoryTargetHealth();
    failTimes(health, 'a', [T0, T0 + 1_000]);
    expect(health.coolingUntil('a', T0 + 1_000)).toBeUndefined();
    health.record('a', { ok: false }, T0 + 2_000); // a connect error (no status) counts too
    expect(health.coolingUntil('a', T0 + 2_000)).toBe(T0 + 7_000);
  });

  it('failures spread over more than 30 s do not trip', () => {
    const health = memoryTargetHealth();
    failTimes(health, 'a', [T0, T0 + 20_000, T0 + 40_000, T0 + 80_000]);
    expect(health.cooling(T0 + 80_000)).toEqual([]);
  });

  it('a success breaks the streak', () => {
    const health = memoryTargetHealth();
    failTimes(health, 'a', [T0, T0 + 1]);
    health.record('a', OK, T0 + 2);
    health.record('a', FAIL_503, T0 + 3);
    expect(health.coolingUntil('a', T0 + 3)).toBeUndefined();
  });

  it('hang-ups and other 4xx are never counted', () => {
    const health = memoryTargetHealth();
    for (const status of [400, 401, 403, 404, 413, 422]) {
      health.record('b', { ok: false, status }, T0);
      health.record('b', { ok: false, status }, T0);
      health.record('b', { ok: false, status }, T0);
    }
    expect(health.coolingUntil('b', T0)).toBeUndefined();
  });

  it.each([408, 409, 429, 500, 502, 503, 504, 529])('status %i counts toward the streak', (status) => {
    const health = memoryTargetHealth();
    for (let i = 0; i < 3; i++) health.record('a', { ok: false, status }, T0 + i);
    expect(health.coolingUntil('a', T0 + 2)).toBe(T0 + 2 + 5_000);
  });

  it('each further trip of a key that keeps failing doubles the cooldown, capped at 60 s', () => {
    const health = memoryTargetHealth();
    const lengths: number[] = [];
    let now = T0;
    for (let trip = 0; trip < 7; trip++) {
      failTimes(health, 'a', [now, now + 1, now + 2]);
      const until = health.coolingUntil('a', now + 2);
      expect(until).toBeDefined();
      lengths.push((until as number) - (now + 2));
      now = (until as number) + 1; // fails again as soon as it is usable
    }
    expect(lengths).toEqual([5_000, 10_000, 20_000, 40_000, 60_000, 60_000, 60_000]);
  });

  it('a success resets the doubling', () => {
    const health = memoryTargetHealth();
    failTimes(health, 'a', [T0, T0 + 1, T0 + 2]);
    failTimes(health, 'a', [T0 + 6_000, T0 + 6_001, T0 + 6_002]);
    expect(health.coolingUntil('a', T0 + 6_002)).toBe(T0 + 16_002);
    health.record('a', OK, T0 + 17_000);
    failTimes(health, 'a', [T0 + 18_000, T0 + 18_001, T0 + 18_002]);
    expect(health.coolingUntil('a', T0 + 18_002)).toBe(T0 + 23_002);
  });

  it('a key quiet for over a minute after its cooldown ends starts again at 5 s', () => {
    const health = memoryTargetHealth();
    failTimes(health, 'a', [T0, T0 + 1, T0 + 2]); // 5 s, until T0 + 5_002
    const later = T0 + 5_002 + 60_001;
    failTimes(health, 'a', [later, later + 1, later + 2]);
    expect(health.coolingUntil('a', later + 2)).toBe(later + 5_002);
  });

  it('failures of calls that were in flight when the key cooled do not trip it again', () => {
    const health = memoryTargetHealth();
    failTimes(health, 'a', [T0, T0 + 1, T0 + 2]);
    failTimes(health, 'a', [T0 + 10, T0 + 11, T0 + 12, T0 + 13]);
    expect(health.coolingUntil('a', T0 + 13)).toBe(T0 + 5_002);
  });

  it('cooling() lists the keys cooling now with their ends', () => {
    const health = memoryTargetHealth();
    health.record('a', { ok: false, status: 429, retryAfterMs: 1_000 }, T0);
    health.record('b', { ok: false, status: 429, retryAfterMs: 9_000 }, T0);
    expect(health.cooling(T0 + 500)).toEqual([
      { key: 'a', untilMs: T0 + 1_000 },
      { key: 'b', untilMs: T0 + 9_000 },
    ]);
    expect(health.cooling(T0 + 2_000)).toEqual([{ key: 'b', untilMs: T0 + 9_000 }]);
  });

  it('record never throws on a malformed outcome', () => {
    const health = memoryTargetHealth();
    expect(() => health.record('a', null as any, T0)).not.toThrow();
  });
});

describe('half-open calls', () => {
  function allCooling() {
    const health = memoryTargetHealth();
    health.record('a', { ok: false, status: 429, retryAfterMs: 9_000 }, T0);
    health.record('b', { ok: false, status: 429, retryAfterMs: 3_000 }, T0);
    return health;
  }

  it('the slot goes to the key whose cooldown ends first', () => {
    const claim = allCooling().claimHalfOpen(['a', 'b'], T0 + 100);
    expect(claim?.key).toBe('b');
  });

  it('an edge has one slot per key: a second claim is refused until release', () => {
    const health = allCooling();
    const first = health.claimHalfOpen(['a', 'b'], T0 + 100);
    expect(health.claimHalfOpen(['a', 'b'], T0 + 200)).toBeUndefined();
    first?.release();
    first?.release(); // idempotent
    health.record('b', OK, T0 + 300);
    expect(health.coolingUntil('b', T0 + 300)).toBeUndefined();
  });

  it('a half-open call that succeeds makes the key usable at once', () => {
    const health = allCooling();
    const claim = health.claimHalfOpen(['a', 'b'], T0 + 100);
    health.record('b', OK, T0 + 150);
    claim?.release();
    expect(health.coolingUntil('b', T0 + 150)).toBeUndefined();
    expect(health.coolingUntil('a', T0 + 150)).toBe(T0 + 9_000);
  });

  it('a half-open call that fails re-cools the key at the next level, with no second call that window', () => {
    const health = memoryTargetHealth();
    failTimes(health, 'a', [T0, T0 + 1, T0 + 2]); // 5 s, level 1
    const claim = health.claimHalfOpen(['a'], T0 + 1_000);
    expect(claim?.key).toBe('a');
    claim?.release();
    health.record('a', FAIL_503, T0 + 1_100); // recorded after release: still the half-open call's outcome
    expect(health.coolingUntil('a', T0 + 1_100)).toBe(T0 + 11_100);
    expect(health.claimHalfOpen(['a'], T0 + 1_200)).toBeUndefined();
    expect(health.claimHalfOpen(['a'], T0 + 10_000)).toBeUndefined();
  });

  it('one half-open call per cooldown window, even after a release', () => {
    const health = allCooling();
    health.claimHalfOpen(['b'], T0 + 100)?.release();
    expect(health.claimHalfOpen(['b'], T0 + 200)).toBeUndefined();
  });

  it('a claim nobody releases or reports lapses after the lease', () => {
    const health = memoryTargetHealth({ halfOpenLeaseMs: 1_000 });
    health.record('a', { ok: false, status: 429, retryAfterMs: 5_000 }, T0);
    expect(health.claimHalfOpen(['a'], T0)).toBeDefined();
    expect(health.claimHalfOpen(['a'], T0 + 500)).toBeUndefined();
    // the hung call's outcome never came; a new window after the lease gets its own half-open call
    health.record('a', { ok: false, status: 429, retryAfterMs: 30_000 }, T0 + 1_500);
    expect(health.coolingUntil('a', T0 + 1_500)).toBe(T0 + 31_500);
    expect(health.claimHalfOpen(['a'], T0 + 1_600)?.key).toBe('a');
  });

  it('nothing to claim from an empty list', () => {
    expect(memoryTargetHealth().claimHalfOpen([], T0)).toBeUndefined();
  });
});

describe('cooldowns from other edges', () => {
  it('are honoured, merged by the later end and the higher level, and cleared by a success elsewhere', () => {
    const shared: Array<[string, unknown]> = [];
    const health = new LocalTargetHealth({}, (key, cooldown) => shared.push([key, cooldown]));
    health.applyShared('a', { untilMs: T0 + 20_000, level: 2 });
    expect(health.coolingUntil('a', T0)).toBe(T0 + 20_000);
    health.applyShared('a', { untilMs: T0 + 10_000, level: 3 });
    expect(health.coolingUntil('a', T0)).toBe(T0 + 20_000);
    // the next local trip continues from the shared level: 40 s
    failTimes(health, 'a', [T0 + 21_000, T0 + 21_001, T0 + 21_002]);
    expect(health.coolingUntil('a', T0 + 21_002)).toBe(T0 + 61_002);
    expect(shared).toEqual([['a', { untilMs: T0 + 61_002, level: 4 }]]);
    health.applyShared('a', undefined);
    expect(health.coolingUntil('a', T0 + 21_003)).toBeUndefined();
  });

  it('a success only announces itself when it lifts a cooldown', () => {
    const shared: unknown[] = [];
    const health = new LocalTargetHealth({}, (key, cooldown) => shared.push([key, cooldown]));
    health.record('a', OK, T0);
    health.record('a', { ok: false, status: 429, retryAfterMs: 1_000 }, T0);
    health.record('a', OK, T0 + 10);
    health.record('a', OK, T0 + 20);
    expect(shared).toEqual([
      ['a', { untilMs: T0 + 1_000, level: 0 }],
      ['a', undefined],
    ]);
  });
});
