import { HEARTBEAT_RECORD_EVERY_MS, heartbeatRecordedBefore, isOnline, ONLINE_WINDOW_MS } from './presence';

describe('device presence', () => {
  const now = new Date('2026-09-23T12:00:00Z');
  const secondsAgo = (s: number) => new Date(now.getTime() - s * 1000);

  it('is offline before the first recorded heartbeat', () => {
    expect(isOnline(null, now)).toBe(false);
  });

  it('is online while the recorded heartbeat is at most 90 s old', () => {
    expect(isOnline(secondsAgo(0), now)).toBe(true);
    expect(isOnline(secondsAgo(90), now)).toBe(true);
    expect(isOnline(secondsAgo(90.001), now)).toBe(false);
  });

  it('records heartbeats a little more often than devices send them, so every on-time one is kept', () => {
    expect(HEARTBEAT_RECORD_EVERY_MS).toBeLessThan(30_000);
    expect(heartbeatRecordedBefore(now)).toEqual(new Date(now.getTime() - HEARTBEAT_RECORD_EVERY_MS));
  });

  it('stays online through a missed heartbeat', () => {
    // Every on-time heartbeat (30 s apart) is recorded, so after one missed beat the record is 60 s old.
    expect(ONLINE_WINDOW_MS).toBeGreaterThan(2 * 30_000);
  });
});
