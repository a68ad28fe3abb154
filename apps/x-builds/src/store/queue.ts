import { ApiError } from '@sbc/errors';
import type { QueueSettings } from '../generated/prisma/client';
import type { JobStatus } from '../jobs/statuses';
import { advisoryLock, DISPATCH_LOCK, TX_OPTIONS, type Db, type Tx, type XBuildsDb } from './db';
import { closeOpenSpans, findJob, IN_STAGE, recordEvent, transition, type JobRow } from './jobs';

/** Spacing of queue positions, so a move usually fits between two neighbours without renumbering. */
const ORDER_GAP = 1024n;
/** The dispatcher's concurrency while a build backoff is active (spec "Limits"). */
const BACKOFF_CONCURRENCY = 2;

export async function readSettings(db: Db): Promise<QueueSettings> {
  return db.queueSettings.findUniqueOrThrow({ where: { id: 1 } });
}

export function effectiveConcurrency(
  settings: Pick<QueueSettings, 'maxConcurrent' | 'backoffUntil'>,
  now = new Date(),
): number {
  const backoff = settings.backoffUntil !== null && settings.backoffUntil > now;
  return backoff ? Math.min(settings.maxConcurrent, BACKOFF_CONCURRENCY) : settings.maxConcurrent;
}

export interface QueueState {
  settings: QueueSettings;
  queued: number;
  running: number;
  effectiveConcurrency: number;
  /** Queued job ids in dispatch order (only the viewer's own when a viewer is named). */
  order: string[];
}

/** The queue; with `viewerId`, its order names only that account's jobs (a job is its account's and the operators'). */
export async function readQueue(db: Db, options: { viewerId?: string } = {}): Promise<QueueState> {
  const settings = await readSettings(db);
  const queued = await db.buildJob.findMany({
    where: { status: 'queued' },
    select: { id: true, userId: true },
    orderBy: [{ pinned: 'desc' }, { queueOrder: 'asc' }, { id: 'asc' }],
  });
  const running = await db.buildJob.count({ where: { status: { in: IN_STAGE } } });
  const visible = options.viewerId === undefined ? queued : queued.filter((row) => row.userId === options.viewerId);
  return {
    settings,
    queued: queued.length,
    running,
    effectiveConcurrency: effectiveConcurrency(settings),
    order: visible.map((row) => row.id),
  };
}

export async function updateSettings(
  db: XBuildsDb,
  changes: { maxConcurrent?: number; maxQueue?: number; paused?: boolean; pausedReason?: string | null },
): Promise<void> {
  const pausedReason =
    changes.paused === undefined ? undefined : changes.paused ? (changes.pausedReason ?? 'operator') : null;
  await db.queueSettings.update({
    where: { id: 1 },
    data: {
      maxConcurrent: changes.maxConcurrent,
      maxQueue: changes.maxQueue,
      paused: changes.paused,
      pausedReason,
      updatedAt: new Date(),
    },
  });
}

/** The order a job gets at the back of the queue. */
export async function backOrder(tx: Db): Promise<bigint> {
  const { _max } = await tx.buildJob.aggregate({ where: { status: 'queued' }, _max: { queueOrder: true } });
  return (_max.queueOrder ?? 0n) + ORDER_GAP;
}

/** The order that puts a job ahead of every queued job of its pin group. */
export async function frontOrder(tx: Db): Promise<bigint> {
  const { _min } = await tx.buildJob.aggregate({ where: { status: 'queued' }, _min: { queueOrder: true } });
  return (_min.queueOrder ?? 0n) - ORDER_GAP;
}

export interface ClaimOptions {
  workerId: string;
  leaseMs: number;
  maxAttempts: number;
}

export interface ClaimResult {
  claimed: JobRow[];
  /** Jobs whose lease ran out: requeued at the front to resume, or failed past their attempts. */
  recovered: string[];
}

/**
 * One dispatcher round, serialized across every replica by an advisory lock: expired leases are recovered
 * first, then as many queued jobs are claimed as the lane's concurrency leaves free, in dispatch order, with
 * `FOR UPDATE SKIP LOCKED` so rows an operator is changing are passed over rather than waited for.
 */
