import { monotonicFactory } from 'ulid';
import { ApiError } from '@sbc/errors';
import type { Prisma, PrismaClient as RunsDb } from '../generated/prisma/client';
import type { RunCallerJson } from './runs';
import { findFile, readFileContent, writeServiceFile } from './files';

/**
 * OpenAI batches (migration 0006). A batch's lines are claimed one at a time with a lease (FOR UPDATE SKIP
 * LOCKED, as runs are), settled once (`state = 'running'` guards the write), and the batch is finalised once no
 * line is left to run: its output and error files written in the same transaction as its last status.
 */

/** The endpoint of Anthropic's message batches, kept in the same rows. */
const MESSAGES_ENDPOINT = '/v1/messages';
const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/responses', '/v1/embeddings'];
/** OpenAI's bound on the requests of one batch. */
const MAX_BATCH_LINES = 50_000;
/** How long output and error files are kept. */
const RESULTS_TTL_MS = 30 * 86_400_000;
const WINDOW_MS: Record<string, number> = { '24h': 86_400_000 };

export type BatchRow = Prisma.BatchGetPayload<object>;

export interface ClaimedLine {
  batchId: string;
  lineNo: number;
  id: string;
  customId: string;
  body: string;
  attempts: number;
  endpoint: string;
  caller: RunCallerJson;
  keyIds: string[];
}

const nextUlid = monotonicFactory();

function batchNotFound(id: string): ApiError {
  return new ApiError('not_found', `No batch found with id '${id}'.`, { param: 'batch_id' });
}

function bad(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, issues: [{ path: param, code: 'invalid_value', message }] });
}

const seconds = (date: Date | null) => (date ? Math.floor(date.getTime() / 1000) : null);

/** A batch as OpenAI's Batch object. */
export function batchObject(row: BatchRow): Record<string, unknown> {
  return {
    id: row.id,
    object: 'batch',
    endpoint: row.endpoint,
    errors: row.errors ?? null,
    input_file_id: row.inputFileId,
    completion_window: row.completionWindow,
    status: row.status,
    output_file_id: row.outputFileId,
    error_file_id: row.errorFileId,
    created_at: seconds(row.createdAt),
    in_progress_at: seconds(row.inProgressAt),
    expires_at: seconds(row.expiresAt),
    finalizing_at: seconds(row.finalizingAt),
    completed_at: seconds(row.completedAt),
    failed_at: seconds(row.failedAt),
    expired_at: seconds(row.expiredAt),
    cancelling_at: seconds(row.cancellingAt),
    cancelled_at: seconds(row.cancelledAt),
    request_counts: { total: row.total, completed: row.completed, failed: row.failed },
    metadata: row.metadata ?? null,
  };
}

interface ParsedLine {
  custom_id: string;
  url: string;
  body: Record<string, unknown>;
}

/** The input file's requests, each checked against the batch's endpoint (the upload checked the rest). */
async function readInputLines(
  db: RunsDb,
  ownerId: string,
  fileId: string,
  endpoint: string,
  now: Date,
): Promise<ParsedLine[]> {
  const file = await findFile(db, ownerId, fileId, now).catch(() => {
    throw new ApiError('not_found', `No such File object: ${fileId}`, { param: 'input_file_id' });
  });
  if (file.purpose !== 'batch') throw bad('input_file_id', `File ${fileId} was not uploaded with purpose 'batch'.`);
  const parts: Buffer[] = [];
  for await (const chunk of readFileContent(db, ownerId, fileId, now)) parts.push(Buffer.from(chunk));
  const lines: ParsedLine[] = [];
  for (const [index, text] of Buffer.concat(parts).toString('utf8').split('\n').entries()) {
    if (text.trim() === '') continue;
    const line = JSON.parse(text) as ParsedLine;
    if (line.url !== endpoint)
      throw bad('input_file_id', `line ${index + 1}: url ${line.url} does not match the batch's endpoint ${endpoint}.`);
    lines.push(line);
  }
  if (lines.length > MAX_BATCH_LINES) throw bad('input_file_id', `A batch holds at most ${MAX_BATCH_LINES} requests.`);
  return lines;
}

