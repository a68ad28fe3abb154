import { Router } from 'express';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { mcpServerRoutes as specs } from '@sbc/api';
import { listEnvelope, mapPage } from '@sbc/pagination';
import type {
  McpServer,
  McpServerProbe,
  McpServerService,
  McpServerWithProbe,
  McpTool,
  TeamToolServer,
} from '@sbc/proto/sbc/account/v1/mcp_pb';
import type { RpcClientOf } from '@sbc/rpc';
import type { Authorize } from '../auth/authorize';
import { mount } from '../http/mount';

export interface McpServerRoutesDeps {
  authorize: Authorize;
  mcpServers: RpcClientOf<typeof McpServerService>;
}

/** Header values are credentials as often as not; every caller sees the names only. */
const REDACTED = '••••';

// Saving, editing and probing wait for the probe (up to 5 s) on top of the writes, which the default RPC deadline
// does not leave room for.
const PROBING_CALL_DEADLINE_MS = 15_000;

const iso = (value: Timestamp | undefined) => (value ? timestampDate(value).toISOString() : undefined);

function renderProbe(probe: McpServerProbe): Record<string, unknown> {
  return {
    ok: probe.ok,
    ...(probe.toolsFound !== undefined ? { tools_found: probe.toolsFound } : {}),
    ...(probe.error !== undefined ? { error: probe.error } : {}),
    ...(probe.at ? { at: iso(probe.at) } : {}),
    ...(probe.serverName ? { server_name: probe.serverName } : {}),
    ...(probe.serverVersion ? { server_version: probe.serverVersion } : {}),
    ...(probe.protocolVersion ? { protocol_version: probe.protocolVersion } : {}),
  };
}

const renderTool = (tool: McpTool) =>
  tool.description === undefined ? { name: tool.name } : { name: tool.name, description: tool.description };

/** A server of a team's pool: what it offers and who shares it, nothing of how it is dialed. */
function renderPoolServer(server: TeamToolServer): Record<string, unknown> {
  return {
    id: server.id,
    object: 'team_mcp_server',
    slug: server.slug,
    label: server.label,
    url: server.url,
    tools: server.tools.map(renderTool),
    updated_at: iso(server.updatedAt),
    shared_by: { user_id: server.sharedByUserId, email: server.sharedByEmail },
  };
}

/** The spec's tool server: no bearer token, header values redacted. */
function renderServer(server: McpServer): Record<string, unknown> {
  return {
    id: server.id,
    object: 'mcp_server',
    slug: server.slug,
    label: server.label,
    url: server.url,
    headers: Object.fromEntries(server.headerNames.map((name) => [name, REDACTED])),
    has_bearer_token: server.hasBearerToken,
    tools: server.tools.map(renderTool),
    ...(server.probe ? { probe: renderProbe(server.probe) } : {}),
    ...(server.probedAt ? { probed_at: iso(server.probedAt) } : {}),
    created_at: iso(server.createdAt),
    updated_at: iso(server.updatedAt),
  };
}

function renderWithProbe(result: McpServerWithProbe | undefined): Record<string, unknown> {
  if (!result?.server || !result.probe) throw new Error('McpServerService answered without the server or its probe');
  return { server: renderServer(result.server), probe: renderProbe(result.probe) };
}

/** MCP tool servers (`/v1/mcp/servers`): the account service owns the rows and probes; the edge renders and redacts. */
export function mcpServerRoutes(deps: McpServerRoutesDeps): Router {
  const router = Router();

  mount(router, specs.listMcpServers, deps.authorize, async ({ principal, query, requestId }) => {
    const page = await deps.mcpServers.listMcpServers(
      { userId: principal.userId, limit: query.limit, afterId: query.after_id, beforeId: query.before_id },
      { requestId },
    );
    return {
      status: 200,
      body: mapPage(
        listEnvelope(page.servers, page.hasMore, (server) => server.id),
        renderServer,
      ),
    };
  });

  mount(router, specs.listTeamMcpServers, deps.authorize, async ({ principal, params, query, requestId }) => {
    const page = await deps.mcpServers.listTeamToolServers(
      {
        userId: principal.userId,
        teamId: params.team_id,
        limit: query.limit,
        afterId: query.after_id,
        beforeId: query.before_id,
      },
      { requestId },
    );
    return {
      status: 200,
      body: mapPage(
        listEnvelope(page.servers, page.hasMore, (server) => server.id),
        renderPoolServer,
      ),
    };
  });

  mount(router, specs.createMcpServer, deps.authorize, async ({ principal, body, rpc }) => {
    const created = await deps.mcpServers.createMcpServer(
      {
        userId: principal.userId,
        label: body.label,
        url: body.url,
        headers: body.headers ?? {},
        bearerToken: body.bearer_token,
        slug: body.slug,
      },
      { ...rpc, deadlineMs: PROBING_CALL_DEADLINE_MS },
    );
    return { status: 201, body: renderWithProbe(created.result) };
  });

  mount(router, specs.getMcpServer, deps.authorize, async ({ principal, params, rpc }) => {
    const found = await deps.mcpServers.getMcpServer({ userId: principal.userId, slug: params.slug }, rpc);
    if (!found.server) throw new Error('McpServerService answered without the server');
    return { status: 200, body: renderServer(found.server) };
  });

  mount(router, specs.updateMcpServer, deps.authorize, async ({ principal, params, body, rpc }) => {
    const updated = await deps.mcpServers.updateMcpServer(
      {
        userId: principal.userId,
        slug: params.slug,
        label: body.label,
        url: body.url,
        headers: body.headers ? { entries: body.headers } : undefined,
        bearerToken: body.bearer_token,
      },
      { ...rpc, deadlineMs: PROBING_CALL_DEADLINE_MS },
    );
    return { status: 200, body: renderWithProbe(updated.result) };
  });

  mount(router, specs.deleteMcpServer, deps.authorize, async ({ principal, params, rpc }) => {
    await deps.mcpServers.deleteMcpServer({ userId: principal.userId, slug: params.slug }, rpc);
    return { status: 204 };
  });

  mount(router, specs.probeMcpServer, deps.authorize, async ({ principal, params, rpc }) => {
    const probed = await deps.mcpServers.probeMcpServer(
      { userId: principal.userId, slug: params.slug },
      { ...rpc, deadlineMs: PROBING_CALL_DEADLINE_MS },
    );
    return { status: 200, body: renderWithProbe(probed.result) };
  });

  return router;
}
