import { ErrorCode, McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpItem, McpToolSet, ToolCallBlock, ToolDefinition, ToolResultBlock } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import { listServerTools, splitQualifiedToolName, type McpAccess } from '@sbc/mcp-access';
import type { TargetHealth } from '@sbc/route-health';
import { toolCallFailure, type ToolCallRecord } from './tool-call-usage';
import type { McpRequestContext } from './request-context';
import { accessFor } from './tool-gateway';
import type { McpToolServer, ToolServerSource } from './tool-server-source';
import type { UpstreamDialer, UpstreamTools } from './upstream-tools';

// A model call's remote MCP tools (a Responses `mcp` tool, a Messages `mcp_servers` entry), run by the gateway on
// the caller's registered tool servers: which server each names, which of its tools the model is offered (the one
// access decision of libs/mcp-access, as `/mcp` lists them), and each call the model makes, run and metered as a
// `tools/call` at `/mcp` is.

export interface CallToolsDeps {
  source: ToolServerSource;
  dialer: UpstreamDialer;
  /** The routing policy's cooldowns: a tool server cooling after failures is not dialed, as at `/mcp`. */
  health: TargetHealth;
  /** Each call's usage row, as a `tools/call`'s; awaited, so the rows are durable before the reply ends. */
  record(call: ToolCallRecord): Promise<void>;
  logger: Logger;
  version: string;
}

/** A requested set and the caller's server it names. */
export interface ResolvedToolSet {
  set: McpToolSet;
  server: McpToolServer;
}

/** A URL as its parts say it, so `https://x/mcp` and `HTTPS://x:443/mcp` name one server. */
function normalUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/**
 * The server each requested set names, among those the caller may reach: by its URL when the caller gave one (the
 * URL a server was registered with), else by its slug. Anything else is refused before any connection is made:
 * a model call never dials an address that is not one of the caller's tool servers, and another account's server
 * reads as one that does not exist.
 */
export function resolveToolSets(access: McpAccess<McpToolServer>, sets: readonly McpToolSet[]): ResolvedToolSet[] {
  const resolved: ResolvedToolSet[] = [];
  for (const set of sets) {
    let server: McpToolServer | undefined;
    if (set.url !== undefined) {
      const url = normalUrl(set.url);
      server = access.servers.find((candidate) => normalUrl(candidate.url) === url);
      if (!server)
        throw new ApiError(
          'invalid_request',
          `${set.params.url} is not the URL of a tool server registered for this key: the gateway runs MCP tools ` +
            'only on servers added with POST /v1/mcp/servers.',
          { param: set.params.url },
        );
    } else {
      server = access.bySlug.get(set.label);
      if (!server)
        throw new ApiError(
          'invalid_request',
          `No tool server "${set.label}" for this key: name a registered server by its slug, or give its URL.`,
          { param: set.params.label },
        );
    }
    if (!resolved.some((known) => known.server.slug === server.slug)) resolved.push({ set, server });
  }
  return resolved;
}

/** One tool the model is offered: the caller's label for its server, and the server's own name for it. */
interface Offered {
  label: string;
  server: McpToolServer;
  tool: string;
}

/** The caller's MCP tools for one model call: what is offered to the model, and the calls it makes, run. */
export interface CallToolbox {
  /** Function tools for the target, named `<server>__<tool>` as at `/mcp`. */
  readonly tools: ToolDefinition[];
  /** What each server offered, for the reply (`mcp_list_tools`). */
  readonly listings: McpItem[];
  /** A call the gateway did not run, and why, as the reply shows it. */
  notRun(call: ToolCallBlock, reason: string): McpItem;
  /**
   * Runs one call the model made; a tool the key may not use, or none offered, is an error result. `lineEventId`:
   * the event id of its usage row when it ends 200, for a batch line's call (line-event-id.ts).
   */
  run(
    call: ToolCallBlock,
    signal: AbortSignal,
    lineEventId?: string,
  ): Promise<{ item: McpItem; result: ToolResultBlock }>;
  close(): Promise<void>;
}

/** A tool server's cooldown key, as `/mcp` keys it (tool-gateway.ts): per caller account and slug. */
const healthKeyOf = (userId: string, slug: string) => `mcp:${userId}:${slug}`;

