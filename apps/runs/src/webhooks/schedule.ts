/**
 * When a failed delivery is tried again: the n-th failure waits `scheduleMs[n - 1]`, jittered by ±10 % so
 * endpoints that failed together are not retried together; after the last step the delivery has failed.
 */
export function nextAttemptDelayMs(
  scheduleMs: readonly number[],
  failedAttempts: number,
  random: () => number = Math.random,
): number | undefined {
  const base = scheduleMs[failedAttempts - 1];
  if (base === undefined) return undefined;
  return Math.round(base * (0.9 + 0.2 * random()));
}
