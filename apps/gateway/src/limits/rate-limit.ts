import { ApiError } from '@sbc/errors';
import type { SharedStore, SlidingWindowResult, StoreOp, StoreOpResult } from '@sbc/cache';
import type { Principal } from '../auth/authenticator';
import type { CorrectableHit, LeasedHit, WindowLeases } from './window-leases';

const WINDOW_MS = 60_000;

/** Whose bucket a request counts against: the key's, or the user's for sessions and device tokens. */
function rateLimitSubject(principal: Principal): string {
  return principal.key ? principal.key.id : `user:${principal.userId}`;
}

/** A dialect's own names for a tokens-per-minute limit (CallerDialect.tokenLimitHeaders). */
export type TokenLimitHeaders = (limit: number, remaining: number, resetMs: number) => Record<string, string>;

/** Tokens a call was counted for in its key's tokens-per-minute window, until its real count is known. */
export interface TokenHold {
  /**
   * Takes the whole count back (the call was refused after it was counted): on this edge's lease when it was
   * counted from one and the edge still holds it, else the store operations to run.
   */
  release(): StoreOp[];
  /** The correction to the call's real tokens as a store operation, for a settle's own batch; once. */
  settleOp(actualTokens: number): StoreOp | undefined;
  /** Corrects the count to the call's real tokens in a round trip of its own. Call once. */
  settle(actualTokens: number): Promise<void>;
}

/** What a bucket answered: its headers, or its 429 with them (and what to take back of the hit). */
interface BucketHit {
  headers: Record<string, string>;
  refusal?: ApiError;
  /** On a refusal: the part of the hit that was counted all the same, to take back. */
  undo: StoreOp[];
  tokens?: TokenHold;
}

/**
 * A model call's limits as store operations, so admission sends them in its one round trip: the request
 * window, and the key's tokens window when the key has a `tpm` limit, charged the call's tokens (counted only
 * then, since counting costs a tokenizer pass).
 */
export interface Bucket {
  ops(tokens: () => number): StoreOp[];
  answer(results: readonly StoreOpResult[]): BucketHit;
}

const seconds = (ms: number) => String(Math.max(1, Math.ceil(ms / 1000)));

/**
 * The per-key request bucket (1,200 a minute by default, or a key's own `rpm` under that ceiling), one for every
 * keyed route, model calls and the REST surface alike, and a key's tokens-per-minute window (`tpm`), kept in the
 * shared store so every edge replica counts against the same windows. A route that costs the service more than
 * one request takes `cost` from it (RouteSpec.rateCost). A hit answers the `x-ratelimit-*` headers of the limit
 * that binds, or throws 429 `rate_limited` with `Retry-After` when it is spent.
 *
 * With `leases` (the edge on Redis), a busy request bucket is hit from this edge's lease on it with no round trip
 * (docs/leased-limits.md); a refusal is only ever the store's. A key with a `tpm` limit takes its request hit and
 * its tokens from leases on both windows, or from neither (both per call, in one round trip); a call's tokens
 * counted from a lease are corrected on it at settle.
 */