export function createCallTools(deps: CallToolsDeps) {
  /**
   * Resolves the sets (400 for one that names no server of the caller's), lists each server's tools and offers
   * those the key may use and the set allows, named so that none can be one of the caller's own functions. A
   * server that cannot be listed fails the call (502): the model would otherwise answer without the tools asked.
   */
  async function open(
    context: McpRequestContext,
    sets: readonly McpToolSet[],
    callerTools: readonly ToolDefinition[] | undefined,
  ): Promise<CallToolbox> {
    const access = await accessFor(deps.source, context);
    const resolved = resolveToolSets(access, sets);
    const upstreams = new Map<string, UpstreamTools>();
    const close = async () => {
      await Promise.all([...upstreams.values()].map((upstream) => upstream.close()));
    };
    const offered = new Map<string, Offered>();
    const tools: ToolDefinition[] = [];
    const listings: McpItem[] = [];
    try {
      const lists = await Promise.all(
        resolved.map(async ({ server }) => {
          const upstream = deps.dialer.open(server, deps.version);
          upstreams.set(server.slug, upstream);
          try {
            return await upstream.listTools();
          } catch (error) {
            throw new ApiError('upstream_error', toolCallFailure(server.slug, error).message);
          }
        }),
      );
      const callerNames = new Set((callerTools ?? []).map((tool) => tool.name));
      resolved.forEach(({ set, server }, index) => {
        const listed: Tool[] = lists[index]!;
        const grants = listServerTools(access, server.slug, () => listed).filter(
          ({ tool }) =>
            (set.allowedTools === undefined || set.allowedTools.includes(tool.name)) &&
            !set.excludedTools?.includes(tool.name),
        );
        for (const grant of grants) {
          if (callerNames.has(grant.qualifiedName))
            throw new ApiError(
              'invalid_request',
              `The function "${grant.qualifiedName}" has the name the gateway gives the MCP tool ` +
                `"${grant.tool.name}" of "${set.label}"; rename the function.`,
              { param: 'tools' },
            );
          offered.set(grant.qualifiedName, { label: set.label, server, tool: grant.tool.name });
          const definition: ToolDefinition = { name: grant.qualifiedName, parameters: grant.tool.inputSchema };
          if (grant.tool.description !== undefined) definition.description = grant.tool.description;
          tools.push(definition);
        }
        listings.push({
          type: 'mcp_list_tools',
          serverLabel: set.label,
          tools: grants.map(({ tool }) => ({
            name: tool.name,
            ...(tool.description === undefined ? {} : { description: tool.description }),
            inputSchema: tool.inputSchema,
          })),
        });
      });
    } catch (error) {
      await close();
      throw error;
    }
    // How a call the gateway did not run is shown: by the server and tool its name points at.
    const labelOf = (name: string) => {
      const slug = splitQualifiedToolName(name)?.slug;
      return resolved.find(({ server }) => server.slug === slug)?.set.label ?? slug ?? name;
    };
    const nameOf = (name: string) => offered.get(name)?.tool ?? splitQualifiedToolName(name)?.tool ?? name;

    return {
      tools,
      listings,
      close,
      notRun: (call, reason) => ({
        type: 'mcp_call',
        serverLabel: labelOf(call.name),
        name: nameOf(call.name),
        arguments: call.arguments,
        output: reason,
        isError: true,
      }),
      async run(call, signal, lineEventId) {
        const found = offered.get(call.name);
        const answer = (output: string, isError: boolean, label: string, tool: string) => ({
          item: {
            type: 'mcp_call' as const,
            serverLabel: label,
            name: tool,
            arguments: call.arguments,
            output,
            isError,
          },
          result: {
            type: 'tool_result' as const,
            callId: call.id,
            content: [{ type: 'text' as const, text: output }],
            isError,
          },
        });
        // As at `/mcp`: a tool the key may not use reads as one that does not exist, and makes no usage row.
        if (!found) return answer(`Unknown tool: ${call.name}`, true, labelOf(call.name), nameOf(call.name));
        const { label, server, tool } = found;
        const startedAt = performance.now();
        const healthKey = healthKeyOf(context.principal.userId, server.slug);
        const settle = async (status: number, output: string, isError: boolean) => {
          if (status !== 499 && status !== 400)
            deps.health.record(healthKey, status === 200 ? { ok: true } : { ok: false, status });
          await deps.record({ context, server: server.slug, tool, status, startedAt, lineEventId });
          return answer(output, isError, label, tool);
        };
        const args = argumentsOf(call.arguments);
        if (!args) return settle(400, 'The arguments are not a JSON object.', true);
        const until = deps.health.coolingUntil(healthKey);
        // A cooling server gets one half-open call per cooldown on this edge, as at `/mcp`; the rest are refused
        // without dialing it.
        const claim = until === undefined ? undefined : deps.health.claimHalfOpen([healthKey]);
        if (until !== undefined && !claim) {
          const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000));
          await deps.record({ context, server: server.slug, tool, status: 503, startedAt });
          const refused = `The tool server "${server.slug}" failed repeatedly: retry in ${seconds} s.`;
          return answer(refused, true, label, tool);
        }
        try {
          const result = await upstreams.get(server.slug)!.callTool(tool, args, { signal });
          return await settle(200, textOf(result), result.isError === true);
        } catch (error) {
          if (signal.aborted) return settle(499, 'The call was cancelled.', true);
          // The tool server's own JSON-RPC error (a bad argument, say) is the model's to read, as it said it.
          if (
            error instanceof McpError &&
            error.code !== ErrorCode.RequestTimeout &&
            error.code !== ErrorCode.ConnectionClosed
          )
            return settle(error.code === ErrorCode.InvalidParams ? 400 : 502, error.message, true);
          const failure = toolCallFailure(server.slug, error);
          deps.logger.warn(
            { requestId: context.requestId, server: server.slug, failure: failure.message },
            'a tool call in a model call failed',
          );
          return settle(failure.status, failure.message, true);
        } finally {
          claim?.release();
        }
      },
    };
  }

  return { open };
}

export type CallTools = ReturnType<typeof createCallTools>;

function argumentsOf(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A tool's result as the text a model reads: its text parts, and what the others are. */
export function textOf(result: CallToolResult): string {
  const parts: string[] = [];
  for (const part of result.content ?? []) {
    if (part.type === 'text') parts.push(part.text);
    else if (part.type === 'resource' && 'text' in part.resource) parts.push(String(part.resource.text));
    else if (part.type === 'resource_link') parts.push(`[resource ${part.uri}]`);
    else if (part.type === 'image' || part.type === 'audio') parts.push(`[${part.type} ${part.mimeType}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}
