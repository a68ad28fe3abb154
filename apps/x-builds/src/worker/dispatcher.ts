import { randomUUID } from 'node:crypto';
import type { PubSub, Unsubscribe } from '@sbc/cache';
import { ApiError } from '@sbc/errors';
import { XBUILDS_APP_CHANGED_CHANNEL, XBUILDS_JOB_CANCELLED_CHANNEL } from '@sbc/events';
import type { Logger } from '@sbc/logging';
import type { XBuildsConfig } from '../config';
import { isStage, type Stage } from '../jobs/statuses';
import { ModelRefusedError, UpstreamBusyError } from '../pipeline/model-client';
import { TX_OPTIONS, type XBuildsDb } from '../store/db';
import { closeOpenSpans, openSpan, transition, type JobRow } from '../store/jobs';
import { replaceMedia } from '../store/media';
import { claimJobs, frontOrder, heartbeat, readSettings, resetBackoffStep, startBackoff } from '../store/queue';
import { mintBuildKey, revokeBuildKey, type AccountClient } from './build-keys';
import { STAGE_RUNNERS, type StageContext, type Step } from './stages';

export interface DispatcherDeps {
  db: XBuildsDb;
  config: XBuildsConfig;
  logger: Logger;
  pubsub: PubSub;
  account: AccountClient;
  gatewayUrl: () => string | undefined;
  /** Whether X replies can be posted. */
  xReplies: boolean;
  /** The Chromium verification runs, found once at start (see findChromium). */
  chromiumPath?: string;
}

export interface Dispatcher {
  start(): Promise<void>;
  /** Claims now instead of at the next poll (a job was queued or a slot freed on this replica). */
  wake(): void;
  /**
   * Aborts the stages this replica runs and writes nothing more: their leases lapse and another replica resumes them.
   */
  stop(): Promise<void>;
}

interface ActiveRun {
  controller: AbortController;
  done: Promise<void>;
}

/** Why a run was aborted: the job was cancelled or taken from this worker, or the replica is stopping. */
type AbortReason = 'cancelled' | 'lost' | 'shutdown';

const reasonOf = (signal: AbortSignal): AbortReason | undefined =>
  signal.aborted ? (signal.reason as AbortReason) : undefined;

/**
 * The dispatcher of one replica: each round it recovers expired leases and claims what the lane's
 * concurrency leaves free (see claimJobs), then runs every claimed job through its stages under a heartbeat.
 */
