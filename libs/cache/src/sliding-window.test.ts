import { createMemoryStore } from './memory-store';
import { adjustWindow, evaluateSlidingWindow, locateCell, validateWindowOptions } from './sliding-window';

const minute = { limit: 1200, windowMs: 60_000, cost: 1 };

describe('sliding-window arithmetic', () => {
  it('a cell is located by epoch alignment', () => {
    expect(locateCell(125_000, 60_000)).toEqual({ cell: 2, elapsedMs: 5_000 });
  });

  it('the previous cell weighs by the share of it still inside the window', () => {
    // 25% into the cell: 75% of the previous 800 (600) + 500 current = 1100 of 1200, 100 left before this hit.
    const result = evaluateSlidingWindow(minute, { previous: 800, current: 500, elapsedMs: 15_000 });
    expect(result).toEqual({ allowed: true, remaining: 99, resetMs: 45_000, limit: 1200, retryAfterMs: 0 });
  });

  it('a hit that does not fit is refused with a retry hint from the decay of the previous cell', () => {
    // 1200 previous at 50% weighs 600, + 600 current = 1200: full. One more unit fits once the weight drops
    // to 599, i.e. at 1 - 599/1200 of the cell = 30,050 ms, 50 ms from now.
    const result = evaluateSlidingWindow(minute, { previous: 1200, current: 600, elapsedMs: 30_000 });
    expect(result).toMatchObject({ allowed: false, remaining: 0, resetMs: 30_000, retryAfterMs: 50 });
  });

  it('when the current cell alone is full the retry hint reaches into the next cell', () => {
    // 1200 current leaves no room in this cell; in the next, 1200 previous must decay to 1199: 50 ms into it.
    const result = evaluateSlidingWindow(minute, { previous: 0, current: 1200, elapsedMs: 59_000 });
    expect(result).toMatchObject({ allowed: false, retryAfterMs: 1_000 + 50 });
  });

  it('a cost larger than the limit never fits', () => {
    const result = evaluateSlidingWindow({ ...minute, cost: 1201 }, { previous: 0, current: 0, elapsedMs: 0 });
    expect(result.allowed).toBe(false);
    expect(result.retryAfterMs).toBe(120_000);
  });

  it('options are validated and cost defaults to 1', () => {
    expect(validateWindowOptions({ limit: 3, windowMs: 10 })).toEqual({ limit: 3, windowMs: 10, cost: 1 });
    expect(() => validateWindowOptions({ limit: 1.5, windowMs: 10 })).toThrow(RangeError);
  });
});

describe('sliding window over a stepped clock (memory store)', () => {
  it('admits 1,200 per minute, then refills as the previous minute slides out', async () => {
    let now = 60_000 * 1000; // start exactly on a cell edge
    const store = createMemoryStore({ now: () => now });
    const hit = () => store.slidingWindowHit('k', { limit: 1200, windowMs: 60_000 });
    for (let i = 0; i < 1200; i++) expect((await hit()).allowed).toBe(true);
    expect(await hit()).toMatchObject({ allowed: false, remaining: 0, resetMs: 60_000 });

    now += 60_000; // next cell: all 1200 weigh fully, nothing fits yet
    expect((await hit()).allowed).toBe(false);
    now += 15_000; // 25% in: they weigh 900, so 300 fit
    let admitted = 0;
    while ((await hit()).allowed) admitted++;
    expect(admitted).toBe(300);

    now += 120_000; // two cells on: everything has slid out
    expect(await store.slidingWindowHit('k', { limit: 1200, windowMs: 60_000, cost: 0 })).toMatchObject({
      remaining: 1200,
    });
    await store.close();
  });
});

describe('adjustWindow', () => {
  it('takes from the latest cell, then the previous one while it weighs, never below zero', () => {
    expect(adjustWindow({ cell: 5, previous: 10, current: 30 }, 5, -20)).toEqual({
      cell: 5,
      previous: 10,
      current: 10,
    });
    expect(adjustWindow({ cell: 5, previous: 10, current: 30 }, 5, -35)).toEqual({ cell: 5, previous: 5, current: 0 });
    expect(adjustWindow({ cell: 5, previous: 10, current: 30 }, 5, -99)).toEqual({ cell: 5, previous: 0, current: 0 });
    // Stored a cell ago: its count is the one that now weighs as the previous cell.
    expect(adjustWindow({ cell: 4, previous: 10, current: 30 }, 5, -40)).toEqual({ cell: 4, previous: 10, current: 0 });
    expect(adjustWindow({ cell: 5, previous: 0, current: 3 }, 5, 4)).toEqual({ cell: 5, previous: 0, current: 7 });
    expect(adjustWindow({ cell: 3, previous: 0, current: 3 }, 5, -3)).toBeUndefined();
  });
});
