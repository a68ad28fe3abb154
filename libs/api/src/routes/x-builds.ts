import { z } from 'zod';
import { DateTime } from '../common';
import { defineRoute, type RouteSpec } from '../route';

// X builds (issue 6): a tagged X post or an API prompt is screened, built by a model, audited, published as
// a live app at `<slug>.<APPS_DOMAIN>`, verified and answered. The spec names the resources and the intake
// refusals; CONTRACTS "X builds" fixes the job view, the sources and the scopes of the further routes.
const TAG = 'X builds';

/** The twelve job statuses of the spec ("States and transitions"). */
export const XB_JOB_STATUSES = [
  'queued',
  'screening',
  'building',
  'auditing',
  'publishing',
  'verifying',
  'fixing',
  'drafting',
  'done',
  'refused',
  'failed',
  'cancelled',
] as const;

const JobId = z
  .string()
  .regex(/^xbj_[0-9A-HJKMNP-TV-Z]{26}$/, 'Expected a job id (xbj_…).')
  .meta({ description: '`xbj_…`' });
const JobIdParams = z.object({ id: JobId });
const AuthorId = z.string().min(1).max(64);

export const XbSource = z
  .strictObject({
    type: z.literal('x'),
    post_id: z.string().regex(/^\d{1,25}$/, 'Expected an X post id (digits).'),
    author_id: AuthorId.meta({ description: 'The X user id of the post author.' }),
    conversation_id: z
      .string()
      .regex(/^\d{1,25}$/)
      .optional()
      .meta({ description: 'The X conversation (thread root) the post belongs to.' }),
    text: z.string().min(1).max(4_000),
  })
  .meta({ id: 'XbSource', description: 'A tagged X post. `post_id` makes the submission idempotent.' });

export const XbApiSource = z
  .strictObject({
    type: z.literal('api'),
    prompt: z.string().trim().min(1).max(8_000).meta({ description: 'What to build.' }),
    title: z
      .string()
      .trim()
      .min(1)
      .max(80)
      .optional()
      .meta({ description: 'A short name for the app (slug and reply).' }),
  })
  .meta({ id: 'XbApiSource', description: 'A plain prompt from an API caller; its author is the calling account.' });

const Stage = z
  .object({ name: z.string(), started_at: DateTime, ended_at: DateTime.nullable(), seconds: z.number().nullable() })
  .loose()
  .meta({ id: 'XbStage' });

export const XbJobView = z
  .object({
    id: z.string(),
    object: z.literal('x_build').optional(),
    status: z.enum(XB_JOB_STATUSES),
    lane: z.enum(['x', 'api']),
    source: z.union([XbSource, XbApiSource]).optional(),
    author_id: z.string().optional(),
    prompt: z.string().optional(),
    slug: z.string().nullable().optional(),
    app_url: z
      .string()
      .nullable()
      .optional()
      .meta({ description: '`<scheme>://<slug>.<APPS_DOMAIN>[:<port>]`, scheme and port from BASE_URL.' }),
    position: z
      .number()
      .nullable()
      .optional()
      .meta({ description: '1-based place in dispatch order while queued, else null.' }),
    pinned: z.boolean().optional(),
    stages: z
      .array(Stage)
      .optional()
      .meta({ description: 'Every stage the job went through, in order, with its timing.' }),
    total_s: z
      .number()
      .nullable()
      .optional()
      .meta({ description: 'Seconds from submission to settling; null until settled.' }),
    refusal: z.object({ category: z.string(), reason: z.string() }).nullable().optional(),
    error: z.string().nullable().optional(),
    reply: z
      .object({
        text: z.string(),
        status: z
          .string()
          .meta({ description: 'pending, posting, posted, failed or skipped (API jobs are never posted).' }),
        posted_at: DateTime.nullable(),
        post_id: z.string().nullable(),
      })
      .loose()
      .nullable()
      .optional(),
    checks: z
      .array(z.object({ name: z.string(), outcome: z.enum(['passed', 'failed', 'skipped']), detail: z.string() }))
      .optional()
      .meta({ description: 'What verification checked, including checks skipped without a browser.' }),
    accessibility: z
      .array(
        z
          .object({ rule: z.string(), impact: z.string(), help: z.string(), nodes: z.number() })
          .meta({ id: 'XbAccessibilityFinding' }),
      )
      .optional()
      .meta({
        description:
          'axe-core findings below serious, recorded without ' +
          'blocking the build (serious and critical ones send it to ' +
          'fixing).',
      }),
    media: z
      .array(z.enum(['screenshot', 'screenshot_mobile', 'clip']))
      .optional()
      .meta({
        description: 'What `/screenshot`, `/screenshot?viewport=mobile` and `/clip` can serve for this job now.',
      }),
    findings: z
      .array(z.object({ check: z.string(), message: z.string() }))
      .optional()
      .meta({
        description:
          'The findings of the latest failed audit or verification: what the last repair worked from, or why the job ' +
          'failed or was refused. Empty when every check passed the first time.',
      }),
    taken_down_at: DateTime.nullable().optional(),
    created_at: DateTime.optional(),
    updated_at: DateTime.optional(),
  })
  .loose()
  .meta({ id: 'XbJobView' });

