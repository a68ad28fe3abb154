import type { UsageBreakdown, UsageMetrics } from '../../api/types';
import type { Series } from '../../ui/stack';

export const METRICS = {
  requests: { label: 'Requests', unit: 'requests', of: (m: UsageMetrics) => m.requests },
  tokens: { label: 'Tokens (in + out)', unit: 'tokens', of: (m: UsageMetrics) => m.tokens_in + m.tokens_out },
  usd: { label: 'Cost (USD billed)', unit: 'USD', of: (m: UsageMetrics) => m.usd },
} as const;
export type Metric = keyof typeof METRICS;

/**
 * A breakdown as chart series: one per group (in the API's order), a value per bucket, 0 where the group
 * made no calls in that bucket. Times are bucket starts in seconds.
 */
export function breakdownSeries(breakdown: UsageBreakdown, metric: Metric): { times: number[]; series: Series[] } {
  const of = METRICS[metric].of;
  const times = breakdown.buckets.map((bucket) => Date.parse(bucket.start) / 1000);
  const series = breakdown.groups.map((group) => ({
    id: group.id,
    label: group.label || group.id,
    values: breakdown.buckets.map((bucket) => {
      const metrics = bucket.by[group.id];
      return metrics ? of(metrics) : 0;
    }),
  }));
  return { times, series };
}
