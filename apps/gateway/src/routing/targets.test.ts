import { weightedOrder } from './targets';

/** A seeded generator, so the shares below are the same on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('weighted target order', () => {
  const weightOf = (item: { weight: number }) => item.weight;

  it('puts weights 3:1 first within 5 % of 75/25 over 1,000 calls', () => {
    const items = [
      { name: 'a', weight: 3 },
      { name: 'b', weight: 1 },
    ];
    for (const random of [seeded(7), Math.random]) {
      let firstA = 0;
      for (let i = 0; i < 1_000; i++) if (weightedOrder(items, weightOf, random)[0]!.name === 'a') firstA++;
      expect(Math.abs(firstA / 1_000 - 0.75)).toBeLessThanOrEqual(0.05);
    }
  });

  it('keeps every item once, with standby (weight 0) items last in their listed order', () => {
    const items = [
      { name: 's1', weight: 0 },
      { name: 'a', weight: 2 },
      { name: 's2', weight: 0 },
      { name: 'b', weight: 5 },
    ];
    for (let i = 0; i < 50; i++) {
      const names = weightedOrder(items, weightOf).map((item) => item.name);
      expect(names.slice(2)).toEqual(['s1', 's2']);
      expect(names.slice(0, 2).sort()).toEqual(['a', 'b']);
    }
  });

  it('draws an all-standby list as equal weights', () => {
    const items = [
      { name: 'a', weight: 0 },
      { name: 'b', weight: 0 },
    ];
    const random = seeded(3);
    let firstA = 0;
    for (let i = 0; i < 1_000; i++) if (weightedOrder(items, weightOf, random)[0]!.name === 'a') firstA++;
    expect(firstA).toBeGreaterThan(400);
    expect(firstA).toBeLessThan(600);
  });

  it('returns a list of one as it is', () => {
    const items = [{ name: 'a', weight: 0 }];
    expect(weightedOrder(items, weightOf)).toBe(items);
  });
});
