import { ApiError } from '@sbc/errors';

/**
 * The instants a query may name. PostgreSQL's timestamptz has no year 0, JavaScript writes years past 9999 as
 * `+010000-…`, and the ledger rounds windows out to whole local days: a day's margin at each end keeps every
 * rounded day inside years 1 to 9999.
 */
const EARLIEST_INSTANT = new Date('0001-01-02T00:00:00Z');
const LATEST_INSTANT = new Date('9999-12-30T00:00:00Z');

/** A query instant inside the years the services can store and render, else 400 naming `param`. */
export function boundedInstant<P extends string>(at: Date, param: P): Date {
  // Written so that an invalid date (NaN) fails too.
  if (!(at.getTime() >= EARLIEST_INSTANT.getTime() && at.getTime() <= LATEST_INSTANT.getTime()))
    throw new ApiError('invalid_request', `${param} must lie between 0001-01-02 and 9999-12-30 (UTC).`, { param });
  return at;
}
