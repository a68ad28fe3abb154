import { z } from 'zod';
import { DateTime, listOf, pageQuery } from '../common';
import { defineRoute, type RouteSpec } from '../route';

// Projects, runs and webhooks (issue 7, CONTRACTS "Runs"): every route of this area, in document order.
const PROJECTS = 'Projects';
const RUNS = 'Runs';
const WEBHOOKS = 'Webhooks';

/** Seconds between `: heartbeat` comments on an open run event stream. */
export const RUN_EVENTS_HEARTBEAT_S = 15;
export const RUN_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export const WEBHOOK_EVENT_TYPES = ['run.succeeded', 'run.failed', 'run.cancelled'] as const;
export const MAX_EVENTS_PAGE = 1_000;

const ulid = '[0-9A-HJKMNP-TV-Z]{26}';
const idOf = (prefix: string, what: string) =>
  z
    .string()
    .regex(new RegExp(`^${prefix}_${ulid}$`), `Expected a ${what} id (${prefix}_…).`)
    .meta({ description: `\`${prefix}_…\`` });

const ProjectId = idOf('prj', 'project');
const RunId = idOf('run', 'run');
const WebhookId = idOf('whk', 'webhook endpoint');

const ProjectName = z.string().trim().min(1).max(128);
const Instructions = z.string().max(20_000).meta({ description: 'Given to the agent of every run of the project.' });
const ModelId = z.string().min(1).max(200);

export const Project = z
  .object({
    id: z.string().meta({ description: '`prj_…`' }),
    object: z.literal('project'),
    name: z.string(),
    instructions: z.string().optional(),
    default_model: z
      .string()
      .optional()
      .meta({ description: "The model of the project's runs that name none; `house` when unset." }),
    created_at: DateTime,
  })
  .loose()
  .meta({ id: 'Project' });

const RunUsage = z
  .object({
    steps: z
      .number()
      .int()
      .meta({ description: 'Model calls of the agent loop, each possibly followed by tool calls.' }),
    model_calls: z.number().int(),
    tool_calls: z.number().int(),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
  })
  .loose()
  .meta({ id: 'RunUsage' });

export const Run = z
  .object({
    id: z.string().meta({ description: '`run_…`' }),
    object: z.literal('run'),
    project_id: z.string(),
    status: z
      .enum(RUN_STATUSES)
      .meta({ description: '`queued` → `running` → `succeeded` | `failed` | `cancelled` (settled = the last three).' }),
    model: z.string(),
    prompt: z.string(),
    output: z.string().optional().meta({ description: 'The final answer of a succeeded run.' }),
    error: z
      .object({ code: z.string(), message: z.string() })
      .loose()
      .optional()
      .meta({
        description:
          'Why a failed run failed, e.g. `step_budget_exhausted`, `time_budget_exhausted`, `budget_exhausted`, ' +
          '`worker_lost`.',
      }),
    usage: RunUsage,
    metadata: z.record(z.string(), z.string()),
    created_at: DateTime,
    started_at: DateTime.optional(),
    settled_at: DateTime.optional(),
    cancel_requested_at: DateTime.optional().meta({
      description: 'Set by a cancel while the run was running; its worker then records `run.cancelled`.',
    }),
  })
  .loose()
  .meta({ id: 'Run' });

export const RunEvent = z
  .object({
    object: z.literal('run.event'),
    run_id: z.string(),
    seq: z
      .number()
      .int()
      .min(1)
      .meta({ description: 'Sequence number: 1, 2, 3, … per run, without gaps; the SSE `id:`.' }),
    type: z.string().meta({
      description:
        '`run.queued`, `run.started`, `message.delta`, `tool.call`, `tool.result`, `run.succeeded`, `run.failed`, ' +
        '`run.cancelled`; ignore types you do not know.',
    }),
    data: z.record(z.string(), z.unknown()),
    created_at: DateTime,
  })
  .loose()
  .meta({ id: 'RunEvent' });

