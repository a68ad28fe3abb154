/**
 * Spend-cap periods (CONTRACTS "Budgets and limits"), derived from the clock in the owner's time zone: the
 * period a moment falls in is a pure function of the moment, so no job resets a cap and none can miss a
 * reset. A counter is keyed by its period's start (`label`), so a new period starts from zero on its own.
 */

export type BudgetPeriod =
  { kind: 'daily' } | { kind: 'weekly' } | { kind: 'monthly' } | { kind: 'rolling_days'; days: number };

/** The longest rolling period, in days. */
export const MAX_ROLLING_DAYS = 366;
const DAY_MS = 86_400_000;
const ROLLING = /^rolling_days:([1-9]\d{0,2})$/;

/** `daily`, `weekly`, `monthly` or `rolling_days:N` (N 1..366); undefined for anything else. */
export function parseBudgetPeriod(text: string): BudgetPeriod | undefined {
  if (text === 'daily' || text === 'weekly' || text === 'monthly') return { kind: text };
  const days = Number(ROLLING.exec(text)?.[1]);
  return days >= 1 && days <= MAX_ROLLING_DAYS ? { kind: 'rolling_days', days } : undefined;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether `timeZone` is an IANA zone this runtime knows (`UTC` included). */
export function isTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * The wall clock at `at` in `timeZone`, as if it were UTC (whole seconds): its difference to `at` is the zone's
 * offset then.
 */
export function wallClockMs(at: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(at))) parts[part.type] = Number(part.value);
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/** A civil day as a day count since 1970-01-01. */
const civilDayAt = (at: number, timeZone: string) => Math.floor(wallClockMs(at, timeZone) / DAY_MS);

/**
 * The instant the civil day `day` starts in `timeZone`. The zone's offset is taken at a first guess and again
 * at the result, which settles it across a DST change; a midnight a DST jump skips starts at the jump.
 */
function startOfDay(day: number, timeZone: string): Date {
  const wall = day * DAY_MS;
  const first = wall - (wallClockMs(wall, timeZone) - wall);
  const second = wall - (wallClockMs(first, timeZone) - first);
  return new Date(civilDayAt(second, timeZone) === day ? second : first);
}

const isoDay = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** The local date at `at` in `timeZone`, `YYYY-MM-DD`: where a rolling period set then counts from. */
export function localDate(at: Date, timeZone: string): string {
  return isoDay(civilDayAt(at.getTime(), timeZone));
}

export interface PeriodWindow {
  /** The local date the period starts on, `YYYY-MM-DD`: the period's name in counter keys. */
  label: string;
  start: Date;
  /** When the next period starts. */
  end: Date;
}

/**
 * The period `at` falls in: a day from local midnight; a week from Monday; a month from the 1st; or N days
 * counted from `anchor` (a `YYYY-MM-DD` local date; 1970-01-01 when absent).
 */
export function currentPeriod(period: BudgetPeriod, timeZone: string, at: Date, anchor?: string): PeriodWindow {
  const today = civilDayAt(at.getTime(), timeZone);
  let first: number;
  let next: number;
  switch (period.kind) {
    case 'daily':
      [first, next] = [today, today + 1];
      break;
    case 'weekly':
      // 1970-01-01 was a Thursday: day 4 counted from Monday 1969-12-29.
      first = today - ((((today + 3) % 7) + 7) % 7);
      next = first + 7;
      break;
    case 'monthly': {
      const date = new Date(today * DAY_MS);
      first = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1) / DAY_MS;
      next = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / DAY_MS;
      break;
    }
    case 'rolling_days': {
      const from = anchor ? Math.floor(Date.parse(`${anchor}T00:00:00Z`) / DAY_MS) : 0;
      const origin = Number.isFinite(from) ? from : 0;
      first = origin + Math.floor((today - origin) / period.days) * period.days;
      next = first + period.days;
    }
  }
  return { label: isoDay(first), start: startOfDay(first, timeZone), end: startOfDay(next, timeZone) };
}
