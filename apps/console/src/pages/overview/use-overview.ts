import { useQuery } from '@tanstack/react-query';
import { get } from '../../api/client';
import type { UsageGenerationList, UsageReport } from '../../api/types';
import { browserTimeZone, localDay } from '../../ui/format';

/** The usage report (totals, failed calls, top models) from the start of a local day to now. */
export function useReport(from: string) {
  const tz = browserTimeZone();
  return useQuery({
    queryKey: ['usage', 'report', from, tz],
    queryFn: () => get<UsageReport>('/v1/usage/report', { from, tz }),
  });
}

export function firstOfMonth(now: Date): string {
  return localDay(new Date(now.getFullYear(), now.getMonth(), 1));
}

/** Today's latest calls (a page of 100, since local midnight), for latency percentiles. */
export function useTodaysCalls() {
  const now = new Date();
  const midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate()).toISOString();
  return useQuery({
    queryKey: ['usage', 'requests', 'today', midnight],
    queryFn: () => get<UsageGenerationList>('/v1/usage/requests', { from: midnight, limit: 100 }),
  });
}
