/**
 * The two-fixed-cell sliding-window approximation (as used by Cloudflare and Upstash): time is cut into cells
 * of `windowMs` aligned to the epoch; a hit is judged against the current cell's count plus the previous
 * cell's count weighted by how much of the previous cell still overlaps a window ending now. Two integers per
 * key instead of a log of timestamps, and no burst of 2x the limit at a cell edge.
 *
 * This module is the single source of the arithmetic. The memory store calls it directly; the Redis Lua script
 * (redis-scripts.ts) repeats the one `weighted` formula with the same operation order so that both decide the
 * same way, and its raw counts are turned into a result here.
 */

export interface SlidingWindowOptions {
  /** Requests (or cost units) allowed per window; a positive integer. */
  limit: number;
  /** Window length in ms; a positive integer. */
  windowMs: number;
  /** Units this hit consumes; a non-negative integer, default 1. A cost of 0 only reads the window. */
  cost?: number;
}

export interface SlidingWindowResult {
  allowed: boolean;
  /** Units still available after this hit (after it was counted, when allowed). */
  remaining: number;
  /** Ms until the current cell ends, when counts next shift (for a `...-reset` header). */
  resetMs: number;
  limit: number;
  /** When refused: estimated ms until a hit of the same cost would be allowed (for `Retry-After`); else 0. */
  retryAfterMs: number;
}

/** Counts as they stand before this hit, at `elapsedMs` into the current cell. */
export interface WindowCounts {
  previous: number;
  current: number;
  elapsedMs: number;
}

/** Which cell `nowMs` falls in and how far into it, for the store that keeps the state. */
export function locateCell(nowMs: number, windowMs: number): { cell: number; elapsedMs: number } {
  const cell = Math.floor(nowMs / windowMs);
  return { cell, elapsedMs: nowMs - cell * windowMs };
}

/** Rejects options that Redis would otherwise store as fractions or that make the math meaningless. */
export function validateWindowOptions(options: SlidingWindowOptions): Required<SlidingWindowOptions> {
  const cost = options.cost ?? 1;
  if (!Number.isSafeInteger(options.limit) || options.limit < 1)
    throw new RangeError(`limit must be a positive integer, got ${options.limit}`);
  if (!Number.isSafeInteger(options.windowMs) || options.windowMs < 1)
    throw new RangeError(`windowMs must be a positive integer, got ${options.windowMs}`);
  if (!Number.isSafeInteger(cost) || cost < 0) throw new RangeError(`cost must be a non-negative integer, got ${cost}`);
  return { limit: options.limit, windowMs: options.windowMs, cost };
}

/** The weighted count of the window ending now. Keep in step with SLIDING_WINDOW_LUA. */
function weightedCount(counts: WindowCounts, windowMs: number): number {
  return (counts.previous * (windowMs - counts.elapsedMs)) / windowMs + counts.current;
}

export function evaluateSlidingWindow(
  options: Required<SlidingWindowOptions>,
  counts: WindowCounts,
): SlidingWindowResult {
  const { limit, windowMs, cost } = options;
  const weighted = weightedCount(counts, windowMs);
  const allowed = weighted + cost <= limit;
  return {
    allowed,
    remaining: Math.max(0, Math.floor(limit - weighted - (allowed ? cost : 0))),
    resetMs: windowMs - counts.elapsedMs,
    limit,
    retryAfterMs: allowed ? 0 : estimateRetryAfter(options, counts),
  };
}

/**
 * Solves the weighted formula for the first moment a hit of `cost` fits, assuming no other hits meanwhile:
 * either later in this cell as the previous cell's weight decays, or in the next cell, where today's count
 * becomes the decaying previous one.
 */