const RunEventPage = z
  .object({
    object: z.literal('list'),
    data: z.array(RunEvent),
    has_more: z.boolean(),
    next_after: z
      .number()
      .int()
      .meta({ description: 'Pass as `after` for the next page (the last sequence number read).' }),
  })
  .loose()
  .meta({ id: 'RunEventPage' });

export const WebhookEndpoint = z
  .object({
    id: z.string().meta({ description: '`whk_…`' }),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    events: z.array(z.enum(WEBHOOK_EVENT_TYPES)),
    created_at: DateTime,
    disabled_at: DateTime.optional().meta({
      description: 'Set when the endpoint answered 410 Gone; nothing more is sent to it.',
    }),
    disabled_reason: z.string().optional(),
  })
  .loose()
  .meta({ id: 'WebhookEndpoint' });

const WebhookDeliveryId = idOf('msg', 'webhook delivery');

const WebhookDelivery = z
  .object({
    id: z.string().meta({ description: '`msg_…`' }),
    object: z.literal('webhook_delivery'),
    event_id: z.string().meta({ description: '`evt_…`: the `webhook-id` header, the same on every attempt.' }),
    event_type: z.enum(WEBHOOK_EVENT_TYPES),
    run_id: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    attempts: z.array(
      z
        .object({
          attempt: z.number().int(),
          status_code: z.number().int().optional().meta({ description: 'Absent when no answer arrived.' }),
          error: z.string().optional(),
          duration_ms: z.number().int(),
          attempted_at: DateTime,
        })
        .loose(),
    ),
    next_attempt_at: DateTime.optional(),
    created_at: DateTime,
  })
  .loose()
  .meta({ id: 'WebhookDelivery' });

const WORKSPACE_PATH_MAX_CHARS = 256;

const WorkspaceFile = z
  .object({
    object: z.literal('workspace_file'),
    path: z.string().meta({ description: 'Relative to the workspace, `/`-separated; unique in its project.' }),
    size: z.number().int().meta({ description: 'Bytes of the content (UTF-8).' }),
    updated_at: DateTime,
  })
  .loose()
  .meta({ id: 'WorkspaceFile' });

const WorkspaceFileWithContent = WorkspaceFile.extend({ content: z.string() }).meta({
  id: 'WorkspaceFileWithContent',
});

const WorkspaceFileList = z
  .object({
    object: z.literal('list'),
    data: z.array(WorkspaceFile),
    has_more: z.boolean(),
    first_id: z.string().nullable().meta({ description: 'A path: pass as before_id for the previous page.' }),
    last_id: z.string().nullable().meta({ description: 'A path: pass as after_id for the next page.' }),
  })
  .loose()
  .meta({ id: 'WorkspaceFileList' });

const ProjectParams = z.object({ project_id: ProjectId });
const RunParams = z.object({ run_id: RunId });
const WebhookParams = z.object({ webhook_id: WebhookId });
const DeliveryParams = z.object({ webhook_id: WebhookId, delivery_id: WebhookDeliveryId });

export const createProject = defineRoute({
  operationId: 'createProject',
  method: 'post',
  path: '/v1/projects',
  summary: 'Create a project',
  tag: PROJECTS,
  auth: { kind: 'scoped', scopes: ['runs:write'] },
  body: z
    .strictObject({ name: ProjectName, instructions: Instructions.optional(), default_model: ModelId.optional() })
    .meta({ id: 'ProjectCreate' }),
  responses: { 201: { description: 'The new project.', schema: Project } },
});

export const listProjects = defineRoute({
  operationId: 'listProjects',
  method: 'get',
  path: '/v1/projects',
  summary: 'List projects',
  description: 'Newest first.',
  tag: PROJECTS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  query: pageQuery(),
  responses: { 200: { description: 'A page of projects.', schema: listOf(Project, 'ProjectList') } },
});

export const getProject = defineRoute({
  operationId: 'getProject',
  method: 'get',
  path: '/v1/projects/{project_id}',
  summary: 'Get a project',
  tag: PROJECTS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  params: ProjectParams,
  responses: { 200: { description: 'The project.', schema: Project } },
  errors: [404],
});

