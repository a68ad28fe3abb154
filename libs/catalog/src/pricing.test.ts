import { findCatalogModel } from './catalog';
import {
  cacheDiscountNanoUsd,
  creditsForUsd,
  listCostNanoUsd,
  listCostUsd,
  USD_PER_CREDIT,
  usdForCredits,
  worstCaseCostNanoUsd,
  worstCaseCostUsd,
} from './pricing';
import type { ModelPrice } from './types';

// Round numbers so every expectation below can be checked by hand: $1 per 1M input = $0.000001 a token.
const flat: ModelPrice = { currency: 'usd', input: 1, output: 10, cache_read: 0.1, cache_write: 1.25 };
const usage = (inputTokens: number, outputTokens = 0, cacheReadTokens = 0, cacheWriteTokens = 0) => ({
  inputTokens,
  outputTokens,
  cacheReadTokens,
  cacheWriteTokens,
});

function price(id: string): ModelPrice {
  const model = findCatalogModel(id);
  if (!model) throw new Error(`${id} is not in the catalog`);
  return model.price;
}

describe('list cost', () => {
  it('prices uncached input and output at their own rates', () => {
    expect(listCostUsd(flat, usage(1_000_000, 100_000))).toBe(1 + 1);
  });

  it('cached input is priced once at the cache-read rate, not also as input', () => {
    // 1M prompt tokens, 800K of them from the cache: 200K at $1/M + 800K at $0.10/M.
    expect(listCostUsd(flat, usage(1_000_000, 0, 800_000))).toBeCloseTo(0.2 + 0.08, 9);
  });

  it('tokens written to the cache are priced once at the cache-write rate, not also as input', () => {
    expect(listCostUsd(flat, usage(1_000_000, 0, 0, 400_000))).toBeCloseTo(0.6 + 0.5, 9);
  });

  it('every bucket at once adds up to the sum of its parts', () => {
    const cost = listCostUsd(flat, usage(1_000_000, 50_000, 300_000, 200_000));
    expect(cost).toBeCloseTo(0.5 + 0.03 + 0.25 + 0.5, 9);
  });

  it('uncached input never goes below zero when a vendor reports more cached tokens than prompt tokens', () => {
    expect(listCostUsd(flat, usage(100, 0, 150, 50))).toBeCloseTo((150 * 0.1 + 50 * 1.25) / 1_000_000, 12);
  });

  it('a call with no tokens costs nothing', () => {
    expect(listCostUsd(flat, usage(0))).toBe(0);
  });

  it(
    'a malformed usage block (negative, fractional or ' + 'non-numeric counts) never throws and never goes negative',
    () => {
      expect(listCostUsd(flat, usage(-5, Number.NaN, -1, Number.POSITIVE_INFINITY))).toBe(0);
      expect(listCostUsd(flat, usage(1_000_000.9, 0))).toBe(1);
    },
  );

  it('keeps costs to the nano-dollar, so float noise never reaches a stored number', () => {
    const cost = listCostUsd(
      { currency: 'usd', input: 0.1, output: 0.2, cache_read: 0, cache_write: 0 },
      usage(1_000_000, 1_000_000),
    );
    expect(cost).toBe(0.3);
    // One token of the cheapest rate in the catalog is still visible.
    expect(listCostUsd(price('gpt-6-luna'), usage(1, 0, 1))).toBe(0.00000001);
  });

  it('house models are listed in credits and cost credits x $0.001', () => {
    // SERVICE.md: house is 200 credits per 1M input, 800 per 1M output, 5 per 1M cache read.
    const house = price('house');
    expect(listCostUsd(house, usage(1_000_000))).toBeCloseTo(0.2, 9);
    expect(listCostUsd(house, usage(0, 1_000_000))).toBeCloseTo(0.8, 9);
    expect(listCostUsd(house, usage(1_000_000, 0, 1_000_000))).toBeCloseTo(0.005, 9);
    expect(creditsForUsd(listCostUsd(house, usage(1_000_000, 1_000_000)))).toBe(1000);
  });

  it('house-fast costs half of house', () => {
    const call = usage(2_000_000, 300_000, 500_000);
    expect(listCostUsd(price('house-fast'), call)).toBeCloseTo(listCostUsd(price('house'), call) / 2, 9);
  });

  it('a prompt past the long-context line is billed whole at the long-context rates', () => {
    const sol = price('gpt-6-sol');
    // At the line: the standard rates. One token past it: every bucket at the long rates (2x input, 1.5x output).
    expect(listCostUsd(sol, usage(272_000, 1_000_000))).toBeCloseTo(0.544 + 10, 9);
    expect(listCostUsd(sol, usage(272_001, 1_000_000))).toBeCloseTo((272_001 * 4) / 1e6 + 15, 9);
    expect(listCostUsd(sol, usage(300_000, 0, 100_000))).toBeCloseTo((200_000 * 4 + 100_000 * 0.4) / 1e6, 9);
  });

  it('models without a long-context tariff charge one rate at every size', () => {
    const opus = price('claude-opus-5-5');
    expect(listCostUsd(opus, usage(900_000))).toBeCloseTo(9 * listCostUsd(opus, usage(100_000)), 9);
  });
});

