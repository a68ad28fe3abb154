import type { RunEvent } from '../../api/types';

/** The events after which the server ends a run's stream: nothing follows them. */
export const SETTLING_EVENT_TYPES = ['run.succeeded', 'run.failed', 'run.cancelled'] as const;
/** Every event type the live view shows; EventSource delivers a named event only to a listener of its name. */
export const SHOWN_EVENT_TYPES = [
  'run.queued',
  'run.started',
  'message.delta',
  'tool.call',
  'tool.result',
  ...SETTLING_EVENT_TYPES,
] as const;

/**
 * `events` with `event` added, unless it is one already held: after a reconnect the stream resumes after the
 * last id it delivered, but a late frame of the old connection, or a reconnect the page made itself, can
 * repeat one. Events stay in sequence order.
 */
export function withEvent(events: readonly RunEvent[], event: RunEvent): readonly RunEvent[] {
  const last = events.at(-1)?.seq ?? 0;
  return event.seq > last ? [...events, event] : events;
}

export type TranscriptEntry =
  | { kind: 'message'; seq: number; text: string }
  | { kind: 'tool.call'; seq: number; name: string; input: string }
  | { kind: 'tool.result'; seq: number; name: string; ok: boolean; output: string }
  | { kind: 'status'; seq: number; type: string; detail?: string };

const text = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);

/**
 * What a person reads of a run's events: consecutive message deltas joined into one message, each tool call and
 * its result, and the run's own transitions. Types the console does not know are left out, as the API asks.
 */
export function transcriptOf(events: readonly RunEvent[]): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  for (const event of events) {
    const data = event.data;
    const previous = entries.at(-1);
    if (event.type === 'message.delta') {
      if (previous?.kind === 'message') previous.text += text(data.text);
      else entries.push({ kind: 'message', seq: event.seq, text: text(data.text) });
    } else if (event.type === 'tool.call')
      entries.push({ kind: 'tool.call', seq: event.seq, name: text(data.name), input: text(data.arguments) });
    else if (event.type === 'tool.result')
      entries.push({
        kind: 'tool.result',
        seq: event.seq,
        name: text(data.name),
        ok: data.ok === true,
        output: text(data.output),
      });
    else if ((SHOWN_EVENT_TYPES as readonly string[]).includes(event.type)) {
      const error = data.error as { message?: unknown } | undefined;
      entries.push({
        kind: 'status',
        seq: event.seq,
        type: event.type,
        ...(error?.message ? { detail: text(error.message) } : {}),
      });
    }
  }
  return entries;
}
