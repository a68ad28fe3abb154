import type { Team } from '../../api/types';

/** A team's or member's budget as the API shows it, with `spent` this period. */
export type BudgetView = NonNullable<Team['budget']>;

/** What the budget form holds, as typed: strings until submitted. */
export interface BudgetFormState {
  credits: string;
  period: 'daily' | 'weekly' | 'monthly' | 'rolling_days';
  /** The N of `rolling_days:N`. */
  days: string;
  timeZone: string;
}

export const PERIOD_LABELS: Record<BudgetFormState['period'], string> = {
  daily: 'Daily',
  weekly: 'Weekly (from Monday)',
  monthly: 'Monthly (from the 1st)',
  rolling_days: 'Every N days',
};

/** The form for `budget`, or a blank one in `zone` (the browser's) when none is set. */
export function budgetFormOf(budget: BudgetView | null | undefined, zone: string): BudgetFormState {
  if (!budget) return { credits: '', period: 'monthly', days: '30', timeZone: zone };
  const rolling = /^rolling_days:(\d+)$/.exec(budget.period);
  return {
    credits: String(budget.credits),
    period: rolling ? 'rolling_days' : (budget.period as BudgetFormState['period']),
    days: rolling?.[1] ?? '30',
    timeZone: budget.time_zone,
  };
}

/** The PATCH body's `budget`; the API validates it and names a bad field. */
export function budgetBody(form: BudgetFormState): { credits: number; period: string; time_zone: string } {
  return {
    credits: Number(form.credits),
    period: form.period === 'rolling_days' ? `rolling_days:${form.days.trim()}` : form.period,
    time_zone: form.timeZone.trim() || 'UTC',
  };
}

const credits = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

function periodWords(period: string): string {
  const rolling = /^rolling_days:(\d+)$/.exec(period);
  if (rolling) return `${rolling[1]}-day period`;
  return { daily: 'day', weekly: 'week', monthly: 'month' }[period] ?? period;
}

/** "3.25 of 10 credits spent this week" for tables and headings. */
export function budgetSummary(budget: BudgetView): string {
  const spent = credits.format(budget.spent);
  return `${spent} of ${credits.format(budget.credits)} credits spent this ${periodWords(budget.period)}`;
}
