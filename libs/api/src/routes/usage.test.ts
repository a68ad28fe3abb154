import { localDate, resolveUsageWindow, startOfLocalDay } from './usage';

describe('usage windows', () => {
  it('a date is 00:00 of that day in the zone, across daylight-saving changes', () => {
    expect(startOfLocalDay('2026-11-01', 'UTC').toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(startOfLocalDay('2026-07-01', 'Europe/Berlin').toISOString()).toBe('2026-06-30T22:00:00.000Z');
    expect(startOfLocalDay('2026-12-01', 'Europe/Berlin').toISOString()).toBe('2026-11-30T23:00:00.000Z');
    // The day the clocks go back (Berlin, 25 Oct 2026) and the day after.
    expect(startOfLocalDay('2026-10-25', 'Europe/Berlin').toISOString()).toBe('2026-10-24T22:00:00.000Z');
    expect(startOfLocalDay('2026-10-26', 'Europe/Berlin').toISOString()).toBe('2026-10-25T23:00:00.000Z');
    expect(startOfLocalDay('2026-11-01', 'Asia/Kolkata').toISOString()).toBe('2026-10-31T18:30:00.000Z');
    expect(localDate(new Date('2026-10-31T18:29:59Z'), 'Asia/Kolkata')).toBe('2026-10-31');
    expect(localDate(new Date('2026-10-31T18:30:00Z'), 'Asia/Kolkata')).toBe('2026-11-01');
  });

  it('without from, the last N local days end with today; hours default to whole hours', () => {
    const now = new Date('2026-11-22T10:15:00Z');
    expect(resolveUsageWindow({}, now, { days: 30 })).toEqual({
      from: new Date('2026-10-24T00:00:00Z'),
      to: now,
      tz: 'UTC',
    });
    expect(resolveUsageWindow({ tz: 'America/New_York' }, now, { days: 1 }).from.toISOString()).toBe(
      '2026-11-22T05:00:00.000Z',
    );
    expect(resolveUsageWindow({}, now, { hours: 24 }).from.toISOString()).toBe('2026-11-21T10:00:00.000Z');
    expect(
      resolveUsageWindow({ from: '2026-11-01', to: '2026-11-03T12:00:00+01:00', tz: 'Europe/Paris' }, now, {
        days: 30,
      }),
    ).toEqual({
      from: new Date('2026-10-31T23:00:00Z'),
      to: new Date('2026-11-03T11:00:00Z'),
      tz: 'Europe/Paris',
    });
  });
});