export const updateProject = defineRoute({
  operationId: 'updateProject',
  method: 'patch',
  path: '/v1/projects/{project_id}',
  summary: 'Update a project',
  description: 'Absent fields keep their value; `null` clears `instructions` or `default_model`.',
  tag: PROJECTS,
  auth: { kind: 'scoped', scopes: ['runs:write'] },
  params: ProjectParams,
  body: z
    .strictObject({
      name: ProjectName.optional(),
      instructions: Instructions.nullable().optional(),
      default_model: ModelId.nullable().optional(),
    })
    .meta({ id: 'ProjectUpdate' }),
  responses: { 200: { description: 'The updated project.', schema: Project } },
  errors: [404],
});

export const deleteProject = defineRoute({
  operationId: 'deleteProject',
  method: 'delete',
  path: '/v1/projects/{project_id}',
  summary: 'Delete a project',
  description: 'Its runs stay readable. 409 `conflict` while one of its runs is queued or running.',
  tag: PROJECTS,
  auth: { kind: 'scoped', scopes: ['runs:write'] },
  params: ProjectParams,
  responses: {
    200: {
      description: 'Deleted.',
      schema: z
        .object({ id: z.string(), object: z.literal('project'), deleted: z.literal(true) })
        .loose()
        .meta({ id: 'DeletedProject' }),
    },
  },
  errors: [404, 409],
});

export const listProjectFiles = defineRoute({
  operationId: 'listProjectFiles',
  method: 'get',
  path: '/v1/projects/{project_id}/files',
  summary: "List a project's workspace files",
  description:
    "The files its runs wrote (with `write_file`), in path order. A file's id in this list is its path: " +
    '`after_id` and `before_id` take paths.',
  tag: PROJECTS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  params: ProjectParams,
  query: pageQuery(),
  responses: { 200: { description: 'A page of files.', schema: WorkspaceFileList } },
  errors: [404],
});

export const getProjectFile = defineRoute({
  operationId: 'getProjectFile',
  method: 'get',
  path: '/v1/projects/{project_id}/files/content',
  summary: "Read a project's workspace file",
  description: [
    'The content as `text/plain; charset=utf-8`, as an attachment, with `x-content-type-options: nosniff` and a ' +
      'sandboxing `content-security-policy`: a file a run wrote is never rendered as a page of this origin.',
    'With `Accept: application/json` the file comes back as JSON with its `content` instead.',
    'A path that is absolute, holds a `..` segment or a control character is 400 `invalid_request`.',
  ].join(' '),
  tag: PROJECTS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  params: ProjectParams,
  query: z.object({
    path: z
      .string()
      .min(1)
      .max(WORKSPACE_PATH_MAX_CHARS)
      .meta({ description: "The file's path, as the list shows it (e.g. `notes/plan.md`)." }),
  }),
  responses: {
    200: {
      description: 'The file with its content for Accept: application/json; otherwise the content as text/plain.',
      schema: WorkspaceFileWithContent,
      alternatives: { 'text/plain': z.string() },
    },
  },
  errors: [404],
});

export const createRun = defineRoute({
  operationId: 'createRun',
  rateCost: 5,
  method: 'post',
  path: '/v1/runs',
  summary: 'Start a run',
  description: [
    'Queues an agent run on a project. A worker claims it, then loops: a model call through this gateway (billed to ' +
      "the run's account, with a key minted for the run that holds only `gateway:invoke` within the bounds of the " +
      "calling key), then the tools it asked for over the project's workspace (`list_files`, `read_file`, " +
      '`write_file`, `fetch_url`), until it answers without tools or a step or time budget runs out.',
    'Send an `idempotency-key` header (up to 255 characters) to make the call safe to retry: a repeat with the same ' +
      'key answers 200 with the first run; the same key with a different body is 409 `conflict`.',
  ].join(' '),
  tag: RUNS,
  auth: { kind: 'scoped', scopes: ['runs:write'] },
  body: z
    .strictObject({
      project_id: ProjectId,
      prompt: z.string().min(1).max(100_000),
      model: ModelId.optional().meta({ description: "Default: the project's `default_model`, else `house`." }),
      metadata: z
        .record(z.string().min(1).max(64), z.string().max(512))
        .refine((value) => Object.keys(value).length <= 16, 'At most 16 keys.')
        .optional()
        .meta({ description: 'Up to 16 string pairs, kept on the run.' }),
    })
    .meta({ id: 'RunCreate' }),
  responses: {
    201: { description: 'The queued run.', schema: Run },
    200: { description: 'A repeat of an earlier request with the same idempotency-key: that run.', schema: Run },
  },
  errors: [404, 409],
});

