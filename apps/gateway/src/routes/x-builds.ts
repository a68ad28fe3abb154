import { Router } from 'express';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { xBuildRoutes as specs } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import type { Block, Job, Percentiles, QueueView, XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import type { Principal } from '../auth/authenticator';
import { mount } from '../http/mount';
import { sendMedia } from './x-builds-media';

export interface XBuildRoutesDeps {
  authorize: Authorize;
  xbuilds: RpcClientOf<typeof XBuildsService>;
}

const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : null);

function renderSource(job: Job): Record<string, unknown> | undefined {
  const kind = job.source?.kind;
  if (kind?.case === 'x') {
    const { postId, authorId, conversationId, text } = kind.value;
    return {
      type: 'x',
      post_id: postId,
      author_id: authorId,
      ...(conversationId ? { conversation_id: conversationId } : {}),
      text,
    };
  }
  if (kind?.case === 'api')
    return { type: 'api', prompt: kind.value.prompt, ...(kind.value.title ? { title: kind.value.title } : {}) };
  return undefined;
}

/** XbJobView with the fields CONTRACTS adds. */
function renderJob(job: Job): Record<string, unknown> {
  return {
    id: job.id,
    object: 'x_build',
    status: job.status,
    lane: job.lane,
    source: renderSource(job),
    author_id: job.authorId,
    prompt: job.prompt,
    slug: job.slug ?? null,
    app_url: job.appUrl ?? null,
    position: job.position ?? null,
    pinned: job.pinned,
    stages: job.stages.map((stage) => ({
      name: stage.name,
      started_at: iso(stage.startedAt),
      ended_at: iso(stage.endedAt),
      seconds: stage.seconds ?? null,
    })),
    total_s: job.totalS ?? null,
    refusal: job.refusal ? { category: job.refusal.category, reason: job.refusal.reason } : null,
    error: job.error ?? null,
    reply: job.reply
      ? {
          text: job.reply.text,
          status: job.reply.status,
          posted_at: iso(job.reply.postedAt),
          post_id: job.reply.postId ?? null,
        }
      : null,
    checks: job.checks.map((check) => ({ name: check.name, outcome: check.outcome, detail: check.detail })),
    accessibility: job.accessibility.map((finding) => ({
      rule: finding.rule,
      impact: finding.impact,
      help: finding.help,
      nodes: finding.nodes,
    })),
    media: job.media,
    findings: job.findings.map((finding) => ({ check: finding.check, message: finding.message })),
    model: job.model ?? null,
    attempt: job.attempt,
    fix_attempts: job.fixAttempts,
    taken_down_at: iso(job.takenDownAt),
    created_at: iso(job.createdAt),
    updated_at: iso(job.updatedAt),
  };
}

function renderQueue(queue: QueueView | undefined): Record<string, unknown> {
  return {
    paused: queue?.paused ?? false,
    max_concurrent: queue?.maxConcurrent ?? 0,
    max_queue: queue?.maxQueue ?? 0,
    queued: queue?.queued ?? 0,
    running: queue?.running ?? 0,
    effective_concurrency: queue?.effectiveConcurrency ?? 0,
    backoff_until: iso(queue?.backoffUntil),
    paused_reason: queue?.pausedReason ?? null,
    order: queue?.order ?? [],
  };
}

const renderBlock = (block: Block | undefined) => ({
  author_id: block?.authorId ?? '',
  reason: block?.reason ?? 'operator',
  created_at: iso(block?.createdAt),
});
const renderPercentiles = (value: Percentiles | undefined) => ({
  count: value?.count ?? 0,
  p50: value?.p50 ?? null,
  p90: value?.p90 ?? null,
});

/** What the builds service needs to know about the submitting credential: its account, key and key bounds. */
function callerOf(principal: Principal) {
  const key = principal.key;
  return {
    userId: principal.userId,
    keyId: key?.id,
    modelsLimited: key?.allowedModels !== undefined,
    allowedModels: key?.allowedModels?.values ?? [],
    dailyLimitCredits: key?.dailyLimitCredits,
    monthlyLimitCredits: key?.monthlyLimitCredits,
    route: key?.route ?? 'auto',
    keyMayInvoke: principal.scopes !== 'unrestricted' && principal.scopes.includes('gateway:invoke'),
  };
}

/**
 * The operator an operator request names. authorize(['builds:admin']) has already refused anyone else; the
 * builds service trusts this id, so it is sent only for a principal the account service marked an operator.
 */