export function createRateLimiter(deps: {
  store: SharedStore;
  limitPerMinute: number;
  onRefused?: () => void;
  leases?: WindowLeases;
}) {
  const requestLimit = (principal: Principal) => {
    const own = principal.key?.rpm;
    return own === undefined ? deps.limitPerMinute : Math.min(Number(own), deps.limitPerMinute);
  };
  const requestKey = (principal: Principal) => `rl:${rateLimitSubject(principal)}`;
  const requestOp = (principal: Principal, cost: number): StoreOp => ({
    op: 'window',
    key: requestKey(principal),
    options: { limit: requestLimit(principal), windowMs: WINDOW_MS, cost },
  });
  const leasedHit = (principal: Principal, cost: number): LeasedHit | undefined =>
    deps.leases?.hit(requestKey(principal), requestLimit(principal), WINDOW_MS, cost);

  function refusal(message: string, headers: Record<string, string>, result: SlidingWindowResult): ApiError {
    deps.onRefused?.();
    return new ApiError('rate_limited', message, {
      headers: { ...headers, 'retry-after': seconds(result.retryAfterMs) },
    });
  }

  function requestHeaders(result: SlidingWindowResult | LeasedHit): Record<string, string> {
    return {
      'x-ratelimit-limit': String(result.limit),
      'x-ratelimit-remaining': String(Math.max(0, Math.floor(result.remaining))),
      'x-ratelimit-reset': seconds(result.resetMs),
    };
  }

  function requestRefusal(principal: Principal, result: SlidingWindowResult, headers: Record<string, string>) {
    const whose = principal.key ? 'key' : 'account';
    return refusal(`Rate limit of ${result.limit} requests per minute reached for this ${whose}.`, headers, result);
  }

  async function hit(principal: Principal, cost = 1): Promise<Record<string, string>> {
    const leased = leasedHit(principal, cost);
    if (leased) return requestHeaders(leased);
    const [result] = (await deps.store.batch([requestOp(principal, cost)])) as SlidingWindowResult[];
    const headers = requestHeaders(result!);
    if (!result!.allowed) throw requestRefusal(principal, result!, headers);
    return headers;
  }

  function bucket(principal: Principal, tokenHeaders?: TokenLimitHeaders): Bucket {
    const tpm = principal.key?.tpm === undefined ? undefined : Number(principal.key.tpm);
    const tokensKey = `tpm:${rateLimitSubject(principal)}`;
    const adjust = (amount: number): StoreOp => ({ op: 'windowAdjust', key: tokensKey, windowMs: WINDOW_MS, amount });
    const requestUndo: StoreOp = {
      op: 'windowAdjust',
      key: `rl:${rateLimitSubject(principal)}`,
      windowMs: WINDOW_MS,
      amount: -1,
    };
    let counted = 0;
    let leased: LeasedHit | undefined;
    /** A key with `tpm` served from leases: its request hit and its tokens. */
    let leasedWithTokens: CorrectableHit[] | undefined;
    /** A call's counted tokens, corrected by `correction` (a store operation, or none when done on a lease). */
    function tokenHold(correction: (actualTokens: number) => StoreOp | undefined): TokenHold {
      let settled = false;
      return {
        release: () => {
          const op = correction(0);
          return op ? [op] : [];
        },
        settleOp(actualTokens) {
          if (settled) return undefined;
          settled = true;
          return correction(actualTokens);
        },
        async settle(actualTokens) {
          const op = this.settleOp(actualTokens);
          if (op) await deps.store.batch([op]);
        },
      };
    }
    return {
      ops(tokens) {
        if (tpm === undefined) {
          leased = leasedHit(principal, 1);
          if (leased) return [];
        }
        const ops = [requestOp(principal, 1)];
        if (tpm === undefined) return ops;
        counted = Math.max(0, Math.ceil(tokens()));
        leasedWithTokens = deps.leases?.hitAll([
          { key: requestKey(principal), limit: requestLimit(principal), windowMs: WINDOW_MS, cost: 1 },
          { key: tokensKey, limit: tpm, windowMs: WINDOW_MS, cost: counted, sizing: 'calls' },
        ]);
        if (leasedWithTokens) return [];
        ops.push({ op: 'window', key: tokensKey, options: { limit: tpm, windowMs: WINDOW_MS, cost: counted } });
        return ops;
      },
      answer(results) {
        if (leased) return { headers: requestHeaders(leased), undo: [] };
        if (leasedWithTokens) {
          const [requests, tokens] = leasedWithTokens as [CorrectableHit, CorrectableHit];
          const headers = requestHeaders(requests);
          if (tokenHeaders)
            Object.assign(
              headers,
              tokenHeaders(tokens.limit, Math.max(0, Math.floor(tokens.remaining)), tokens.resetMs),
            );
          if (counted === 0) return { headers, undo: [] };
          return { headers, undo: [], tokens: tokenHold((actual) => tokens.correct(actual)) };
        }
        const [requests, tokens] = results as SlidingWindowResult[];
        const headers = requestHeaders(requests!);
        if (tokens && tokenHeaders)
          Object.assign(headers, tokenHeaders(tokens.limit, Math.max(0, Math.floor(tokens.remaining)), tokens.resetMs));
        if (!requests!.allowed)
          return {
            headers,
            refusal: requestRefusal(principal, requests!, headers),
            undo: tokens?.allowed && counted > 0 ? [adjust(-counted)] : [],
          };
        if (tokens && !tokens.allowed) {
          const message =
            counted > tokens.limit
              ? `This call counts ${counted} tokens (its prompt and its output limit), more than this key's limit ` +
                `of ${tokens.limit} tokens per minute; a lower output limit (max_tokens) lowers it.`
              : `Rate limit of ${tokens.limit} tokens per minute reached for this key.`;
          // The refused call takes nothing from the request window either.
          return { headers, refusal: refusal(message, headers, tokens), undo: [requestUndo] };
        }
        if (!tokens || counted === 0) return { headers, undo: [] };
        const charged = counted;
        return {
          headers,
          undo: [],
          tokens: tokenHold((actualTokens) => {
            const delta = Math.max(0, Math.ceil(actualTokens)) - charged;
            return delta === 0 ? undefined : adjust(delta);
          }),
        };
      },
    };
  }

  /**
   * Takes `bucket` in a round trip of its own (a call with no budget to reserve in the same one), or throws
   * its 429 after taking back what was counted of it.
   */
  async function take(
    bucket: Bucket,
    tokens: () => number,
  ): Promise<{ headers: Record<string, string>; tokens?: TokenHold }> {
    const ops = bucket.ops(tokens);
    const answered = bucket.answer(ops.length === 0 ? [] : await deps.store.batch(ops));
    if (answered.refusal) {
      if (answered.undo.length > 0) await deps.store.batch(answered.undo);
      throw answered.refusal;
    }
    return answered;
  }

  return Object.assign(hit, { bucket, take });
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
