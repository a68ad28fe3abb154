import type { UsageBreakdown, UsageMetrics } from '../../api/types';
import { plottedTotal } from '../../ui/stack';
import { breakdownSeries } from './breakdown';

const metrics = (requests: number, usd = 0): UsageMetrics => ({
  requests,
  tokens_in: requests * 10,
  tokens_out: requests,
  cache_read: 0,
  cache_write: 0,
  tokens: 0,
  usd,
  list_usd: usd,
});

const breakdown: UsageBreakdown = {
  from: '2026-01-01',
  to: '2026-01-03',
  tz: 'UTC',
  bucket: 'day',
  group: 'model',
  totals: metrics(6, 0.6),
  groups: [
    { ...metrics(4, 0.4), id: 'm1', label: 'Model one' },
    { ...metrics(2, 0.2), id: 'm2', label: '' },
  ],
  buckets: [
    { ...metrics(3), key: '2026-01-01', start: '2026-01-01T00:00:00Z', by: { m1: metrics(3, 0.3) } },
    { ...metrics(0), key: '2026-01-02', start: '2026-01-02T00:00:00Z', by: {} },
    {
      ...metrics(3),
      key: '2026-01-03',
      start: '2026-01-03T00:00:00Z',
      by: { m1: metrics(1, 0.1), m2: metrics(2, 0.2) },
    },
  ],
};

describe('a usage breakdown as chart series', () => {
  it('gives each group a value per bucket, zero where it made no calls', () => {
    const { times, series } = breakdownSeries(breakdown, 'requests');
    expect(times).toEqual([
      Date.parse('2026-01-01T00:00:00Z') / 1000,
      Date.parse('2026-01-02T00:00:00Z') / 1000,
      Date.parse('2026-01-03T00:00:00Z') / 1000,
    ]);
    expect(series).toEqual([
      { id: 'm1', label: 'Model one', values: [3, 0, 1] },
      { id: 'm2', label: 'm2', values: [0, 0, 2] },
    ]);
  });

  it('plots totals equal to the API totals for every metric', () => {
    expect(plottedTotal(breakdownSeries(breakdown, 'requests').series)).toBe(breakdown.totals.requests);
    expect(plottedTotal(breakdownSeries(breakdown, 'tokens').series)).toBe(
      breakdown.totals.tokens_in + breakdown.totals.tokens_out,
    );
    expect(plottedTotal(breakdownSeries(breakdown, 'usd').series)).toBeCloseTo(breakdown.totals.usd, 10);
  });
});
