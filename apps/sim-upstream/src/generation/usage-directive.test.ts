import { extraUsageOf } from './usage-directive';

describe('sim-usage', () => {
  it('reads cache reads, cache writes and reasoning tokens, each optional, in any order', () => {
    expect(extraUsageOf('hi sim-usage:cache_read=40,cache_write=12,reasoning=7 there')).toEqual({
      cacheRead: 40,
      cacheWrite: 12,
      reasoning: 7,
    });
    expect(extraUsageOf('sim-usage:reasoning=3')).toEqual({ cacheRead: 0, cacheWrite: 0, reasoning: 3 });
  });

  it('reports nothing extra without the directive, and caps what it asks for', () => {
    expect(extraUsageOf('plain prompt')).toEqual({ cacheRead: 0, cacheWrite: 0, reasoning: 0 });
    expect(extraUsageOf('sim-usage:cache_read=99999999999').cacheRead).toBe(10_000_000);
  });
});
