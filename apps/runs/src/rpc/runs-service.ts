import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import { MAX_PAGE_LIMIT, pageOf } from '@sbc/pagination';
import type { RunCaller, RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import type { AuditLog, RpcImplementation } from '@sbc/rpc';
import { CANCEL_REQUESTED_CHANNEL, RUN_QUEUED_CHANNEL } from '../channels';
import { streamRunEvents } from '../events/stream';
import { listEventsAfter, type EventWriter } from '../store/events';
import { listExchanges } from '../store/exchanges';
import { createProject, deleteProject, findProject, listProjects, updateProject } from '../store/projects';
import {
  ACTIVE_STATUSES,
  createRun,
  findRun,
  listRuns,
  requestCancel,
  RUN_STATUSES,
  type RunCallerJson,
} from '../store/runs';
import {
  createEndpoint,
  deleteEndpoint,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  WEBHOOK_EVENT_TYPES,
} from '../store/webhooks';
import { findWorkspaceFile, listWorkspaceFiles } from '../store/workspace';
import { workspacePathProblem } from '../store/workspace-path';
import type { Egress } from '../tools/egress';
import {
  toProtoDelivery,
  toProtoEndpoint,
  webhookAuditView,
  toProtoEvent,
  toProtoProject,
  toProtoRun,
  toProtoWorkspaceFile,
} from './render';

export interface RunsServiceDeps extends EventWriter {
  egress: Egress;
  logger: Logger;
  /** Webhook endpoints' changes go to the account service's audit log. */
  audit: AuditLog;
  /** Aborted when the service stops: open event streams end (the edge resumes them elsewhere). */
  closing: AbortSignal;
}

const MAX_EVENTS_PAGE = 1_000;
const MAX_EXCHANGES_PAGE = 500;

function bad(param: string, message: string): ApiError {
  return new ApiError('invalid_request', message, { param, issues: [{ path: param, code: 'invalid_value', message }] });
}

function page(request: { limit: number; afterId?: string; beforeId?: string }) {
  if (request.limit < 1 || request.limit > MAX_PAGE_LIMIT) throw bad('limit', `limit must be 1 to ${MAX_PAGE_LIMIT}.`);
  if (request.afterId !== undefined && request.beforeId !== undefined)
    throw bad('before_id', 'Pass after_id or before_id, not both.');
  return { limit: request.limit, after_id: request.afterId, before_id: request.beforeId };
}

export function callerJson(caller: RunCaller | undefined): RunCallerJson {
  if (!caller?.userId) throw bad('caller', 'caller.user_id is required.');
  return {
    user_id: caller.userId,
    key_id: caller.keyId ?? null,
    allowed_models: caller.modelsLimited ? caller.allowedModels : null,
    daily_limit_credits: caller.dailyLimitCredits === undefined ? null : Number(caller.dailyLimitCredits),
    monthly_limit_credits: caller.monthlyLimitCredits === undefined ? null : Number(caller.monthlyLimitCredits),
    route: caller.route || 'auto',
    org_id: caller.orgId ?? null,
    operator: caller.operator,
  };
}

function metadataOf(json: string): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(json || '{}');
  } catch {
    throw bad('metadata', 'metadata must be a JSON object of strings.');
  }
  if (
    value === null ||
    typeof value !== 'object' ||
    Array.isArray(value) ||
    Object.values(value).some((item) => typeof item !== 'string')
  ) {
    throw bad('metadata', 'metadata must be a JSON object of strings.');
  }
  return value as Record<string, string>;
}

