import { ApiError } from '@sbc/errors';
import type { SharedStore, SlidingWindowResult, StoreOp } from '@sbc/cache';
import type { Bucket } from './budget';
import type { Principal } from '../auth/authenticator';

const WINDOW_MS = 60_000;

/** Whose bucket a request counts against: the key's, or the user's for sessions and device tokens. */
export function rateLimitSubject(principal: Principal): string {
  return principal.key ? principal.key.id : `user:${principal.userId}`;
}

/**
 * The per-key request bucket (1,200 a minute by default), one for every keyed route, model calls and the
 * REST surface alike, kept in the shared store so every edge replica counts against the same window. A
 * route that costs the service more than one request takes `cost` from it (RouteSpec.rateCost). A hit
 * answers the `x-ratelimit-*` headers every answer carries, or throws 429 `rate_limited` with `Retry-After`
 * when the bucket is spent. `bucket` gives the same hit as a store operation, so the model path can send it
 * in one round trip with its budget reservation.
 */
export function createRateLimiter(deps: { store: SharedStore; limitPerMinute: number; onRefused?: () => void }) {
  const op = (subject: string, cost = 1): StoreOp => ({
    op: 'window',
    key: `rl:${subject}`,
    options: { limit: deps.limitPerMinute, windowMs: WINDOW_MS, cost },
  });
  function answer(subject: string, result: SlidingWindowResult): Record<string, string> {
    const headers: Record<string, string> = {
      'x-ratelimit-limit': String(result.limit),
      'x-ratelimit-remaining': String(Math.max(0, Math.floor(result.remaining))),
      'x-ratelimit-reset': String(Math.max(1, Math.ceil(result.resetMs / 1000))),
    };
    if (!result.allowed) {
      deps.onRefused?.();
      throw new ApiError(
        'rate_limited',
        `Rate limit of ${result.limit} requests per minute reached for ` +
          `this ${subject.startsWith('user:') ? 'account' : 'key'}.`,
        {
          headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) },
        },
      );
    }
    return headers;
  }
  return Object.assign(
    async function hit(subject: string, cost = 1): Promise<Record<string, string>> {
      const [result] = await deps.store.batch([op(subject, cost)]);
      return answer(subject, result as SlidingWindowResult);
    },
    {
      bucket: (subject: string): Bucket => ({ op: op(subject), answer: (result) => answer(subject, result) }),
    },
  );
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
