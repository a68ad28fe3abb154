import { ApiError } from '@sbc/errors';
import type { SharedStore, SlidingWindowResult, StoreOp, StoreOpResult } from '@sbc/cache';
import type { Principal } from '../auth/authenticator';
import type { CorrectableHit, LeasedHit, WindowLeases } from './window-leases';

const WINDOW_MS = 60_000;

/**
 * The windows a request counts in: the key's, or the user's for sessions and device tokens. A key the runs service
 * minted for a batch's lines counts in its parent's windows (the key that created the batch, or the user's own for
 * a batch created with a session), at a share of their limits (docs/batches.md "Pacing").
 */
function rateLimitSubject(principal: Principal): string {
  const key = principal.key;
  if (!key) return `user:${principal.userId}`;
  if (key.batchId) return key.parentKeyId ?? `user:${principal.userId}`;
  return key.id;
}

/** Whether the request is a batch line's, paced within a share of its parent's windows. */
const isBatchLine = (principal: Principal) => Boolean(principal.key?.batchId);

/**
 * The header a batch key's rate-limit refusal carries: the line yielded to its parent's interactive calls, and the
 * lane puts it back without counting an attempt. Set only here, on the edge's own answer to a batch key.
 */
export const BATCH_YIELD_HEADER = 'x-sbc-batch-yield';

/** What a batch's lines may take of their parent's limits unless BATCHES_RATE_SHARE says otherwise. */
const DEFAULT_BATCH_RATE_SHARE = 0.5;

/** The lease of a batch's share of a window is its own: it is taken with the share's limit (window-leases.ts). */
const SHARE_LEASE = 'batch-share';

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
  /** The part of its parent's limits a batch key's calls may take (BATCHES_RATE_SHARE), above 0 and at most 1. */
  batchShare?: number;
  onRefused?: () => void;
  leases?: WindowLeases;
}) {
  const batchShare = deps.batchShare ?? DEFAULT_BATCH_RATE_SHARE;
  /** A limit as a request of `principal` meets it: a batch line's is its share, never under one. */
  const limitFor = (principal: Principal, limit: number) =>
    isBatchLine(principal) ? Math.max(1, Math.floor(limit * batchShare)) : limit;
  // A batch key carries its parent's rpm and tpm (the account service copies them when it mints it).
  const keyRequestLimit = (principal: Principal) => {
    const own = principal.key?.rpm;
    return own === undefined ? deps.limitPerMinute : Math.min(Number(own), deps.limitPerMinute);
  };
  const requestLimit = (principal: Principal) => limitFor(principal, keyRequestLimit(principal));
  const requestKey = (principal: Principal) => `rl:${rateLimitSubject(principal)}`;
  const requestOp = (principal: Principal, cost: number): StoreOp => ({
    op: 'window',
    key: requestKey(principal),
    options: { limit: requestLimit(principal), windowMs: WINDOW_MS, cost },
  });
  /** The part of its windows a principal's leases are on: a batch line's share has leases of its own. */
  const leasePart = (principal: Principal) => (isBatchLine(principal) ? SHARE_LEASE : undefined);
  const leasedHit = (principal: Principal, cost: number): LeasedHit | undefined =>
    deps.leases?.hit(requestKey(principal), requestLimit(principal), WINDOW_MS, cost, leasePart(principal));

  /** `yielded`: a batch line refused for its share, which its lane tries again without counting an attempt. */
  function refusal(
    message: string,
    headers: Record<string, string>,
    result: SlidingWindowResult,
    yielded = false,
  ): ApiError {
    deps.onRefused?.();
    return new ApiError('rate_limited', message, {
      headers: {
        ...headers,
        'retry-after': seconds(result.retryAfterMs),
        ...(yielded ? { [BATCH_YIELD_HEADER]: 'share' } : {}),
      },
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
    if (isBatchLine(principal))
      return refusal(
        `This batch's lines take at most ${result.limit} of the creating key's ${keyRequestLimit(principal)} ` +
          `requests per minute, counting its other calls; the rest is kept for them.`,
        headers,
        result,
        true,
      );
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
    const tpm = principal.key?.tpm === undefined ? undefined : limitFor(principal, Number(principal.key.tpm));
    const tokensKey = `tpm:${rateLimitSubject(principal)}`;
    const adjust = (amount: number): StoreOp => ({ op: 'windowAdjust', key: tokensKey, windowMs: WINDOW_MS, amount });
    const requestUndo: StoreOp = { op: 'windowAdjust', key: requestKey(principal), windowMs: WINDOW_MS, amount: -1 };
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
        // A batch line's request hit and tokens both go to its parent's windows, at the share, on the share's leases.
        const part = leasePart(principal);
        leasedWithTokens = deps.leases?.hitAll([
          { key: requestKey(principal), limit: requestLimit(principal), windowMs: WINDOW_MS, cost: 1, part },
          { key: tokensKey, limit: tpm, windowMs: WINDOW_MS, cost: counted, sizing: 'calls', part },
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
          const whose = isBatchLine(principal) ? "this batch's share of the creating key's" : "this key's";
          const message =
            counted > tokens.limit
              ? `This call counts ${counted} tokens (its prompt and its output limit), more than ${whose} limit ` +
                `of ${tokens.limit} tokens per minute; a lower output limit (max_tokens) lowers it.`
              : isBatchLine(principal)
                ? `This batch's lines take at most ${tokens.limit} of the creating key's tokens per minute, ` +
                  `counting its other calls; the rest is kept for them.`
                : `Rate limit of ${tokens.limit} tokens per minute reached for this key.`;
          // A line larger than its whole share never fits by waiting: that refusal is not a yield.
          const yielded = isBatchLine(principal) && counted <= tokens.limit;
          // The refused call takes nothing from the request window either.
          return { headers, refusal: refusal(message, headers, tokens, yielded), undo: [requestUndo] };
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
