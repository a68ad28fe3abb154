import type { Spend } from '../../api/types';
import { spendSeries } from './spend-series';

describe('spend as chart series', () => {
  it('adds measured, estimated and plan USD per provider and day, zero on days a provider has none', () => {
    const spend = {
      from: '2026-01-01',
      to: '2026-01-02',
      currency: 'USD',
      total_usd: 6,
      tied_usd: 4,
      estimated_usd: 2,
      unpriced_models: [],
      providers: [
        { provider: 'openai', label: 'OpenAI' },
        { provider: 'sbc', label: '' },
      ],
      series: [
        { day: '2026-01-01', providers: { openai: { measured: 1, estimated: 2, plan: 0 } } },
        {
          day: '2026-01-02',
          providers: { openai: { measured: 0, estimated: 0, plan: 0 }, sbc: { measured: 0, estimated: 0, plan: 3 } },
        },
      ],
    } as unknown as Spend;
    expect(spendSeries(spend)).toEqual({
      times: [Date.parse('2026-01-01T00:00:00Z') / 1000, Date.parse('2026-01-02T00:00:00Z') / 1000],
      series: [
        { id: 'openai', label: 'OpenAI', values: [3, 0] },
        { id: 'sbc', label: 'sbc', values: [0, 3] },
      ],
    });
  });
});
