import { createHash } from 'node:crypto';
import { ApiError } from '@sbc/errors';
import { newId } from '@sbc/ids';
import { keysetRange, toPage, type ListEnvelope, type PageQuery } from '@sbc/pagination';
import { Prisma, type PrismaClient as RunsDb, type Run as RunRow } from '../generated/prisma/client';
import { withEvents, withRunEvents, type EventWriter, type Tx } from './events';
import { findProject } from './projects';
import { enqueueDeliveries } from './webhooks';

export type { RunRow };

export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export const ACTIVE_STATUSES = ['queued', 'running'] as const;
type Settled = 'succeeded' | 'failed' | 'cancelled';

/** The bounds of the credential that started a run; its model-call key is minted within them. */
export interface RunCallerJson {
  user_id: string;
  key_id: string | null;
  /** null = every model. */
  allowed_models: string[] | null;
  daily_limit_credits: number | null;
  monthly_limit_credits: number | null;
  route: string;
  org_id: string | null;
  /** An operator's run: its fetches are dialed as the operator's (absent on runs made before it was kept). */
  operator?: boolean;
}

export interface RunUsage {
  steps: number;
  model_calls: number;
  tool_calls: number;
  input_tokens: number;
  output_tokens: number;
}

export const EMPTY_USAGE: RunUsage = { steps: 0, model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 };

export function usageOf(row: Pick<RunRow, 'usage'>): RunUsage {
  return { ...EMPTY_USAGE, ...(row.usage as Partial<RunUsage> | null) };
}

