import { ApiError } from '@sbc/errors';
import { newId } from '@sbc/ids';
import type { Prisma } from '../generated/prisma/client';
import { countLiveApps } from '../store/apps';
import { isBlocked } from '../store/blocks';
import { advisoryLock, INTAKE_LOCK, TX_OPTIONS, violatedIndex, type Tx, type XBuildsDb } from '../store/db';
import { findJob, OPEN, queueRanks, recordEvent, type JobRow } from '../store/jobs';
import { backOrder, effectiveConcurrency, readSettings } from '../store/queue';
import { recentMedianRunSeconds } from '../store/stats';

/** The submitting key's bounds, copied onto the key a build's model calls are billed to. */
export interface KeyBounds {
  allowedModels: string[] | null;
  dailyLimitCredits?: number;
  monthlyLimitCredits?: number;
  route: string;
  /** Mint the build key as the submitting key (it holds gateway:invoke), so the account service bounds it. */
  boundByKey: boolean;
}

export type SubmittedSource =
  | { type: 'x'; postId: string; authorId: string; conversationId?: string; text: string }
  | { type: 'api'; prompt: string; title?: string };

export interface Submission {
  userId: string;
  keyId?: string;
  bounds: KeyBounds;
  source: SubmittedSource;
  idempotencyKey?: string;
}

export interface IntakeLimits {
  authorDailyLimit: number;
  dailyCap: number;
  appCapacity: number;
}

export interface IntakeDeps {
  db: XBuildsDb;
  limits: IntakeLimits;
  /** Why the lane cannot build now (what intake needs is not configured), or undefined when it can. */
  notConfigured: () => string | undefined;
}

export interface Admission {
  job: JobRow;
  existing: boolean;
  position: number;
  etaS: number;
}

/** Build time assumed for `eta_s` until the lane has finished a build in the last day. */
const DEFAULT_RUN_S = 60;
const QUEUE_FULL_RETRY_S = 60;

function secondsToUtcMidnight(now: Date): number {
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((midnight - now.getTime()) / 1000));
}

function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

/** API prompts have no X author: the account that submits them is their author. */
function authorOf(submission: Pick<Submission, 'userId' | 'source'>): string {
  return submission.source.type === 'x' ? submission.source.authorId : submission.userId;
}

async function findExisting(tx: Tx, submission: Submission): Promise<JobRow | null> {
  if (submission.source.type === 'x') {
    const byPost = await tx.buildJob.findUnique({ where: { postId: submission.source.postId } });
    if (byPost) return byPost;
  }
  if (submission.idempotencyKey) {
    return tx.buildJob.findUnique({
      where: { userId_idempotencyKey: { userId: submission.userId, idempotencyKey: submission.idempotencyKey } },
    });
  }
  return null;
}

/**
 * Every intake refusal, in this fixed order, before anything is written: lane not configured, author blocked,
 * intake paused, the author's daily limit, an active job of the author or the conversation, queue full,
 * daily cap, app capacity. A repeat of a post id or idempotency key answers its job before any of them.
 */
async function refuseIfClosed(tx: Tx, deps: IntakeDeps, submission: Submission, now: Date): Promise<void> {
  const reason = deps.notConfigured();
  if (reason) throw new ApiError('xbuilds_not_configured', `The X builds lane is not configured: ${reason}.`);
  const authorId = authorOf(submission);
  if (await isBlocked(tx, authorId))
    throw new ApiError('author_blocked', 'The lane does not build for this author.', { param: 'source.author_id' });
  const settings = await readSettings(tx);
  if (settings.paused) throw new ApiError('intake_paused', 'Build intake is paused by the operator.');
  const today = startOfUtcDay(now);
  const authorToday = await tx.buildJob.count({ where: { authorId, createdAt: { gte: today } } });
  if (authorToday >= deps.limits.authorDailyLimit) {
    const retryAfterS = secondsToUtcMidnight(now);
    throw new ApiError(
      'author_daily_limit',
      `This author has had ${deps.limits.authorDailyLimit} builds today (UTC); the limit resets at midnight UTC.`,
      {
        extra: { retry_after_s: retryAfterS },
      },
    );
  }
  if ((await tx.buildJob.count({ where: { authorId, status: { in: OPEN } } })) > 0) {
    throw new ApiError('author_active_job', 'This author already has a job queued or building; wait for it to settle.');
  }
  if (submission.source.type === 'x' && submission.source.conversationId) {
    if (
      (await tx.buildJob.count({ where: { conversationId: submission.source.conversationId, status: { in: OPEN } } })) >
      0
    ) {
      throw new ApiError('conversation_active_job', 'This conversation already has a job queued or building.', {
        param: 'source.conversation_id',
      });
    }
  }
  if ((await tx.buildJob.count({ where: { status: 'queued' } })) >= settings.maxQueue) {
    throw new ApiError('queue_full', `The build queue holds its maximum of ${settings.maxQueue} jobs.`, {
      extra: { retry_after_s: QUEUE_FULL_RETRY_S },
    });
  }
  if ((await tx.buildJob.count({ where: { createdAt: { gte: today } } })) >= deps.limits.dailyCap) {
    throw new ApiError('daily_cap', `The lane has accepted its ${deps.limits.dailyCap} builds for today (UTC).`, {
      extra: { retry_after_s: secondsToUtcMidnight(now) },
    });
  }
  if ((await countLiveApps(tx)) >= deps.limits.appCapacity) {
    throw new ApiError('app_capacity', `The lane serves its maximum of ${deps.limits.appCapacity} live apps.`);
  }
}

