import { currentPeriod, isTimeZone, localDate, parseBudgetPeriod } from './periods';

const at = (iso: string) => new Date(iso);
const weekly = { kind: 'weekly' } as const;

describe('parseBudgetPeriod', () => {
  it('reads the four periods and nothing else', () => {
    expect(parseBudgetPeriod('daily')).toEqual({ kind: 'daily' });
    expect(parseBudgetPeriod('weekly')).toEqual({ kind: 'weekly' });
    expect(parseBudgetPeriod('monthly')).toEqual({ kind: 'monthly' });
    expect(parseBudgetPeriod('rolling_days:1')).toEqual({ kind: 'rolling_days', days: 1 });
    expect(parseBudgetPeriod('rolling_days:366')).toEqual({ kind: 'rolling_days', days: 366 });
    for (const bad of ['', 'yearly', 'rolling_days:0', 'rolling_days:367', 'rolling_days:07', 'rolling_days:']) {
      expect(parseBudgetPeriod(bad)).toBeUndefined();
    }
  });
});

describe('isTimeZone', () => {
  it('knows IANA zones and refuses anything else', () => {
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });
});

describe('currentPeriod', () => {
  it('a week runs Monday 00:00 to Monday 00:00 in the zone, and the next starts at the boundary', () => {
    const sunday = currentPeriod(weekly, 'Europe/Paris', at('2026-11-29T22:59:59Z'));
    expect(sunday.label).toBe('2026-11-23');
    expect(sunday.start.toISOString()).toBe('2026-11-22T23:00:00.000Z');
    expect(sunday.end.toISOString()).toBe('2026-11-29T23:00:00.000Z');
    const monday = currentPeriod(weekly, 'Europe/Paris', at('2026-11-29T23:00:00Z'));
    expect(monday.label).toBe('2026-11-30');
    expect(monday.start).toEqual(sunday.end);
  });

  it('the same instant is in different weeks in different zones', () => {
    const instant = at('2026-11-30T03:00:00Z'); // Monday in UTC, still Sunday evening in New York
    expect(currentPeriod(weekly, 'UTC', instant).label).toBe('2026-11-30');
    expect(currentPeriod(weekly, 'America/New_York', instant).label).toBe('2026-11-23');
  });

  it('a day across a DST change is 23 or 25 hours long', () => {
    const spring = currentPeriod({ kind: 'daily' }, 'Europe/Paris', at('2026-03-29T12:00:00Z'));
    expect(spring.start.toISOString()).toBe('2026-03-28T23:00:00.000Z');
    expect(spring.end.toISOString()).toBe('2026-03-29T22:00:00.000Z');
    const autumn = currentPeriod({ kind: 'daily' }, 'Europe/Paris', at('2026-10-25T12:00:00Z'));
    expect(autumn.end.getTime() - autumn.start.getTime()).toBe(25 * 3_600_000);
  });

  it('a month starts on the 1st and December rolls into January', () => {
    const december = currentPeriod({ kind: 'monthly' }, 'Asia/Tokyo', at('2026-12-31T15:00:00Z'));
    expect(december.label).toBe('2027-01-01'); // already midnight of the 1st in Tokyo
    expect(december.end.toISOString()).toBe('2027-01-31T15:00:00.000Z');
    expect(currentPeriod({ kind: 'monthly' }, 'UTC', at('2026-12-31T15:00:00Z')).label).toBe('2026-12-01');
  });

  it('rolling periods count N days from the anchor, before and after it', () => {
    const period = { kind: 'rolling_days', days: 10 } as const;
    expect(currentPeriod(period, 'UTC', at('2026-11-27T08:00:00Z'), '2026-11-27').label).toBe('2026-11-27');
    expect(currentPeriod(period, 'UTC', at('2026-12-06T23:59:59Z'), '2026-11-27').label).toBe('2026-11-27');
    const next = currentPeriod(period, 'UTC', at('2026-12-07T00:00:00Z'), '2026-11-27');
    expect(next.label).toBe('2026-12-07');
    expect(next.end.toISOString()).toBe('2026-12-17T00:00:00.000Z');
    expect(currentPeriod(period, 'UTC', at('2026-11-26T00:00:00Z'), '2026-11-27').label).toBe('2026-11-17');
  });

  it('localDate is the date on the wall in the zone', () => {
    expect(localDate(at('2026-11-27T23:30:00Z'), 'Asia/Tokyo')).toBe('2026-11-28');
    expect(localDate(at('2026-11-27T23:30:00Z'), 'UTC')).toBe('2026-11-27');
  });
});
