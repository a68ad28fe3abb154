import { memoryDeploymentLimiter } from './deployment-limiter';

const MINUTE_START = 28_333_333 * 60_000; // a minute boundary

describe('deployment limiter (memory)', () => {
  it('admits rpm requests in a minute and refuses the next', () => {
    const limiter = memoryDeploymentLimiter();
    const answers = Array.from({ length: 6 }, (_, i) => limiter.tryTake('d', { rpm: 5 }, MINUTE_START + i * 1_000));
    expect(answers).toEqual([true, true, true, true, true, false]);
  });

  it('a refused request is not counted', () => {
    const limiter = memoryDeploymentLimiter();
    for (let i = 0; i < 10; i++) limiter.tryTake('d', { rpm: 2 }, MINUTE_START);
    // a full minute later only the 2 admitted still weigh, fully gone after two minutes
    expect(limiter.tryTake('d', { rpm: 2 }, MINUTE_START + 120_000)).toBe(true);
  });

  it('the previous minute weighs by its overlap with the window ending now', () => {
    const limiter = memoryDeploymentLimiter();
    for (let i = 0; i < 10; i++) expect(limiter.tryTake('d', { rpm: 10 }, MINUTE_START + 59_000)).toBe(true);
    // 15 s into the next minute, 75 % of the previous 10 still count: 2 more fit, not 3
    const next = MINUTE_START + 75_000;
    expect([1, 2, 3].map(() => limiter.tryTake('d', { rpm: 10 }, next))).toEqual([true, true, false]);
  });

  it('refuses once the minute has used its tpm, admits again as it slides', () => {
    const limiter = memoryDeploymentLimiter();
    expect(limiter.tryTake('d', { tpm: 1_000 }, MINUTE_START)).toBe(true);
    limiter.addTokens('d', 600, MINUTE_START + 1);
    expect(limiter.tryTake('d', { tpm: 1_000 }, MINUTE_START + 2)).toBe(true);
    limiter.addTokens('d', 400, MINUTE_START + 3);
    expect(limiter.tryTake('d', { tpm: 1_000 }, MINUTE_START + 4)).toBe(false);
    expect(limiter.tryTake('d', { tpm: 1_000 }, MINUTE_START + 90_000)).toBe(true);
  });

  it('keys are limited apart, and no limits means no limit', () => {
    const limiter = memoryDeploymentLimiter();
    expect(limiter.tryTake('a', { rpm: 1 }, MINUTE_START)).toBe(true);
    expect(limiter.tryTake('a', { rpm: 1 }, MINUTE_START)).toBe(false);
    expect(limiter.tryTake('b', { rpm: 1 }, MINUTE_START)).toBe(true);
    for (let i = 0; i < 1_000; i++) expect(limiter.tryTake('c', {}, MINUTE_START)).toBe(true);
  });

  it('ignores negative or non-numeric token counts', () => {
    const limiter = memoryDeploymentLimiter();
    limiter.addTokens('d', 900, MINUTE_START);
    limiter.addTokens('d', -5_000, MINUTE_START);
    limiter.addTokens('d', Number.NaN, MINUTE_START);
    expect(limiter.tryTake('d', { tpm: 1_000 }, MINUTE_START)).toBe(true);
    limiter.addTokens('d', 100, MINUTE_START);
    expect(limiter.tryTake('d', { tpm: 1_000 }, MINUTE_START)).toBe(false);
  });
});