export const XbQueueView = z
  .object({
    paused: z.boolean(),
    max_concurrent: z.number(),
    max_queue: z.number(),
    queued: z.number(),
    running: z.number(),
    effective_concurrency: z
      .number()
      .optional()
      .meta({ description: 'What the dispatcher uses now: at most 2 while a build backoff is active.' }),
    backoff_until: DateTime.nullable().optional(),
    paused_reason: z
      .string()
      .nullable()
      .optional()
      .meta({ description: '`operator`, or `x_unauthorized` / `x_forbidden` when X refused the account.' }),
    order: z.array(z.string()).optional().meta({
      description: "Queued job ids in dispatch order; in stats, only the caller's own unless an operator asks.",
    }),
  })
  .loose()
  .meta({ id: 'XbQueueView' });

export const XbBlock = z
  .object({ author_id: z.string(), reason: z.enum(['operator', 'optout', 'blocked_us']), created_at: DateTime })
  .loose()
  .meta({ id: 'XbBlock' });

const Percentiles = z
  .object({ count: z.number(), p50: z.number().nullable(), p90: z.number().nullable() })
  .meta({ id: 'XbPercentiles' });
const Counts = z.record(z.string(), z.number());

export const XbStats = z
  .object({
    window: z.string(),
    accepted: z.number(),
    by_status: Counts.optional(),
    by_lane: Counts.optional(),
    by_refusal_category: Counts.optional(),
    total_s: Percentiles.optional(),
    queue_wait_s: Percentiles.optional(),
    stages: z.record(z.string(), Percentiles).optional(),
    slo: z.object({ total_s: z.number(), misses: z.number() }).optional(),
    backoffs: z.object({ build: z.number(), x_api: z.number() }).optional(),
    in_flight: z.number().optional(),
    apps: z.object({ live: z.number(), capacity: z.number() }).optional(),
    accessibility: z
      .object({ jobs: z.number(), by_impact: Counts, by_rule: Counts })
      .optional()
      .meta({
        description:
          'Builds finished in the window with non-blocking ' +
          'accessibility findings, and those findings by impact and by ' +
          'axe-core rule.',
      }),
    queue: XbQueueView.optional(),
  })
  .loose()
  .meta({ id: 'XbStats' });

const Admission = {
  id: z.string(),
  status: z.enum(XB_JOB_STATUSES),
  position: z.number().meta({ description: '1-based place in dispatch order; 0 once the job left the queue.' }),
  eta_s: z
    .number()
    .meta({ description: 'Estimated seconds until the build is done, from the queue and recent build times.' }),
};

export const listXBuilds = defineRoute({
  operationId: 'listXBuilds',
  method: 'get',
  path: '/v1/x-builds',
  summary: 'List build jobs',
  description: "The calling account's jobs, newest first, cursored by job id.",
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:read'] },
  query: z.object({
    status: z.enum(XB_JOB_STATUSES).optional(),
    author_id: AuthorId.optional(),
    platform: z
      .enum(['x', 'api', 'all'])
      .default('x')
      .meta({ description: '`x` (default): tagged posts; `api`: plain prompts; `all`.' }),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    cursor: JobId.optional().meta({ description: 'The `next_cursor` of the previous page.' }),
  }),
  responses: {
    200: {
      description: 'A page of jobs.',
      schema: z
        .object({
          object: z.literal('list'),
          data: z.array(XbJobView),
          has_more: z.boolean(),
          next_cursor: z.string().nullable(),
        })
        .loose()
        .meta({ id: 'XbJobList' }),
    },
  },
});

