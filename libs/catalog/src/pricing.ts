import type { ModelPrice, TokenRates, TokenUsage } from './types';

/** SERVICE.md, Pricing: 1 credit = $0.001. */
export const USD_PER_CREDIT = 0.001;

const PER_MILLION = 1_000_000;

// Costs are kept to the nano-dollar (1e-9 USD): fine enough for one token of the cheapest rate listed
// ($0.01 per 1M = 1e-8 USD), and coarse enough that float noise (0.1 + 0.2) never reaches a stored number.
const USD_DECIMALS = 1e9;

function roundUsd(usd: number): number {
  return Math.round(usd * USD_DECIMALS) / USD_DECIMALS;
}

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
 * List cost of one call in USD. Each input token is priced once, in exactly one bucket: `inputTokens` includes
 * the cache reads and writes, so uncached input is what remains after taking them out (never below zero, even
 * when a vendor reports more cached tokens than prompt tokens).
 */
export function listCostUsd(price: ModelPrice, usage: TokenUsage): number {
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
  return roundUsd(perMillion / PER_MILLION);
}

/** Credits for a USD amount (1 credit = $0.001), to the micro-credit, the same nano-dollar grain as costs. */
export function creditsForUsd(usd: number): number {
  return Math.round((usd / USD_PER_CREDIT) * 1e6) / 1e6;
}

/** USD for a credit amount; the inverse of creditsForUsd. */
export function usdForCredits(credits: number): number {
  return roundUsd(credits * USD_PER_CREDIT);
}

/**
 * The most a call can cost before it runs, for reserving budget before dispatch: every input token at the
 * dearest input-side rate (a cache write costs more than plain input on some vendors) and the full output
 * allowance. The real cost, priced with listCostUsd afterwards, is never above this.
 */
export function worstCaseCostUsd(price: ModelPrice, request: { inputTokens: number; maxOutputTokens: number }): number {
  const input = tokens(request.inputTokens);
  const rates = ratesFor(price, input);
  const inputRate = Math.max(rates.input, rates.cache_read, rates.cache_write);
  const perMillion = input * usdPerMillion(price, inputRate) + tokens(request.maxOutputTokens) * usdPerMillion(price, rates.output);
  // Rounded up, not to nearest: a reservation that comes out a hair under the real cost would be a bug.
  return Math.ceil((perMillion / PER_MILLION) * USD_DECIMALS) / USD_DECIMALS;
}
