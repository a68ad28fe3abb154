/**
 * Two one-minute cells per counter (the two-bucket sliding window): the count of the minute ending now is the
 * current cell plus the previous cell weighted by how much of it still overlaps that minute. Two integers per
 * counter, no burst of twice the limit where two cells meet.
 */

export const MINUTE_MS = 60_000;

/** A deployment's optional limits: requests and tokens per minute. */
export interface DeploymentLimits {
  rpm?: number;
  tpm?: number;
}

/** Counts of one minute cell (`cell` = minutes since the epoch). */
export interface MinuteCell {
  cell: number;
  requests: number;
  tokens: number;
}

export function minuteCellOf(now: number): number {
  return Math.floor(now / MINUTE_MS);
}

/** Requests and tokens in the minute ending `now`, from the cells known for it (others count 0). */
export function countInLastMinute(
  cells: { current?: MinuteCell; previous?: MinuteCell },
  now: number,
): { requests: number; tokens: number } {
  const cell = minuteCellOf(now);
  const current = cells.current?.cell === cell ? cells.current : undefined;
  const previous =
    cells.previous?.cell === cell - 1 ? cells.previous : cells.current?.cell === cell - 1 ? cells.current : undefined;
  const overlap = (MINUTE_MS - (now - cell * MINUTE_MS)) / MINUTE_MS;
  return {
    requests: (current?.requests ?? 0) + (previous?.requests ?? 0) * overlap,
    tokens: (current?.tokens ?? 0) + (previous?.tokens ?? 0) * overlap,
  };
}

/**
 * Whether one more request fits. Tokens are not known before the call, so `tpm` refuses once the minute's tokens
 * have reached it; a limit that is absent (or not a positive number) does not limit.
 */
export function fitsLimits(counted: { requests: number; tokens: number }, limits: DeploymentLimits): boolean {
  if (isLimit(limits.rpm) && counted.requests + 1 > limits.rpm) return false;
  if (isLimit(limits.tpm) && counted.tokens >= limits.tpm) return false;
  return true;
}

function isLimit(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}