export const createXBuild = defineRoute({
  operationId: 'createXBuild',
  rateCost: 5,
  method: 'post',
  path: '/v1/x-builds',
  summary: 'Queue a build',
  description:
    'Idempotent on `source.post_id` and on the `idempotency-key` header: a repeat answers 200 with the first job and ' +
    '`existing: true`. Refusals are intake decisions, checked in this order, and never leave a job behind: 503 ' +
    '`xbuilds_not_configured`, 403 `author_blocked`, 503 `intake_paused`, 429 `author_daily_limit` (with ' +
    '`Retry-After`), 409 `author_active_job`, 409 `conversation_active_job`, 503 `queue_full`, 503 `daily_cap`, 503 ' +
    '`app_capacity`. The build runs on a key minted for the job within the calling key (which therefore needs ' +
    '`gateway:invoke` too).',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:write'] },
  body: z.strictObject({ source: z.discriminatedUnion('type', [XbSource, XbApiSource]) }).meta({ id: 'XbCreate' }),
  responses: {
    200: {
      description: 'A repeat: the existing job.',
      schema: z
        .object({ ...Admission, existing: z.literal(true) })
        .loose()
        .meta({ id: 'XbExisting' }),
    },
    201: { description: 'Queued.', schema: z.object(Admission).loose().meta({ id: 'XbQueued' }) },
  },
  errors: [409, 429, 503],
});

export const getXBuildStats = defineRoute({
  operationId: 'getXBuildStats',
  method: 'get',
  path: '/v1/x-builds/stats',
  summary: 'Lane statistics over a window',
  description:
    'Over the last `window` hours: jobs accepted (by status, lane and refusal category), p50/p90 of the total time ' +
    'and of every stage, SLO misses, build and X API backoffs, jobs in flight, live apps against the cap, and the ' +
    'queue.',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:read'] },
  query: z.object({
    window: z
      .string()
      .regex(/^[1-9]\d{0,3}h$/, 'Expected hours as Nh, e.g. 24h.')
      .default('24h'),
  }),
  responses: { 200: { description: 'The statistics.', schema: XbStats } },
});

export const getXBuildQueue = defineRoute({
  operationId: 'getXBuildQueue',
  method: 'get',
  path: '/v1/x-builds/queue',
  summary: 'Read the queue',
  description:
    'The queue in dispatch order, with the concurrency the ' +
    'dispatcher actually uses. Like every `builds:admin` route, ' +
    "for the service's operators only " +
    "(`X_BUILDS_ADMIN_USER_IDS`, else the bootstrap owner), on every account's jobs; anyone else is 403.",
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:admin'] },
  responses: { 200: { description: 'The queue.', schema: XbQueueView } },
});

export const updateXBuildQueue = defineRoute({
  operationId: 'updateXBuildQueue',
  method: 'patch',
  path: '/v1/x-builds/queue',
  summary: 'Change the queue settings',
  description:
    '`paused` true is the kill switch: intake answers 503 ' +
    '`intake_paused` and nothing more is claimed (running builds ' +
    'finish). The X poller sets it when X refuses the account.',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:admin'] },
  body: z
    .strictObject({
      max_concurrent: z.number().int().min(1).max(1_000).optional(),
      max_queue: z.number().int().min(0).max(1_000_000).optional(),
      paused: z.boolean().optional(),
    })
    .meta({ id: 'XbQueueUpdate' }),
  responses: { 200: { description: 'The queue after the change.', schema: XbQueueView } },
});

export const listXBuildBlocks = defineRoute({
  operationId: 'listXBuildBlocks',
  method: 'get',
  path: '/v1/x-builds/blocklist',
  summary: 'List blocked authors',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:admin'] },
  responses: {
    200: {
      description: 'Every blocked author.',
      schema: z
        .object({ object: z.literal('list'), data: z.array(XbBlock) })
        .loose()
        .meta({ id: 'XbBlockList' }),
    },
  },
});

const AuthorParams = z.object({ author_id: AuthorId });

