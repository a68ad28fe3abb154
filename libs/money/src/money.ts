/**
 * Money as whole numbers of a named unit. Amounts are integers from the moment they are priced until they
 * are stored or rendered, so no float ever carries money between processes, and the brand on each type keeps
 * one unit from being passed where another is meant.
 *
 * SERVICE.md fixes one credit at $0.001, so the units line up exactly:
 * - nano-USD (1e-9 USD) is the grain costs are priced and stored at: one token of the cheapest listed rate
 *   ($0.01 per 1M tokens) is 10 of them;
 * - a microcredit (1e-6 credit) is one nano-USD: the grain the ledger keeps credits at;
 * - a millicredit (1e-3 credit) is one micro-USD: the grain of the edge's budget counters, which a call is
 *   charged in whole units of.
 */

declare const unit: unique symbol;

/** A safe integer count of `Unit`. */
type Amount<Unit extends string> = number & { readonly [unit]: Unit };

export type NanoUsd = Amount<'nano-usd'>;
export type Microcredits = Amount<'microcredits'>;
export type Millicredits = Amount<'millicredits'>;

/** SERVICE.md, Pricing: 1 credit = $0.001. */
export const USD_PER_CREDIT = 0.001;

const NANO_USD_PER_USD = 1_000_000_000;
const MICROCREDITS_PER_CREDIT = 1_000_000;
const MILLICREDITS_PER_CREDIT = 1_000;
const MICROCREDITS_PER_MILLICREDIT = MICROCREDITS_PER_CREDIT / MILLICREDITS_PER_CREDIT;
/** 1 credit = $0.001 = 1,000,000 nano-USD = 1,000,000 microcredits. */
const NANO_USD_PER_MICROCREDIT = (USD_PER_CREDIT * NANO_USD_PER_USD) / MICROCREDITS_PER_CREDIT;

/** How a fractional amount becomes whole: to the nearest unit, or up (what a charge or reservation uses). */
export type Rounding = 'nearest' | 'up';

function whole<Unit extends string>(value: number, unitName: Unit): Amount<Unit> {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${value} is not a safe whole number of ${unitName}`);
  // -0 would render as "-0" in some places and is the same amount as 0.
  return (value === 0 ? 0 : value) as Amount<Unit>;
}

function rounded(value: number, rounding: Rounding): number {
  return rounding === 'up' ? Math.ceil(value) : Math.round(value);
}

/** Checks that `value` is a safe integer and types it as nano-USD; throws a RangeError otherwise. */
export function nanoUsd(value: number): NanoUsd {
  return whole(value, 'nano-usd');
}

export function microcredits(value: number): Microcredits {
  return whole(value, 'microcredits');
}

export function millicredits(value: number): Millicredits {
  return whole(value, 'millicredits');
}

/**
 * A USD amount computed from decimal rates (the catalog's USD per 1M tokens) as whole nano-USD. Throws a
 * RangeError for an amount that is not finite or is too large to count exactly (about $9M).
 */
export function nanoUsdFromUsd(usd: number, rounding: Rounding): NanoUsd {
  if (!Number.isFinite(usd)) throw new RangeError(`${usd} USD is not an amount`);
  return nanoUsd(rounded(usd * NANO_USD_PER_USD, rounding));
}

/** The decimal USD view of an amount, for rendering and for the deprecated double fields of the wire. */
export function usdFromNanoUsd(amount: NanoUsd): number {
  return amount / NANO_USD_PER_USD;
}

/** The credits a USD cost is worth: exact, the two units are the same size. */
export function microcreditsForNanoUsd(cost: NanoUsd): Microcredits {
  return microcredits(cost / NANO_USD_PER_MICROCREDIT);
}

export function nanoUsdForMicrocredits(amount: Microcredits): NanoUsd {
  return nanoUsd(amount * NANO_USD_PER_MICROCREDIT);
}

/** A cost in the budget counters' whole millicredits: rounded up, so a charge is never short of the cost. */
export function millicreditsForNanoUsd(cost: NanoUsd): Millicredits {
  return millicredits(Math.ceil(microcreditsForNanoUsd(cost) / MICROCREDITS_PER_MILLICREDIT));
}

/** A budget amount in nano-USD: exact. */
export function nanoUsdForMillicredits(amount: Millicredits): NanoUsd {
  return nanoUsd(amount * MICROCREDITS_PER_MILLICREDIT * NANO_USD_PER_MICROCREDIT);
}

export function microcreditsForMillicredits(amount: Millicredits): Microcredits {
  return microcredits(amount * MICROCREDITS_PER_MILLICREDIT);
}

/** A decimal credit amount (a cap, a fair-use window) in whole millicredits, to the nearest one. */
export function millicreditsFromCredits(credits: number): Millicredits {
  if (!Number.isFinite(credits)) throw new RangeError(`${credits} credits is not an amount`);
  return millicredits(Math.round(credits * MILLICREDITS_PER_CREDIT));
}

/** A decimal credit amount in whole microcredits, to the nearest one (the ledger's grain). */
export function microcreditsFromCredits(credits: number): Microcredits {
  if (!Number.isFinite(credits)) throw new RangeError(`${credits} credits is not an amount`);
  return microcredits(Math.round(credits * MICROCREDITS_PER_CREDIT));
}

/** The decimal credits view of an amount, for rendering and for the deprecated double fields of the wire. */
export function creditsFromMicrocredits(amount: Microcredits): number {
  return amount / MICROCREDITS_PER_CREDIT;
}
