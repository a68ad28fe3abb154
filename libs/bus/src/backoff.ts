export interface BackoffOptions {
  /** Delay before the first retry; default 100 ms. */
  initialMs?: number;
  /** Cap on the delay; default 10 s. */
  maxMs?: number;
}

/**
 * Exponential backoff with "equal jitter": half the delay is fixed, half random, so many replicas retrying
 * against one broker spread out without any retry becoming immediate.
 */
export function backoffDelay(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const initialMs = options.initialMs ?? 100;
  const maxMs = options.maxMs ?? 10_000;
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/** A sleep that `wake()` cuts short, so stopping a consumer need not wait out a long backoff. */
export function interruptibleSleep(ms: number): { done: Promise<void>; wake: () => void } {
  let wake!: () => void;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, wake };
}
