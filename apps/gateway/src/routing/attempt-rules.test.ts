import {
  isRetryableStatus,
  loneRetryDelayMs,
  MAX_RETRY_WAIT_MS,
  metricLabelOfKey,
  retryAfterMsOf,
} from './attempt-rules';

describe('attempt rules', () => {
  it('retries connect-like and overload statuses, and returns every other answer', () => {
    for (const status of [408, 409, 429, 500, 502, 503, 504, 529]) expect(isRetryableStatus(status)).toBe(true);
    for (const status of [200, 400, 401, 403, 404, 413, 422, 501]) expect(isRetryableStatus(status)).toBe(false);
  });

  it('reads retry-after in seconds and as an HTTP date', () => {
    expect(retryAfterMsOf('1')).toBe(1_000);
    expect(retryAfterMsOf('0.5')).toBe(500);
    expect(retryAfterMsOf(['2', '9'])).toBe(2_000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMsOf('Thu, 01 Jan 2026 00:00:03 GMT', now)).toBe(3_000);
    expect(retryAfterMsOf(undefined)).toBeUndefined();
    expect(retryAfterMsOf('soon')).toBeUndefined();
    expect(retryAfterMsOf('-1')).toBeUndefined();
  });

  it('waits at least what retry-after asks, never past 2 s, and not at all when asked for longer', () => {
    expect(loneRetryDelayMs(1_000, () => 0)).toBe(1_000);
    expect(loneRetryDelayMs(1_000, () => 0.99)).toBeLessThanOrEqual(1_200);
    expect(loneRetryDelayMs(1_900, () => 0.99)).toBe(MAX_RETRY_WAIT_MS);
    expect(loneRetryDelayMs(2_001)).toBeUndefined();
  });

  it('jitters the backoff when no retry-after was given', () => {
    const low = loneRetryDelayMs(undefined, () => 0)!;
    const high = loneRetryDelayMs(undefined, () => 0.999)!;
    expect(low).toBeGreaterThan(0);
    expect(high).toBeGreaterThan(low);
  });

  it('never puts an account in a metric label', () => {
    expect(metricLabelOfKey('byo:user_1:lab')).toBe('byo');
    expect(metricLabelOfKey('provider:openai/east|https://api.openai.com/v1#')).toBe('provider:openai/east');
    expect(metricLabelOfKey('house:house/sim|http://127.0.0.1:8090#sim-large')).toBe('house:house/sim');
  });
});
