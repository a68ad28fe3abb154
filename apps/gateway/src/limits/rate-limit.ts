import { ApiError } from '@sbc/errors';
import type { SharedStore } from '@sbc/cache';
import type { Principal } from '../auth/authenticator';

const WINDOW_MS = 60_000;

/** Whose bucket a request counts against: the key's, or the user's for sessions and device tokens. */
export function rateLimitSubject(principal: Principal): string {
  return principal.key ? principal.key.id : `user:${principal.userId}`;
}

/**
 * The per-key request bucket (1,200 a minute by default), one for every keyed route, model calls and the
 * REST surface alike, kept in the shared store so every edge replica counts against the same window. A
 * route that costs the service more than one request takes `cost` from it (RouteSpec.rateCost). Returns the
 * `x-ratelimit-*` headers every answer carries, or throws 429 `rate_limited` with `Retry-After` when the
 * bucket is spent.
 */
export function createRateLimiter(deps: { store: SharedStore; limitPerMinute: number }) {
  return async function hit(subject: string, cost = 1): Promise<Record<string, string>> {
    const result = await deps.store.slidingWindowHit(`rl:${subject}`, { limit: deps.limitPerMinute, windowMs: WINDOW_MS, cost });
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(result.limit),
      'x-ratelimit-remaining': String(Math.max(0, Math.floor(result.remaining))),
      'x-ratelimit-reset': String(Math.max(1, Math.ceil(result.resetMs / 1000))),
    };
    if (!result.allowed) {
      throw new ApiError('rate_limited', `Rate limit of ${result.limit} requests per minute reached for this ${subject.startsWith('user:') ? 'account' : 'key'}.`, {
        headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) },
      });
    }
    return headers;
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
