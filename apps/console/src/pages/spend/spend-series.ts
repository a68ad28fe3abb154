import type { Spend } from '../../api/types';
import type { Series } from '../../ui/stack';

/** The spend series as one chart series per provider: each day's measured + estimated + plan USD. */
export function spendSeries(spend: Spend): { times: number[]; series: Series[] } {
  const times = spend.series.map((day) => Date.parse(`${day.day}T00:00:00Z`) / 1000);
  const series = spend.providers.map((provider) => ({
    id: provider.provider,
    label: provider.label || provider.provider,
    values: spend.series.map((day) => {
      const figures = day.providers[provider.provider];
      return figures ? figures.measured + figures.estimated + figures.plan : 0;
    }),
  }));
  return { times, series };
}
