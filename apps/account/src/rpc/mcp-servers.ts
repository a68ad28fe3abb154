import type { MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { createEgressPolicy, type EgressCaller } from '@sbc/egress';
import { ApiError } from '@sbc/errors';
import { MCP_SERVERS_CHANGED_CHANNEL } from '@sbc/events';
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '@sbc/pagination';
import type {
  McpServerProbeSchema,
  McpServerSchema,
  McpServerService,
  McpServerWithProbeSchema,
  TeamToolServerSchema,
} from '@sbc/proto/sbc/account/v1/mcp_pb';
import type { RpcImplementation } from '@sbc/rpc';
import { createMcpProber, type McpProbeTarget } from '../probe/probe-mcp-server';
import {
  createMcpServer,
  deleteMcpServer,
  findMcpServerDial,
  listMcpServerPage,
  listTeamPoolPage,
  listToolServersForEdge,
  poolTeamsOf,
  recordMcpProbe,
  saveMcpServer,
  type McpServerProbe,
  type McpServerView,
  type TeamPoolServerView,
} from '../store/mcp-servers';
import type { AccountServiceDeps } from './account-service';
import { recordAs } from './audit';

/** Connect plus `initialize` plus every `tools/list` page. */
const PROBE_TIMEOUT_MS = 5_000;

function toProtoProbe(probe: McpServerProbe): MessageInitShape<typeof McpServerProbeSchema> {
  return {
    ok: probe.ok,
    toolsFound: probe.tools_found,
    error: probe.error,
    at: probe.at ? timestampFromDate(new Date(probe.at)) : undefined,
    serverName: probe.server_name,
    serverVersion: probe.server_version,
    protocolVersion: probe.protocol_version,
  };
}

function toProtoServer(view: McpServerView): MessageInitShape<typeof McpServerSchema> {
  return {
    id: view.id,
    slug: view.slug,
    label: view.label,
    url: view.url,
    headerNames: view.headerNames,
    hasBearerToken: view.hasBearerToken,
    tools: view.tools,
    probe: view.probe ? toProtoProbe(view.probe) : undefined,
    probedAt: view.probedAt ? timestampFromDate(view.probedAt) : undefined,
    createdAt: timestampFromDate(view.createdAt),
    updatedAt: timestampFromDate(view.updatedAt),
  };
}

function toProtoPoolServer(view: TeamPoolServerView): MessageInitShape<typeof TeamToolServerSchema> {
  return { ...view, updatedAt: timestampFromDate(view.updatedAt) };
}

// The answer needs a report even for a server saved without one.
const NEVER_PROBED: McpServerProbe = { ok: false, error: 'not probed yet' };

function withProbe(view: McpServerView): { result: MessageInitShape<typeof McpServerWithProbeSchema> } {
  return { result: { server: toProtoServer(view), probe: toProtoProbe(view.probe ?? NEVER_PROBED) } };
}

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => b[key] === a[key]);
}

const notFound = () => new ApiError('not_found', 'No such tool server on this account.', { param: 'slug' });

/**
 * MCP tool servers. Writes save first and probe after, so a server that is down is still saved with a report
 * saying why; every write tells the edges to drop the tool-server tables it went into.
 */
