import { monotonicFactory } from 'ulid';
import { ApiError } from '@sbc/errors';
import type { PrismaClient as RunsDb } from '../generated/prisma/client';
import type { Tx } from './events';

/**
 * Files of OpenAI's Files API (migration 0005): a row and its bytes as 1 MiB chunks. Every write that changes an
 * owner's bytes locks the owner's counter row first (`file_owners`), so concurrent uploads cannot pass the quota
 * together and never wait on each other in opposite orders. Reads never lock.
 */

export interface FileBounds {
  /** Bytes one file may hold. */
  maxFileBytes: number;
  /** Bytes all of one owner's files may hold together. */
  quotaBytes: number;
}

/** The largest chunk one append carries (and the size content is read back in). */
const FILE_CHUNK_BYTES = 1024 * 1024;

export interface FileRow {
  id: string;
  ownerId: string;
  filename: string;
  purpose: string;
  bytes: number;
  createdAt: Date;
  expiresAt: Date | null;
}

const nextUlid = monotonicFactory();

/** `file-` and a ULID: OpenAI's prefix, sortable by creation time as plain strings. */
function newFileId(now = Date.now()): string {
  return `file-${nextUlid(now)}`;
}

function fileNotFound(id: string): ApiError {
  return new ApiError('not_found', `No such File object: ${id}`, { param: 'file_id' });
}

function rowOf(row: {
  id: string;
  ownerId: string;
  filename: string;
  purpose: string;
  bytes: bigint;
  createdAt: Date;
  expiresAt: Date | null;
}): FileRow {
  return { ...row, bytes: Number(row.bytes) };
}

/** Locks the owner's counter row for the rest of the transaction, creating it at zero if it is new. */
async function lockOwner(tx: Tx, ownerId: string): Promise<number> {
  const rows = await tx.$queryRaw<Array<{ bytes: bigint }>>`
    INSERT INTO file_owners (owner_id) VALUES (${ownerId})
    ON CONFLICT (owner_id) DO UPDATE SET owner_id = EXCLUDED.owner_id
    RETURNING bytes`;
  return Number(rows[0]!.bytes);
}

export async function beginFile(db: RunsDb, input: { ownerId: string; filename: string }, now: Date): Promise<string> {
  const id = newFileId(now.getTime());
  // The purpose is set when the upload is committed (until then no one reads the row).
  await db.file.create({ data: { id, ownerId: input.ownerId, filename: input.filename, purpose: '' } });
  return id;
}

/**
 * Appends chunk `seq` of an upload still open, within the per-file limit and the owner's quota; past either the
 * upload is discarded whole and the refusal names `file`.
 */
export async function appendFileChunk(
  db: RunsDb,
  input: { ownerId: string; fileId: string; seq: number; data: Uint8Array },
  bounds: FileBounds,
): Promise<number> {
  if (input.data.byteLength > FILE_CHUNK_BYTES)
    throw new ApiError('invalid_request', `A chunk carries at most ${FILE_CHUNK_BYTES} bytes.`, { param: 'data' });
  const refusal = await db.$transaction(async (tx) => {
    const ownerBytes = await lockOwner(tx, input.ownerId);
    const file = await tx.file.findFirst({ where: { id: input.fileId, ownerId: input.ownerId, committedAt: null } });
    if (!file) throw fileNotFound(input.fileId);
    // Only the length of a chunk sent before (a retried call): its bytes never leave the database.
    const [previous] = await tx.$queryRaw<Array<{ bytes: number }>>`
      SELECT octet_length(data) AS bytes FROM file_chunks WHERE file_id = ${input.fileId} AND seq = ${input.seq}`;
    const added = input.data.byteLength - Number(previous?.bytes ?? 0);
    const fileBytes = Number(file.bytes) + added;
    if (fileBytes > bounds.maxFileBytes)
      return new ApiError('request_too_large', `A file may hold at most ${bounds.maxFileBytes} bytes.`, {
        param: 'file',
      });
    if (ownerBytes + added > bounds.quotaBytes)
      return new ApiError(
        'invalid_request',
        `This upload would take the account's files past their quota of ${bounds.quotaBytes} bytes; delete ` +
          'files you no longer need.',
        { param: 'file' },
      );
    const data = Buffer.from(input.data.buffer, input.data.byteOffset, input.data.byteLength);
    await tx.$executeRaw`
      INSERT INTO file_chunks (file_id, seq, data) VALUES (${input.fileId}, ${input.seq}, ${data})
      ON CONFLICT (file_id, seq) DO UPDATE SET data = EXCLUDED.data`;
    await tx.file.update({ where: { id: input.fileId }, data: { bytes: BigInt(fileBytes) } });
    await tx.fileOwner.update({ where: { ownerId: input.ownerId }, data: { bytes: { increment: BigInt(added) } } });
    return fileBytes;
  });
  if (typeof refusal === 'number') return refusal;
  await abortFile(db, input.ownerId, input.fileId);
  throw refusal;
}

