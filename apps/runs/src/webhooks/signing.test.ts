import { Webhook } from 'standardwebhooks';
import { nextAttemptDelayMs } from './schedule';
import { webhookHeaders } from '@sbc/webhooks';

describe('webhook signing (Standard Webhooks)', () => {
  const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  const body = JSON.stringify({
    type: 'run.succeeded',
    timestamp: '2026-05-01T10:00:00.000Z',
    data: { run_id: 'run_1' },
  });

  it('verifies with the reference library, and fails for another body or secret', () => {
    const headers = webhookHeaders(secret, 'evt_1', body, new Date());
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret).verify(body.replace('run_1', 'run_2'), headers)).toThrow();
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 8).toString('base64')}`).verify(body, headers)).toThrow();
  });

  it('signs the attempt time, so an old attempt is refused by the receiver', () => {
    const stale = webhookHeaders(secret, 'evt_1', body, new Date(Date.now() - 10 * 60_000));
    expect(() => new Webhook(secret).verify(body, stale)).toThrow();
  });
});

describe('retry schedule', () => {
  const ladder = [5_000, 300_000, 1_800_000];

  it('waits the n-th step after the n-th failure, within ±10 %, and gives up after the last', () => {
    expect(nextAttemptDelayMs(ladder, 1, () => 0)).toBe(4_500);
    expect(nextAttemptDelayMs(ladder, 2, () => 1)).toBe(330_000);
    expect(nextAttemptDelayMs(ladder, 3, () => 0.5)).toBe(1_800_000);
    expect(nextAttemptDelayMs(ladder, 4)).toBeUndefined();
  });
});
