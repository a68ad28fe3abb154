import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { get } from '../../api/client';
import type { UsageBreakdown, UsageGenerationList } from '../../api/types';

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
  return useQuery({
    queryKey: ['usage', 'breakdown', window],
    queryFn: () => get<UsageBreakdown>('/v1/usage/breakdown', { ...window, to: exclusiveEnd(window.to) }),
    placeholderData: keepPreviousData,
  });
}

export interface LogFilters {
  key_id?: string;
  model?: string;
  from?: string;
  /** Days (UTC), inclusive. */
  to?: string;
  /** `ok` (below 400) or `error`; the API has no status filter, so the loaded page is filtered here. */
  status?: 'ok' | 'error';
}

export function useRequestLog(filters: LogFilters, cursor: { after_id?: string; before_id?: string }) {
  const { status: _status, ...query } = filters;
  return useQuery({
    queryKey: ['usage', 'requests', query, cursor],
    queryFn: () =>
      get<UsageGenerationList>('/v1/usage/requests', {
        limit: 25,
        ...query,
        from: query.from,
        to: query.to ? exclusiveEnd(query.to) : undefined,
        ...cursor,
      }),
    placeholderData: keepPreviousData,
  });
}