export const listRuns = defineRoute({
  operationId: 'listRuns',
  method: 'get',
  path: '/v1/runs',
  summary: 'List runs',
  description: 'Newest first.',
  tag: RUNS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  query: pageQuery({ project_id: ProjectId.optional(), status: z.enum(RUN_STATUSES).optional() }),
  responses: { 200: { description: 'A page of runs.', schema: listOf(Run, 'RunList') } },
});

export const getRun = defineRoute({
  operationId: 'getRun',
  method: 'get',
  path: '/v1/runs/{run_id}',
  summary: 'Get a run',
  tag: RUNS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  params: RunParams,
  responses: { 200: { description: 'The run.', schema: Run } },
  errors: [404],
});

export const cancelRun = defineRoute({
  operationId: 'cancelRun',
  method: 'post',
  path: '/v1/runs/{run_id}/cancel',
  summary: 'Cancel a run',
  description:
    'A queued run is cancelled at once (200). A running run is stopped promptly, its model call in flight aborted, ' +
    'and `run.cancelled` recorded by its worker (202 with `cancel_requested_at` set). A settled run is 409 `conflict`.',
  tag: RUNS,
  auth: { kind: 'scoped', scopes: ['runs:write'] },
  params: RunParams,
  responses: {
    200: { description: 'Cancelled.', schema: Run },
    202: { description: 'Stopping: follow the events for `run.cancelled`.', schema: Run },
  },
  errors: [404, 409],
});

export const runEvents = defineRoute({
  operationId: 'streamRunEvents',
  method: 'get',
  path: '/v1/runs/{run_id}/events',
  summary: "Follow a run's events",
  description: [
    'A `text/event-stream`: each event as `id: <seq>`, `event: ' +
      '<type>`, `data: <RunEvent JSON>`, stored events first, ' +
      'then live ones as they happen, with no gap and no repeat in between;',
    `a \`: heartbeat\` comment every ${RUN_EVENTS_HEARTBEAT_S} s; the stream ends after the settling event ` +
      `(\`run.succeeded\`, \`run.failed\` or \`run.cancelled\`).`,
    'Resume after a disconnect with the `Last-Event-ID` header (the last `id:` received) or `?after=N`: events after ' +
      'N follow.',
    'With `Accept: application/json` the same events come back as one page instead (`after`, `limit`).',
  ].join(' '),
  tag: RUNS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  params: RunParams,
  query: z.object({
    after: z.coerce
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: 'Events after this sequence number (default 0: all).' }),
    limit: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_EVENTS_PAGE)
      .default(100)
      .meta({ description: `JSON pages only: 1 to ${MAX_EVENTS_PAGE}, default 100.` }),
  }),
  responses: {
    200: {
      description: 'The event stream (or, for Accept: application/json, a page).',
      contentType: 'text/event-stream',
      schema: z.string(),
      alternatives: { 'application/json': RunEventPage },
    },
  },
  errors: [404],
});

