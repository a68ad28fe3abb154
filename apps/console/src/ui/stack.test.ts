import { palette, plottedTotal, stackSeries } from './stack';

describe('stacking chart series', () => {
  const series = [
    { id: 'a', label: 'a', values: [1, 2, 0] },
    { id: 'b', label: 'b', values: [3, 0, 5] },
  ];

  it('puts each band on the sum of the bands below it, top band first', () => {
    expect(stackSeries(series).map((one) => [one.id, one.values])).toEqual([
      ['b', [4, 2, 5]],
      ['a', [1, 2, 0]],
    ]);
  });

  it('totals what is plotted, not what is stacked', () => {
    expect(plottedTotal(series)).toBe(11);
    expect(plottedTotal([])).toBe(0);
  });

  it('gives every series its own colour', () => {
    expect(new Set(palette(20)).size).toBe(20);
  });
});
