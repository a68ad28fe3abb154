/**
 * Plans, packs and overage as SERVICE.md "Pricing (credits)" lists them. 1 credit = $0.001.
 * Free carries a monthly beta pot; paid plans carry monthly plan credits. Both reset on the 1st (UTC) and do
 * not roll over; pack credits never expire; overage bills at the pack rate ($1 per 1,000 credits).
 */
export const PLANS = {
  free: { label: 'Free', priceUsd: 0, planCredits: 0, betaCredits: 10_000 },
  plus: { label: 'Plus', priceUsd: 20, planCredits: 20_000, betaCredits: 0 },
  pro: { label: 'Pro', priceUsd: 100, planCredits: 100_000, betaCredits: 0 },
  max: { label: 'Max', priceUsd: 200, planCredits: 200_000, betaCredits: 0 },
} as const;

export type PlanId = keyof typeof PLANS;

export function isPlanId(value: string): value is PlanId {
  return Object.hasOwn(PLANS, value);
}

/** Credit packs by price in whole USD. */
export const PACKS: Readonly<Record<number, number>> = { 5: 5_000, 20: 20_000, 100: 100_000 };

/** Overage, any plan: $1 per 1,000 credits, which is one nano-USD per microcredit. */
export const OVERAGE_NANO_USD_PER_MICROCREDIT = 1;

/** A month as the journal names it: `YYYY-MM` in UTC. */
export function periodOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** 00:00 UTC on the 1st of the month after `period`, when its plan and beta credits expire. */
export function periodEnd(period: string): Date {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month, 1));
}
