/**
 * When a paired device counts as online. Devices are asked to heartbeat every 30 s. To keep heartbeats
 * cheap, a device's `last_seen_at` is written at most once per HEARTBEAT_RECORD_EVERY_MS: a little under the
 * heartbeat period, so every on-time heartbeat is still recorded while a device that beats faster costs at
 * most one write per window. The recorded time thus lags by at most one heartbeat period; ONLINE_WINDOW_MS
 * leaves room for that lag plus a missed heartbeat or two before a device shows offline.
 */
export const HEARTBEAT_RECORD_EVERY_MS = 25_000;
export const ONLINE_WINDOW_MS = 90_000;

export function isOnline(lastSeenAt: Date | null, now: Date): boolean {
  return lastSeenAt !== null && now.getTime() - lastSeenAt.getTime() <= ONLINE_WINDOW_MS;
}

/** A heartbeat is written when the recorded one is older than this (or there is none). */
export function heartbeatRecordedBefore(now: Date): Date {
  return new Date(now.getTime() - HEARTBEAT_RECORD_EVERY_MS);
}
