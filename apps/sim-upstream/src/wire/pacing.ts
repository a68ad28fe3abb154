/** Output timing: the first token after `latencyMs`, then one token every 1000/`tokensPerSecond` ms. */
export interface Timing {
  latencyMs: number;
  /** 0 means as fast as possible. */
  tokensPerSecond: number;
}

/** Waits `ms`, returning early when `signal` aborts. Resolves true when the wait ran its course. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Milliseconds from the start of a reply until output token `index` (0-based) is due. */
function tokenDueMs(timing: Timing, index: number): number {
  const interval = timing.tokensPerSecond > 0 ? 1000 / timing.tokensPerSecond : 0;
  return timing.latencyMs + index * interval;
}

/**
 * Paces a stream against the clock it was started on, so slow writes do not add up to drift: a token that is
 * already due goes out at once. `beforeToken` resolves false once the client has gone.
 */
export interface Pacer {
  beforeToken(index: number): Promise<boolean>;
}

export function createPacer(timing: Timing, signal: AbortSignal): Pacer {
  const startedAt = performance.now();
  return {
    beforeToken(index) {
      return sleep(startedAt + tokenDueMs(timing, index) - performance.now(), signal);
    },
  };
}

/** Waits as long as generating `tokens` pieces would take (non-streaming replies). */
export function waitForWholeReply(timing: Timing, tokens: number, signal: AbortSignal): Promise<boolean> {
  return sleep(tokenDueMs(timing, Math.max(0, tokens - 1)), signal);
}
