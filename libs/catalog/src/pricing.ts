import {
  creditsFromMicrocredits,
  microcreditsForNanoUsd,
  microcreditsFromCredits,
  nanoUsdForMicrocredits,
  nanoUsdFromUsd,
  USD_PER_CREDIT,
  usdFromNanoUsd,
  type NanoUsd,
  type Rounding,
} from '@sbc/money';
import type { ModelPrice, TokenRates, TokenUsage } from './types';

export { USD_PER_CREDIT };

const PER_MILLION = 1_000_000;

/** The most one call is priced at, just under what nano-USD count exactly (about $9.007M); see listCostNanoUsd. */
const MAX_COST_USD = 9_000_000;

/**
 * A vendor's usage block is outside our control; a negative, fractional or missing count must not turn a call
 * that already succeeded into an error, so it counts as what it can honestly be (0, or whole tokens).
 */
function tokens(count: number): number {
  return Number.isFinite(count) && count > 0 ? Math.floor(count) : 0;
}

function usdPerMillion(price: ModelPrice, rate: number): number {
  return price.currency === 'credits' ? rate * USD_PER_CREDIT : rate;
}

/** The rates that apply to a prompt of this size: the long-context tariff covers the whole call once past it. */
function ratesFor(price: ModelPrice, inputTokens: number): TokenRates {
  const long = price.long_context;
  return long && inputTokens > long.above_input_tokens ? long : price;
}

/**
 * List cost of one call in whole nano-USD, fine enough for one token of the cheapest rate listed ($0.01 per
 * 1M = 10 nano-USD). Each input token is priced once, in exactly one bucket: `inputTokens` includes the cache
 * reads and writes, so uncached input is what remains after taking them out (never below zero, even when a
 * vendor reports more cached tokens than prompt tokens). A usage block so large that the cost passes what can
 * be counted exactly is priced at that ceiling rather than failing a call that already succeeded.
 */
export function listCostNanoUsd(price: ModelPrice, usage: TokenUsage): NanoUsd {
  const input = tokens(usage.inputTokens);
  const cacheRead = tokens(usage.cacheReadTokens);
  const cacheWrite = tokens(usage.cacheWriteTokens);
  const uncached = Math.max(0, input - cacheRead - cacheWrite);
  const rates = ratesFor(price, input);
  const perMillion =
    uncached * usdPerMillion(price, rates.input) +
    cacheRead * usdPerMillion(price, rates.cache_read) +
    cacheWrite * usdPerMillion(price, rates.cache_write) +
    tokens(usage.outputTokens) * usdPerMillion(price, rates.output);
  return boundedNanoUsd(perMillion / PER_MILLION, 'nearest');
}

function boundedNanoUsd(usd: number, rounding: Rounding): NanoUsd {
  return nanoUsdFromUsd(Math.min(usd, MAX_COST_USD), rounding);
}

/** The decimal USD view of listCostNanoUsd. */
export function listCostUsd(price: ModelPrice, usage: TokenUsage): number {
  return usdFromNanoUsd(listCostNanoUsd(price, usage));
}

/** Credits for a USD amount (1 credit = $0.001), to the micro-credit, the same nano-dollar grain as costs. */
export function creditsForUsd(usd: number): number {
  return creditsFromMicrocredits(microcreditsForNanoUsd(nanoUsdFromUsd(usd, 'nearest')));
}

/** USD for a credit amount; the inverse of creditsForUsd. */
export function usdForCredits(credits: number): number {
  return usdFromNanoUsd(nanoUsdForMicrocredits(microcreditsFromCredits(credits)));
}

/**
 * The most a call can cost before it runs, in whole nano-USD, for reserving budget before dispatch: every
 * input token at the dearest input-side rate (a cache write costs more than plain input on some vendors) and
 * the full output allowance. The real cost, priced with listCostNanoUsd afterwards, is never above this.
 */
export function worstCaseCostNanoUsd(
  price: ModelPrice,
  request: { inputTokens: number; maxOutputTokens: number },
): NanoUsd {
  const input = tokens(request.inputTokens);
  const rates = ratesFor(price, input);
  const inputRate = Math.max(rates.input, rates.cache_read, rates.cache_write);
  const perMillion =
    input * usdPerMillion(price, inputRate) + tokens(request.maxOutputTokens) * usdPerMillion(price, rates.output);
  // Rounded up, not to nearest: a reservation that comes out a hair under the real cost would be a bug.
  return boundedNanoUsd(perMillion / PER_MILLION, 'up');
}

/** The decimal USD view of worstCaseCostNanoUsd. */
export function worstCaseCostUsd(price: ModelPrice, request: { inputTokens: number; maxOutputTokens: number }): number {
  return usdFromNanoUsd(worstCaseCostNanoUsd(price, request));
}

/**
 * What a call's cache reads saved against uncached input at the model's base list rates, in whole nano-USD
 * (the ledger reports it beside the cost).
 */
export function cacheDiscountNanoUsd(price: ModelPrice, cacheReadTokens: number): NanoUsd {
  const cacheRead = tokens(cacheReadTokens);
  const saved = (cacheRead * Math.max(0, price.input - price.cache_read) * usdPerMillion(price, 1)) / PER_MILLION;
  return boundedNanoUsd(saved, 'nearest');
}
