import { ApiError } from '@sbc/errors';
import { pageOf } from '@sbc/pagination';
import { Prisma, type PrismaClient as RunsDb } from '../generated/prisma/client';
import type { Tx } from './events';

/**
 * Stored OpenAI Responses (migration 0004). Every write to an owner's responses locks the owner's counters row
 * first (`response_owners`), so one owner's writes are serialised and a store, a delete and the purge can never
 * wait on each other in opposite orders. Reads never lock.
 */

export interface ResponseBounds {
  /** Responses one owner keeps; past it the oldest go first. */
  maxResponses: number;
  /** Bytes (response and items, UTF-8) one owner keeps; past it the oldest go first. */
  maxBytes: number;
  /** How long a response is served after it was stored. */
  ttlMs: number;
}

export interface ResponseToStore {
  ownerId: string;
  id: string;
  responseJson: string;
  inputItemsJson: string;
}

/** Rows read at a time while evicting an owner's oldest responses. */
const EVICT_BATCH = 100;
/** Owners whose expired responses one purge pass deletes. */
const PURGE_OWNERS_BATCH = 100;

function responseNotFound(id: string): ApiError {
  return new ApiError('not_found', `Response with id '${id}' not found.`, { param: 'response_id' });
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

/** Locks the owner's counters row for the rest of the transaction, creating it at zero if it is new. */
async function lockOwner(tx: Tx, ownerId: string): Promise<{ responses: number; bytes: number }> {
  const rows = await tx.$queryRaw<Array<{ responses: number; bytes: bigint }>>`
    INSERT INTO response_owners (owner_id) VALUES (${ownerId})
    ON CONFLICT (owner_id) DO UPDATE SET owner_id = EXCLUDED.owner_id
    RETURNING responses, bytes`;
  const row = rows[0]!;
  return { responses: Number(row.responses), bytes: Number(row.bytes) };
}

async function setOwnerTotals(tx: Tx, ownerId: string, totals: { responses: number; bytes: number }): Promise<void> {
  await tx.responseOwner.update({
    where: { ownerId },
    data: { responses: totals.responses, bytes: BigInt(totals.bytes) },
  });
}

/**
 * Keeps a response for `bounds.ttlMs`, then evicts the owner's oldest responses (never the new one) until the
 * owner is within both bounds; all in one transaction. A response over the byte bound on its own is refused.
 */
export async function storeResponse(
  db: RunsDb,
  input: ResponseToStore,
  bounds: ResponseBounds,
  now: Date,
): Promise<{ expiresAt: Date; evictedIds: string[] }> {
  const sizeBytes = Buffer.byteLength(input.responseJson) + Buffer.byteLength(input.inputItemsJson);
  if (sizeBytes > bounds.maxBytes) {
    throw new ApiError(
      'invalid_request',
      `The response is ${sizeBytes} bytes; an owner keeps at most ${bounds.maxBytes} bytes of responses.`,
      { param: 'response_json' },
    );
  }
  const expiresAt = new Date(now.getTime() + bounds.ttlMs);
  try {
    return await db.$transaction(async (tx) => {
      const totals = await lockOwner(tx, input.ownerId);
      await tx.storedResponse.create({
        data: {
          id: input.id,
          ownerId: input.ownerId,
          response: input.responseJson,
          inputItems: input.inputItemsJson,
          sizeBytes,
          createdAt: now,
          expiresAt,
        },
      });
      totals.responses += 1;
      totals.bytes += sizeBytes;
      const evictedIds = await evictOldest(tx, input, totals, bounds);
      await setOwnerTotals(tx, input.ownerId, totals);
      return { expiresAt, evictedIds };
    });
  } catch (error) {
    if (isUniqueViolation(error))
      throw new ApiError('conflict', `A response with id '${input.id}' is already stored.`, { param: 'response_id' });
    throw error;
  }
}

/** Deletes the owner's oldest responses but `keep` while the totals are over a bound; updates `totals`. */
async function evictOldest(
  tx: Tx,
  keep: { ownerId: string; id: string },
  totals: { responses: number; bytes: number },
  bounds: ResponseBounds,
): Promise<string[]> {
  const over = () => totals.responses > bounds.maxResponses || totals.bytes > bounds.maxBytes;
  const evicted: string[] = [];
  while (over()) {
    const oldest = await tx.storedResponse.findMany({
      where: { ownerId: keep.ownerId, id: { not: keep.id } },
      orderBy: { seq: 'asc' },
      take: EVICT_BATCH,
      select: { id: true, sizeBytes: true },
    });
    if (oldest.length === 0) break;
    const batch: string[] = [];
    for (const row of oldest) {
      if (!over()) break;
      batch.push(row.id);
      totals.responses -= 1;
      totals.bytes -= row.sizeBytes;
    }
    await tx.storedResponse.deleteMany({ where: { id: { in: batch } } });
    evicted.push(...batch);
  }
  return evicted;
}

/** The owner's response while it is served (not expired, not deleted), or 404. */
export async function findResponse(
  db: RunsDb,
  ownerId: string,
  id: string,
  now: Date,
  withInputItems: boolean,
): Promise<{ responseJson: string; inputItemsJson?: string }> {
  const row = await db.storedResponse.findFirst({
    where: { id, ownerId, expiresAt: { gt: now } },
    select: { response: true, inputItems: withInputItems },
  });
  if (!row) throw responseNotFound(id);
  return { responseJson: row.response, ...(withInputItems ? { inputItemsJson: row.inputItems } : {}) };
}

/** A page of the response's input items, oldest first or newest first, after the item `after` names. */
export async function listInputItems(
  db: RunsDb,
  ownerId: string,
  id: string,
  now: Date,
  query: { limit: number; ascending: boolean; after?: string },
): Promise<{ items: unknown[]; hasMore: boolean }> {
  const { inputItemsJson } = await findResponse(db, ownerId, id, now, true);
  const items = JSON.parse(inputItemsJson!) as Array<{ id?: unknown }>;
  if (!query.ascending) items.reverse();
  const page = pageOf(items, { limit: query.limit, after_id: query.after }, (item) => String(item.id ?? ''));
  return { items: page.data, hasMore: page.has_more };
}

/** Deletes the owner's response now; 404 when it is not served (unknown, another owner's, expired). */
export async function deleteResponse(db: RunsDb, ownerId: string, id: string, now: Date): Promise<void> {
  await db.$transaction(async (tx) => {
    const owners = await tx.$queryRaw<Array<{ responses: number; bytes: bigint }>>`
      SELECT responses, bytes FROM response_owners WHERE owner_id = ${ownerId} FOR UPDATE`;
    const owner = owners[0];
    // An expired response the purge has not reached yet is not served, so not deleted either: the purge takes it.
    const deleted = owner
      ? await tx.$queryRaw<Array<{ size_bytes: number }>>`
          DELETE FROM stored_responses WHERE id = ${id} AND owner_id = ${ownerId} AND expires_at > ${now}
          RETURNING size_bytes`
      : [];
    if (!owner || deleted.length === 0) throw responseNotFound(id);
    await setOwnerTotals(tx, ownerId, {
      responses: Number(owner.responses) - 1,
      bytes: Number(owner.bytes) - Number(deleted[0]!.size_bytes),
    });
  });
}

/**
 * Deletes every response that expired by `now`, owner by owner (each in its own transaction, its counters
 * corrected); returns how many. Safe to run on several replicas at once.
 */
export async function purgeExpiredResponses(db: RunsDb, now: Date): Promise<number> {
  let purged = 0;
  for (;;) {
    const owners = await db.$queryRaw<Array<{ owner_id: string }>>`
      SELECT DISTINCT owner_id FROM stored_responses WHERE expires_at <= ${now} LIMIT ${PURGE_OWNERS_BATCH}`;
    if (owners.length === 0) return purged;
    for (const { owner_id: ownerId } of owners) {
      purged += await db.$transaction(async (tx) => {
        const totals = await lockOwner(tx, ownerId);
        const deleted = await tx.$queryRaw<Array<{ size_bytes: number }>>`
          DELETE FROM stored_responses WHERE owner_id = ${ownerId} AND expires_at <= ${now} RETURNING size_bytes`;
        if (deleted.length === 0) return 0;
        totals.responses -= deleted.length;
        totals.bytes -= deleted.reduce((sum, row) => sum + Number(row.size_bytes), 0);
        await setOwnerTotals(tx, ownerId, totals);
        return deleted.length;
      });
    }
  }
}