function promptOf(source: SubmittedSource): { prompt: string; title?: string } {
  return source.type === 'api' ? { prompt: source.prompt, title: source.title } : { prompt: source.text };
}

function sourceJson(source: SubmittedSource): Prisma.InputJsonValue {
  return source.type === 'x'
    ? {
        type: 'x',
        post_id: source.postId,
        author_id: source.authorId,
        ...(source.conversationId ? { conversation_id: source.conversationId } : {}),
        text: source.text,
      }
    : { type: 'api', prompt: source.prompt, ...(source.title ? { title: source.title } : {}) };
}

/** Where a job stands: its rank in dispatch order and an estimate from the lane's recent build times. */
async function placeOf(db: XBuildsDb | Tx, job: JobRow): Promise<{ position: number; etaS: number }> {
  if (job.status !== 'queued') return { position: 0, etaS: 0 };
  const ranks = await queueRanks(db);
  const position = ranks.get(job.id) ?? ranks.size;
  const concurrency = effectiveConcurrency(await readSettings(db));
  const runS = (await recentMedianRunSeconds(db)) ?? DEFAULT_RUN_S;
  return { position, etaS: Math.ceil(Math.ceil(position / Math.max(1, concurrency)) * runS) };
}

/**
 * Admits one submission. Intake decisions are serialized by an advisory lock, so counts and the "one active
 * job" checks cannot race; the partial unique indexes stand behind them anyway, and a violation from a
 * writer outside the lock maps to the same 409.
 */
export async function admit(deps: IntakeDeps, submission: Submission): Promise<Admission> {
  const now = new Date();
  const result = await deps.db
    .$transaction(async (tx) => {
      await advisoryLock(tx, INTAKE_LOCK);
      const existing = await findExisting(tx, submission);
      if (existing) return { job: existing, existing: true };
      await refuseIfClosed(tx, deps, submission, now);
      const { prompt, title } = promptOf(submission.source);
      const id = newId('xbj', now.getTime());
      await tx.buildJob.create({
        data: {
          id,
          userId: submission.userId,
          keyId: submission.keyId,
          lane: submission.source.type,
          source: sourceJson(submission.source),
          postId: submission.source.type === 'x' ? submission.source.postId : null,
          idempotencyKey: submission.idempotencyKey,
          authorId: authorOf(submission),
          conversationId: submission.source.type === 'x' ? (submission.source.conversationId ?? null) : null,
          prompt,
          title,
          keyBounds: submission.bounds as unknown as Prisma.InputJsonValue,
          status: 'queued',
          queueOrder: await backOrder(tx),
          createdAt: now,
          updatedAt: now,
        },
      });
      await recordEvent(tx, id, 'queued', { to: 'queued', data: { lane: submission.source.type } });
      return { job: (await findJob(tx, id))!, existing: false };
    }, TX_OPTIONS)
    .catch((error: unknown) => {
      throw refusalOfViolation(error) ?? error;
    });
  return { ...result, ...(await placeOf(deps.db, result.job)) };
}

/** The 409 a unique-index violation on the "one active job" indexes stands for. */
export function refusalOfViolation(error: unknown): ApiError | undefined {
  const index = violatedIndex(error);
  if (index === 'build_jobs_one_active_per_author')
    return new ApiError(
      'author_active_job',
      'This author already has a job queued or building; wait for it to settle.',
    );
  if (index === 'build_jobs_one_active_per_conversation')
    return new ApiError('conversation_active_job', 'This conversation already has a job queued or building.');
  return undefined;
}