export function createDispatcher(deps: DispatcherDeps): Dispatcher {
  const { db, config, logger } = deps;
  const workerId = `wkr_${randomUUID()}`;
  const runs = new Map<string, ActiveRun>();
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | undefined;
  let again = false;
  let stopping = false;
  let unsubscribe: Unsubscribe | undefined;

  const appChanged = (slug: string) => deps.pubsub.publish(XBUILDS_APP_CHANGED_CHANNEL, slug);

  function schedule(delayMs: number): void {
    if (stopping) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delayMs);
    timer.unref?.();
  }

  async function round(): Promise<void> {
    if (stopping || !deps.gatewayUrl()) return;
    const { claimed, recovered } = await claimJobs(db, {
      workerId,
      leaseMs: config.leaseMs,
      maxAttempts: config.maxAttempts,
    });
    if (recovered.length > 0) logger.warn({ jobs: recovered }, 'recovered jobs whose worker stopped');
    for (const job of claimed) launch(job);
    await revokeOrphanedKeys();
  }

  /** One round at a time; a wake during a round runs another right after it. */
  function tick(): void {
    if (ticking) {
      again = true;
      return;
    }
    // Promise handlers run later, so `ticking` is set before the round can finish and clear it.
    ticking = round()
      .catch((err: unknown) => {
        if (!stopping) logger.error({ err }, 'dispatch round failed');
      })
      .finally(() => {
        ticking = undefined;
        const now = again;
        again = false;
        schedule(now ? 0 : config.dispatchPollMs);
      });
  }

  /** Build keys of jobs that settled while no worker held them (cancelled after a crash) are revoked here. */
  async function revokeOrphanedKeys(): Promise<void> {
    const orphans = await db.buildJob.findMany({
      where: {
        buildKeyId: { not: null },
        status: { in: ['done', 'refused', 'failed', 'cancelled', 'queued'] },
        OR: [{ leaseUntil: null }, { leaseUntil: { lt: new Date() } }],
      },
      take: 20,
    });
    for (const job of orphans) {
      if (runs.has(job.id)) continue;
      await revokeBuildKey(deps.account, job.userId, job.buildKeyId!, `req_revoke_${job.id}`);
      await db.buildJob.updateMany({ where: { id: job.id, buildKeyId: job.buildKeyId }, data: { buildKeyId: null } });
    }
  }

  function launch(job: JobRow): void {
    const controller = new AbortController();
    const done = runClaimed(job, controller).finally(() => {
      runs.delete(job.id);
      if (!stopping) tick();
    });
    runs.set(job.id, { controller, done });
  }

  async function runClaimed(claimed: JobRow, controller: AbortController): Promise<void> {
    const { signal } = controller;
    const requestId = `req_${claimed.id}_${claimed.attempt}`;
    const beat = setInterval(
      () => {
        heartbeat(db, claimed.id, workerId, config.leaseMs).then(
          (held) => {
            if (!held) controller.abort('lost' satisfies AbortReason);
          },
          (err: unknown) => logger.warn({ err, job: claimed.id }, 'heartbeat failed'),
        );
      },
      Math.max(100, Math.floor(config.leaseMs / 3)),
    );
    let keyId: string | undefined;
    try {
      // A recovered job still has the key of the worker that stopped: revoke it before minting its own.
      if (claimed.buildKeyId) await revokeBuildKey(deps.account, claimed.userId, claimed.buildKeyId, requestId);
      let key: { id: string; secret: string };
      try {
        key = await mintBuildKey(deps.account, claimed, requestId);
      } catch (error) {
        const reason = error instanceof ApiError ? error.message : 'the account service did not answer';
        await settleAs(claimed, {
          to: 'failed',
          set: {
            error: `No build key could be minted for the job: ${reason}`,
            finishedAt: new Date(),
            buildKeyId: null,
          },
          event: 'failed',
          outcome: 'failed',
        });
        return;
      }
      keyId = key.id;
      const recorded = await db.buildJob.updateMany({
        where: { id: claimed.id, leaseOwner: workerId },
        data: { buildKeyId: key.id },
      });
      if (recorded.count === 0) return;
      await runStages(claimed, key.secret, signal);
    } catch (err) {
      if (!signal.aborted) logger.error({ err, job: claimed.id }, 'build worker failed; the lease will be recovered');
    } finally {
      clearInterval(beat);
      // Stopping writes nothing, exactly as a crash: the job is resumed elsewhere, which revokes this key.
      if (keyId && reasonOf(signal) !== 'shutdown') await releaseKey(claimed, keyId, requestId);
    }
  }

  async function releaseKey(job: JobRow, keyId: string, requestId: string): Promise<void> {
    try {
      await revokeBuildKey(deps.account, job.userId, keyId, requestId);
      await db.buildJob.updateMany({ where: { id: job.id, buildKeyId: keyId }, data: { buildKeyId: null } });
    } catch (err) {
      logger.warn({ err, job: job.id }, 'revoking a build key failed; it is retried by a later round');
    }
  }

  async function runStages(claimed: JobRow, secret: string, signal: AbortSignal): Promise<void> {
    let job: JobRow | null = claimed;
    while (job && isStage(job.status) && !signal.aborted) {
      const stage: Stage = job.status;
      const gatewayUrl = deps.gatewayUrl()!;
      const ctx: StageContext = {
        db,
        config,
        secret,
        gatewayUrl,
        verifyUrl: config.verifyUrl ?? gatewayUrl,
        signal,
        appChanged,
        xReplies: deps.xReplies,
        chromiumPath: deps.chromiumPath,
      };
      await openSpan(db, job, stage);
      let step: Step;
      try {
        step = await STAGE_RUNNERS[stage](ctx, job);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof UpstreamBusyError) {
          await backOff(job, stage, error);
          return;
        }
        if (error instanceof ModelRefusedError) {
          step = {
            to: 'failed',
            set: { error: error.message, finishedAt: new Date() },
            event: 'failed',
            data: { status: error.status },
            outcome: 'failed',
          };
        } else {
          throw error;
        }
      }
      if (signal.aborted) return;
      job = await settleAs(job, step, stage);
      if (job && step.outcome === 'ok' && stage === 'building') await resetBackoffStep(db);
    }
  }

  /** Writes a stage's outcome with its span, only while this worker still holds the job in that stage. */
  async function settleAs(job: JobRow, step: Step, stage: string = job.status): Promise<JobRow | null> {
    return db.$transaction(async (tx) => {
      const next = await transition(tx, job.id, {
        from: [stage],
        to: step.to,
        leaseOwner: workerId,
        set: step.set,
        event: step.event,
        data: step.data,
      });
      if (next) {
        await closeOpenSpans(tx, job.id, step.outcome);
        if (step.media) await replaceMedia(tx, job.id, step.media);
      }
      return next;
    }, TX_OPTIONS);
  }

  /**
   * The upstream is busy: the lane backs off (the dispatcher runs at most 2 builds until it ends) and this job
   * waits at the front of the queue to resume the stage, without using up an attempt.
   */
  async function backOff(job: JobRow, stage: Stage, error: UpstreamBusyError): Promise<void> {
    const settings = await readSettings(db);
    const delayMs = Math.min(
      config.backoffMaxMs,
      error.retryAfterMs ?? config.backoffBaseMs * 2 ** Math.min(settings.backoffStep, 10),
    );
    const until = await startBackoff(db, delayMs);
    await db.$transaction(async (tx) => {
      const moved = await transition(tx, job.id, {
        from: [stage],
        to: 'queued',
        leaseOwner: workerId,
        set: {
          resumeFrom: stage,
          notBefore: until,
          queueOrder: await frontOrder(tx),
          attempt: { decrement: 1 },
          leaseUntil: null,
        },
        event: 'backoff',
        data: { stage, upstream_status: error.status, until: until.toISOString() },
      });
      if (moved) await closeOpenSpans(tx, job.id, 'backoff');
    }, TX_OPTIONS);
    logger.warn({ job: job.id, status: error.status, until }, 'model upstream busy: lane backing off');
  }

  return {
    async start() {
      unsubscribe = await deps.pubsub.subscribe(XBUILDS_JOB_CANCELLED_CHANNEL, (jobId) => {
        runs.get(jobId)?.controller.abort('cancelled' satisfies AbortReason);
      });
      schedule(0);
    },
    wake() {
      if (!stopping) tick();
    },
    async stop() {
      stopping = true;
      clearTimeout(timer);
      // A round in progress may still launch what it claimed; those runs are stopped with the rest.
      await ticking;
      for (const run of runs.values()) run.controller.abort('shutdown' satisfies AbortReason);
      await Promise.allSettled([...runs.values()].map((run) => run.done));
      await unsubscribe?.();
    },
  };
}
