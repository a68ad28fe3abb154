// The retry rules of the routing policy (CONTRACTS "Routing policy"), as pure functions of an attempt's answer.

const RETRYABLE_STATUSES = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

/** The longest a lone target's retry waits, and the backoff it waits when the upstream named no `retry-after`. */
export const MAX_RETRY_WAIT_MS = 2_000;
const BASE_RETRY_WAIT_MS = 250;

/** An answer another target (or the lone target, once more) may do better on; other statuses are the answer. */
export function isRetryableStatus(status: number): boolean {
  return RETRYABLE_STATUSES.has(status);
}

/** `retry-after` in seconds or as an HTTP date, as milliseconds from `now`; undefined when absent or unreadable. */
export function retryAfterMsOf(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * How long to wait before retrying a lone target: what its `retry-after` asked, or a short backoff, each with up
 * to ±20 % jitter so callers failed together do not return together. Undefined when the upstream asked for longer
 * than a call waits: its failure is then the answer.
 */
export function loneRetryDelayMs(retryAfterMs: number | undefined, random = Math.random): number | undefined {
  if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_WAIT_MS) return undefined;
  const base = retryAfterMs ?? BASE_RETRY_WAIT_MS;
  // A retry-after is a floor: jitter only ever adds to it.
  const jitter = retryAfterMs === undefined ? (random() - 0.5) * 0.4 * base : random() * 0.2 * base;
  return Math.min(MAX_RETRY_WAIT_MS, Math.max(0, Math.round(base + jitter)));
}

/**
 * A target's label in metrics, from its health key: bounded, never an account's. A caller's own endpoints are all
 * `byo` (slugs are per account); house engines and provider deployments are named by their label (the part of
 * the key before `|`, where the engine's address begins).
 */
export function metricLabelOfKey(healthKey: string): string {
  if (healthKey.startsWith('byo:')) return 'byo';
  const end = healthKey.indexOf('|');
  return end === -1 ? healthKey : healthKey.slice(0, end);
}