describe('credits', () => {
  it('one credit is $0.001', () => {
    expect(USD_PER_CREDIT).toBe(0.001);
    expect(creditsForUsd(1)).toBe(1000);
    expect(creditsForUsd(5)).toBe(5000); // the $5 pack
    expect(usdForCredits(20_000)).toBe(20); // the Plus plan's credits
  });

  it('converting keeps micro-credit precision without float noise', () => {
    expect(creditsForUsd(0.000_000_3)).toBe(0.0003);
    expect(creditsForUsd(0.1 + 0.2)).toBe(300);
    expect(usdForCredits(creditsForUsd(0.123_456_789))).toBe(0.123_456_789);
  });
});

describe('worst-case reservation', () => {
  it('covers the full output allowance and every input token at the dearest input-side rate', () => {
    // Cache writes cost more than plain input here, so the worst case assumes every prompt token is a write.
    expect(worstCaseCostUsd(flat, { inputTokens: 1_000_000, maxOutputTokens: 100_000 })).toBe(1.25 + 1);
    const plainInputDearest: ModelPrice = { ...flat, cache_write: 0.5 };
    expect(worstCaseCostUsd(plainInputDearest, { inputTokens: 1_000_000, maxOutputTokens: 0 })).toBe(1);
  });

  it('is never below the real cost of any call that fits the request', () => {
    const cases = [
      usage(123_457, 4_096, 100_000, 0),
      usage(123_457, 4_096, 0, 123_457),
      usage(123_457, 4_096, 23_457, 100_000),
      usage(123_457, 0),
      usage(400_000, 4_096, 100_000, 50_000),
    ];
    for (const model of [
      'house',
      'house-fast',
      'claude-fable-5-2',
      'gpt-6-astra',
      'gpt-6-luna',
      'gemini-3.1-pro-preview',
    ]) {
      for (const call of cases) {
        const reserved = worstCaseCostUsd(price(model), { inputTokens: call.inputTokens, maxOutputTokens: 4_096 });
        expect({ model, call, ok: listCostUsd(price(model), call) <= reserved }).toEqual({ model, call, ok: true });
      }
    }
  });

  it('uses the long-context rates when the prompt alone passes the line', () => {
    const astra = price('gpt-6-astra');
    expect(worstCaseCostUsd(astra, { inputTokens: 300_000, maxOutputTokens: 0 })).toBeCloseTo((300_000 * 25) / 1e6, 9);
  });

  it('rounds up, never down, so the reservation is not a hair short', () => {
    const odd: ModelPrice = { currency: 'usd', input: 0.000_7, output: 0, cache_read: 0, cache_write: 0 };
    expect(worstCaseCostUsd(odd, { inputTokens: 1, maxOutputTokens: 0 })).toBe(0.000_000_001);
  });
});

describe('whole nano-USD', () => {
  it('a cost is a whole number of nano-dollars, and the decimal view is that number over 1e9', () => {
    const call = usage(123_457, 4_096, 100_000, 7);
    for (const model of ['house', 'claude-fable-5-2', 'gpt-6-luna']) {
      const cost = listCostNanoUsd(price(model), call);
      expect(Number.isSafeInteger(cost)).toBe(true);
      expect(listCostUsd(price(model), call)).toBe(cost / 1e9);
    }
    expect(listCostNanoUsd(price('gpt-6-luna'), usage(1, 0, 1))).toBe(10);
    expect(worstCaseCostNanoUsd(flat, { inputTokens: 1_000_000, maxOutputTokens: 100_000 })).toBe(2_250_000_000);
  });

  it('an absurd usage block is priced at the ceiling rather than failing a call that already succeeded', () => {
    const cost = listCostNanoUsd(flat, usage(0, 1e15));
    expect(cost).toBe(9_000_000 * 1e9);
    expect(worstCaseCostNanoUsd(flat, { inputTokens: 0, maxOutputTokens: 1e15 })).toBe(cost);
  });

  it('the cache discount is what the cache reads saved against uncached input at the base rates', () => {
    // house: input 200, cache read 5 credits per 1M tokens; 1M cache reads save 195 credits = $0.195.
    expect(cacheDiscountNanoUsd(price('house'), 1_000_000)).toBe(195_000_000);
    expect(cacheDiscountNanoUsd(flat, 1_000)).toBe(900_000);
    expect(cacheDiscountNanoUsd(flat, 0)).toBe(0);
    expect(cacheDiscountNanoUsd(flat, -3)).toBe(0);
  });
});