export async function createBatch(
  db: RunsDb,
  input: {
    ownerId: string;
    caller: RunCallerJson;
    inputFileId: string;
    endpoint: string;
    completionWindow: string;
    metadata: Record<string, string> | null;
  },
  now: Date,
): Promise<BatchRow> {
  if (!BATCH_ENDPOINTS.includes(input.endpoint))
    throw bad('endpoint', `endpoint must be one of ${BATCH_ENDPOINTS.join(', ')}.`);
  const windowMs = WINDOW_MS[input.completionWindow];
  if (windowMs === undefined) throw bad('completion_window', "completion_window must be '24h'.");
  const lines = await readInputLines(db, input.ownerId, input.inputFileId, input.endpoint, now);
  const ulid = nextUlid(now.getTime());
  const id = `batch_${ulid}`;
  return db.$transaction(async (tx) => {
    const row = await tx.batch.create({
      data: {
        id,
        ownerId: input.ownerId,
        caller: input.caller as unknown as Prisma.InputJsonValue,
        endpoint: input.endpoint,
        inputFileId: input.inputFileId,
        completionWindow: input.completionWindow,
        metadata: input.metadata ?? undefined,
        total: lines.length,
        createdAt: now,
        expiresAt: new Date(now.getTime() + windowMs),
      },
    });
    for (let at = 0; at < lines.length; at += 1000)
      await tx.batchLine.createMany({
        data: lines.slice(at, at + 1000).map((line, offset) => ({
          batchId: id,
          lineNo: at + offset + 1,
          // Made from the batch and the line: the same line keeps its id however often it is tried.
          id: `batch_req_${ulid}_${at + offset + 1}`,
          customId: line.custom_id,
          body: JSON.stringify(line.body),
        })),
      });
    return row;
  });
}

export async function findBatch(db: RunsDb, ownerId: string, batchId: string): Promise<BatchRow> {
  return findBatchOf(db, ownerId, batchId, false);
}

export async function listBatches(
  db: RunsDb,
  ownerId: string,
  page: { limit: number; after?: string },
): Promise<{ rows: BatchRow[]; hasMore: boolean }> {
  const rows = await db.batch.findMany({
    where: { ownerId, endpoint: { not: MESSAGES_ENDPOINT }, ...(page.after ? { id: { lt: page.after } } : {}) },
    orderBy: { id: 'desc' },
    take: page.limit + 1,
  });
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** Stops new lines of a batch still open; one already ended is returned as it is. */
export async function cancelBatch(
  db: RunsDb,
  ownerId: string,
  batchId: string,
  now: Date,
  messages = false,
): Promise<BatchRow> {
  await findBatchOf(db, ownerId, batchId, messages);
  await db.batch.updateMany({
    where: { id: batchId, ownerId, status: { in: ['validating', 'in_progress'] } },
    data: { status: 'cancelling', cancellingAt: now },
  });
  return findBatchOf(db, ownerId, batchId, messages);
}

/**
 * Claims the next line of an open batch (oldest batch first) whose time has come, or a running line whose lease
 * ran out (its worker died), and marks its batch in progress.
 */
export async function claimLine(db: RunsDb, leaseMs: number): Promise<ClaimedLine | undefined> {
  return db.$transaction(async (tx) => {
    const [claimed] = await tx.$queryRaw<Array<{ batch_id: string; line_no: number }>>`
      WITH next AS (
        SELECT l.batch_id, l.line_no FROM batch_lines l JOIN batches b ON b.id = l.batch_id
        WHERE b.status IN ('validating', 'in_progress') AND b.expires_at > now()
          AND (b.paused_until IS NULL OR b.paused_until <= now())
          AND (l.state = 'queued' OR (l.state = 'running' AND l.lease_until < now()))
          AND (l.not_before IS NULL OR l.not_before <= now())
        ORDER BY b.created_at, l.line_no
        LIMIT 1
        FOR UPDATE OF l SKIP LOCKED
      )
      UPDATE batch_lines SET
        state = 'running',
        lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
        attempts = batch_lines.attempts + 1
      FROM next WHERE batch_lines.batch_id = next.batch_id AND batch_lines.line_no = next.line_no
      RETURNING batch_lines.batch_id, batch_lines.line_no`;
    if (!claimed) return undefined;
    await tx.batch.updateMany({
      where: { id: claimed.batch_id, status: 'validating' },
      data: { status: 'in_progress', inProgressAt: new Date() },
    });
    const line = await tx.batchLine.findUniqueOrThrow({
      where: { batchId_lineNo: { batchId: claimed.batch_id, lineNo: claimed.line_no } },
      include: { batch: { select: { endpoint: true, caller: true, keyIds: true } } },
    });
    return {
      batchId: line.batchId,
      lineNo: line.lineNo,
      id: line.id,
      customId: line.customId,
      body: line.body,
      attempts: line.attempts,
      endpoint: line.batch.endpoint,
      caller: line.batch.caller as unknown as RunCallerJson,
      keyIds: line.batch.keyIds,
    };
  });
}

/** Records a key minted for a batch's lines, so it is revoked when the batch ends. */
export async function addBatchKey(db: RunsDb, batchId: string, keyId: string): Promise<void> {
  await db.$executeRaw`UPDATE batches SET key_ids = array_append(key_ids, ${keyId}) WHERE id = ${batchId}`;
}

/** Settles a line once: its result line, counted as completed or failed. A line no longer held is left alone. */
export async function settleLine(
  db: RunsDb,
  line: { batchId: string; lineNo: number },
  outcome: { ok: boolean; result: string },
): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const done = await tx.batchLine.updateMany({
      where: { batchId: line.batchId, lineNo: line.lineNo, state: 'running' },
      data: { state: outcome.ok ? 'succeeded' : 'failed', result: outcome.result, leaseUntil: null },
    });
    if (done.count === 0) return false;
    await tx.batch.update({
      where: { id: line.batchId },
      data: outcome.ok ? { completed: { increment: 1 } } : { failed: { increment: 1 } },
    });
    return true;
  });
}

