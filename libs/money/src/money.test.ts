import fc from 'fast-check';
import {
  creditsFromMicrocredits,
  microcredits,
  microcreditsForMillicredits,
  microcreditsForNanoUsd,
  microcreditsFromCredits,
  microcreditsFromDecimalText,
  microcreditsFromWire,
  millicredits,
  millicreditsForNanoUsd,
  millicreditsFromCredits,
  millicreditsFromMicrocredits,
  nanoUsd,
  nanoUsdForMicrocredits,
  nanoUsdForMillicredits,
  nanoUsdFromDecimalText,
  nanoUsdFromUsd,
  nanoUsdFromWire,
  USD_PER_CREDIT,
  usdFromNanoUsd,
  wholeMicroUsd,
} from './money';

const MAX = Number.MAX_SAFE_INTEGER;
const amounts = fc.integer({ min: 0, max: MAX });

describe('whole amounts', () => {
  it('accepts safe integers and refuses fractions, NaN, infinities and unsafe integers', () => {
    expect(nanoUsd(123)).toBe(123);
    expect(microcredits(-5)).toBe(-5);
    expect(millicredits(MAX)).toBe(MAX);
    for (const bad of [0.5, Number.NaN, Number.POSITIVE_INFINITY, MAX + 1]) {
      expect(() => nanoUsd(bad)).toThrow(RangeError);
      expect(() => microcredits(bad)).toThrow(RangeError);
      expect(() => millicredits(bad)).toThrow(RangeError);
    }
  });

  it('negative zero is zero', () => {
    expect(Object.is(nanoUsd(-0), 0)).toBe(true);
  });
});

describe('USD and nano-USD', () => {
  it('one credit is $0.001', () => {
    expect(USD_PER_CREDIT).toBe(0.001);
  });

  it('rounds to the nearest nano-dollar, so float noise never survives', () => {
    expect(nanoUsdFromUsd(0.1 + 0.2, 'nearest')).toBe(300_000_000);
    expect(nanoUsdFromUsd(0.000_123, 'nearest')).toBe(123_000);
    expect(nanoUsdFromUsd(1.4e-9, 'nearest')).toBe(1);
    expect(nanoUsdFromUsd(0, 'nearest')).toBe(0);
  });

  it('rounds up when asked, so a reservation is never a hair short', () => {
    expect(nanoUsdFromUsd(1.1e-9, 'up')).toBe(2);
    expect(nanoUsdFromUsd(7e-10, 'up')).toBe(1);
    expect(nanoUsdFromUsd(2, 'up')).toBe(2_000_000_000);
  });

  it('refuses an amount that is not finite or too large to count exactly', () => {
    expect(() => nanoUsdFromUsd(Number.NaN, 'nearest')).toThrow(RangeError);
    expect(() => nanoUsdFromUsd(Number.POSITIVE_INFINITY, 'up')).toThrow(RangeError);
    expect(() => nanoUsdFromUsd(10_000_000, 'nearest')).toThrow(RangeError);
    expect(nanoUsdFromUsd(9_000_000, 'nearest')).toBe(9_000_000_000_000_000);
  });

  it('the decimal view round-trips every amount below a million dollars', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e15 }), (amount) => {
        expect(nanoUsdFromUsd(usdFromNanoUsd(nanoUsd(amount)), 'nearest')).toBe(amount);
      }),
    );
  });

  it('rounding up never lands below the amount, and never a whole unit above it', () => {
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1_000, noNaN: true }), (usd) => {
        const up = nanoUsdFromUsd(usd, 'up');
        const nearest = nanoUsdFromUsd(usd, 'nearest');
        expect(up).toBeGreaterThanOrEqual(nearest);
        expect(up - nearest).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe('credits', () => {
  it('a microcredit is worth exactly one nano-dollar', () => {
    fc.assert(
      fc.property(amounts, (amount) => {
        expect(microcreditsForNanoUsd(nanoUsd(amount))).toBe(amount);
        expect(nanoUsdForMicrocredits(microcredits(amount))).toBe(amount);
      }),
    );
    expect(microcreditsForNanoUsd(nanoUsdFromUsd(1, 'nearest'))).toBe(1_000_000_000);
  });

  it('a cost is charged in whole millicredits, rounded up', () => {
    expect(millicreditsForNanoUsd(nanoUsd(123_000))).toBe(123);
    expect(millicreditsForNanoUsd(nanoUsd(123_001))).toBe(124);
    expect(millicreditsForNanoUsd(nanoUsd(1))).toBe(1);
    expect(millicreditsForNanoUsd(nanoUsd(0))).toBe(0);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e15 }), (amount) => {
        const charged = millicreditsForNanoUsd(nanoUsd(amount));
        expect(nanoUsdForMillicredits(charged)).toBeGreaterThanOrEqual(amount);
        expect(nanoUsdForMillicredits(charged) - amount).toBeLessThan(1_000);
      }),
    );
  });

  it('millicredits convert to finer units exactly', () => {
    expect(microcreditsForMillicredits(millicredits(7))).toBe(7_000);
    expect(nanoUsdForMillicredits(millicredits(7))).toBe(7_000);
    expect(() => microcreditsForMillicredits(millicredits(MAX))).toThrow(RangeError);
  });

  it('decimal credits become whole units to the nearest one', () => {
    expect(millicreditsFromCredits(500)).toBe(500_000);
    expect(millicreditsFromCredits(1.005)).toBe(1_005);
    expect(microcreditsFromCredits(0.123)).toBe(123_000);
    expect(microcreditsFromCredits(0.1 + 0.2)).toBe(300_000);
    expect(() => microcreditsFromCredits(Number.NaN)).toThrow(RangeError);
    expect(() => millicreditsFromCredits(Number.NEGATIVE_INFINITY)).toThrow(RangeError);
  });

  it('the decimal credits view round-trips every amount below a billion credits', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e15, max: 1e15 }), (amount) => {
        expect(microcreditsFromCredits(creditsFromMicrocredits(microcredits(amount)))).toBe(amount);
      }),
    );
  });
});

