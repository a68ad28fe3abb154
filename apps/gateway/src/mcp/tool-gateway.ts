import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolRequest,
  type CallToolResult,
  type Notification,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  decideMcpAccess,
  listAllowedTools,
  listServerTools,
  resolveServerToolCall,
  resolveToolCall,
  type McpAccess,
} from '@sbc/mcp-access';
import type { Logger } from '@sbc/logging';
import type { HalfOpenClaim, TargetHealth } from '@sbc/route-health';
import type { Principal } from '../auth/authenticator';
import type { UsageGate } from '../usage/usage-gate';
import type { McpRequestContext } from './request-context';
import type { McpToolServer, ToolServerSource } from './tool-server-source';
import type { UpstreamDialer, UpstreamTools } from './upstream-tools';
import { RELAYED_CAPABILITIES, relayServerFeatures, toolsOnly } from './server-relay';
import { toolCallFailure, type ToolCallRecord } from './tool-call-usage';

/** The SDK hands a request's `req.auth` to its handlers; the principal rides in it, never the secret. */
export function authInfoFor(context: McpRequestContext): AuthInfo {
  return { token: '', clientId: context.principal.key?.id ?? context.principal.userId, scopes: [], extra: { context } };
}

function contextOf(authInfo: AuthInfo | undefined): McpRequestContext {
  const context = authInfo?.extra?.context as McpRequestContext | undefined;
  if (!context) throw new McpError(ErrorCode.InternalError, 'The request reached the gateway without a credential.');
  return context;
}

/** The key's `allowed_tools` (CallerKey.allowed_tools): absent = every tool. */
function allowedToolsOf(principal: Principal): readonly string[] | undefined {
  return principal.key?.allowedTools?.values;
}

/** The one access decision (libs/mcp-access), over the servers the directory gives for this credential now. */
export async function accessFor(
  source: ToolServerSource,
  context: McpRequestContext,
): Promise<McpAccess<McpToolServer>> {
  const servers = await source.serversFor(context.principal, context.requestId);
  return decideMcpAccess({
    // An empty org id (a key of no team) is no team.
    caller: { orgId: context.principal.key?.orgId || undefined, allowedTools: allowedToolsOf(context.principal) },
    accountServers: servers.filter((server) => server.source === 'account'),
    teamPool: servers.filter((server) => server.source === 'team'),
  });
}

export interface ToolGatewayDeps {
  source: ToolServerSource;
  dialer: UpstreamDialer;
  logger: Logger;
  /** Called once per tools/call with its outcome (usage, metrics). */
  record(call: ToolCallRecord): void;
  /**
   * Whether this edge can record a tool call's usage now: while it cannot, a tools/call is refused as a billable
   * model call is (the tool server is not dialed).
   */
  usageGate?: Pick<UsageGate, 'refusal'>;
  /** The routing policy's cooldowns (shared by every edge): a failing tool server is skipped as a target is. */
  health: TargetHealth;
  version: string;
}

/** A tool server's cooldown key: per caller account and slug, so one account's failures never cool another's. */
const healthKeyOf = (userId: string, slug: string) => `mcp:${userId}:${slug}`;

/** A gateway session's open clients to tool servers, one per server, redialed when the server's settings change. */
class SessionUpstreams {
  private readonly open = new Map<string, { signature: string; upstream: UpstreamTools }>();

  constructor(
    private readonly dialer: UpstreamDialer,
    private readonly version: string,
    private readonly onNotification?: (notification: Notification) => void,
  ) {}

  for(server: McpToolServer): UpstreamTools {
    const signature = JSON.stringify([server.url, server.headers, server.dialAs]);
    const found = this.open.get(server.slug);
    if (found?.signature === signature) return found.upstream;
    void found?.upstream.close();
    const upstream = this.dialer.open(server, this.version, this.onNotification);
    this.open.set(server.slug, { signature, upstream });
    return upstream;
  }

  /** Forgets a server's client after a failure, so the next use dials afresh. */
  drop(slug: string): void {
    const found = this.open.get(slug);
    this.open.delete(slug);
    void found?.upstream.close();
  }