export function createRunsService(deps: RunsServiceDeps): RpcImplementation<typeof RunsService> {
  const { db } = deps;
  const announce = (channel: string, runId: string) =>
    deps.pubsub
      .publish(channel, runId)
      .catch((err: unknown) => deps.logger.warn({ err, runId, channel }, 'announcing to the workers failed'));
  return {
    async createProject(request) {
      const project = await createProject(db, {
        accountId: request.userId,
        name: request.name,
        instructions: request.instructions ?? null,
        defaultModel: request.defaultModel ?? null,
      });
      return { project: toProtoProject(project) };
    },

    async listProjects(request) {
      const list = await listProjects(db, request.userId, page(request));
      return { projects: list.data.map(toProtoProject), hasMore: list.has_more };
    },

    async getProject(request) {
      return { project: toProtoProject(await findProject(db, request.userId, request.projectId)) };
    },

    async updateProject(request) {
      const project = await updateProject(db, request.userId, request.projectId, {
        ...(request.name !== undefined ? { name: request.name } : {}),
        ...(request.instructions ? { instructions: request.instructions.value ?? null } : {}),
        ...(request.defaultModel ? { defaultModel: request.defaultModel.value ?? null } : {}),
      });
      return { project: toProtoProject(project) };
    },

    async deleteProject(request) {
      await deleteProject(db, request.userId, request.projectId, new Date());
      return { projectId: request.projectId };
    },

    async listProjectFiles(request) {
      const query = page({ limit: request.limit, afterId: request.afterPath, beforeId: request.beforePath });
      await findProject(db, request.userId, request.projectId);
      // A workspace holds at most WORKSPACE_LIMITS.files files, so a page is cut from all of them in path order.
      const files = pageOf(await listWorkspaceFiles(db, request.projectId), query, (file) => file.path);
      return { files: files.data.map(toProtoWorkspaceFile), hasMore: files.has_more };
    },

    async getProjectFile(request) {
      const problem = workspacePathProblem(request.path);
      if (problem) throw bad('path', `${problem}.`);
      await findProject(db, request.userId, request.projectId);
      const file = await findWorkspaceFile(db, request.projectId, request.path);
      if (!file) throw new ApiError('not_found', 'No such file in the project workspace.', { param: 'path' });
      return {
        file: toProtoWorkspaceFile({
          path: file.path,
          bytes: Buffer.byteLength(file.content),
          updated_at: file.updatedAt.toISOString(),
        }),
        content: file.content,
      };
    },

    async createRun(request) {
      const caller = callerJson(request.caller);
      const { run, created } = await createRun(deps, {
        accountId: caller.user_id,
        projectId: request.projectId,
        prompt: request.prompt,
        model: request.model,
        metadata: metadataOf(request.metadataJson),
        caller,
        idempotencyKey: request.idempotencyKey,
      });
      if (created) await announce(RUN_QUEUED_CHANNEL, run.id);
      return { run: toProtoRun(run), created };
    },

    async listRuns(request) {
      if (request.status !== undefined && !(RUN_STATUSES as readonly string[]).includes(request.status))
        throw bad('status', `status must be one of ${RUN_STATUSES.join(', ')}.`);
      const list = await listRuns(db, request.userId, {
        ...page(request),
        projectId: request.projectId,
        status: request.status,
      });
      return { runs: list.data.map(toProtoRun), hasMore: list.has_more };
    },

    async getRun(request) {
      return { run: toProtoRun(await findRun(db, request.userId, request.runId)) };
    },

    async cancelRun(request) {
      const { run, notifyWorker } = await requestCancel(deps, request.userId, request.runId);
      if (notifyWorker) await announce(CANCEL_REQUESTED_CHANNEL, run.id);
      return { run: toProtoRun(run) };
    },

    async listRunEvents(request) {
      if (request.limit < 1 || request.limit > MAX_EVENTS_PAGE)
        throw bad('limit', `limit must be 1 to ${MAX_EVENTS_PAGE}.`);
      if (request.after < 0) throw bad('after', 'after must be 0 or more.');
      await findRun(db, request.userId, request.runId);
      const events = await listEventsAfter(db, request.runId, request.after, request.limit + 1);
      return { events: events.slice(0, request.limit).map(toProtoEvent), hasMore: events.length > request.limit };
    },

    async *streamRunEvents(request, ctx) {
      if (request.after < 0) throw bad('after', 'after must be 0 or more.');
      const run = await findRun(db, request.userId, request.runId);
      // Resumed after the settling event: there is nothing more, ever.
      if (!(ACTIVE_STATUSES as readonly string[]).includes(run.status) && request.after >= run.lastSeq) return;
      for await (const event of streamRunEvents(
        deps,
        request.runId,
        request.after,
        AbortSignal.any([ctx.signal, deps.closing]),
      )) {
        yield { event: toProtoEvent(event) };
      }
    },

    async createWebhook(request, ctx) {
      if (
        request.events.length === 0 ||
        request.events.some((event) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(event))
      ) {
        throw bad('events', `events must name one or more of ${WEBHOOK_EVENT_TYPES.join(', ')}.`);
      }
      if (!URL.canParse(request.url)) throw bad('url', 'url must be an absolute http or https URL.');
      const dialAs = request.operator ? 'operator' : 'tenant';
      const refused = await deps.egress.refusal(request.url, dialAs);
      if (refused) throw ApiError.invalid([{ path: 'url', code: 'egress_denied', message: `url: ${refused}` }]);
      const { endpoint, secret } = await createEndpoint(db, {
        accountId: request.userId,
        url: request.url,
        events: [...new Set(request.events)],
        dialAs,
      });
      await deps.audit.record(ctx, {
        action: 'webhook.create',
        resourceType: 'webhook',
        resourceId: endpoint.id,
        ownerUserId: request.userId,
        after: webhookAuditView(endpoint),
      });
      return { endpoint: toProtoEndpoint(endpoint), secret };
    },

    async listWebhooks(request) {
      const list = await listEndpoints(db, request.userId, page(request));
      return { endpoints: list.data.map(toProtoEndpoint), hasMore: list.has_more };
    },

    async deleteWebhook(request, ctx) {
      const before = await deleteEndpoint(db, request.userId, request.webhookId, new Date());
      await deps.audit.record(ctx, {
        action: 'webhook.delete',
        resourceType: 'webhook',
        resourceId: before.id,
        ownerUserId: request.userId,
        before: webhookAuditView(before),
      });
      return { webhookId: request.webhookId };
    },

    async listWebhookDeliveries(request) {
      const list = await listDeliveries(db, request.userId, request.webhookId, page(request));
      return { deliveries: list.data.map(toProtoDelivery), hasMore: list.has_more };
    },

    async resendWebhookDelivery(request) {
      const view = await resendDelivery(db, request.userId, request.webhookId, request.deliveryId);
      return { delivery: toProtoDelivery(view) };
    },

    async listExchanges(request) {
      if (request.limit < 1 || request.limit > MAX_EXCHANGES_PAGE)
        throw bad('limit', `limit must be 1 to ${MAX_EXCHANGES_PAGE}.`);
      const result = await listExchanges(db, { host: request.host, after: request.after, limit: request.limit });
      return {
        exchangesJson: result.exchanges.map((exchange) => JSON.stringify(exchange)),
        nextAfter: result.nextAfter,
      };
    },
  };
}
