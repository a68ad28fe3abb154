import { useApiQuery } from '../../api/queries';
import { getUsageReport, listUsageRequests } from '../../api/routes';
import { browserTimeZone, localDay } from '../../ui/format';

/** The usage report (totals, failed calls, top models) from the start of a local day to now. */
export function useReport(from: string) {
  const tz = browserTimeZone();
  return useApiQuery(getUsageReport, { query: { from, tz } });
}

export function firstOfMonth(now: Date): string {
  return localDay(new Date(now.getFullYear(), now.getMonth(), 1));
}

/** Today's latest calls (a page of 100, since local midnight), for latency percentiles. */
export function useTodaysCalls() {
  const now = new Date();
  const midnight = new Date(now.getFullYear(), now.getMonth(), now.getDate()).toISOString();
  return useApiQuery(listUsageRequests, { query: { from: midnight, limit: 100 } });
}