describe('decimal text (PostgreSQL numerics)', () => {
  it('parses exactly, digit by digit', () => {
    expect(microcreditsFromDecimalText('12.345678')).toBe(12_345_678);
    expect(microcreditsFromDecimalText('-0.000001')).toBe(-1);
    expect(microcreditsFromDecimalText('7')).toBe(7_000_000);
    expect(nanoUsdFromDecimalText('0.000123456')).toBe(123_456);
    expect(nanoUsdFromDecimalText('3.000000001')).toBe(3_000_000_001);
    expect(nanoUsdFromDecimalText('0.1')).toBe(100_000_000);
  });

  it('rounds digits beyond the unit to the nearest, halves away from zero', () => {
    expect(microcreditsFromDecimalText('0.0000014')).toBe(1);
    expect(microcreditsFromDecimalText('0.0000015')).toBe(2);
    expect(microcreditsFromDecimalText('-0.0000015')).toBe(-2);
  });

  it('refuses what is not a decimal, or too large to count exactly', () => {
    for (const bad of ['', 'NaN', '1e3', '1.2.3', 'Infinity', '99999999999999.000000'])
      expect(() => microcreditsFromDecimalText(bad)).toThrow(RangeError);
  });

  it('agrees with the decimal view of every amount', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e15, max: 1e15 }), (units) => {
        const text = (units / 1e6).toFixed(6);
        expect(microcreditsFromDecimalText(text)).toBe(units);
      }),
    );
  });
});

describe('amounts off the wire during the release that writes both fields', () => {
  it('the whole units win when the sender set them, even to 0', () => {
    expect(microcreditsFromWire(123_456n, 99)).toBe(123_456);
    expect(microcreditsFromWire(0n, 99)).toBe(0);
    expect(nanoUsdFromWire(-5n, 1)).toBe(-5);
  });

  it('a sender that predates them is read from the decimal, to the nearest unit', () => {
    expect(microcreditsFromWire(undefined, 0.123_456)).toBe(123_456);
    expect(microcreditsFromWire(undefined, 0.1 + 0.2)).toBe(300_000);
    expect(nanoUsdFromWire(undefined, 0.000_123_456)).toBe(123_456);
  });

  it('refuses a decimal that is no amount, and whole units too large to count exactly', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 1e300]) {
      expect(() => microcreditsFromWire(undefined, bad)).toThrow(RangeError);
      expect(() => nanoUsdFromWire(undefined, bad)).toThrow(RangeError);
    }
    expect(() => microcreditsFromWire(2n ** 60n, 0)).toThrow(RangeError);
    expect(() => nanoUsdFromWire(-(2n ** 60n), 0)).toThrow(RangeError);
  });
});

describe('microcredits to millicredits', () => {
  it('rounds as asked', () => {
    const amount = microcredits(1_500);
    expect(millicreditsFromMicrocredits(amount, 'nearest')).toBe(2);
    expect(millicreditsFromMicrocredits(amount, 'down')).toBe(1);
    expect(millicreditsFromMicrocredits(microcredits(1_001), 'up')).toBe(2);
    expect(millicreditsFromMicrocredits(microcredits(-1_500), 'down')).toBe(-2);
  });
});

describe('whole micro-USD', () => {
  it('rounds nano-USD to the nearest thousand', () => {
    expect(wholeMicroUsd(nanoUsd(123_456))).toBe(123_000);
    expect(wholeMicroUsd(nanoUsd(123_500))).toBe(124_000);
    expect(wholeMicroUsd(nanoUsd(-1_400))).toBe(-1_000);
    expect(wholeMicroUsd(nanoUsd(0))).toBe(0);
  });
});
