import type { Prisma } from '../generated/prisma/client';

/** A spend cap as stored in `teams.budget` and `team_members.budget` (CONTRACTS "Budgets and limits"). */
export interface StoredBudget {
  credits: number;
  period: string;
  time_zone: string;
  /** The local date the budget was set: where a rolling period counts from. */
  anchor: string;
}

/** A stored budget, or null for a column that holds none (or one this code cannot read). */
export function budgetOf(value: Prisma.JsonValue | null): StoredBudget | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const { credits, period, time_zone: timeZone, anchor } = value;
  if (typeof credits !== 'number' || typeof period !== 'string' || typeof timeZone !== 'string') return null;
  return { credits, period, time_zone: timeZone, anchor: typeof anchor === 'string' ? anchor : '1970-01-01' };
}
