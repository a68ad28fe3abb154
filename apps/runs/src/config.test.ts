import { ConfigError } from '@sbc/config';
import { loadRunsConfig } from './config';

describe('runs configuration', () => {
  it('retries webhooks on the Svix ladder when RUNS_WEBHOOK_RETRY_SCHEDULE_MS is unset', () => {
    expect(loadRunsConfig({}).webhooks.retryScheduleMs).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000,
    ]);
  });

  it('reads RUNS_WEBHOOK_RETRY_SCHEDULE_MS as milliseconds, spaces and empty items ignored', () => {
    expect(loadRunsConfig({ RUNS_WEBHOOK_RETRY_SCHEDULE_MS: ' 100, 0,,250 ' }).webhooks.retryScheduleMs).toEqual([
      100, 0, 250,
    ]);
  });

  it.each(['1.5', '-1', 'soon', ' , '])('refuses RUNS_WEBHOOK_RETRY_SCHEDULE_MS=%j, saying what it takes', (value) => {
    // The whole message: this variable alone, and what it takes.
    expect(() => loadRunsConfig({ RUNS_WEBHOOK_RETRY_SCHEDULE_MS: value })).toThrow(
      new ConfigError('runs', [
        { variable: 'RUNS_WEBHOOK_RETRY_SCHEDULE_MS', message: 'must be a comma-separated list of whole milliseconds' },
      ]),
    );
  });
});