  async close(): Promise<void> {
    const all = [...this.open.values()];
    this.open.clear();
    await Promise.all(all.map(({ upstream }) => upstream.close()));
  }
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** What a tool server may tell the caller of `/mcp/{slug}` unasked. */
const RELAYED_NOTIFICATIONS = new Set([
  'notifications/message',
  'notifications/resources/updated',
  'notifications/resources/list_changed',
  'notifications/prompts/list_changed',
  'notifications/tools/list_changed',
]);

/** A tool as the caller sees it: the server's definition, renamed at `/mcp`. */
function asListed(tool: Tool, name: string): Tool {
  return { ...tool, name };
}

/**
 * The MCP server behind one gateway session (the official SDK's `Server`): `/mcp` when `slug` is undefined, where
 * every reachable server's tools are listed as `<server>__<tool>`, or `/mcp/{slug}`, one server's tools under
 * their own names. Both tools/list and tools/call ask the one access decision, on every request, so a changed key
 * or server applies on the next request of a session already open.
 */
export function createToolGatewaySession(deps: ToolGatewayDeps, slug: string | undefined) {
  // `/mcp/{slug}` is the one server: its log messages and resource updates reach the caller as it sends them.
  const relayNotification = (notification: Notification) => {
    if (RELAYED_NOTIFICATIONS.has(notification.method))
      void server.notification(notification as ServerNotification).catch(() => undefined);
  };
  const upstreams = new SessionUpstreams(deps.dialer, deps.version, slug === undefined ? undefined : relayNotification);
  const server = new Server(
    { name: slug === undefined ? 'sbc-gateway' : `sbc-gateway/${slug}`, version: deps.version },
    { capabilities: slug === undefined ? { tools: {} } : { tools: {}, ...RELAYED_CAPABILITIES } },
  );
  if (slug !== undefined) {
    relayServerFeatures(server, async (extra) => {
      const access = await accessFor(deps.source, contextOf(extra.authInfo));
      const target = access.bySlug.get(slug);
      if (!target) throw new McpError(ErrorCode.InvalidRequest, `No tool server "${slug}" for this key.`);
      if (access.allowedTools !== undefined && access.allowedTools !== null) throw toolsOnly();
      try {
        return await upstreams.for(target).client();
      } catch (error) {
        upstreams.drop(slug);
        throw new McpError(ErrorCode.InternalError, toolCallFailure(slug, error).message);
      }
    });
  }

  /** What a server lists, or nothing when it cannot be asked (it is left out of `/mcp`, and said so in the log). */
  const listOf = async (target: McpToolServer, requestId: string): Promise<Tool[]> => {
    try {
      return await upstreams.for(target).listTools();
    } catch (error) {
      upstreams.drop(target.slug);
      const failure = toolCallFailure(target.slug, error).message;
      deps.logger.warn({ requestId, server: target.slug, failure }, 'a tool server could not be listed');
      return [];
    }
  };

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const context = contextOf(extra.authInfo);
    const access = await accessFor(deps.source, context);
    if (slug !== undefined) {
      const target = access.bySlug.get(slug);
      if (!target) throw new McpError(ErrorCode.InvalidRequest, `No tool server "${slug}" for this key.`);
      let tools: Tool[];
      try {
        tools = await upstreams.for(target).listTools();
      } catch (error) {
        upstreams.drop(slug);
        throw new McpError(ErrorCode.InternalError, toolCallFailure(slug, error).message);
      }
      return {
        tools: listServerTools(access, slug, () => tools).map((grant) => asListed(grant.tool, grant.tool.name)),
      };
    }
    const lists = new Map(
      await Promise.all(
        access.servers.map(async (target) => [target.slug, await listOf(target, context.requestId)] as const),
      ),
    );
    const grants = listAllowedTools(access, (target) => lists.get(target.slug) ?? []);
    return { tools: grants.map((grant) => asListed(grant.tool, grant.qualifiedName)) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const context = contextOf(extra.authInfo);
    const startedAt = performance.now();
    const name = request.params.name;
    const access = await accessFor(deps.source, context);
    const known = new Map<string, Tool[]>();
    // The tools of the server a name points at, as listing would see them (fetched when this session has none).
    const target = slug ?? name.split('__')[0] ?? '';
    const server = access.bySlug.get(target);
    let claim: HalfOpenClaim | undefined;
    try {
      if (server) {
        // A call whose usage row this edge cannot write now is refused, as a billable model call is (a name that
        // reaches no server is refused below, and writes none).
        const unrecordable = deps.usageGate?.refusal();
        if (unrecordable) {
          deps.record({ context, server: server.slug, tool: toolNameIn(name, slug), status: 503, startedAt });
          return { content: [{ type: 'text', text: unrecordable.message }], isError: true };
        }
        const healthKey = healthKeyOf(context.principal.userId, server.slug);
        const until = deps.health.coolingUntil(healthKey);
        // A cooling server gets one half-open call per cooldown on this edge, as a lone model target; the rest are
        // refused without dialing it.
        if (until !== undefined && !(claim = deps.health.claimHalfOpen([healthKey]))) {
          const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000));
          deps.record({ context, server: server.slug, tool: toolNameIn(name, slug), status: 503, startedAt });
          return {
            content: [
              { type: 'text', text: `The tool server "${server.slug}" failed repeatedly: retry in ${seconds} s.` },
            ],
            isError: true,
          };
        }
        try {
          known.set(server.slug, await upstreams.for(server).knownTools());
        } catch (error) {
          upstreams.drop(server.slug);
          const failure = toolCallFailure(server.slug, error);
          deps.health.record(healthKey, { ok: false, status: failure.status });
          deps.record({
            context,
            server: server.slug,
            tool: toolNameIn(name, slug),
            status: failure.status,
            startedAt,
          });
          return { content: [{ type: 'text', text: failure.message }], isError: true };
        }
      }
      return await callGranted(request, extra, context, access, known, startedAt);
    } finally {
      claim?.release();
    }
  });

  const callGranted = async (
    request: CallToolRequest,
    extra: Extra,
    context: McpRequestContext,
    access: McpAccess<McpToolServer>,
    known: Map<string, Tool[]>,
    startedAt: number,
  ): Promise<CallToolResult> => {
    const name = request.params.name;
    const toolsOf = (found: McpToolServer) => known.get(found.slug) ?? [];
    const grant =
      slug === undefined ? resolveToolCall(access, name, toolsOf) : resolveServerToolCall(access, slug, name, toolsOf);
    if ('refused' in grant) {
      // An unknown server and a tool the key may not use read alike: neither says what exists elsewhere. A tool
      // error result, as the official SDK's servers answer an unknown tool.
      return { content: [{ type: 'text', text: `Unknown tool: ${name}` }], isError: true };
    }
    const progressToken = request.params._meta?.progressToken;
    const onProgress =
      progressToken === undefined
        ? undefined
        : (progress: { progress: number; total?: number; message?: string }) =>
            void extra
              .sendNotification({ method: 'notifications/progress', params: { ...progress, progressToken } })
              .catch(() => undefined);
    const healthKey = healthKeyOf(context.principal.userId, grant.server.slug);
    const record = (status: number) => {
      // What the cooldown rules count (the caller's own hang-ups and bad arguments never do).
      if (status !== 499 && status !== 400)
        deps.health.record(healthKey, status === 200 ? { ok: true } : { ok: false, status });
      deps.record({ context, server: grant.server.slug, tool: grant.tool.name, status, startedAt });
    };
    try {
      const result = await upstreams
        .for(grant.server)
        .callTool(grant.tool.name, request.params.arguments, { signal: extra.signal, onProgress });
      record(200);
      return result;
    } catch (error) {
      if (extra.signal.aborted) {
        record(499);
        throw error;
      }
      // The tool server's own JSON-RPC error (a bad argument, say) is relayed as it said it.
      if (
        error instanceof McpError &&
        error.code !== ErrorCode.RequestTimeout &&
        error.code !== ErrorCode.ConnectionClosed
      ) {
        record(error.code === ErrorCode.InvalidParams ? 400 : 502);
        throw error;
      }
      upstreams.drop(grant.server.slug);
      const failure = toolCallFailure(grant.server.slug, error);
      record(failure.status);
      return { content: [{ type: 'text', text: failure.message }], isError: true };
    }
  };

  return {
    server,
    async close() {
      await server.close().catch(() => undefined);
      await upstreams.close();
    },
  };
}

function toolNameIn(name: string, slug: string | undefined): string {
  if (slug !== undefined) return name;
  const at = name.indexOf('__');
  return at < 0 ? name : name.slice(at + 2);
}

export type ToolGatewaySession = ReturnType<typeof createToolGatewaySession>;
