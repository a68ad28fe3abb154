import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { EgressDeniedError } from '@sbc/egress';
import { qualifiedToolName } from '@sbc/mcp-access';
import type { UsageFields } from '../usage/usage-events';
import type { McpRequestContext } from './request-context';

/** One tools/call as it ended: what the usage row records. */
export interface ToolCallRecord {
  context: McpRequestContext;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  /** 200 when the server answered (a tool's own `isError` included), else the failure's HTTP-like status. */
  status: number;
  /** `performance.now()` when the call arrived. */
  startedAt: number;
  /** A batch line's tool call: the event id its row takes when it ends 200 (line-event-id.ts toolCallEventIdOf). */
  lineEventId?: string;
}

/** The usage row's `dialect_in` and `dialect_out` for a tool call. */
const MCP_DIALECT = 'mcp';

/**
 * A tool call's usage event: the model field holds `<server>__<tool>` (whichever path it came by), the upstream
 * and served-by `mcp:<server>`; no tokens and no credits (tool servers are the caller's own).
 */
export function toolCallUsage(call: ToolCallRecord, now = performance.now(), atMs = Date.now()): UsageFields {
  const { principal, requestId } = call.context;
  const key = principal.key;
  const servedBy = `mcp:${call.server}`;
  return {
    requestId,
    accountId: principal.userId,
    userId: principal.userId,
    keyId: key?.id ?? '',
    orgId: key?.orgId,
    model: qualifiedToolName(call.server, call.tool),
    upstreamModel: call.tool,
    upstream: servedBy,
    provider: servedBy,
    dialectIn: MCP_DIALECT,
    dialectOut: MCP_DIALECT,
    route: key?.route || 'byo',
    inputTokens: 0n,
    outputTokens: 0n,
    cacheReadTokens: 0n,
    cacheWriteTokens: 0n,
    reasoningTokens: 0n,
    listCostNanoUsd: 0n,
    creditsChargedMicrocredits: 0n,
    fairUseMicrocredits: 0n,
    isByok: true,
    status: call.status,
    latencyMs: BigInt(Math.max(0, Math.round(now - call.startedAt))),
    ttftMs: 0n,
    sessionId: undefined,
    stream: false,
    keyLabel: key?.name ?? '',
    atMs,
    servedBy,
    attempts: 1,
    cacheHit: false,
    guardrailId: '',
    guardrailAction: '',
  };
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let at: unknown = error; at !== undefined && chain.length < 5; at = (at as { cause?: unknown }).cause) {
    chain.push(at);
    if (typeof at !== 'object' || at === null) break;
  }
  return chain;
}

/**
 * What the caller is told when a tool server failed or did not answer, as an MCP error result, and the status its
 * usage row keeps. It names the server and the kind of failure, never what the server sent (a body or header
 * could carry anything of the network behind it).
 */
export function toolCallFailure(server: string, error: unknown): { status: number; message: string } {
  const chain = causes(error);
  if (chain.some((at) => at instanceof McpError && at.code === ErrorCode.RequestTimeout))
    return { status: 504, message: `The tool server "${server}" did not answer in time.` };
  if (chain.some((at) => at instanceof EgressDeniedError))
    return { status: 502, message: `The tool server "${server}" is at an address this gateway may not dial.` };
  const http = chain.find((at): at is StreamableHTTPError => at instanceof StreamableHTTPError);
  if (http?.code !== undefined && http.code > 0)
    return { status: 502, message: `The tool server "${server}" answered HTTP ${http.code}.` };
  if (chain.some((at) => at instanceof McpError))
    return { status: 502, message: `The tool server "${server}" refused the gateway's session.` };
  return { status: 502, message: `The tool server "${server}" could not be reached.` };
}