function operatorIdOf(principal: Principal): string {
  if (!principal.operator)
    throw new ApiError('insufficient_scope', "Only the service's operators may use this route.", {
      extra: { required_scopes: ['builds:admin'] },
    });
  return principal.userId;
}

/** Retry-After for the refusals that say when to come back (the builds service puts it in the envelope). */
function withRetryAfter(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const seconds = error.extra.retry_after_s;
  if (typeof seconds !== 'number') return error;
  return new ApiError(error.code, error.message, {
    param: error.param,
    issues: error.issues,
    extra: error.extra,
    headers: { ...error.headers, 'retry-after': String(seconds) },
    cause: error,
  });
}

/** X builds intake, queue, jobs and operator controls, answered by the builds service. */
export function xBuildRoutes(deps: XBuildRoutesDeps): Router {
  const router = Router();
  const { xbuilds } = deps;
  const job = (reply: { job?: Job }) => ({ status: 200, body: renderJob(reply.job!) });

  mount(router, specs.listXBuilds, deps.authorize, async ({ query, principal, requestId }) => {
    const reply = await xbuilds.listJobs(
      {
        userId: principal.userId,
        status: query.status,
        authorId: query.author_id,
        platform: query.platform,
        limit: query.limit,
        cursor: query.cursor,
      },
      { requestId },
    );
    const data = reply.jobs.map(renderJob);
    return {
      status: 200,
      body: {
        object: 'list',
        data,
        has_more: reply.hasMore,
        next_cursor: reply.hasMore ? (reply.jobs.at(-1)?.id ?? null) : null,
      },
    };
  });

  mount(router, specs.createXBuild, deps.authorize, async ({ body, principal, requestId, req }) => {
    const header = req.headers['idempotency-key'];
    const idempotencyKey = typeof header === 'string' && header !== '' ? header : undefined;
    if (idempotencyKey && idempotencyKey.length > 255)
      throw new ApiError('invalid_request', 'idempotency-key is at most 255 characters.', { param: 'idempotency-key' });
    const source =
      body.source.type === 'x'
        ? {
            kind: {
              case: 'x' as const,
              value: {
                postId: body.source.post_id,
                authorId: body.source.author_id,
                conversationId: body.source.conversation_id,
                text: body.source.text,
              },
            },
          }
        : { kind: { case: 'api' as const, value: { prompt: body.source.prompt, title: body.source.title } } };
    const reply = await xbuilds
      .submitJob({ caller: callerOf(principal), source, idempotencyKey }, { requestId })
      .catch((error: unknown) => {
        throw withRetryAfter(error);
      });
    const admission = { id: reply.job!.id, status: reply.job!.status, position: reply.position, eta_s: reply.etaS };
    return reply.existing ? { status: 200, body: { ...admission, existing: true } } : { status: 201, body: admission };
  });

  mount(router, specs.getXBuildStats, deps.authorize, async ({ query, principal, requestId }) => {
    const hours = Number(query.window.slice(0, -1));
    // The counts are the lane's; the queue's job ids are the operators' and each account's own.
    const stats = await xbuilds.getStats(
      { windowHours: hours, viewerId: principal.operator ? undefined : principal.userId },
      { requestId },
    );
    const stages = Object.fromEntries(
      Object.entries(stats.stages).map(([name, value]) => [name, renderPercentiles(value)]),
    );
    return {
      status: 200,
      body: {
        window: `${stats.windowHours}h`,
        accepted: stats.accepted,
        by_status: stats.byStatus,
        by_lane: stats.byLane,
        by_refusal_category: stats.byRefusalCategory,
        total_s: renderPercentiles(stats.totalS),
        queue_wait_s: renderPercentiles(stats.queueWaitS),
        stages,
        slo: { total_s: stats.sloTotalS, misses: stats.sloMisses },
        backoffs: { build: stats.buildBackoffs, x_api: stats.xBackoffs },
        in_flight: stats.inFlight,
        apps: { live: stats.liveApps, capacity: stats.appCapacity },
        accessibility: {
          jobs: stats.accessibilityJobs,
          by_impact: stats.accessibilityByImpact,
          by_rule: stats.accessibilityByRule,
        },
        queue: renderQueue(stats.queue),
      },
    };
  });

  mount(router, specs.getXBuildQueue, deps.authorize, async ({ principal, requestId }) => {
    const reply = await xbuilds.getQueue({ operatorId: operatorIdOf(principal) }, { requestId });
    return { status: 200, body: renderQueue(reply.queue) };
  });

  mount(router, specs.updateXBuildQueue, deps.authorize, async ({ body, principal, rpc }) => {
    const reply = await xbuilds.updateQueue(
      {
        operatorId: operatorIdOf(principal),
        maxConcurrent: body.max_concurrent,
        maxQueue: body.max_queue,
        paused: body.paused,
      },
      rpc,
    );
    return { status: 200, body: renderQueue(reply.queue) };
  });

  mount(router, specs.listXBuildBlocks, deps.authorize, async ({ principal, requestId }) => {
    const reply = await xbuilds.listBlocks({ operatorId: operatorIdOf(principal) }, { requestId });
    return { status: 200, body: { object: 'list', data: reply.blocks.map(renderBlock) } };
  });

  mount(router, specs.blockXBuildAuthor, deps.authorize, async ({ params, body, principal, rpc }) => {
    const reply = await xbuilds.blockAuthor(
      { operatorId: operatorIdOf(principal), authorId: params.author_id, reason: body.reason },
      rpc,
    );
    return { status: 200, body: renderBlock(reply.block) };
  });

  mount(router, specs.unblockXBuildAuthor, deps.authorize, async ({ params, principal, rpc }) => {
    const reply = await xbuilds.unblockAuthor({ operatorId: operatorIdOf(principal), authorId: params.author_id }, rpc);
    return { status: 200, body: { ...renderBlock(reply.block), deleted: true } };
  });

  mount(router, specs.getXBuild, deps.authorize, async ({ params, principal, requestId }) =>
    job(await xbuilds.getJob({ userId: principal.userId, id: params.id }, { requestId })),
  );

  mount(
    router,
    specs.getXBuildScreenshot,
    deps.authorize,
    async ({ params, query, principal, requestId, req, res }) => {
      const kind = query.viewport === 'mobile' ? 'screenshot_mobile' : 'screenshot';
      await sendMedia(xbuilds, { userId: principal.userId, id: params.id, kind, ranges: false, requestId, req, res });
    },
  );

  mount(router, specs.getXBuildClip, deps.authorize, async ({ params, principal, requestId, req, res }) => {
    await sendMedia(xbuilds, {
      userId: principal.userId,
      id: params.id,
      kind: 'clip',
      ranges: true,
      requestId,
      req,
      res,
    });
  });

  mount(router, specs.cancelXBuild, deps.authorize, async ({ params, principal, requestId }) =>
    job(await xbuilds.cancelJob({ userId: principal.userId, id: params.id }, { requestId })),
  );

  mount(router, specs.redraftXBuildReply, deps.authorize, async ({ params, body, principal, rpc }) =>
    job(
      await xbuilds.redraftReply(
        { operatorId: operatorIdOf(principal), id: params.id, text: (body as { text?: string }).text },
        rpc,
      ),
    ),
  );

  mount(router, specs.moveXBuild, deps.authorize, async ({ params, body, principal, rpc }) => {
    const placement = body as { before_id?: string; after_id?: string };
    return job(
      await xbuilds.moveJob(
        {
          operatorId: operatorIdOf(principal),
          id: params.id,
          beforeId: placement.before_id,
          afterId: placement.after_id,
        },
        rpc,
      ),
    );
  });

  mount(router, specs.requeueXBuild, deps.authorize, async ({ params, principal, rpc }) =>
    job(await xbuilds.requeueJob({ operatorId: operatorIdOf(principal), id: params.id }, rpc)),
  );
  mount(router, specs.resumeXBuild, deps.authorize, async ({ params, principal, rpc }) =>
    job(await xbuilds.resumeJob({ operatorId: operatorIdOf(principal), id: params.id }, rpc)),
  );
  mount(router, specs.pinXBuild, deps.authorize, async ({ params, principal, rpc }) =>
    job(await xbuilds.pinJob({ operatorId: operatorIdOf(principal), id: params.id }, rpc)),
  );
  mount(router, specs.unpinXBuild, deps.authorize, async ({ params, principal, rpc }) =>
    job(await xbuilds.unpinJob({ operatorId: operatorIdOf(principal), id: params.id }, rpc)),
  );
  mount(router, specs.takeDownXBuild, deps.authorize, async ({ params, principal, rpc }) =>
    job(await xbuilds.takeDownApp({ operatorId: operatorIdOf(principal), id: params.id }, rpc)),
  );

  return router;
}
