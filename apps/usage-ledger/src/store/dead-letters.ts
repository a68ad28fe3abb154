import type { PrismaClient } from '../generated/prisma/client';

/** A usage event parked instead of applied: where it came from on the bus, why, and its bytes. */
export interface DeadLetterInput {
  eventId: string | null;
  topic: string;
  partition: number;
  offset: string;
  key: string;
  error: string;
  event: Uint8Array;
}

export interface DeadLetter extends DeadLetterInput {
  id: bigint;
  createdAt: Date;
  replayedAt: Date | null;
}

/** Parks one event. The same event parked again (a redelivery of the poison) keeps its first row. */
export async function recordDeadLetter(db: PrismaClient, letter: DeadLetterInput): Promise<void> {
  await db.$executeRawUnsafe(
    `INSERT INTO usage_dead_letters (event_id, topic, partition, ` +
      `"offset", key, error, event) VALUES ($1, $2, $3, $4, ` +
      `$5, $6, $7)
     ON CONFLICT (event_id) WHERE event_id IS NOT NULL DO NOTHING`,
    letter.eventId,
    letter.topic,
    letter.partition,
    letter.offset,
    letter.key,
    letter.error,
    Buffer.from(letter.event),
  );
}

/** Dead letters oldest first: the ones not replayed yet, or with `all` every one; or exactly `ids`. */
export async function listDeadLetters(
  db: PrismaClient,
  query: { ids?: bigint[]; all?: boolean; limit?: number },
): Promise<DeadLetter[]> {
  const rows = await db.usageDeadLetter.findMany({
    where: query.ids ? { id: { in: query.ids } } : query.all ? {} : { replayedAt: null },
    orderBy: { id: 'asc' },
    take: query.limit,
  });
  return rows.map((row) => ({ ...row, event: new Uint8Array(row.event) }));
}

export async function markReplayed(db: PrismaClient, id: bigint, at: Date = new Date()): Promise<void> {
  await db.usageDeadLetter.update({ where: { id }, data: { replayedAt: at } });
}