export async function claimJobs(db: XBuildsDb, options: ClaimOptions): Promise<ClaimResult> {
  return db.$transaction(async (tx) => {
    await advisoryLock(tx, DISPATCH_LOCK);
    const recovered = await recoverExpiredLeases(tx, options.maxAttempts);
    const settings = await readSettings(tx);
    if (settings.paused) return { claimed: [], recovered };
    const running = await tx.buildJob.count({ where: { status: { in: IN_STAGE } } });
    const free = effectiveConcurrency(settings) - running;
    if (free <= 0) return { claimed: [], recovered };
    const rows = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM build_jobs
      WHERE status = 'queued' AND (not_before IS NULL OR not_before <= now())
      ORDER BY pinned DESC, queue_order, id
      LIMIT ${free}
      FOR UPDATE SKIP LOCKED`;
    const claimed: JobRow[] = [];
    for (const { id } of rows) {
      const job = await findJob(tx, id);
      if (!job) continue;
      const now = new Date();
      const next = job.resumeFrom ?? 'screening';
      const moved = await transition(tx, id, {
        from: ['queued'],
        to: next as JobStatus,
        set: {
          resumeFrom: null,
          notBefore: null,
          leaseOwner: options.workerId,
          leaseUntil: new Date(now.getTime() + options.leaseMs),
          heartbeatAt: now,
          attempt: { increment: 1 },
          startedAt: job.startedAt ?? now,
        },
        event: 'claimed',
        data: { worker: options.workerId, resume_from: job.resumeFrom },
      });
      if (moved) claimed.push(moved);
    }
    return { claimed, recovered };
  }, TX_OPTIONS);
}

/**
 * A worker that stopped heartbeating (crashed, partitioned, killed) leaves its job in a stage with an expired
 * lease: put it back at the front to resume from that stage, or fail it once its attempts are used up.
 */
async function recoverExpiredLeases(tx: Tx, maxAttempts: number): Promise<string[]> {
  const expired = await tx.$queryRaw<{ id: string; status: string; attempt: number }[]>`
    SELECT id, status, attempt FROM build_jobs
    WHERE status IN ('screening', 'building', 'auditing', 'publishing', 'verifying', 'fixing', 'drafting')
      AND lease_until < now()
    FOR UPDATE SKIP LOCKED`;
  const recovered: string[] = [];
  for (const job of expired) {
    await closeOpenSpans(tx, job.id, 'stalled');
    const common = { leaseUntil: null, heartbeatAt: null };
    if (job.attempt < maxAttempts) {
      await transition(tx, job.id, {
        from: [job.status],
        to: 'queued',
        set: { ...common, resumeFrom: job.status, queueOrder: await frontOrder(tx) },
        event: 'stalled',
        data: { stage: job.status, attempt: job.attempt },
      });
    } else {
      await transition(tx, job.id, {
        from: [job.status],
        to: 'failed',
        set: {
          ...common,
          error: `The build stalled in ${job.status} ${job.attempt} times (its worker stopped).`,
          finishedAt: new Date(),
        },
        event: 'stalled',
        data: { stage: job.status, attempt: job.attempt, final: true },
      });
    }
    recovered.push(job.id);
  }
  return recovered;
}

/** Extends a lease the worker still holds; false when the job is no longer this worker's (cancelled, recovered). */
export async function heartbeat(db: XBuildsDb, jobId: string, workerId: string, leaseMs: number): Promise<boolean> {
  const now = new Date();
  const { count } = await db.buildJob.updateMany({
    where: { id: jobId, leaseOwner: workerId, status: { in: IN_STAGE } },
    data: { leaseUntil: new Date(now.getTime() + leaseMs), heartbeatAt: now },
  });
  return count === 1;
}

/** Starts (or lengthens) the lane's build backoff after an upstream 429/5xx; returns its end. */
export async function startBackoff(db: Db, delayMs: number): Promise<Date> {
  const until = new Date(Date.now() + delayMs);
  const settings = await readSettings(db);
  const end = settings.backoffUntil && settings.backoffUntil > until ? settings.backoffUntil : until;
  await db.queueSettings.update({ where: { id: 1 }, data: { backoffUntil: end, backoffStep: { increment: 1 } } });
  return end;
}

/** A build went through: the next backoff starts from the base delay again. */
export async function resetBackoffStep(db: Db): Promise<void> {
  await db.queueSettings.updateMany({ where: { id: 1, backoffStep: { gt: 0 } }, data: { backoffStep: 0 } });
}

type Placement = { beforeId: string } | { afterId: string };

function notQueued(job: JobRow): ApiError {
  return new ApiError(
    'conflict',
    `Job ${job.id} is ${job.status}; only a queued job can be moved, pinned or unpinned.`,
    { param: 'id' },
  );
}

/** Runs a reordering under the dispatch lock, so it never interleaves with a claim. */
function reorder<T>(db: XBuildsDb, work: (tx: Tx) => Promise<T>): Promise<T> {
  return db.$transaction(async (tx) => {
    await advisoryLock(tx, DISPATCH_LOCK);
    return work(tx);
  }, TX_OPTIONS);
}

async function queuedJob(tx: Tx, jobId: string): Promise<JobRow> {
  const job = await findJob(tx, jobId);
  if (!job) throw new ApiError('not_found', 'No such job.', { param: 'id' });
  if (job.status !== 'queued') throw notQueued(job);
  return job;
}

/** Places a queued job right before or after another queued job, taking that job's pin group. */
export async function moveJob(db: XBuildsDb, jobId: string, placement: Placement, operator: string): Promise<void> {
  await reorder(db, async (tx) => {
    const job = await queuedJob(tx, jobId);
    const targetId = 'beforeId' in placement ? placement.beforeId : placement.afterId;
    const param = 'beforeId' in placement ? 'before_id' : 'after_id';
    if (targetId === jobId)
      throw new ApiError('invalid_request', 'A job cannot be moved relative to itself.', { param });
    const target = await findJob(tx, targetId);
    if (!target) throw new ApiError('not_found', 'No such job to move next to.', { param });
    if (target.status !== 'queued')
      throw new ApiError('conflict', `Job ${target.id} is ${target.status}, not queued.`, { param });
    const others = (
      await tx.buildJob.findMany({
        where: { status: 'queued', id: { not: jobId } },
        orderBy: [{ pinned: 'desc' }, { queueOrder: 'asc' }, { id: 'asc' }],
      })
    ).map((row) => ({ id: row.id, pinned: row.pinned }));
    const at = others.findIndex((row) => row.id === targetId) + ('beforeId' in placement ? 0 : 1);
    others.splice(at, 0, { id: jobId, pinned: target.pinned });
    // Renumber the whole queued set: it is bounded by max_queue, and spaced positions keep later moves cheap.
    let order = ORDER_GAP;
    for (const row of others) {
      await tx.buildJob.updateMany({
        where: { id: row.id, status: 'queued' },
        data: { queueOrder: order, pinned: row.pinned },
      });
      order += ORDER_GAP;
    }
    await recordEvent(tx, jobId, 'moved', {
      from: 'queued',
      to: 'queued',
      data: { [param]: targetId, by: operator, pinned: target.pinned, was_pinned: job.pinned },
    });
  });
}

export async function setPinned(db: XBuildsDb, jobId: string, pinned: boolean, operator: string): Promise<void> {
  await reorder(db, async (tx) => {
    await queuedJob(tx, jobId);
    await tx.buildJob.updateMany({ where: { id: jobId, status: 'queued' }, data: { pinned, updatedAt: new Date() } });
    await recordEvent(tx, jobId, pinned ? 'pinned' : 'unpinned', {
      from: 'queued',
      to: 'queued',
      data: { by: operator },
    });
  });
}

/**
 * Puts a settled job back at the front of the queue: requeue starts over (a refused job skips the screen the
 * operator overrode), resume restarts at the audit gate with the bundle the job already has.
 */
export async function requeueJob(
  db: XBuildsDb,
  jobId: string,
  mode: 'requeue' | 'resume',
  operator: string,
): Promise<void> {
  await reorder(db, async (tx) => {
    const job = await findJob(tx, jobId);
    if (!job) throw new ApiError('not_found', 'No such job.', { param: 'id' });
    const allowed = mode === 'requeue' ? ['failed', 'cancelled', 'refused'] : ['failed', 'cancelled'];
    if (!allowed.includes(job.status)) {
      throw new ApiError(
        'conflict',
        `Job ${job.id} is ${job.status}; ${mode} applies to a ${allowed.join(' or ')} job.`,
        { param: 'id' },
      );
    }
    if (mode === 'resume' && !job.bundleHtml)
      throw new ApiError('conflict', `Job ${job.id} has no bundle to resume from; requeue it instead.`, {
        param: 'id',
      });
    const resumeFrom = mode === 'resume' ? 'auditing' : job.status === 'refused' ? 'building' : null;
    const moved = await transition(tx, jobId, {
      from: allowed,
      to: 'queued',
      set: {
        resumeFrom,
        queueOrder: await frontOrder(tx),
        notBefore: null,
        error: null,
        refusalCategory: null,
        refusalReason: null,
        finishedAt: null,
        cancelRequestedAt: null,
        leaseOwner: null,
        leaseUntil: null,
        fixAttempts: 0,
        ...(mode === 'requeue' ? { bundleHtml: null, findings: [] } : {}),
      },
      event: mode === 'requeue' ? 'requeued' : 'resumed',
      data: { by: operator, resume_from: resumeFrom },
    });
    if (!moved)
      throw new ApiError('conflict', `Job ${job.id} changed while it was being ${mode}d; read it and retry.`, {
        param: 'id',
      });
  });
}
