import { keepPreviousData } from '@tanstack/react-query';
import { useApiQuery } from '../../api/queries';
import { getUsageBreakdown, listUsageRequests } from '../../api/routes';
import type { CallKind } from './call-kind';

export interface UsageWindow {
  from: string;
  to: string;
  tz: string;
}

/** `to` is a day the person picked, inclusive; the API's `to` is exclusive, so ask for the next day's start. */
export function exclusiveEnd(day: string): string {
  const next = new Date(`${day}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return next.toISOString().slice(0, 10);
}

export function useBreakdown(
  window: UsageWindow & { bucket: 'day' | 'hour'; group: 'key' | 'model' | 'provider' | 'upstream' },
) {
  return useApiQuery(
    getUsageBreakdown,
    { query: { ...window, to: exclusiveEnd(window.to) } },
    { placeholderData: keepPreviousData },
  );
}

export interface LogFilters {
  key_id?: string;
  model?: string;
  from?: string;
  /** Days (UTC), inclusive. */
  to?: string;
  /** `ok` (below 400) or `error`; the API has no status filter, so the loaded page is filtered here. */
  status?: 'ok' | 'error';
  /** Model calls, batch lines or tool calls; told apart by what each row says, so filtered here too. */
  kind?: CallKind;
}

export function useRequestLog(filters: LogFilters, cursor: { after_id?: string; before_id?: string }) {
  const { status: _status, kind: _kind, ...query } = filters;
  return useApiQuery(
    listUsageRequests,
    { query: { limit: 25, ...query, to: query.to ? exclusiveEnd(query.to) : undefined, ...cursor } },
    { placeholderData: keepPreviousData },
  );
}
