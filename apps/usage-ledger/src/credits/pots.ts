import { creditsFromMicrocredits, microcredits, microcreditsFromCredits } from '@sbc/money';

/**
 * The balance, derived: credits granted (the journal) minus credits used (the usage rollups), month by month.
 * Nothing here depends on the order calls were applied in, only on monthly sums, so a replayed or shuffled
 * stream of usage events derives the same pots.
 *
 * Spend order within a month: plan credits, then the beta pot (both expire at the month's end, so they go
 * first), then permanent credits (packs and grants, which never expire), then overage up to the account's
 * monthly overage limit. Usage past all of that is still recorded (a call the edge let through) as overage.
 */

export type Pot = 'plan' | 'beta' | 'permanent';

export interface GrantEntry {
  pot: Pot;
  credits: number;
  /** `YYYY-MM`: the month a plan or beta grant is for; for permanent credits, the month they arrived. */
  period: string;
}

export interface PotState {
  granted: number;
  used: number;
  remaining: number;
}

interface MonthPots {
  period: string;
  plan: PotState;
  beta: PotState;
  /** Permanent credits: granted = what was there for the month (carried + arrived), used within the month. */
  permanent: PotState;
  overage: { used: number; limit: number; remaining: number };
  usage: number;
}

export interface DerivedCredits {
  /** The month asked for (normally the current one). */
  current: MonthPots;
  /** What can still be spent now: the three pots plus overage room, never below 0. */
  available: number;
  /** The pots alone (no overage room); negative only after a negative grant. */
  balance: number;
}

/** Amounts in and out are decimal credits; the arithmetic runs in whole microcredits, so it is exact. */
const units = (credits: number): number => microcreditsFromCredits(credits);
const decimal = (amount: number): number => creditsFromMicrocredits(microcredits(amount));

function pot(granted: number, used: number): PotState {
  return { granted: decimal(granted), used: decimal(used), remaining: decimal(granted - used) };
}

export function derivePots(input: {
  grants: GrantEntry[];
  usageByPeriod: Map<string, number>;
  period: string;
  overageLimit: number;
}): DerivedCredits {
  const periods = new Set<string>([input.period, ...input.usageByPeriod.keys()]);
  for (const grant of input.grants) periods.add(grant.period);
  let permanent = 0;
  let current: MonthPots | undefined;
  for (const period of [...periods].sort()) {
    if (period > input.period) break; // usage stamped in the future (clock skew) counts when its month comes
    const granted = (which: Pot) =>
      input.grants.filter((g) => g.pot === which && g.period === period).reduce((sum, g) => sum + units(g.credits), 0);
    const plan = Math.max(0, granted('plan'));
    const beta = Math.max(0, granted('beta'));
    permanent += granted('permanent');
    const usage = units(input.usageByPeriod.get(period) ?? 0);
    const fromPlan = Math.min(usage, plan);
    const fromBeta = Math.min(usage - fromPlan, beta);
    const carried = permanent;
    const fromPermanent = Math.min(usage - fromPlan - fromBeta, Math.max(0, permanent));
    permanent -= fromPermanent;
    const overage = usage - fromPlan - fromBeta - fromPermanent;
    const limit = period === input.period ? units(input.overageLimit) : 0;
    current = {
      period,
      plan: pot(plan, fromPlan),
      beta: pot(beta, fromBeta),
      permanent: pot(carried, fromPermanent),
      overage: { used: decimal(overage), limit: decimal(limit), remaining: decimal(Math.max(0, limit - overage)) },
      usage: decimal(usage),
    };
  }
  const month = current!;
  const balance = units(month.plan.remaining) + units(month.beta.remaining) + units(month.permanent.remaining);
  return {
    current: month,
    balance: decimal(balance),
    available: decimal(Math.max(0, balance + units(month.overage.remaining))),
  };
}
