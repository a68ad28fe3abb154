import { percentile } from './percentile';

describe('latency percentiles', () => {
  it('takes the nearest rank', () => {
    const values = [50, 10, 40, 20, 30, 60, 70, 80, 90, 100];
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 95)).toBe(100);
    expect(percentile([7], 95)).toBe(7);
  });

  it('has none for no calls', () => {
    expect(percentile([], 50)).toBeUndefined();
  });
});