export const createWebhook = defineRoute({
  operationId: 'createWebhook',
  method: 'post',
  path: '/v1/webhooks',
  summary: 'Register a webhook endpoint',
  description: [
    'When a run of the account settles, each endpoint subscribed to that event gets one POST of `{type, timestamp, ' +
      'data: {run_id, project_id, status}}`, signed per Standard Webhooks:',
    '`webhook-id` (the event id, the same on every attempt), `webhook-timestamp` (Unix seconds of the attempt) and ' +
      '`webhook-signature` = `v1,` + base64 HMAC-SHA256 of ' +
      '`id.timestamp.body`, keyed with the base64-decoded part of ' +
      '`secret` after `whsec_`.',
    'A 2xx within 15 s delivers; otherwise it is retried after ' +
      '5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±10 %); a ' +
      '410 disables the endpoint.',
    'The secret is shown only in this answer.',
  ].join(' '),
  tag: WEBHOOKS,
  auth: { kind: 'scoped', scopes: ['runs:write'] },
  body: z
    .strictObject({
      url: z.url({ protocol: /^https?$/ }).max(2_048),
      events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).min(1).optional().meta({ description: 'Default: all three.' }),
    })
    .meta({ id: 'WebhookEndpointCreate' }),
  responses: {
    201: {
      description: 'The endpoint and its signing secret (shown once).',
      schema: WebhookEndpoint.extend({
        secret: z.string().meta({ description: '`whsec_` + base64 of 32 random bytes.' }),
      }).meta({ id: 'WebhookEndpointWithSecret' }),
    },
  },
});

export const listWebhooks = defineRoute({
  operationId: 'listWebhooks',
  method: 'get',
  path: '/v1/webhooks',
  summary: 'List webhook endpoints',
  description: 'Newest first; secrets are never shown again.',
  tag: WEBHOOKS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  query: pageQuery(),
  responses: { 200: { description: 'A page of endpoints.', schema: listOf(WebhookEndpoint, 'WebhookEndpointList') } },
});

export const deleteWebhook = defineRoute({
  operationId: 'deleteWebhook',
  method: 'delete',
  path: '/v1/webhooks/{webhook_id}',
  summary: 'Delete a webhook endpoint',
  description: 'Deliveries still pending for it are dropped.',
  tag: WEBHOOKS,
  auth: { kind: 'scoped', scopes: ['runs:write'] },
  params: WebhookParams,
  responses: {
    200: {
      description: 'Deleted.',
      schema: z
        .object({ id: z.string(), object: z.literal('webhook_endpoint'), deleted: z.literal(true) })
        .loose()
        .meta({ id: 'DeletedWebhookEndpoint' }),
    },
  },
  errors: [404],
});

export const listWebhookDeliveries = defineRoute({
  operationId: 'listWebhookDeliveries',
  method: 'get',
  path: '/v1/webhooks/{webhook_id}/deliveries',
  summary: "List an endpoint's deliveries",
  description: 'Newest first, each with every attempt so far.',
  tag: WEBHOOKS,
  auth: { kind: 'scoped', scopes: ['runs:read'] },
  params: WebhookParams,
  query: pageQuery(),
  responses: { 200: { description: 'A page of deliveries.', schema: listOf(WebhookDelivery, 'WebhookDeliveryList') } },
  errors: [404],
});

export const resendWebhookDelivery = defineRoute({
  operationId: 'resendWebhookDelivery',
  method: 'post',
  path: '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/resend',
  summary: 'Resend a failed delivery',
  description:
    'Queues one more attempt of a delivery that failed (it ran out of retries): the same `webhook-id` and body, ' +
    'a fresh `webhook-timestamp` and signature. Its outcome is recorded after the earlier attempts; if it fails ' +
    'the delivery is failed again. 409 `conflict` for a delivery that is pending or succeeded, or an endpoint ' +
    'that is disabled.',
  tag: WEBHOOKS,
  auth: { kind: 'scoped', scopes: ['runs:write'] },
  params: DeliveryParams,
  responses: { 202: { description: 'Queued: the delivery, pending again.', schema: WebhookDelivery } },
  errors: [404, 409],
});

export const RUN_ROUTES: readonly RouteSpec[] = [
  createProject,
  listProjects,
  getProject,
  updateProject,
  deleteProject,
  listProjectFiles,
  getProjectFile,
  createRun,
  listRuns,
  getRun,
  cancelRun,
  runEvents,
  createWebhook,
  listWebhooks,
  deleteWebhook,
  listWebhookDeliveries,
  resendWebhookDelivery,
];
