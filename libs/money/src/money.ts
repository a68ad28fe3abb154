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

/** A microcredit amount in whole millicredits: the grain the edge's budget counters and billed USD are kept at. */
export function millicreditsFromMicrocredits(amount: Microcredits, rounding: Rounding | 'down'): Millicredits {
  const exact = amount / MICROCREDITS_PER_MILLICREDIT;
  return millicredits(rounding === 'down' ? Math.floor(exact) : rounded(exact, rounding));
}

/**
 * A decimal as text (a PostgreSQL numeric, which is exact) in whole units of `scale` decimal places, parsed
 * digit by digit so no float ever holds it. Digits beyond the unit round to the nearest, halves away from zero.
 */
function unitsFromDecimalText<Unit extends string>(text: string, scale: number, unitName: Unit): Amount<Unit> {
  const parts = /^(-?)(\d+)(?:\.(\d*))?$/.exec(text.trim());
  if (!parts) throw new RangeError(`${text} is not a decimal amount of ${unitName}`);
  const [, sign, integer, fraction = ''] = parts;
  let units = BigInt(integer! + fraction.padEnd(scale, '0').slice(0, scale));
  if (fraction.length > scale && fraction[scale]! >= '5') units += 1n;
  if (units > BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(`${text} is too large to count exactly in ${unitName}`);
  return whole(Number(sign ? -units : units), unitName);
}

/** A decimal credit amount as PostgreSQL renders a numeric (`12.345678`) in whole microcredits, exactly. */
export function microcreditsFromDecimalText(text: string): Microcredits {
  return unitsFromDecimalText(text, 6, 'microcredits');
}

/** A decimal USD amount as PostgreSQL renders a numeric (`0.000123456`) in whole nano-USD, exactly. */
export function nanoUsdFromDecimalText(text: string): NanoUsd {
  return unitsFromDecimalText(text, 9, 'nano-usd');
}

function numberFromWire(units: bigint, unitName: string): number {
  if (units > BigInt(Number.MAX_SAFE_INTEGER) || units < -BigInt(Number.MAX_SAFE_INTEGER))
    throw new RangeError(`${units} is too large to count exactly in ${unitName}`);
  return Number(units);
}

/**
 * An amount read off the wire during the release that writes both fields: the whole units when the sender
 * set them, else the deprecated decimal of a sender that predates them, range-checked (a float can hold NaN,
 * infinities or 1e300, which are no amount). Throws a RangeError for either out of range.
 */
export function microcreditsFromWire(units: bigint | undefined, deprecatedCredits: number): Microcredits {
  return units === undefined
    ? microcreditsFromCredits(deprecatedCredits)
    : microcredits(numberFromWire(units, 'microcredits'));
}

/** As `microcreditsFromWire`, for a USD amount. */
export function nanoUsdFromWire(units: bigint | undefined, deprecatedUsd: number): NanoUsd {
  return units === undefined ? nanoUsdFromUsd(deprecatedUsd, 'nearest') : nanoUsd(numberFromWire(units, 'nano-usd'));
}

/** An amount to the whole micro-USD (a millicredit), to the nearest: the grain billed USD is reported at. */
export function wholeMicroUsd(amount: NanoUsd): NanoUsd {
  return nanoUsdForMillicredits(millicreditsFromMicrocredits(microcreditsForNanoUsd(amount), 'nearest'));
}