/**
 * Puts a line back to be tried again after `delayMs` (a 429, an upstream failure, the gateway unreachable). A line
 * that `yielded` (the edge kept the creating key's limits for its other calls) gives back the try its claim counted,
 * and pauses its whole batch for as long.
 */
export async function retryLine(
  db: RunsDb,
  line: { batchId: string; lineNo: number },
  delayMs: number,
  yielded = false,
): Promise<void> {
  const notBefore = new Date(Date.now() + delayMs);
  const putBack = db.batchLine.updateMany({
    where: { batchId: line.batchId, lineNo: line.lineNo, state: 'running' },
    data: { state: 'queued', leaseUntil: null, notBefore, ...(yielded ? { attempts: { decrement: 1 } } : {}) },
  });
  if (!yielded) {
    await putBack;
    return;
  }
  // A yield says the batch's share is spent until then: its next line would be refused too, so the whole batch
  // waits (a later pause than one already set wins; an earlier one never shortens it).
  await db.$transaction([
    putBack,
    db.$executeRaw`UPDATE batches SET paused_until = GREATEST(COALESCE(paused_until, ${notBefore}), ${notBefore})
      WHERE id = ${line.batchId}`,
  ]);
}

/**
 * Ends the open batches with nothing left to run: every line settled (completed), cancelled with none in flight
 * (cancelled), or past their window with none in flight (expired). Their output and error files are written in
 * the same transaction; lines never run are in the error file as `batch_cancelled` or `batch_expired`. Returns
 * the ended batches, whose keys the caller revokes.
 */
