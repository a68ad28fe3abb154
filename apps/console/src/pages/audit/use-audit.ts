import { keepPreviousData } from '@tanstack/react-query';
import { useApiQuery } from '../../api/queries';
import { listAuditEvents } from '../../api/routes';
import type { AuditResourceType } from '../../api/types';

export interface AuditFilters {
  resource_type?: AuditResourceType;
  action?: string;
  /** A user id. */
  actor?: string;
  /** Days (UTC), inclusive. */
  from?: string;
  to?: string;
}

/** The start of a UTC day as the API's instants, `days` after it. */
function dayStart(day: string, days = 0): string {
  const at = new Date(`${day}T00:00:00Z`);
  at.setUTCDate(at.getUTCDate() + days);
  return at.toISOString();
}

/** A page of the audit records the person may read, newest first. */
export function useAuditLog(filters: AuditFilters, cursor: { after_id?: string; before_id?: string }) {
  const { from, to, ...rest } = filters;
  return useApiQuery(
    listAuditEvents,
    {
      query: {
        limit: 25,
        ...rest,
        from: from ? dayStart(from) : undefined,
        // The picked day is inclusive; the API's `to` is exclusive.
        to: to ? dayStart(to, 1) : undefined,
        ...cursor,
      },
    },
    { placeholderData: keepPreviousData },
  );
}