function estimateRetryAfter({ limit, windowMs, cost }: Required<SlidingWindowOptions>, counts: WindowCounts): number {
  const { previous, current, elapsedMs } = counts;
  const toCellEnd = windowMs - elapsedMs;
  if (cost > limit) return toCellEnd + windowMs; // never fits; the best hint is "after both cells have emptied"
  if (current + cost <= limit && previous > 0) {
    const fitsAt = Math.ceil(windowMs - ((limit - current - cost) * windowMs) / previous);
    return Math.max(1, fitsAt - elapsedMs);
  }
  if (current === 0) return toCellEnd;
  const fitsAtInNext = Math.ceil(windowMs - ((limit - cost) * windowMs) / current);
  return toCellEnd + Math.max(0, fitsAtInNext);
}

/** A window's stored counts: the latest cell hit, its count, and the count of the cell before it. */
export interface WindowState {
  cell: number;
  previous: number;
  current: number;
}

/**
 * Corrects a window by `amount` once a hit's real cost is known (a token count that came in under what was
 * charged): the latest cell's count first, then the previous one's while it still weighs, never below zero.
 * A state older than the cell before `cell` no longer counts and is left alone (undefined). Keep in step with
 * WINDOW_ADJUST_LUA.
 */
export function adjustWindow(state: WindowState, cell: number, amount: number): WindowState | undefined {
  if (state.cell < cell - 1) return undefined;
  let current = state.current + amount;
  let previous = state.previous;
  if (current < 0) {
    if (state.cell === cell) previous = Math.max(0, previous + current);
    current = 0;
  }
  return { cell: state.cell, previous, current };
}

/**
 * A request for a lease on a window (docs/leased-limits.md): up to `want` units, never more than a `share`-th of
 * the room left (so other edges still find some), and none at all when that is under `min` (the window is near
 * its limit: calls go one round trip each).
 */
export interface WindowLeaseOptions {
  limit: number;
  windowMs: number;
  want: number;
  min: number;
  /** The divisor of the room one lease may take: 4 takes at most a quarter. */
  share: number;
}

export interface WindowLeaseResult {
  /** Units granted (0: none), counted in the window's current cell. */
  granted: number;
  /** The cell the units were counted in, for giving back what is not spent. */
  cell: number;
  /** Room left in the window after the grant, for everyone else. */
  remaining: number;
  /** Ms until the cell ends: the lease is spent by then or given back. */
  resetMs: number;
  limit: number;
}

export function validateWindowLease(options: WindowLeaseOptions): WindowLeaseOptions {
  validateWindowOptions({ limit: options.limit, windowMs: options.windowMs });
  for (const name of ['want', 'min', 'share'] as const) {
    const value = options[name];
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`${name} must be a positive integer, got ${value}`);
  }
  return options;
}

/** Units a lease gets of `room`. Keep in step with WINDOW_LEASE_LUA (same operations, same order). */
export function leaseGrant(room: number, want: number, min: number, share: number): number {
  const grant = Math.min(want, Math.floor(room / share));
  return grant < min ? 0 : grant;
}

/** A window lease decided on the counts before it; the store that keeps the state adds `granted` to `current`. */
export function evaluateWindowLease(
  options: WindowLeaseOptions,
  counts: WindowCounts,
  cell: number,
): WindowLeaseResult {
  const weighted = weightedCount(counts, options.windowMs);
  const room = Math.floor(options.limit - weighted);
  const granted = leaseGrant(room, options.want, options.min, options.share);
  return {
    granted,
    cell,
    remaining: Math.max(0, room - granted),
    resetMs: options.windowMs - counts.elapsedMs,
    limit: options.limit,
  };
}

/**
 * Gives `amount` of a lease taken in `leaseCell` back to the window: off that cell's count while it is the latest,
 * off the previous count once the window has moved one cell on, and nothing when it has left the window. Keep in
 * step with WINDOW_RETURN_LUA.
 */
export function returnToWindow(state: WindowState, leaseCell: number, amount: number): WindowState | undefined {
  if (state.cell === leaseCell) return { ...state, current: Math.max(0, state.current - amount) };
  if (state.cell === leaseCell + 1) return { ...state, previous: Math.max(0, state.previous - amount) };
  return undefined;
}
