import { resample } from './clip';

describe('resample: which painted frame each tick of a constant-rate clip shows', () => {
  it("holds a still page's only frame for the whole clip", () => {
    expect(resample([10.2], 10, 11, 4)).toEqual([0, 0, 0, 0]);
  });

  it('shows the last frame painted at or before each tick, and the first one before any was painted', () => {
    // Ticks at 10.0, 10.5, 11.0, 11.5; frames painted at 10.2, 10.6 and 10.9.
    expect(resample([10.2, 10.6, 10.9], 10, 12, 2)).toEqual([0, 0, 2, 2]);
  });

  it('drops frames painted between ticks of a busy page, keeping the clip at its length', () => {
    const times = Array.from({ length: 60 }, (_, i) => 100 + i / 60);
    const picks = resample(times, 100, 101, 20);
    expect(picks).toHaveLength(20);
    expect(picks[0]).toBe(0);
    expect(picks.at(-1)).toBe(57);
    expect([...picks].sort((a, b) => a - b)).toEqual(picks);
  });

  it('has nothing to show without frames or time', () => {
    expect(resample([], 0, 4, 20)).toEqual([]);
    expect(resample([1], 4, 4, 20)).toEqual([]);
  });
});
