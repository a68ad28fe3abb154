import { usd, usdTicks } from './format';

describe('dollar amounts', () => {
  it('shows cents and up as before', () => {
    expect(usd(12.5)).toBe('$12.50');
    expect(usd(0.0123)).toBe('$0.0123');
    expect(usd(0)).toBe('$0.00');
  });

  it('shows an amount too small for cents by its value, not as $0.00', () => {
    expect(usd(0.0000123)).toBe('$0.000012');
    expect(usd(0.0004)).toBe('$0.0004');
  });

  it('labels gridlines a fraction of a cent apart each with its own value', () => {
    const labels = usdTicks([0, 0.0002, 0.0004, 0.0006]);
    expect(labels).toEqual(['$0.0000', '$0.0002', '$0.0004', '$0.0006']);
    expect(new Set(labels).size).toBe(4);
  });

  it('labels gridlines a dollar apart in cents', () => {
    expect(usdTicks([0, 1, 2])).toEqual(['$0.00', '$1.00', '$2.00']);
  });
});