export const blockXBuildAuthor = defineRoute({
  operationId: 'blockXBuildAuthor',
  method: 'put',
  path: '/v1/x-builds/blocklist/{author_id}',
  summary: 'Block an author',
  description:
    'Blocks an X author (or, for API prompts, an account id). Idempotent; the reason defaults to `operator`.',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:admin'] },
  params: AuthorParams,
  body: z
    .strictObject({ reason: z.enum(['operator', 'optout', 'blocked_us']).default('operator') })
    .meta({ id: 'XbBlockWrite' }),
  responses: { 200: { description: 'The block.', schema: XbBlock } },
});

export const unblockXBuildAuthor = defineRoute({
  operationId: 'unblockXBuildAuthor',
  method: 'delete',
  path: '/v1/x-builds/blocklist/{author_id}',
  summary: 'Unblock an author',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:admin'] },
  params: AuthorParams,
  responses: {
    200: {
      description: 'The block that was removed.',
      schema: XbBlock.extend({ deleted: z.literal(true) }).meta({ id: 'XbBlockDeleted' }),
    },
  },
  errors: [404],
});

export const getXBuild = defineRoute({
  operationId: 'getXBuild',
  method: 'get',
  path: '/v1/x-builds/{id}',
  summary: 'Read a job',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:read'] },
  params: JobIdParams,
  responses: { 200: { description: 'The job.', schema: XbJobView } },
  errors: [404],
});

const MEDIA_NOTE =
  'Recorded when headless Chromium verified the app (X_BUILDS_CHROMIUM_PATH, else /usr/bin/chromium) and it passed ' +
  'every check; 404 when none was recorded, and once the app is taken down (which removes its media).';

const ETag = z
  .string()
  .meta({ description: 'Strong validator of this file; send it back in `if-none-match` (304) or `if-range`.' });
const CacheControl = z
  .string()
  .meta({ description: '`private, max-age=60`: the file may change only while the job is re-verified.' });
const mediaHeaders = (extra: Record<string, z.ZodType> = {}) =>
  z.object({ etag: ETag, 'cache-control': CacheControl, ...extra });
const NotModified = { description: 'The `if-none-match` ETag is current: no body.', headers: mediaHeaders() };
const File = z.string().meta({ description: 'The file bytes.' });

export const getXBuildScreenshot = defineRoute({
  operationId: 'getXBuildScreenshot',
  method: 'get',
  path: '/v1/x-builds/{id}/screenshot',
  summary: 'Read a build screenshot',
  description:
    `The app as a visitor first sees it: a PNG at 1280×800 (\`viewport=desktop\`, the default) or 390×844 ` +
    `(\`viewport=mobile\`). ${MEDIA_NOTE}`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:read'] },
  params: JobIdParams,
  query: z.object({ viewport: z.enum(['desktop', 'mobile']).default('desktop') }),
  responses: {
    200: { description: 'The screenshot.', contentType: 'image/png', schema: File, headers: mediaHeaders() },
    304: NotModified,
  },
  errors: [404],
});

export const getXBuildClip = defineRoute({
  operationId: 'getXBuildClip',
  method: 'get',
  path: '/v1/x-builds/{id}/clip',
  summary: 'Read a build motion clip',
  description:
    `The first seconds of the app after load (3–5 s, from Chromium's screencast): H.264 in MP4 when the ` +
    `host's ffmpeg has libx264, else VP9/VP8 in WebM. \`range: bytes=…\` (one range) answers 206 with that part; a ` +
    `range starting past the end answers 416. ${MEDIA_NOTE}`,
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:read'] },
  params: JobIdParams,
  responses: {
    200: {
      description: 'The whole clip.',
      contentType: 'video/mp4',
      alternatives: { 'video/webm': File },
      schema: File,
      headers: mediaHeaders({ 'accept-ranges': z.literal('bytes') }),
    },
    206: {
      description: 'The requested byte range.',
      contentType: 'video/mp4',
      alternatives: { 'video/webm': File },
      schema: File,
      headers: mediaHeaders({ 'content-range': z.string().meta({ description: '`bytes first-last/length`' }) }),
    },
    304: NotModified,
    416: {
      description: 'The range starts past the end of the clip: no body.',
      headers: z.object({ 'content-range': z.string().meta({ description: '`bytes */length`' }) }),
    },
  },
  errors: [404],
});

