import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { Caller, Source, XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import type { AuditedChange, AuditLog, RpcContext, RpcImplementation } from '@sbc/rpc';
import type { XBuildsConfig } from '../config';
import { admit, refusalOfViolation, type Submission, type SubmittedSource } from '../intake/admit';
import { cancelJob, redraftReply, takeDownApp, type OperationDeps } from '../jobs/operations';
import { isJobStatus } from '../jobs/statuses';
import { countLiveApps, findAppFile } from '../store/apps';
import { isMediaKind, MEDIA_KINDS, readMedia } from '../store/media';
import {
  BLOCK_REASONS,
  blockAuthor,
  listBlocks,
  unblockAuthor,
  type BlockReason,
  type BlockRow,
} from '../store/blocks';
import type { XBuildsDb } from '../store/db';
import { findJob, listJobs, type JobRow } from '../store/jobs';
import { moveJob, readQueue, requeueJob, setPinned, updateSettings } from '../store/queue';
import { windowStats } from '../store/stats';
import { jobView, jobViews, toQueueMessage, type ViewContext } from './views';

export interface XBuildsServiceDeps extends OperationDeps {
  db: XBuildsDb;
  config: XBuildsConfig;
  logger: Logger;
  /** Why intake cannot build now, or undefined when it can. */
  notConfigured: () => string | undefined;
  /** Operators' actions go to the account service's audit log. */
  audit: AuditLog;
  /** A job was queued or the queue changed on this replica: claim without waiting for the next poll. */
  wake: () => void;
  xReplies: boolean;
}

const MAX_LIST_LIMIT = 200;
const MAX_WINDOW_HOURS = 24 * 366;

const optionalNumber = (value: bigint | undefined) => (value === undefined ? undefined : Number(value));

function submittedSource(source: Source | undefined): SubmittedSource {
  if (source?.kind.case === 'x') {
    const x = source.kind.value;
    if (!x.postId || !x.authorId)
      throw new ApiError('invalid_request', 'An X source needs post_id and author_id.', { param: 'source' });
    return { type: 'x', postId: x.postId, authorId: x.authorId, conversationId: x.conversationId, text: x.text };
  }
  if (source?.kind.case === 'api')
    return { type: 'api', prompt: source.kind.value.prompt, title: source.kind.value.title };
  throw new ApiError('invalid_request', 'source is required.', { param: 'source' });
}

function boundsOf(caller: Caller) {
  return {
    allowedModels: caller.modelsLimited ? caller.allowedModels : null,
    ...(caller.dailyLimitCredits !== undefined ? { dailyLimitCredits: Number(caller.dailyLimitCredits) } : {}),
    ...(caller.monthlyLimitCredits !== undefined ? { monthlyLimitCredits: Number(caller.monthlyLimitCredits) } : {}),
    route: caller.route || 'auto',
    boundByKey: caller.keyId !== undefined && caller.keyMayInvoke,
  };
}

/** What an operator action can change on a job, as the audit log keeps it. */
function jobAuditView(job: Awaited<ReturnType<typeof jobView>>) {
  return {
    id: job.id,
    status: job.status,
    position: job.position ?? null,
    pinned: job.pinned ?? false,
    slug: job.slug ?? null,
    appUrl: job.appUrl ?? null,
    takenDownAt: job.takenDownAt ? timestampDate(job.takenDownAt as Parameters<typeof timestampDate>[0]) : null,
    reply: job.reply?.text ?? null,
  };
}

const blockMessage = (block: BlockRow) => ({
  authorId: block.authorId,
  reason: block.reason,
  createdAt: timestampFromDate(block.createdAt),
});

export function createXBuildsService(deps: XBuildsServiceDeps): RpcImplementation<typeof XBuildsService> {
  const { db, config } = deps;
  const view: ViewContext = { baseUrl: config.baseUrl, appsDomain: config.appsDomain };

  /**
   * Operator requests come from the edge, which sends them only for a principal the account service marked
   * an operator: who operates is decided there once, not re-derived here from a list of our own.
   */
  function requireOperator(operatorId: string): void {
    if (!operatorId) throw new ApiError('invalid_request', 'operator_id is required.', { param: 'operator_id' });
  }

  async function ownJob(userId: string, id: string): Promise<JobRow> {
    const job = await findJob(db, id);
    if (!job || job.userId !== userId) throw new ApiError('not_found', 'No such job on this account.', { param: 'id' });
    return job;
  }

  async function anyJob(id: string): Promise<JobRow> {
    const job = await findJob(db, id);
    if (!job) throw new ApiError('not_found', 'No such job.', { param: 'id' });
    return job;
  }

  const reread = async (id: string) => ({ job: await jobView(db, view, (await findJob(db, id))!) });

  /** Runs an operator's action on a job and records it with the job before and after. */
  async function operate(ctx: RpcContext, operatorId: string, action: string, id: string, act: () => Promise<unknown>) {
    requireOperator(operatorId);
    const before = await jobView(db, view, await anyJob(id));
    await act();
    const after = await reread(id);
    await deps.audit.record(ctx, {
      action: `x_build.${action}`,
      resourceType: 'x_build',
      resourceId: id,
      ownerUserId: operatorId,
      before: jobAuditView(before),
      after: jobAuditView(after.job),
    });
    return after;
  }

  /** Records an operator's change of the service-wide build settings (queue, blocklist). */
  const recordOperator = (ctx: RpcContext, operatorId: string, change: Omit<AuditedChange, 'ownerUserId'>) =>
    deps.audit.record(ctx, { ...change, ownerUserId: operatorId });

  return {
    async submitJob(request) {
      if (!request.caller?.userId)
        throw new ApiError('invalid_request', 'caller.user_id is required.', { param: 'caller' });
      const submission: Submission = {
        userId: request.caller.userId,
        keyId: request.caller.keyId,
        bounds: boundsOf(request.caller),
        source: submittedSource(request.source),
        idempotencyKey: request.idempotencyKey,
      };
      const admission = await admit({ db, limits: config, notConfigured: deps.notConfigured }, submission);
      if (!admission.existing) deps.wake();
      return {
        job: await jobView(db, view, admission.job),
        existing: admission.existing,
        position: admission.position,
        etaS: admission.etaS,
      };
    },

    async listJobs(request) {
      if (request.limit < 1 || request.limit > MAX_LIST_LIMIT)
        throw new ApiError('invalid_request', `limit must be 1 to ${MAX_LIST_LIMIT}.`, { param: 'limit' });
      if (request.status !== undefined && !isJobStatus(request.status))
        throw new ApiError('invalid_request', `Unknown status ${request.status}.`, { param: 'status' });
      if (!['x', 'api', 'all'].includes(request.platform))
        throw new ApiError('invalid_request', 'platform is one of x, api, all.', { param: 'platform' });
      const page = await listJobs(db, {
        userId: request.userId,
        status: request.status,
        authorId: request.authorId,
        lane: request.platform === 'all' ? undefined : (request.platform as 'x' | 'api'),
        limit: request.limit,
        cursor: request.cursor,
      });
      return { jobs: await jobViews(db, view, page.jobs), hasMore: page.hasMore };
    },

    async getJob(request) {
      return { job: await jobView(db, view, await ownJob(request.userId, request.id)) };
    },

    async getJobMedia(request) {
      if (!isMediaKind(request.kind))
        throw new ApiError('invalid_request', `kind is one of ${MEDIA_KINDS.join(', ')}.`, { param: 'kind' });
      await ownJob(request.userId, request.id);
      const range = request.range
        ? {
            start: optionalNumber(request.range.start),
            end: optionalNumber(request.range.end),
            suffixLength: optionalNumber(request.range.suffixLength),
          }
        : undefined;
      const media = await readMedia(db, {
        jobId: request.id,
        kind: request.kind,
        range,
        ifRange: request.ifRange,
        ifNoneMatch: request.ifNoneMatch,
      });
      if (!media) {
        throw new ApiError(
          'not_found',
          `This build has no ${request.kind}: media are recorded ` +
            `when a browser verifies the app, and removed when it ` +
            `is taken down.`,
          { param: 'id' },
        );
      }
      return {
        contentType: media.contentType,
        etag: media.etag,
        totalSize: BigInt(media.size),
        createdAt: timestampFromDate(media.createdAt),
        notModified: media.kind === 'not_modified',
        rangeUnsatisfiable: media.kind === 'unsatisfiable',
        ...(media.kind === 'full' || media.kind === 'range' ? { body: media.body } : {}),
        ...(media.kind === 'range' ? { rangeStart: BigInt(media.start) } : {}),
      };
    },

    async cancelJob(request) {
      const job = await ownJob(request.userId, request.id);
      await cancelJob(deps, job, request.userId);
      return reread(job.id);
    },

    async redraftReply(request, ctx) {
      return operate(ctx, request.operatorId, 'redraft_reply', request.id, async () =>
        redraftReply(
          { ...deps, baseUrl: config.baseUrl, appsDomain: config.appsDomain, xReplies: deps.xReplies },
          await anyJob(request.id),
          request.text,
          request.operatorId,
        ),
      );
    },

    async moveJob(request, ctx) {
      requireOperator(request.operatorId);
      const placement =
        request.beforeId !== undefined
          ? { beforeId: request.beforeId }
          : request.afterId !== undefined
            ? { afterId: request.afterId }
            : undefined;
      if (!placement || (request.beforeId !== undefined && request.afterId !== undefined)) {
        throw new ApiError('invalid_request', 'Pass exactly one of before_id and after_id.', { param: 'before_id' });
      }
      return operate(ctx, request.operatorId, 'move', request.id, () =>
        moveJob(db, request.id, placement, request.operatorId),
      );
    },

    async requeueJob(request, ctx) {
      const requeued = await operate(ctx, request.operatorId, 'requeue', request.id, () =>
        requeueJob(db, request.id, 'requeue', request.operatorId).catch((error: unknown) => {
          throw refusalOfViolation(error) ?? error;
        }),
      );
      deps.wake();
      return requeued;
    },

    async resumeJob(request, ctx) {
      const resumed = await operate(ctx, request.operatorId, 'resume', request.id, () =>
        requeueJob(db, request.id, 'resume', request.operatorId).catch((error: unknown) => {
          throw refusalOfViolation(error) ?? error;
        }),
      );
      deps.wake();
      return resumed;
    },

    async pinJob(request, ctx) {
      return operate(ctx, request.operatorId, 'pin', request.id, () =>
        setPinned(db, request.id, true, request.operatorId),
      );
    },

    async unpinJob(request, ctx) {
      return operate(ctx, request.operatorId, 'unpin', request.id, () =>
        setPinned(db, request.id, false, request.operatorId),
      );
    },

    async takeDownApp(request, ctx) {
      return operate(ctx, request.operatorId, 'take_down', request.id, async () =>
        takeDownApp(deps, await anyJob(request.id), request.operatorId),
      );
    },

    async getQueue(request) {
      requireOperator(request.operatorId);
      return { queue: toQueueMessage(await readQueue(db)) };
    },

    async updateQueue(request, ctx) {
      requireOperator(request.operatorId);
      if (request.maxConcurrent !== undefined && (request.maxConcurrent < 1 || request.maxConcurrent > 1_000)) {
        throw new ApiError('invalid_request', 'max_concurrent must be 1 to 1000.', { param: 'max_concurrent' });
      }
      if (request.maxQueue !== undefined && (request.maxQueue < 0 || request.maxQueue > 1_000_000)) {
        throw new ApiError('invalid_request', 'max_queue must be 0 to 1000000.', { param: 'max_queue' });
      }
      const before = (await readQueue(db)).settings;
      await updateSettings(db, {
        maxConcurrent: request.maxConcurrent,
        maxQueue: request.maxQueue,
        paused: request.paused,
      });
      deps.logger.info(
        {
          operator: request.operatorId,
          maxConcurrent: request.maxConcurrent,
          maxQueue: request.maxQueue,
          paused: request.paused,
        },
        'queue settings changed',
      );
      deps.wake();
      const queue = await readQueue(db);
      await recordOperator(ctx, request.operatorId, {
        action: 'x_builds_queue.update',
        resourceType: 'x_builds_queue',
        resourceId: 'queue',
        before,
        after: queue.settings,
      });
      return { queue: toQueueMessage(queue) };
    },

    async listBlocks(request) {
      requireOperator(request.operatorId);
      return { blocks: (await listBlocks(db)).map(blockMessage) };
    },

    async blockAuthor(request, ctx) {
      requireOperator(request.operatorId);
      if (!(BLOCK_REASONS as readonly string[]).includes(request.reason))
        throw new ApiError('invalid_request', `reason is one of ${BLOCK_REASONS.join(', ')}.`, { param: 'reason' });
      const block = await blockAuthor(db, request.authorId, request.reason as BlockReason, request.operatorId);
      await recordOperator(ctx, request.operatorId, {
        action: 'x_builds_block.create',
        resourceType: 'x_builds_block',
        resourceId: block.authorId,
        after: block,
      });
      return { block: blockMessage(block) };
    },

    async unblockAuthor(request, ctx) {
      requireOperator(request.operatorId);
      const removed = await unblockAuthor(db, request.authorId);
      if (!removed) throw new ApiError('not_found', 'This author is not blocked.', { param: 'author_id' });
      await recordOperator(ctx, request.operatorId, {
        action: 'x_builds_block.delete',
        resourceType: 'x_builds_block',
        resourceId: removed.authorId,
        before: removed,
      });
      return { block: blockMessage(removed) };
    },

    async getStats(request) {
      if (request.windowHours < 1 || request.windowHours > MAX_WINDOW_HOURS)
        throw new ApiError('invalid_request', `window must be 1h to ${MAX_WINDOW_HOURS}h.`, { param: 'window' });
      const stats = await windowStats(db, request.windowHours, config.sloTotalS);
      return {
        windowHours: request.windowHours,
        accepted: stats.accepted,
        byStatus: stats.byStatus,
        byLane: stats.byLane,
        byRefusalCategory: stats.byRefusalCategory,
        totalS: stats.totalS,
        queueWaitS: stats.queueWaitS,
        stages: stats.stages,
        sloTotalS: config.sloTotalS,
        sloMisses: stats.sloMisses,
        buildBackoffs: stats.buildBackoffs,
        xBackoffs: stats.xBackoffs,
        inFlight: stats.inFlight,
        accessibilityJobs: stats.accessibility.jobs,
        accessibilityByImpact: stats.accessibility.byImpact,
        accessibilityByRule: stats.accessibility.byRule,
        liveApps: await countLiveApps(db),
        appCapacity: config.appCapacity,
        queue: toQueueMessage(await readQueue(db, { viewerId: request.viewerId })),
      };
    },

    async getAppFile(request) {
      const found = await findAppFile(db, request.slug, request.path);
      if (found.state !== 'live') return { state: found.state };
      return {
        state: 'live',
        contentType: found.contentType,
        body: found.body,
        csp: found.csp,
        bundleId: found.bundleId,
      };
    },
  };
}
