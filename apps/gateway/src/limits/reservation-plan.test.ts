import { findCatalogModel, type ModelPrice } from '@sbc/catalog';
import { MAX_TOKEN_COUNT, planReservation, worstCaseMilli } from './reservation-plan';

// $3 per 1M input, $15 per 1M output: 3 and 15 millicredits per token.
const USD_PRICE: ModelPrice = { currency: 'usd', input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 };
// 200 and 800 credits per 1M tokens: 0.2 and 0.8 millicredits per token.
const HOUSE_PRICE = findCatalogModel('house')!.price;

describe('reservation arithmetic', () => {
  it('prices the worst case at the dearest input rate and the full output allowance, in whole millicredits', () => {
    // 1,000 tokens at the 3.75 cache-write rate + 100 at 15 = 3,750 + 1,500.
    expect(worstCaseMilli(USD_PRICE, 1_000, 100)).toBe(5_250);
    // 0.8 millicredits a token rounds up, never down.
    expect(worstCaseMilli(HOUSE_PRICE, 0, 1)).toBe(1);
    expect(worstCaseMilli(HOUSE_PRICE, 0, 3)).toBe(3);
  });

  it("keeps a caller's own output limit, whatever the room", () => {
    expect(
      planReservation({
        price: USD_PRICE,
        inputTokens: 10,
        requestedOutputTokens: 50,
        modelOutputTokens: 64_000,
        roomMilli: 1,
      }),
    ).toEqual({
      outputTokens: 50,
      worstCaseMilli: worstCaseMilli(USD_PRICE, 10, 50),
    });
  });

  it("gives a call without an output limit the model's own limit when the budget has room for it", () => {
    expect(planReservation({ price: USD_PRICE, inputTokens: 10, modelOutputTokens: 64_000 })).toEqual({
      outputTokens: 64_000,
      worstCaseMilli: worstCaseMilli(USD_PRICE, 10, 64_000),
    });
    expect(
      planReservation({ price: USD_PRICE, inputTokens: 10, modelOutputTokens: 100, roomMilli: 1_000_000 })
        ?.outputTokens,
    ).toBe(100);
  });

  it('shrinks the output limit to what the remaining budget pays for, and the worst case fits that budget', () => {
    // 10 credits = 10,000 millicredits; 100 input tokens cost 375; the rest buys 641 output tokens at 15.
    const plan = planReservation({ price: USD_PRICE, inputTokens: 100, modelOutputTokens: 64_000, roomMilli: 10_000 })!;
    expect(plan.outputTokens).toBe(641);
    expect(plan.worstCaseMilli).toBeLessThanOrEqual(10_000);
    expect(worstCaseMilli(USD_PRICE, 100, plan.outputTokens + 1)).toBeGreaterThan(10_000);
  });

  it('never rounds a fractional per-token price past the room', () => {
    for (const room of [1, 2, 7, 799, 800, 801, 12_345]) {
      const plan = planReservation({ price: HOUSE_PRICE, inputTokens: 3, modelOutputTokens: 128_000, roomMilli: room });
      if (!plan) continue;
      expect(plan.worstCaseMilli).toBeLessThanOrEqual(room);
      // Maximal to within a token: the catalog's own rounding may cost the last one.
      expect(worstCaseMilli(HOUSE_PRICE, 3, plan.outputTokens + 2)).toBeGreaterThan(room);
    }
  });

  it('refuses when not one output token fits after the prompt', () => {
    expect(
      planReservation({ price: USD_PRICE, inputTokens: 100, modelOutputTokens: 64_000, roomMilli: 375 }),
    ).toBeUndefined();
    expect(
      planReservation({ price: USD_PRICE, inputTokens: 100, modelOutputTokens: 64_000, roomMilli: 0 }),
    ).toBeUndefined();
    expect(
      planReservation({ price: USD_PRICE, inputTokens: 100, modelOutputTokens: 64_000, roomMilli: -5_000 }),
    ).toBeUndefined();
  });

  it('uses the long-context output rate once the prompt passes its threshold', () => {
    const long: ModelPrice = {
      ...USD_PRICE,
      long_context: { above_input_tokens: 1_000, input: 6, output: 30, cache_read: 0.6, cache_write: 7.5 },
    };
    const plan = planReservation({ price: long, inputTokens: 2_000, modelOutputTokens: 64_000, roomMilli: 30_000 })!;
    // 2,000 × 7.5 = 15,000; the other 15,000 buys 500 tokens at 30.
    expect(plan.outputTokens).toBe(500);
  });

  it('keeps the largest token count a caller may name within exact integer arithmetic', () => {
    const milli = worstCaseMilli(USD_PRICE, 32 * 1024 * 1024, MAX_TOKEN_COUNT);
    expect(Number.isSafeInteger(milli)).toBe(true);
  });
});