export async function finalizeBatches(
  db: RunsDb,
  now: Date,
): Promise<Array<{ caller: RunCallerJson; keyIds: string[] }>> {
  const ended: Array<{ caller: RunCallerJson; keyIds: string[] }> = [];
  for (;;) {
    const batch = await db.$transaction(async (tx) => {
      const [next] = await tx.$queryRaw<Array<{ id: string }>>`
        SELECT b.id FROM batches b
        WHERE b.status IN ('validating', 'in_progress', 'cancelling')
          AND NOT EXISTS (
            SELECT 1 FROM batch_lines l WHERE l.batch_id = b.id AND l.state = 'running' AND l.lease_until > now())
          AND (b.status = 'cancelling' OR b.expires_at <= now() OR NOT EXISTS (
            SELECT 1 FROM batch_lines l WHERE l.batch_id = b.id AND l.state IN ('queued', 'running')))
        ORDER BY b.created_at
        LIMIT 1
        FOR UPDATE OF b SKIP LOCKED`;
      if (!next) return undefined;
      const row = await tx.batch.findUniqueOrThrow({ where: { id: next.id } });
      const final = row.status === 'cancelling' ? 'cancelled' : row.expiresAt <= now ? 'expired' : 'completed';
      const lines = await tx.batchLine.findMany({ where: { batchId: row.id }, orderBy: { lineNo: 'asc' } });
      const output: string[] = [];
      const errors: string[] = [];
      for (const line of lines) {
        if (line.state === 'succeeded') output.push(line.result!);
        else if (line.state === 'failed') errors.push(line.result!);
        else {
          const code = final === 'expired' ? 'batch_expired' : 'batch_cancelled';
          const message =
            final === 'expired'
              ? 'This request could not be executed before the completion window expired.'
              : 'This request was not executed: the batch was cancelled.';
          errors.push(
            JSON.stringify({ id: line.id, custom_id: line.customId, response: null, error: { code, message } }),
          );
        }
      }
      const expiresAt = new Date(now.getTime() + RESULTS_TTL_MS);
      // A message batch's results are read from its lines; only OpenAI batches have result files.
      const file = (name: string, purposeLines: string[]) =>
        purposeLines.length === 0 || row.endpoint === MESSAGES_ENDPOINT
          ? Promise.resolve(null)
          : writeServiceFile(
              tx,
              { ownerId: row.ownerId, filename: name, purpose: 'batch_output', lines: purposeLines, expiresAt },
              now,
            );
      const outputFileId = await file(`${row.id}_output.jsonl`, output);
      const errorFileId = await file(`${row.id}_error.jsonl`, errors);
      await tx.batch.update({
        where: { id: row.id },
        data: {
          status: final,
          outputFileId,
          errorFileId,
          finalizingAt: now,
          ...(final === 'completed'
            ? { completedAt: now }
            : final === 'expired'
              ? { expiredAt: now }
              : { cancelledAt: now }),
        },
      });
      return { caller: row.caller as unknown as RunCallerJson, keyIds: row.keyIds };
    });
    if (!batch) return ended;
    ended.push(batch);
  }
}

// Anthropic's Message Batches: the same rows, `endpoint` `/v1/messages`, no input or result files (results are
// read from the lines), shown as Anthropic's MessageBatch.

const ANTHROPIC_WINDOW_MS = 86_400_000;
const iso = (date: Date | null) => (date ? date.toISOString() : null);

/**
 * A batch as Anthropic's MessageBatch object. `results_url` is the path the edge serves its results at; the
 * edge makes it absolute on its public URL.
 */
export function messageBatchObject(row: BatchRow): Record<string, unknown> {
  const ended = ['completed', 'cancelled', 'expired', 'failed'].includes(row.status);
  const unsettled = row.total - row.completed - row.failed;
  return {
    id: row.id,
    type: 'message_batch',
    processing_status: ended ? 'ended' : row.status === 'cancelling' ? 'canceling' : 'in_progress',
    request_counts: {
      processing: ended ? 0 : unsettled,
      succeeded: row.completed,
      errored: row.failed,
      canceled: ended && row.status === 'cancelled' ? unsettled : 0,
      expired: ended && row.status === 'expired' ? unsettled : 0,
    },
    ended_at: iso(row.completedAt ?? row.cancelledAt ?? row.expiredAt),
    created_at: iso(row.createdAt),
    expires_at: iso(row.expiresAt),
    archived_at: null,
    cancel_initiated_at: iso(row.cancellingAt),
    results_url: ended ? `/v1/messages/batches/${row.id}/results` : null,
  };
}