export function createMcpServerService(deps: AccountServiceDeps): RpcImplementation<typeof McpServerService> {
  const ownOrigins = deps.config?.egress.ownOrigins ?? [];
  const egress = createEgressPolicy({
    privateEgress: deps.config?.egress.private ?? 'operators',
    ownOrigins: () => ownOrigins,
  });
  const prober = createMcpProber({ timeoutMs: PROBE_TIMEOUT_MS, egress });
  // A server is dialed for its owner, whose standing decides whether loopback and private addresses are allowed.
  const dialAs = (userId: string): EgressCaller => (deps.operators.isOperator(userId) ? 'operator' : 'tenant');

  // CONTRACTS Egress: a URL the policy refuses for its owner is refused when written, and again when dialed.
  const refuseEgress = async (url: string, userId: string) => {
    if (!URL.canParse(url)) return; // an unparsable URL is refused by the save's own checks
    const reason = await egress.refusal(url, dialAs(userId));
    if (reason) throw ApiError.invalid([{ path: 'url', code: 'egress_denied', message: `url: ${reason}` }]);
  };

  /** The owner's table and those of the teams whose pool holds the owner's servers are stale. */
  const changed = async <T extends McpServerView | null>(saved: T): Promise<T> => {
    if (!saved) return saved;
    await deps.pubsub.publish(MCP_SERVERS_CHANGED_CHANNEL, saved.userId);
    for (const teamId of await poolTeamsOf(deps.db, saved.userId))
      await deps.pubsub.publish(MCP_SERVERS_CHANGED_CHANNEL, teamId);
    return saved;
  };

  const probeAndRecord = async (saved: McpServerView, target: McpProbeTarget, signal: AbortSignal) => {
    const report = await prober.probe(target, signal);
    const recorded = await changed(await recordMcpProbe(deps.db, saved.userId, saved.id, report.probe, report.tools));
    if (!recorded)
      throw new ApiError('not_found', 'The tool server was deleted while it was being probed.', { param: 'slug' });
    return recorded;
  };

  const findDial = async (userId: string, slug: string) => {
    const found = await findMcpServerDial(deps.db, deps.cipher, userId, slug);
    if (!found) throw notFound();
    return found;
  };

  return {
    async listMcpServers(request) {
      const limit = Math.min(request.limit > 0 ? request.limit : DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT);
      const page = await listMcpServerPage(deps.db, request.userId, {
        limit,
        after_id: request.afterId,
        before_id: request.beforeId,
      });
      return { servers: page.data.map(toProtoServer), hasMore: page.has_more };
    },

    async listTeamToolServers(request) {
      if (!request.userId) throw new ApiError('invalid_request', 'user_id is required', { param: 'user_id' });
      if (!request.teamId) throw new ApiError('invalid_request', 'team_id is required', { param: 'team_id' });
      const limit = Math.min(request.limit > 0 ? request.limit : DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT);
      const page = await listTeamPoolPage(deps.db, request.userId, request.teamId, {
        limit,
        after_id: request.afterId,
        before_id: request.beforeId,
      });
      return { servers: page.data.map(toProtoPoolServer), hasMore: page.has_more };
    },

    async createMcpServer(request, ctx) {
      await refuseEgress(request.url, request.userId);
      const headers = { ...request.headers };
      const bearerToken = request.bearerToken ?? '';
      const saved = await changed(
        await createMcpServer(
          deps.db,
          deps.cipher,
          {
            userId: request.userId,
            slug: request.slug,
            label: request.label,
            url: request.url,
            headers,
            bearerToken,
          },
          recordAs(ctx, request.userId),
        ),
      );
      return withProbe(
        await probeAndRecord(saved, { url: saved.url, headers, bearerToken, dialAs: dialAs(saved.userId) }, ctx.signal),
      );
    },

    async getMcpServer(request) {
      const { view } = await findDial(request.userId, request.slug);
      return { server: toProtoServer(view) };
    },

    async updateMcpServer(request, ctx) {
      const current = await findDial(request.userId, request.slug);
      const { view } = current;
      const url = request.url ?? view.url;
      const headers = request.headers ? { ...request.headers.entries } : current.headers;
      const bearerToken = request.bearerToken ?? current.bearerToken;
      const dialChanged =
        url !== view.url || bearerToken !== current.bearerToken || !sameRecord(headers, current.headers);
      if (url !== view.url) await refuseEgress(url, request.userId);
      const saved = await changed(
        await saveMcpServer(
          deps.db,
          deps.cipher,
          {
            userId: request.userId,
            slug: view.slug,
            label: request.label ?? view.label,
            url,
            headers: request.headers ? headers : undefined,
            bearerToken: request.bearerToken,
          },
          'update',
          recordAs(ctx, request.userId),
        ),
      );
      if (!dialChanged) return withProbe(saved);
      return withProbe(
        await probeAndRecord(saved, { url, headers, bearerToken, dialAs: dialAs(saved.userId) }, ctx.signal),
      );
    },

    async deleteMcpServer(request, ctx) {
      if (!(await changed(await deleteMcpServer(deps.db, request.userId, request.slug, recordAs(ctx, request.userId)))))
        throw notFound();
      return {};
    },

    async probeMcpServer(request, ctx) {
      const { view, headers, bearerToken } = await findDial(request.userId, request.slug);
      return withProbe(
        await probeAndRecord(view, { url: view.url, headers, bearerToken, dialAs: dialAs(view.userId) }, ctx.signal),
      );
    },

    async getToolServerTable(request, ctx) {
      if (!request.userId) throw new ApiError('invalid_request', 'user_id is required', { param: 'user_id' });
      const servers = await listToolServersForEdge(
        deps.db,
        deps.cipher,
        request.userId,
        request.orgId || undefined,
        (serverId, error) =>
          // Logged once here with the row id, never the ciphertext; the edge just does not see that server.
          deps.logger?.error(
            { requestId: ctx.requestId, rpc: 'GetToolServerTable', serverId, err: error },
            'stored tool server secret does not decrypt; server left out',
          ),
      );
      return {
        servers: servers.map((server) => ({ ...server, dialAs: dialAs(server.ownerUserId) })),
      };
    },
  };
}
