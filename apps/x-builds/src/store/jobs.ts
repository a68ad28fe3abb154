import type { BuildJob, JobStageSpan, Prisma } from '../generated/prisma/client';
import { OPEN_STATUSES, STAGES, type JobStatus } from '../jobs/statuses';
import type { Db, Tx } from './db';

export type JobRow = BuildJob;
export type SpanRow = JobStageSpan;

/** One finding of the audit or verification, fed to the fixing stage. */
export interface Finding {
  check: string;
  message: string;
  /** unsafe findings refuse the job instead of fixing it. */
  severity: 'fixable' | 'unsafe';
}

export function findingsOf(job: Pick<JobRow, 'findings'>): Finding[] {
  return Array.isArray(job.findings) ? (job.findings as unknown as Finding[]) : [];
}

/** One check of verification as the job view shows it. */
export interface CheckResult {
  name: string;
  outcome: 'passed' | 'failed' | 'skipped';
  detail: string;
}

/** An axe-core rule the app breaks, as the job records it. */
export interface AccessibilityFinding {
  rule: string;
  /** minor, moderate, serious or critical. */
  impact: string;
  help: string;
  /** How many elements break it. */
  nodes: number;
}

/** What a transition writes besides the status, as Prisma update data. */
export type JobChanges = Prisma.BuildJobUpdateManyMutationInput;

export interface TransitionInput {
  /** The statuses the job must be in for the change to apply (the conditional part of the update). */
  from: readonly string[];
  to: JobStatus;
  /** Only while this worker holds the lease. */
  leaseOwner?: string;
  set?: JobChanges;
  event: string;
  data?: Record<string, unknown>;
}

/**
 * Moves a job from one of `from` to `to` in one conditional update and records it as a job event. Returns the
 * job after the change, or null when the job was not in an expected status (someone else moved it first).
 */
export async function transition(tx: Tx, jobId: string, input: TransitionInput): Promise<JobRow | null> {
  const before = await tx.buildJob.findUnique({ where: { id: jobId }, select: { status: true } });
  if (!before || !input.from.includes(before.status)) return null;
  const { count } = await tx.buildJob.updateMany({
    where: { id: jobId, status: before.status, ...(input.leaseOwner ? { leaseOwner: input.leaseOwner } : {}) },
    data: { ...input.set, status: input.to, updatedAt: new Date() },
  });
  if (count === 0) return null;
  await recordEvent(tx, jobId, input.event, { from: before.status, to: input.to, data: input.data });
  return tx.buildJob.findUnique({ where: { id: jobId } });
}

export async function recordEvent(
  db: Db,
  jobId: string,
  type: string,
  options: { from?: string; to?: string; data?: Record<string, unknown> } = {},
): Promise<void> {
  await db.jobEvent.create({
    data: {
      jobId,
      type,
      fromStatus: options.from,
      toStatus: options.to,
      data: (options.data ?? {}) as Prisma.InputJsonValue,
    },
  });
}

export async function findJob(db: Db, jobId: string): Promise<JobRow | null> {
  return db.buildJob.findUnique({ where: { id: jobId } });
}

/** Dispatch rank (1-based) of every queued job: pinned first, then queue order, then age. */
export async function queueRanks(db: Db): Promise<Map<string, number>> {
  const rows = await db.buildJob.findMany({
    where: { status: 'queued' },
    select: { id: true },
    orderBy: [{ pinned: 'desc' }, { queueOrder: 'asc' }, { id: 'asc' }],
  });
  return new Map(rows.map((row, index) => [row.id, index + 1]));
}

export async function spansOf(db: Db, jobIds: string[]): Promise<Map<string, SpanRow[]>> {
  const spans = await db.jobStageSpan.findMany({ where: { jobId: { in: jobIds } }, orderBy: { id: 'asc' } });
  const byJob = new Map<string, SpanRow[]>();
  for (const span of spans) byJob.set(span.jobId, [...(byJob.get(span.jobId) ?? []), span]);
  return byJob;
}

export interface ListFilter {
  userId: string;
  status?: string;
  authorId?: string;
  lane?: 'x' | 'api';
  limit: number;
  /** The last id of the previous page: the next page holds older jobs. */
  cursor?: string;
}

/** A page of the account's jobs, newest first, plus whether more follow. */
export async function listJobs(db: Db, filter: ListFilter): Promise<{ jobs: JobRow[]; hasMore: boolean }> {
  const rows = await db.buildJob.findMany({
    where: {
      userId: filter.userId,
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.authorId ? { authorId: filter.authorId } : {}),
      ...(filter.lane ? { lane: filter.lane } : {}),
      ...(filter.cursor ? { id: { lt: filter.cursor } } : {}),
    },
    orderBy: { id: 'desc' },
    take: filter.limit + 1,
  });
  return { jobs: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit };
}

/** Opens the span of a stage a worker enters. */
export async function openSpan(
  db: Db,
  job: Pick<JobRow, 'id' | 'attempt'>,
  stage: string,
  at = new Date(),
): Promise<bigint> {
  const span = await db.jobStageSpan.create({ data: { jobId: job.id, attempt: job.attempt, stage, startedAt: at } });
  return span.id;
}

/** Closes every span of the job still open (a stage that ended, was cancelled or stalled). */
export async function closeOpenSpans(db: Db, jobId: string, outcome: string, at = new Date()): Promise<void> {
  await db.jobStageSpan.updateMany({ where: { jobId, endedAt: null }, data: { endedAt: at, outcome } });
}

export const OPEN = [...OPEN_STATUSES] as string[];
export const IN_STAGE = [...STAGES] as string[];
