import type { PubSub } from '@sbc/cache';
import type { Logger } from '@sbc/logging';
import { runEventsChannel } from '../channels';
import type { Prisma, PrismaClient as RunsDb } from '../generated/prisma/client';

export type Tx = Prisma.TransactionClient;

/** Event types (CONTRACTS "Runs"); clients ignore types they do not know. */
export type RunEventType =
  | 'run.queued'
  | 'run.started'
  | 'message.delta'
  | 'tool.call'
  | 'tool.result'
  | 'run.succeeded'
  | 'run.failed'
  | 'run.cancelled';

export const SETTLING_EVENTS: ReadonlySet<string> = new Set(['run.succeeded', 'run.failed', 'run.cancelled']);

export interface StoredEvent {
  runId: string;
  seq: number;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** An event as announced on the channel (JSON), and back. */
function encodeEvent(event: StoredEvent): string {
  return JSON.stringify({
    run_id: event.runId,
    seq: event.seq,
    type: event.type,
    data: event.data,
    created_at: event.createdAt.toISOString(),
  });
}

export function decodeEvent(message: string): StoredEvent | undefined {
  try {
    const raw = JSON.parse(message) as {
      run_id?: unknown;
      seq?: unknown;
      type?: unknown;
      data?: unknown;
      created_at?: unknown;
    };
    if (
      typeof raw.run_id !== 'string' ||
      typeof raw.seq !== 'number' ||
      typeof raw.type !== 'string' ||
      typeof raw.created_at !== 'string'
    )
      return undefined;
    return {
      runId: raw.run_id,
      seq: raw.seq,
      type: raw.type,
      data: (raw.data ?? {}) as Record<string, unknown>,
      createdAt: new Date(raw.created_at),
    };
  } catch {
    return undefined;
  }
}

/**
 * Appends one event inside the caller's transaction. The sequence number is taken from the run row in the same
 * transaction (the row lock orders concurrent writers), so a run's events are numbered 1, 2, 3, … with no gap,
 * and an event exists exactly when the state change it reports was committed.
 */
async function appendEvent(
  tx: Tx,
  runId: string,
  type: RunEventType,
  data: Record<string, unknown>,
): Promise<StoredEvent> {
  const [row] = await tx.$queryRaw<
    { last_seq: number }[]
  >`UPDATE runs SET last_seq = last_seq + 1 WHERE id = ${runId} RETURNING last_seq`;
  if (!row) throw new Error(`run ${runId} vanished while appending an event`);
  const created = await tx.runEvent.create({
    data: { runId, seq: row.last_seq, type, data: data as Prisma.InputJsonObject },
  });
  // The data as stored (jsonb orders keys its own way), so a live event reads exactly like a stored one.
  return toStored(created);
}

export interface EventWriter {
  db: RunsDb;
  pubsub: PubSub;
  logger: Logger;
}

export type AppendEvent = (runId: string, type: RunEventType, data: Record<string, unknown>) => Promise<StoredEvent>;

/**
 * Runs `work` in one transaction with an `append` for run events, then announces the committed events on
 * their runs' channels. Announcing is a hint for live readers; they fall back to the table, so a lost
 * announcement delays an event but never loses it.
 */
export async function withEvents<T>(
  writer: EventWriter,
  work: (tx: Tx, append: AppendEvent) => Promise<T>,
): Promise<T> {
  const events: StoredEvent[] = [];
  const result = await writer.db.$transaction(
    (tx) =>
      work(tx, async (runId, type, data) => {
        const event = await appendEvent(tx, runId, type, data);
        events.push(event);
        return event;
      }),
    { timeout: 15_000 },
  );
  for (const event of events) {
    writer.pubsub
      .publish(runEventsChannel(event.runId), encodeEvent(event))
      .catch((err: unknown) => writer.logger.warn({ err, runId: event.runId }, 'announcing a run event failed'));
  }
  return result;
}

/** `withEvents` for one run's events. */
export function withRunEvents<T>(
  writer: EventWriter,
  runId: string,
  work: (tx: Tx, append: (type: RunEventType, data: Record<string, unknown>) => Promise<StoredEvent>) => Promise<T>,
): Promise<T> {
  return withEvents(writer, (tx, append) => work(tx, (type, data) => append(runId, type, data)));
}

function toStored(row: {
  runId: string;
  seq: number;
  type: string;
  data: Prisma.JsonValue;
  createdAt: Date;
}): StoredEvent {
  return {
    runId: row.runId,
    seq: row.seq,
    type: row.type,
    data: (row.data ?? {}) as Record<string, unknown>,
    createdAt: row.createdAt,
  };
}

/** Up to `limit` events of a run after sequence number `after`, in order. */
export async function listEventsAfter(
  db: Pick<RunsDb, 'runEvent'>,
  runId: string,
  after: number,
  limit: number,
): Promise<StoredEvent[]> {
  const rows = await db.runEvent.findMany({
    where: { runId, seq: { gt: after } },
    orderBy: { seq: 'asc' },
    take: limit,
  });
  return rows.map(toStored);
}