export async function commitFile(
  db: RunsDb,
  ownerId: string,
  fileId: string,
  purpose: string,
  now: Date,
  expiresAt?: Date,
): Promise<FileRow> {
  const done = await db.file.updateMany({
    where: { id: fileId, ownerId, committedAt: null },
    data: { purpose, committedAt: now, ...(expiresAt ? { expiresAt } : {}) },
  });
  if (done.count === 0) throw fileNotFound(fileId);
  return findFile(db, ownerId, fileId, now);
}

/** Deletes a file, committed or not, and gives its bytes back to the owner's quota. */
async function removeFile(db: RunsDb, ownerId: string, fileId: string, committed: boolean | null): Promise<boolean> {
  return db.$transaction(async (tx) => {
    await lockOwner(tx, ownerId);
    const file = await tx.file.findFirst({
      where: {
        id: fileId,
        ownerId,
        ...(committed === null ? {} : { committedAt: committed ? { not: null } : null }),
      },
      select: { bytes: true },
    });
    if (!file) return false;
    await tx.file.delete({ where: { id: fileId } });
    await tx.fileOwner.update({ where: { ownerId }, data: { bytes: { decrement: file.bytes } } });
    return true;
  });
}

export async function abortFile(db: RunsDb, ownerId: string, fileId: string): Promise<void> {
  await removeFile(db, ownerId, fileId, false);
}

export async function deleteFile(db: RunsDb, ownerId: string, fileId: string): Promise<void> {
  if (!(await removeFile(db, ownerId, fileId, true))) throw fileNotFound(fileId);
}

function readable(now: Date) {
  return { committedAt: { not: null }, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
}

export async function findFile(db: RunsDb, ownerId: string, fileId: string, now: Date): Promise<FileRow> {
  const row = await db.file.findFirst({ where: { id: fileId, ownerId, ...readable(now) } });
  if (!row) throw fileNotFound(fileId);
  return rowOf(row);
}

export async function listFiles(
  db: RunsDb,
  ownerId: string,
  now: Date,
  page: { limit: number; ascending: boolean; after?: string; purpose?: string },
): Promise<{ files: FileRow[]; hasMore: boolean }> {
  const rows = await db.file.findMany({
    where: {
      ownerId,
      ...readable(now),
      ...(page.purpose ? { purpose: page.purpose } : {}),
      ...(page.after ? { id: page.ascending ? { gt: page.after } : { lt: page.after } } : {}),
    },
    orderBy: { id: page.ascending ? 'asc' : 'desc' },
    take: page.limit + 1,
  });
  return { files: rows.slice(0, page.limit).map(rowOf), hasMore: rows.length > page.limit };
}

/** The file's bytes in order, a chunk at a time (one row read per chunk, so memory stays at one chunk). */
export async function* readFileContent(
  db: RunsDb,
  ownerId: string,
  fileId: string,
  now: Date,
): AsyncGenerator<Uint8Array> {
  await findFile(db, ownerId, fileId, now);
  for (let seq = 0; ; seq += 1) {
    const chunk = await db.fileChunk.findUnique({ where: { fileId_seq: { fileId, seq } }, select: { data: true } });
    if (!chunk) return;
    yield chunk.data;
  }
}

/** Deletes uploads never committed (their edge died) and files past their expiry; how many went. */
export async function sweepFiles(db: RunsDb, now: Date, uncommittedBefore: Date): Promise<number> {
  const stale = await db.file.findMany({
    where: {
      OR: [{ committedAt: null, createdAt: { lt: uncommittedBefore } }, { expiresAt: { lte: now } }],
    },
    select: { id: true, ownerId: true },
    take: 100,
  });
  for (const file of stale) await removeFile(db, file.ownerId, file.id, null);
  return stale.length;
}

/**
 * Writes a file the service makes (a batch's output or error file) whole, in the caller's transaction: JSONL
 * lines packed into chunks, committed at once. It counts against the owner's quota but is never refused by it:
 * the work it records is done.
 */
export async function writeServiceFile(
  tx: Tx,
  input: { ownerId: string; filename: string; purpose: string; lines: readonly string[]; expiresAt: Date },
  now: Date,
): Promise<string> {
  const id = newFileId(now.getTime());
  const whole = Buffer.from(input.lines.map((line) => `${line}\n`).join(''));
  const bytes = whole.length;
  const split: Uint8Array<ArrayBuffer>[] = [];
  for (let at = 0; at < bytes; at += FILE_CHUNK_BYTES)
    split.push(new Uint8Array(whole.subarray(at, at + FILE_CHUNK_BYTES)));
  await lockOwner(tx, input.ownerId);
  await tx.file.create({
    data: {
      id,
      ownerId: input.ownerId,
      filename: input.filename,
      purpose: input.purpose,
      bytes: BigInt(bytes),
      committedAt: now,
      expiresAt: input.expiresAt,
    },
  });
  for (const [seq, data] of split.entries()) await tx.fileChunk.create({ data: { fileId: id, seq, data } });
  await tx.fileOwner.update({ where: { ownerId: input.ownerId }, data: { bytes: { increment: BigInt(bytes) } } });
  return id;
}
