import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { Agent, fetch as undiciFetch } from 'undici';
import type { EgressCaller, EgressPolicy } from '@sbc/egress';
import type { McpServerProbe, McpTool } from '../store/mcp-servers';
import { describeTransportError } from './probe-endpoint';

/** What a probe dials: a tool server's dial with its secrets opened. */
export interface McpProbeTarget {
  url: string;
  headers: Record<string, string>;
  /** '' when none is stored. */
  bearerToken: string;
  /** Whom the dial is for (the server's owner), which decides whether loopback and private addresses are allowed. */
  dialAs: EgressCaller;
}

interface McpProbeReport {
  probe: McpServerProbe;
  /** Set when the server answered. */
  tools?: McpTool[];
}

export interface McpProber {
  probe(target: McpProbeTarget, signal?: AbortSignal): Promise<McpProbeReport>;
}

/** Who the gateway says it is in `initialize`. */
const CLIENT_INFO = { name: 'sbc-gateway-probe', version: '1.0.0' };
// `tools/list` pages; a few dozen pages is more than any real server lists, and rows stay bounded.
const MAX_PAGES = 20;
const MAX_TOOLS = 1_000;
const MAX_DESCRIPTION_LENGTH = 2_000;
// A JSON-RPC error message is the server's own words; it is shown, but never at length.
const MAX_ERROR_MESSAGE_LENGTH = 300;

function clip(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

/**
 * Why a probe failed, in words a person can act on. An HTTP refusal names its status only: the server's body is
 * never shown (CONTRACTS Egress: an upstream's non-JSON body never appears in a probe report).
 */
function describeFailure(error: unknown, where: string, timeoutMs: number, timedOut: boolean): string {
  if (timedOut) return `${where} did not answer within ${timeoutMs / 1000} s`;
  if (error instanceof StreamableHTTPError) {
    return error.code === undefined
      ? `${where} did not answer as a Streamable HTTP MCP server`
      : `${where} answered HTTP ${error.code}`;
  }
  if (error instanceof McpError)
    return `${where}: MCP error ${error.code}: ${clip(error.message, MAX_ERROR_MESSAGE_LENGTH)}`;
  // fetch wraps the transport's error (refused, not found, egress) in a TypeError with the real one as its cause.
  const cause = error instanceof TypeError && error.cause ? error.cause : error;
  if ((cause as { code?: unknown } | null)?.code !== undefined) return describeTransportError(cause, where, timeoutMs);
  // A fetch refusal of its own (a port fetch never dials, a malformed header value) says why in its cause.
  if (cause !== error && cause instanceof Error) return `${where}: ${clip(cause.message, MAX_ERROR_MESSAGE_LENGTH)}`;
  if (error instanceof SyntaxError) return `${where} did not answer in JSON`;
  return `${where} did not complete the MCP handshake`;
}

/**
 * Probes a tool server with the official MCP client over Streamable HTTP: `initialize`, then every page of
 * `tools/list`, then the session is ended. Every address is dialed under the egress policy of the server's owner.
 */
export function createMcpProber(options: { timeoutMs: number; egress: EgressPolicy }): McpProber {
  return {
    async probe(target, callerSignal) {
      const at = new Date().toISOString();
      const where = new URL(target.url).host;
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = callerSignal ? AbortSignal.any([timeout, callerSignal]) : timeout;
      const agent = new Agent({
        connect: options.egress.connector(target.dialAs, { timeout: options.timeoutMs }),
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
      const headers: Record<string, string> = { ...target.headers };
      if (target.bearerToken) {
        for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization') delete headers[name];
        headers.authorization = `Bearer ${target.bearerToken}`;
      }
      const dial: FetchLike = (url, init) =>
        undiciFetch(url, { ...(init as object), dispatcher: agent, signal } as Parameters<
          typeof undiciFetch
        >[1]) as unknown as Promise<Response>;
      const transport = new StreamableHTTPClientTransport(new URL(target.url), {
        requestInit: { headers },
        fetch: dial,
      });
      const client = new Client(CLIENT_INFO);
      const requestOptions = { signal, timeout: options.timeoutMs };
      try {
        await client.connect(transport, requestOptions);
        const tools: McpTool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_PAGES && tools.length < MAX_TOOLS; page++) {
          const listed = await client.listTools(cursor ? { cursor } : {}, requestOptions);
          for (const tool of listed.tools.slice(0, MAX_TOOLS - tools.length)) {
            tools.push(
              tool.description
                ? { name: tool.name, description: clip(tool.description, MAX_DESCRIPTION_LENGTH) }
                : { name: tool.name },
            );
          }
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
        const server = client.getServerVersion();
        return {
          probe: {
            ok: true,
            tools_found: tools.length,
            at,
            ...(server?.name ? { server_name: clip(server.name, 200) } : {}),
            ...(server?.version ? { server_version: clip(server.version, 100) } : {}),
            ...(transport.protocolVersion ? { protocol_version: transport.protocolVersion } : {}),
          },
          tools,
        };
      } catch (error) {
        return { probe: { ok: false, error: describeFailure(error, where, options.timeoutMs, timeout.aborted), at } };
      } finally {
        // Ending the session is a courtesy to the server; it must not hold the answer up or fail the probe.
        await transport.terminateSession().catch(() => undefined);
        await client.close().catch(() => undefined);
        await agent.close().catch(() => undefined);
      }
    },
  };
}
