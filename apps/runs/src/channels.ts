/**
 * Pub/sub channels between the runs service's own replicas (Redis in services mode, memory embedded). All are
 * hints that make things prompt; the database stays the truth (workers poll, streams re-read, heartbeats
 * see a cancel), so a lost message only delays.
 */

/** A run was queued: idle workers look for work now. Message: the run id. */
export const RUN_QUEUED_CHANNEL = 'runs.run-queued.v1';

/** A running run was asked to stop: its worker aborts it. Message: the run id. */
export const CANCEL_REQUESTED_CHANNEL = 'runs.cancel-requested.v1';

/** A run's committed events, one message per event (JSON), for its live event streams. */
export function runEventsChannel(runId: string): string {
  return `runs.run-events.v1.${runId}`;
}