const jobAction = (options: {
  name: string;
  verb: string;
  summary: string;
  description: string;
  scope: 'builds:write' | 'builds:admin';
  body?: z.ZodType;
}) =>
  defineRoute({
    operationId: options.name,
    method: 'post',
    path: `/v1/x-builds/{id}/${options.verb}`,
    summary: options.summary,
    description: options.description,
    tag: TAG,
    auth: { kind: 'scoped', scopes: [options.scope] },
    params: JobIdParams,
    ...(options.body ? { body: options.body } : {}),
    responses: { 200: { description: 'The job after the change.', schema: XbJobView } },
    errors: [404, 409],
  });

export const cancelXBuild = jobAction({
  name: 'cancelXBuild',
  verb: 'cancel',
  summary: 'Cancel a job',
  description:
    'Cancels a queued or running job of the calling account; ' +
    'a running stage is aborted at once and an app it already ' +
    'published is taken down. 409 `conflict` once the job has settled.',
  scope: 'builds:write',
});

export const redraftXBuildReply = jobAction({
  name: 'redraftXBuildReply',
  verb: 'reply-draft',
  summary: "Redraft a build's reply",
  description:
    'Drafts the reply of a finished job again, or sets `text`; an X reply not yet posted is posted once by the reply ' +
    'sender. 409 once the reply was posted.',
  scope: 'builds:admin',
  body: z.strictObject({ text: z.string().trim().min(1).max(280).optional() }).meta({ id: 'XbReplyDraft' }),
});

export const moveXBuild = jobAction({
  name: 'moveXBuild',
  verb: 'move',
  summary: 'Move a job in the queue',
  description:
    "Places a queued job right before `before_id` or right after `after_id` (another queued job), taking that job's " +
    'pinned state.',
  scope: 'builds:admin',
  body: z
    .strictObject({ before_id: JobId.optional(), after_id: JobId.optional() })
    .refine((body) => (body.before_id === undefined) !== (body.after_id === undefined), {
      message: 'Pass exactly one of before_id and after_id.',
      path: ['before_id'],
    })
    .meta({ id: 'XbMove' }),
});

export const requeueXBuild = jobAction({
  name: 'requeueXBuild',
  verb: 'requeue',
  summary: 'Requeue a job at the front',
  description:
    'Puts a failed, cancelled or refused job back at the front of the queue to build again (a refused job skips the ' +
    'screen the operator overrode).',
  scope: 'builds:admin',
});

export const resumeXBuild = jobAction({
  name: 'resumeXBuild',
  verb: 'resume',
  summary: 'Resume a bundled job at the audit gate',
  description:
    'Puts a failed or cancelled job that has a bundle back at ' +
    'the front of the queue, to continue from the audit with ' +
    'that bundle.',
  scope: 'builds:admin',
});

export const pinXBuild = jobAction({
  name: 'pinXBuild',
  verb: 'pin',
  summary: 'Pin a job to the front',
  description: 'A pinned queued job is dispatched before every unpinned one.',
  scope: 'builds:admin',
});
export const unpinXBuild = jobAction({
  name: 'unpinXBuild',
  verb: 'unpin',
  summary: 'Unpin a job',
  description: 'The job keeps its place among the unpinned jobs.',
  scope: 'builds:admin',
});

export const takeDownXBuild = defineRoute({
  operationId: 'takeDownXBuild',
  method: 'delete',
  path: '/v1/x-builds/{id}/publish',
  summary: 'Take down a published app',
  description:
    'The apps host answers 410 for the slug from then on, on every edge at once. A job still running is cancelled.',
  tag: TAG,
  auth: { kind: 'scoped', scopes: ['builds:admin'] },
  params: JobIdParams,
  responses: { 200: { description: 'The job, with `taken_down_at` set.', schema: XbJobView } },
  errors: [404, 409],
});

export const X_BUILD_ROUTES: readonly RouteSpec[] = [
  listXBuilds,
  createXBuild,
  getXBuildStats,
  getXBuildQueue,
  updateXBuildQueue,
  listXBuildBlocks,
  blockXBuildAuthor,
  unblockXBuildAuthor,
  getXBuild,
  getXBuildScreenshot,
  getXBuildClip,
  cancelXBuild,
  redraftXBuildReply,
  moveXBuild,
  requeueXBuild,
  resumeXBuild,
  pinXBuild,
  unpinXBuild,
  takeDownXBuild,
];
