import type { PubSub } from '@sbc/cache';
import { runEventsChannel } from '../channels';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import { decodeEvent, listEventsAfter, SETTLING_EVENTS, type StoredEvent } from '../store/events';

const PAGE = 500;
// With no announcement for this long, the table is read anyway: announcements are at-most-once.
const BACKSTOP_POLL_MS = 2_000;

/** Resolves after `ms`, on `wakeUp`, or when `signal` aborts, whichever is first. */
function pause(ms: number, signal: AbortSignal, setWake: (wake: (() => void) | undefined) => void): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      setWake(undefined);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    setWake(done);
  });
}

/**
 * A run's events after `after`, in sequence order with no gap and no repeat, ending after the settling event
 * (or when `signal` aborts). It subscribes to the run's channel before reading the table, so an event
 * committed while the stored ones are read is held, not missed; announced events are used only when they
 * continue the sequence exactly, and any gap (a lost or early announcement) is filled from the table.
 */
export async function* streamRunEvents(
  deps: { db: RunsDb; pubsub: PubSub },
  runId: string,
  after: number,
  signal: AbortSignal,
): AsyncGenerator<StoredEvent> {
  let inbox: StoredEvent[] = [];
  let wake: (() => void) | undefined;
  const unsubscribe = await deps.pubsub.subscribe(runEventsChannel(runId), (message) => {
    const event = decodeEvent(message);
    if (!event || event.runId !== runId) return;
    inbox.push(event);
    wake?.();
  });
  try {
    let last = after;
    for (;;) {
      // The table: everything committed after the last event sent.
      for (;;) {
        const page = await listEventsAfter(deps.db, runId, last, PAGE);
        for (const event of page) {
          yield event;
          last = event.seq;
          if (SETTLING_EVENTS.has(event.type)) return;
        }
        if (page.length < PAGE || signal.aborted) break;
      }
      // The live tail, for as long as announcements continue the sequence.
      for (;;) {
        if (signal.aborted) return;
        inbox = inbox.filter((event) => event.seq > last).sort((a, b) => a.seq - b.seq);
        const next = inbox[0];
        if (next?.seq === last + 1) {
          inbox.shift();
          yield next;
          last = next.seq;
          if (SETTLING_EVENTS.has(next.type)) return;
          continue;
        }
        if (next) break;
        const before = inbox.length;
        await pause(BACKSTOP_POLL_MS, signal, (w) => (wake = w));
        if (inbox.length === before) break;
      }
    }
  } finally {
    await unsubscribe();
  }
}
