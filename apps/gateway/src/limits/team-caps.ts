import { currentPeriod, parseBudgetPeriod, type BudgetPeriod, type PeriodWindow } from '@sbc/budget-periods';
import type { Budget as BudgetMessage, TeamCaps } from '@sbc/proto/sbc/account/v1/teams_pb';

/**
 * A team's and a team member's spend caps (CONTRACTS "Budgets and limits") as the edge holds them: learned
 * with a team key's cached principal, spent in shared-store counters named by the cap and its current period,
 * so a period starts from zero at its boundary with nothing to reset it.
 */
export interface SpendCap {
  credits: number;
  period: BudgetPeriod;
  /** As the owner wrote it (`weekly`, `rolling_days:30`). */
  periodText: string;
  timeZone: string;
  anchor: string;
}

export interface TeamSpendCaps {
  teamId: string;
  team?: SpendCap;
  member?: SpendCap;
}

export type CapScope = 'team' | 'member';

/** A cap as its message carries it; a period this edge cannot read is no cap rather than a wrong one. */
export function spendCapOf(budget: BudgetMessage | undefined): SpendCap | undefined {
  const period = budget && parseBudgetPeriod(budget.period);
  if (!budget || !period) return undefined;
  const { credits, period: periodText, timeZone, anchor } = budget;
  return { credits: Number(credits), period, periodText, timeZone: timeZone || 'UTC', anchor };
}

export function teamSpendCapsOf(caps: TeamCaps | undefined): TeamSpendCaps | undefined {
  if (!caps?.teamId) return undefined;
  return { teamId: caps.teamId, team: spendCapOf(caps.team), member: spendCapOf(caps.member) };
}

/**
 * The counter a cap spends in during the period `at` falls in, and that period. The key names the period's
 * kind and zone too, so changing them starts a fresh count rather than reading another period's.
 */
export function capCounter(
  scope: CapScope,
  owner: string,
  cap: SpendCap,
  at: Date,
): { key: string; window: PeriodWindow } {
  const window = periodAt(cap, at);
  return { key: `spend:${scope}:${owner}:${cap.periodText}:${cap.timeZone}:${window.label}`, window };
}

/**
 * The cap's period at `at`. A cap lives in a cached principal for many calls, so its period is kept beside it
 * and worked out again (a time-zone lookup) only once the clock leaves it.
 */
const periods = new WeakMap<SpendCap, PeriodWindow>();
function periodAt(cap: SpendCap, at: Date): PeriodWindow {
  const known = periods.get(cap);
  if (known && at >= known.start && at < known.end) return known;
  const window = currentPeriod(cap.period, cap.timeZone, at, cap.anchor);
  periods.set(cap, window);
  return window;
}

/** Who a member's counter belongs to: the member within the team (one user may be in several teams). */
export const memberOwner = (teamId: string, userId: string) => `${teamId}:${userId}`;

/** A cap's period in words, for refusals. */
export function periodWords(cap: SpendCap): string {
  return cap.period.kind === 'rolling_days' ? `${cap.period.days}-day` : cap.period.kind;
}
