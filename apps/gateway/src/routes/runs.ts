import { Router } from 'express';
import { runRoutes as specs } from '@sbc/api';
import { ApiError } from '@sbc/errors';
import type { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { mount } from '../http/mount';
import { relayRunEvents, resumeAfter, wantsJsonPage } from './runs/events';
import {
  renderedList,
  renderDelivery,
  renderEndpoint,
  renderEvent,
  renderProject,
  renderRun,
  renderWorkspaceFile,
  runCaller,
} from './runs/render';
import { sendWorkspaceFile } from './runs/workspace-file';

export interface RunRoutesDeps {
  authorize: Authorize;
  runs: RpcClientOf<typeof RunsService>;
  /** Aborted when the edge starts draining (event streams end on it). */
  draining: AbortSignal;
}

const MAX_IDEMPOTENCY_KEY_CHARS = 255;

function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header === 'string' && header.length >= 1 && header.length <= MAX_IDEMPOTENCY_KEY_CHARS) return header;
  throw ApiError.invalid([
    {
      path: 'idempotency-key',
      code: 'invalid_value',
      message: `The idempotency-key header must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} characters.`,
    },
  ]);
}

/** Projects, runs, run events and webhook endpoints, answered by the runs service. */
export function runRoutes(deps: RunRoutesDeps): Router {
  const router = Router();
  const { runs } = deps;

  mount(router, specs.createProject, deps.authorize, async ({ body, principal, requestId }) => {
    const { project } = await runs.createProject(
      { userId: principal.userId, name: body.name, instructions: body.instructions, defaultModel: body.default_model },
      { requestId },
    );
    return { status: 201, body: renderProject(project!) };
  });

  mount(router, specs.listProjects, deps.authorize, async ({ query, principal, requestId }) => {
    const reply = await runs.listProjects(
      { userId: principal.userId, limit: query.limit, afterId: query.after_id, beforeId: query.before_id },
      { requestId },
    );
    return { status: 200, body: renderedList(reply.projects, reply.hasMore, renderProject) };
  });

  mount(router, specs.getProject, deps.authorize, async ({ params, principal, requestId }) => {
    const { project } = await runs.getProject(
      { userId: principal.userId, projectId: params.project_id },
      { requestId },
    );
    return { status: 200, body: renderProject(project!) };
  });

  mount(router, specs.updateProject, deps.authorize, async ({ params, body, principal, requestId }) => {
    const { project } = await runs.updateProject(
      {
        userId: principal.userId,
        projectId: params.project_id,
        name: body.name,
        instructions: body.instructions === undefined ? undefined : { value: body.instructions ?? undefined },
        defaultModel: body.default_model === undefined ? undefined : { value: body.default_model ?? undefined },
      },
      { requestId },
    );
    return { status: 200, body: renderProject(project!) };
  });

  mount(router, specs.deleteProject, deps.authorize, async ({ params, principal, requestId }) => {
    const reply = await runs.deleteProject({ userId: principal.userId, projectId: params.project_id }, { requestId });
    return { status: 200, body: { id: reply.projectId, object: 'project', deleted: true } };
  });

  mount(router, specs.listProjectFiles, deps.authorize, async ({ params, query, principal, requestId }) => {
    const reply = await runs.listProjectFiles(
      {
        userId: principal.userId,
        projectId: params.project_id,
        limit: query.limit,
        afterPath: query.after_id,
        beforePath: query.before_id,
      },
      { requestId },
    );
    const files = reply.files.map((file) => ({ ...file, id: file.path }));
    return { status: 200, body: renderedList(files, reply.hasMore, renderWorkspaceFile) };
  });

  mount(router, specs.getProjectFile, deps.authorize, async ({ params, query, principal, req, res, requestId }) => {
    const reply = await runs.getProjectFile(
      { userId: principal.userId, projectId: params.project_id, path: query.path },
      { requestId },
    );
    if (wantsJsonPage(req))
      return { status: 200, body: { ...renderWorkspaceFile(reply.file!), content: reply.content } };
    sendWorkspaceFile(res, reply.file!.path, reply.content);
  });

  mount(router, specs.createRun, deps.authorize, async ({ body, principal, req, requestId }) => {
    const reply = await runs.createRun(
      {
        caller: runCaller(principal.userId, principal.key, principal.operator),
        projectId: body.project_id,
        prompt: body.prompt,
        model: body.model,
        metadataJson: JSON.stringify(body.metadata ?? {}),
        idempotencyKey: idempotencyKey(req.headers['idempotency-key']),
      },
      { requestId },
    );
    return { status: reply.created ? 201 : 200, body: renderRun(reply.run!) };
  });

  mount(router, specs.listRuns, deps.authorize, async ({ query, principal, requestId }) => {
    const reply = await runs.listRuns(
      {
        userId: principal.userId,
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
        projectId: query.project_id,
        status: query.status,
      },
      { requestId },
    );
    return { status: 200, body: renderedList(reply.runs, reply.hasMore, renderRun) };
  });

  mount(router, specs.getRun, deps.authorize, async ({ params, principal, requestId }) => {
    const { run } = await runs.getRun({ userId: principal.userId, runId: params.run_id }, { requestId });
    return { status: 200, body: renderRun(run!) };
  });

  mount(router, specs.cancelRun, deps.authorize, async ({ params, principal, requestId }) => {
    const { run } = await runs.cancelRun({ userId: principal.userId, runId: params.run_id }, { requestId });
    return { status: run!.status === 'cancelled' ? 200 : 202, body: renderRun(run!) };
  });

  mount(router, specs.runEvents, deps.authorize, async ({ params, query, principal, req, res, requestId }) => {
    const after = resumeAfter(query.after, req.headers['last-event-id']);
    const target = { userId: principal.userId, runId: params.run_id };
    if (wantsJsonPage(req)) {
      const page = await runs.listRunEvents({ ...target, after, limit: query.limit }, { requestId });
      return {
        status: 200,
        body: {
          object: 'list',
          data: page.events.map(renderEvent),
          has_more: page.hasMore,
          next_after: page.events.at(-1)?.seq ?? after,
        },
      };
    }
    // Looked up first, so an unknown run is a plain 404 before the stream's headers go out.
    await runs.getRun(target, { requestId });
    await relayRunEvents({
      runs,
      ...target,
      after,
      requestId,
      req,
      res,
      draining: deps.draining,
      heartbeatMs: specs.RUN_EVENTS_HEARTBEAT_S * 1000,
    });
  });

  mount(router, specs.createWebhook, deps.authorize, async ({ body, principal, rpc }) => {
    const reply = await runs.createWebhook(
      {
        userId: principal.userId,
        url: body.url,
        events: body.events ?? [...specs.WEBHOOK_EVENT_TYPES],
        operator: principal.operator,
      },
      rpc,
    );
    return { status: 201, body: { ...renderEndpoint(reply.endpoint!), secret: reply.secret } };
  });

  mount(router, specs.listWebhooks, deps.authorize, async ({ query, principal, requestId }) => {
    const reply = await runs.listWebhooks(
      { userId: principal.userId, limit: query.limit, afterId: query.after_id, beforeId: query.before_id },
      { requestId },
    );
    return { status: 200, body: renderedList(reply.endpoints, reply.hasMore, renderEndpoint) };
  });

  mount(router, specs.deleteWebhook, deps.authorize, async ({ params, principal, rpc }) => {
    const reply = await runs.deleteWebhook({ userId: principal.userId, webhookId: params.webhook_id }, rpc);
    return { status: 200, body: { id: reply.webhookId, object: 'webhook_endpoint', deleted: true } };
  });

  mount(router, specs.listWebhookDeliveries, deps.authorize, async ({ params, query, principal, requestId }) => {
    const reply = await runs.listWebhookDeliveries(
      {
        userId: principal.userId,
        webhookId: params.webhook_id,
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
      },
      { requestId },
    );
    return { status: 200, body: renderedList(reply.deliveries, reply.hasMore, renderDelivery) };
  });

  mount(router, specs.resendWebhookDelivery, deps.authorize, async ({ params, principal, requestId }) => {
    const { delivery } = await runs.resendWebhookDelivery(
      { userId: principal.userId, webhookId: params.webhook_id, deliveryId: params.delivery_id },
      { requestId },
    );
    return { status: 202, body: renderDelivery(delivery!) };
  });

  return router;
}