function runNotFound(): ApiError {
  return new ApiError('not_found', 'No such run on this account.', { param: 'run_id' });
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

export interface CreateRunInput {
  accountId: string;
  projectId: string;
  prompt: string;
  model: string | undefined;
  metadata: Record<string, string>;
  caller: RunCallerJson;
  idempotencyKey: string | undefined;
}

function requestHash(input: CreateRunInput): string {
  const { projectId, prompt, model, metadata } = input;
  return createHash('sha256')
    .update(JSON.stringify({ projectId, prompt, model: model ?? null, metadata }))
    .digest('hex');
}

async function replay(db: RunsDb, input: CreateRunInput, hash: string): Promise<RunRow | undefined> {
  if (input.idempotencyKey === undefined) return undefined;
  const existing = await db.run.findUnique({
    where: { accountId_idempotencyKey: { accountId: input.accountId, idempotencyKey: input.idempotencyKey } },
  });
  if (existing && existing.requestHash !== hash) {
    throw new ApiError('conflict', 'This idempotency-key was used for a different run request.', {
      param: 'idempotency-key',
    });
  }
  return existing ?? undefined;
}

/**
 * Queues a run (with its `run.queued` event). With an idempotency key, a repeat of the same request returns the
 * first run (`created` false); the same key with a different request is 409 `conflict`.
 */
export async function createRun(
  writer: EventWriter,
  input: CreateRunInput,
): Promise<{ run: RunRow; created: boolean }> {
  const hash = requestHash(input);
  const earlier = await replay(writer.db, input, hash);
  if (earlier) return { run: earlier, created: false };
  const id = newId('run');
  try {
    const run = await withRunEvents(writer, id, async (tx, append) => {
      const project = await findProject(tx, input.accountId, input.projectId);
      const model = input.model ?? project.defaultModel ?? 'house';
      await tx.run.create({
        data: {
          id,
          accountId: input.accountId,
          projectId: project.id,
          model,
          prompt: input.prompt,
          metadata: input.metadata,
          caller: input.caller as unknown as Prisma.InputJsonObject,
          usage: EMPTY_USAGE as unknown as Prisma.InputJsonObject,
          idempotencyKey: input.idempotencyKey ?? null,
          requestHash: input.idempotencyKey === undefined ? null : hash,
        },
      });
      await append('run.queued', { project_id: project.id, model });
      return tx.run.findUniqueOrThrow({ where: { id } });
    });
    return { run, created: true };
  } catch (error) {
    // Two requests with one key at once: the second lost the insert race and answers with the first's run.
    if (!isUniqueViolation(error)) throw error;
    const winner = await replay(writer.db, input, hash);
    if (!winner) throw error;
    return { run: winner, created: false };
  }
}

export async function findRun(db: Pick<RunsDb, 'run'>, accountId: string, runId: string): Promise<RunRow> {
  const row = await db.run.findFirst({ where: { id: runId, accountId } });
  if (!row) throw runNotFound();
  return row;
}

export async function listRuns(
  db: RunsDb,
  accountId: string,
  query: PageQuery & { projectId?: string; status?: string },
): Promise<ListEnvelope<RunRow>> {
  const range = keysetRange(query);
  const rows = await db.run.findMany({
    where: {
      accountId,
      ...(query.projectId ? { projectId: query.projectId } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...(range.cursor ? { id: range.cursor } : {}),
    },
    orderBy: { id: range.order },
    take: range.take,
  });
  return toPage(rows, query, (row) => row.id);
}

export interface Outcome {
  status: Settled;
  output?: string;
  error?: { code: string; message: string };
  usage: RunUsage;
}

/**
 * Settles a run inside `tx`: the terminal status, its event, and the webhook outbox rows, all in one
 * transaction. `holder` fences a worker's settle to the lease it holds; without it only a queued run settles
 * (a cancel before any worker claimed it). False when the run was no longer in the expected state.
 */
export async function settleRun(
  tx: Tx,
  append: (type: 'run.succeeded' | 'run.failed' | 'run.cancelled', data: Record<string, unknown>) => Promise<unknown>,
  run: Pick<RunRow, 'id' | 'accountId' | 'projectId'>,
  outcome: Outcome,
  holder?: string,
): Promise<boolean> {
  const where =
    holder === undefined ? { id: run.id, status: 'queued' } : { id: run.id, status: 'running', leaseOwner: holder };
  const { count } = await tx.run.updateMany({
    where,
    data: {
      status: outcome.status,
      output: outcome.output ?? null,
      error: outcome.error ?? Prisma.DbNull,
      usage: outcome.usage as unknown as Prisma.InputJsonObject,
      settledAt: new Date(),
      leaseOwner: null,
      leaseUntil: null,
    },
  });
  if (count === 0) return false;
  const data = {
    usage: outcome.usage,
    ...(outcome.output !== undefined ? { output: outcome.output } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
  await append(`run.${outcome.status}`, data);
  await enqueueDeliveries(tx, {
    accountId: run.accountId,
    runId: run.id,
    projectId: run.projectId,
    status: outcome.status,
  });
  return true;
}

/**
 * A caller's cancel. A queued run is cancelled at once; a running one is marked and its worker told (it
 * records `run.cancelled` when its loop stops); a settled run is 409 `conflict`.
 */
export async function requestCancel(
  writer: EventWriter,
  accountId: string,
  runId: string,
): Promise<{ run: RunRow; notifyWorker: boolean }> {
  const run = await findRun(writer.db, accountId, runId);
  if (run.status === 'queued') {
    const settled = await withRunEvents(writer, runId, (tx, append) =>
      settleRun(tx, append, run, { status: 'cancelled', usage: usageOf(run) }),
    );
    // Claimed between the read and the update: treat it as running.
    if (settled) return { run: await findRun(writer.db, accountId, runId), notifyWorker: false };
  }
  const { count } = await writer.db.run.updateMany({
    where: { id: runId, status: 'running' },
    data: { cancelRequestedAt: new Date() },
  });
  const current = await findRun(writer.db, accountId, runId);
  if (count === 0 && !['queued', 'running'].includes(current.status)) {
    throw new ApiError('conflict', `The run has already settled (${current.status}).`, { param: 'run_id' });
  }
  return { run: current, notifyWorker: count > 0 };
}

/**
 * Claims the oldest queued run, or a running run whose lease ran out (its worker died), for `holder` until
 * the lease ends, and records `run.started` in the same transaction. SKIP LOCKED lets workers claim side by
 * side without waiting on each other's rows; lease times are the database's, so workers' clocks do not matter.
 */
export async function claimRun(writer: EventWriter, holder: string, leaseMs: number): Promise<RunRow | undefined> {
  return withEvents(writer, async (tx, append) => {
    const [claimed] = await tx.$queryRaw<{ id: string }[]>`
      WITH next AS (
        SELECT id FROM runs
        WHERE status = 'queued' OR (status = 'running' AND lease_until < now())
        ORDER BY created_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED
      )
      UPDATE runs SET
        status = 'running',
        lease_owner = ${holder},
        lease_until = now() + make_interval(secs => ${leaseMs / 1000}),
        heartbeat_at = now(),
        attempt = runs.attempt + 1,
        started_at = coalesce(runs.started_at, now())
      FROM next WHERE runs.id = next.id
      RETURNING runs.id`;
    if (!claimed) return undefined;
    const run = await tx.run.findUniqueOrThrow({ where: { id: claimed.id } });
    await append(run.id, 'run.started', {
      attempt: run.attempt,
      model: run.model,
      ...(run.attempt > 1 ? { recovered: true } : {}),
    });
    return run;
  });
}

/** Renews a lease. `held` false means another worker has the run now (or it settled): stop without writing. */
export async function renewLease(
  db: RunsDb,
  runId: string,
  holder: string,
  leaseMs: number,
): Promise<{ held: boolean; cancelRequested: boolean }> {
  const rows = await db.$queryRaw<{ cancel_requested_at: Date | null }[]>`
    UPDATE runs SET lease_until = now() + make_interval(secs => ${leaseMs / 1000}), heartbeat_at = now()
    WHERE id = ${runId} AND status = 'running' AND lease_owner = ${holder}
    RETURNING cancel_requested_at`;
  const row = rows[0];
  return { held: row !== undefined, cancelRequested: row?.cancel_requested_at != null };
}

/** Gives a run back on shutdown so another worker recovers it now rather than when the lease would end. */
export async function releaseLease(db: RunsDb, runId: string, holder: string): Promise<void> {
  await db.$executeRaw`
    UPDATE runs SET lease_until = now() - interval '1 millisecond'
    WHERE id = ${runId} AND status = 'running' AND lease_owner = ${holder}`;
}
