import { worstCaseCostNanoUsd, type ModelPrice } from '@sbc/catalog';
import { millicredits, millicreditsForNanoUsd, nanoUsdForMillicredits, type Millicredits } from '@sbc/money';

/**
 * The admission arithmetic of a priced call: how many output tokens it may produce and what its worst case
 * costs, in integer millicredits (1 millicredit = $0.000001, so a rate in USD per 1M tokens is millicredits
 * per token). Pure, so every edge applies the same rule and it can be tested without a store.
 */

/** The largest token count a caller may name: PostgreSQL's `integer`, far above any model's output limit. */
export const MAX_TOKEN_COUNT = 2 ** 31 - 1;

/** The output allowance the per-token output rate is measured over: large enough that rounding vanishes. */
const RATE_PROBE_TOKENS = 1_000_000;

export interface ReservationRequest {
  price: ModelPrice;
  /** An upper bound of the prompt's tokens (see handle-call: body bytes first, then a local count). */
  inputTokens: number;
  /** The caller's own output limit, when it set one. */
  requestedOutputTokens?: number;
  /** The model's own output limit (the catalog's), used when the caller set none. */
  modelOutputTokens: number;
  /**
   * What the tightest budget still allows, in millicredits; absent when no budget applies. Only consulted
   * when the caller set no output limit: a caller's own limit is reserved as asked, and the store refuses it
   * atomically if it does not fit.
   */
  roomMilli?: number;
}

export interface ReservationPlan {
  /** The output limit the call runs under: sent upstream and enforced on the stream. */
  outputTokens: number;
  /** The most the call may cost, rounded up to whole millicredits. */
  worstCaseMilli: Millicredits;
}

/** The worst case of `inputTokens` in and `outputTokens` out, in millicredits, rounded up. */
export function worstCaseMilli(price: ModelPrice, inputTokens: number, outputTokens: number): Millicredits {
  return millicreditsForNanoUsd(worstCaseCostNanoUsd(price, { inputTokens, maxOutputTokens: outputTokens }));
}

/**
 * The call's output limit and reservation, or undefined when not even one output token fits the room left.
 * A caller's own limit is kept as asked. Without one, the call gets the model's output limit, or as many
 * tokens as the remaining budget pays for when that is fewer, so its worst case always fits what is left.
 */
export function planReservation(request: ReservationRequest): ReservationPlan | undefined {
  const { price, inputTokens, requestedOutputTokens, modelOutputTokens, roomMilli } = request;
  if (requestedOutputTokens !== undefined) {
    return {
      outputTokens: requestedOutputTokens,
      worstCaseMilli: worstCaseMilli(price, inputTokens, requestedOutputTokens),
    };
  }
  const full = worstCaseMilli(price, inputTokens, modelOutputTokens);
  if (roomMilli === undefined || full <= roomMilli) return { outputTokens: modelOutputTokens, worstCaseMilli: full };
  const inputNano = worstCaseCostNanoUsd(price, { inputTokens, maxOutputTokens: 0 });
  // The output rate at this prompt size (a long-context tariff raises it), per token, in nano-dollars.
  const probeNano = worstCaseCostNanoUsd(price, { inputTokens, maxOutputTokens: RATE_PROBE_TOKENS }) - inputNano;
  const perTokenNano = probeNano / RATE_PROBE_TOKENS;
  // The room the store reports is whole millicredits; flooring keeps a stray fraction from overshooting it.
  const roomNano = nanoUsdForMillicredits(millicredits(Math.floor(roomMilli)));
  let outputTokens = Math.min(modelOutputTokens, Math.floor((roomNano - inputNano) / perTokenNano));
  // Rounding up to whole millicredits can put the estimate a token over the room; step back until it fits.
  while (outputTokens >= 1 && worstCaseMilli(price, inputTokens, outputTokens) > roomMilli) outputTokens--;
  if (!(outputTokens >= 1)) return undefined;
  return { outputTokens, worstCaseMilli: worstCaseMilli(price, inputTokens, outputTokens) };
}
