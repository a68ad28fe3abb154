import { ApiError } from '@sbc/errors';
import { findAppOfJob, takeDown } from '../store/apps';
import { TX_OPTIONS, type XBuildsDb } from '../store/db';
import { closeOpenSpans, findJob, OPEN, transition, type JobRow } from '../store/jobs';
import { draftReply, appUrlOf } from '../pipeline/reply';
import { titleOf } from '../pipeline/prompts';

export interface OperationDeps {
  db: XBuildsDb;
  /** Tells the replica running a job to abort its stage. */
  jobCancelled: (jobId: string) => Promise<void>;
  /** Tells every edge to drop a slug from its apps-host cache. */
  appChanged: (slug: string) => Promise<void>;
}

/**
 * Cancels a queued or running job: one conditional update to `cancelled`, then the replica running it is told
 * to abort the stage at once (its later writes are refused, as it no longer holds the job in that stage). An
 * app the unfinished job already published is taken down.
 */
export async function cancelJob(deps: OperationDeps, job: JobRow, by: string): Promise<JobRow> {
  const cancelled = await deps.db.$transaction(async (tx) => {
    const next = await transition(tx, job.id, {
      from: OPEN,
      to: 'cancelled',
      set: { cancelRequestedAt: new Date(), finishedAt: new Date(), resumeFrom: null },
      event: 'cancelled',
      data: { by },
    });
    if (next) await closeOpenSpans(tx, job.id, 'cancelled');
    return next;
  }, TX_OPTIONS);
  if (!cancelled) {
    const current = await findJob(deps.db, job.id);
    throw new ApiError(
      'conflict',
      `Job ${job.id} is ${current?.status ?? job.status}; only a queued or running job can be cancelled.`,
      { param: 'id' },
    );
  }
  await deps.jobCancelled(job.id);
  const app = await findAppOfJob(deps.db, job.id);
  if (app && (await takeDown(deps.db, app.id, 'cancelled'))) await deps.appChanged(app.slug);
  return cancelled;
}

/**
 * Takes a job's published app down: the apps host answers 410 for its slug from then on, on every edge at once.
 * A job still running is cancelled too.
 */
export async function takeDownApp(deps: OperationDeps, job: JobRow, by: string): Promise<JobRow> {
  const app = await findAppOfJob(deps.db, job.id);
  if (!app) throw new ApiError('conflict', `Job ${job.id} has not published an app.`, { param: 'id' });
  if (!(await takeDown(deps.db, app.id, 'operator')))
    throw new ApiError('conflict', `The app of job ${job.id} is already taken down.`, { param: 'id' });
  await deps.appChanged(app.slug);
  await deps.db.jobEvent.create({
    data: {
      jobId: job.id,
      type: 'taken_down',
      fromStatus: job.status,
      toStatus: job.status,
      data: { by, slug: app.slug },
    },
  });
  if (OPEN.includes(job.status)) {
    try {
      return await cancelJob(deps, job, by);
    } catch (error) {
      // It settled in the meantime; the take-down stands.
      if (!(error instanceof ApiError && error.code === 'conflict')) throw error;
    }
  }
  return (await findJob(deps.db, job.id))!;
}

/**
 * Drafts a finished job's reply again (or sets the operator's text) while it has not been posted; an X reply
 * goes back to the sender to be posted once.
 */
export async function redraftReply(
  deps: OperationDeps & { baseUrl: string; appsDomain: string; xReplies: boolean },
  job: JobRow,
  text: string | undefined,
  by: string,
): Promise<JobRow> {
  if (job.status !== 'done' || !job.slug)
    throw new ApiError('conflict', `Job ${job.id} is ${job.status}; only a finished build has a reply to draft.`, {
      param: 'id',
    });
  if (job.replyStatus === 'posted')
    throw new ApiError('conflict', `The reply of job ${job.id} was already posted; X replies are posted once.`, {
      param: 'id',
    });
  const replyText =
    text ??
    draftReply({
      title: titleOf(job.prompt, job.title),
      appUrl: appUrlOf(deps.baseUrl, deps.appsDomain, job.slug),
      lane: job.lane,
    });
  const replyStatus = job.lane === 'x' && deps.xReplies ? 'pending' : 'skipped';
  const { count } = await deps.db.buildJob.updateMany({
    where: { id: job.id, status: 'done', replyStatus: { not: 'posted' } },
    data: { replyText, replyStatus, updatedAt: new Date() },
  });
  if (count === 0)
    throw new ApiError('conflict', `The reply of job ${job.id} changed meanwhile; read the job and retry.`, {
      param: 'id',
    });
  await deps.db.jobEvent.create({
    data: {
      jobId: job.id,
      type: 'reply_drafted',
      fromStatus: 'done',
      toStatus: 'done',
      data: { by, operator_text: text !== undefined },
    },
  });
  return (await findJob(deps.db, job.id))!;
}