export async function createMessageBatch(
  db: RunsDb,
  input: { ownerId: string; caller: RunCallerJson; requests: Array<{ custom_id: string; params: unknown }> },
  now: Date,
): Promise<BatchRow> {
  const ulid = nextUlid(now.getTime());
  const id = `msgbatch_${ulid}`;
  return db.$transaction(async (tx) => {
    const row = await tx.batch.create({
      data: {
        id,
        ownerId: input.ownerId,
        caller: input.caller as unknown as Prisma.InputJsonValue,
        endpoint: MESSAGES_ENDPOINT,
        completionWindow: '24h',
        total: input.requests.length,
        createdAt: now,
        expiresAt: new Date(now.getTime() + ANTHROPIC_WINDOW_MS),
      },
    });
    for (let at = 0; at < input.requests.length; at += 1000)
      await tx.batchLine.createMany({
        data: input.requests.slice(at, at + 1000).map((request, offset) => ({
          batchId: id,
          lineNo: at + offset + 1,
          id: `msgbatch_req_${ulid}_${at + offset + 1}`,
          customId: request.custom_id,
          body: JSON.stringify(request.params),
        })),
      });
    return row;
  });
}

/** The owner's batches of one kind (OpenAI's or Anthropic's), found by id. */
export async function findBatchOf(db: RunsDb, ownerId: string, batchId: string, messages: boolean): Promise<BatchRow> {
  const row = await db.batch.findFirst({
    where: { id: batchId, ownerId, endpoint: messages ? MESSAGES_ENDPOINT : { not: MESSAGES_ENDPOINT } },
  });
  if (!row) throw batchNotFound(batchId);
  return row;
}

export async function listMessageBatches(
  db: RunsDb,
  ownerId: string,
  page: { limit: number; afterId?: string; beforeId?: string },
): Promise<{ rows: BatchRow[]; hasMore: boolean }> {
  const newer = page.beforeId !== undefined;
  const rows = await db.batch.findMany({
    where: {
      ownerId,
      endpoint: MESSAGES_ENDPOINT,
      ...(page.afterId ? { id: { lt: page.afterId } } : {}),
      ...(page.beforeId ? { id: { gt: page.beforeId } } : {}),
    },
    orderBy: { id: newer ? 'asc' : 'desc' },
    take: page.limit + 1,
  });
  const kept = rows.slice(0, page.limit);
  return { rows: newer ? kept.reverse() : kept, hasMore: rows.length > page.limit };
}

/** One result line in Anthropic's shape, from a line's row and its batch's final status. */
function messageResultLine(line: { customId: string; state: string; result: string | null }, status: string): string {
  let result: Record<string, unknown>;
  if (line.state === 'succeeded' || line.state === 'failed') {
    const recorded = JSON.parse(line.result!) as { response: { body: unknown } | null; error: unknown };
    result =
      line.state === 'succeeded'
        ? { type: 'succeeded', message: recorded.response!.body }
        : {
            type: 'errored',
            error: recorded.response?.body ?? {
              type: 'error',
              error: { type: 'api_error', message: 'The gateway could not be reached for this request.' },
            },
          };
  } else result = { type: status === 'expired' ? 'expired' : 'canceled' };
  return JSON.stringify({ custom_id: line.customId, result });
}

/** An ended message batch's results as JSONL, a page of lines at a time, in the order the requests were given. */
export async function* messageBatchResults(db: RunsDb, ownerId: string, batchId: string): AsyncGenerator<string> {
  const batch = await findBatchOf(db, ownerId, batchId, true);
  if (!['completed', 'cancelled', 'expired', 'failed'].includes(batch.status))
    throw new ApiError('conflict', `Batch '${batchId}' has not ended yet; its results are ready once it has.`, {
      param: 'batch_id',
    });
  for (let after = 0; ;) {
    const lines = await db.batchLine.findMany({
      where: { batchId, lineNo: { gt: after } },
      orderBy: { lineNo: 'asc' },
      take: 500,
      select: { lineNo: true, customId: true, state: true, result: true },
    });
    if (lines.length === 0) return;
    yield lines.map((line) => `${messageResultLine(line, batch.status)}\n`).join('');
    after = lines.at(-1)!.lineNo;
  }
}

export async function deleteMessageBatch(db: RunsDb, ownerId: string, batchId: string): Promise<void> {
  const batch = await findBatchOf(db, ownerId, batchId, true);
  if (!['completed', 'cancelled', 'expired', 'failed'].includes(batch.status))
    throw new ApiError('conflict', `Batch '${batchId}' is still processing; cancel it and delete it once ended.`, {
      param: 'batch_id',
    });
  await db.batch.deleteMany({ where: { id: batchId, ownerId } });
}
