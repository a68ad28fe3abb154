import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Notification, Tool } from '@modelcontextprotocol/sdk/types.js';
import { Agent, fetch as undiciFetch } from 'undici';
import type { EgressCaller, EgressPolicy } from '@sbc/egress';
import type { McpToolServer } from './tool-server-source';

/** The most pages of a server's tools/list that are read: a server paging forever is not followed forever. */
const MAX_TOOL_PAGES = 20;

export interface UpstreamTimeouts {
  /** Connecting (initialize) and listing tools, each. */
  connectTimeoutMs: number;
  /** A tool call's silence: progress from the server restarts it, up to ten times this in all. */
  callTimeoutMs: number;
}

interface UpstreamCallOptions {
  signal: AbortSignal;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

/** One tool server as a gateway session talks to it: an MCP client session of its own, opened on first use. */
export interface UpstreamTools {
  readonly server: McpToolServer;
  /** The server's tools as it lists them now (every page); the last answer stays for calls that follow. */
  listTools(): Promise<Tool[]>;
  /** The last list, fetched when there is none yet. */
  knownTools(): Promise<Tool[]>;
  callTool(
    name: string,
    args: Record<string, unknown> | undefined,
    options: UpstreamCallOptions,
  ): Promise<CallToolResult>;
  /** The connected client, for what `/mcp/{slug}` relays besides tools (resources, prompts, logging). */
  client(): Promise<Client>;
  close(): Promise<void>;
}

/**
 * The MCP clients a gateway session opens to tool servers, over the official SDK's Streamable HTTP client. Every
 * dial goes through the egress rules of the server owner's standing (as custom endpoints' do) and follows no
 * redirect, so a tool server cannot bounce the gateway into an address it may not reach.
 */
export function createUpstreamDialer(egress: EgressPolicy, timeouts: UpstreamTimeouts) {
  const agents: Record<EgressCaller, Agent> = {
    tenant: new Agent({ connect: egress.connector('tenant') }),
    operator: new Agent({ connect: egress.connector('operator') }),
  };
  const fetchAs = (dialAs: EgressCaller): FetchLike =>
    ((url: string | URL, init?: RequestInit) =>
      undiciFetch(url, {
        ...(init as Parameters<typeof undiciFetch>[1]),
        dispatcher: agents[dialAs],
        redirect: 'manual',
      })) as unknown as FetchLike;

  /** `onNotification` hears what the server sends outside a request's progress (log messages, resource updates). */
  function open(
    server: McpToolServer,
    clientVersion: string,
    onNotification?: (notification: Notification) => void,
  ): UpstreamTools {
    let connected: Promise<Client> | undefined;
    let tools: Tool[] | undefined;
    const connect = () =>
      (connected ??= (async () => {
        const client = new Client({ name: 'sbc-gateway', version: clientVersion });
        if (onNotification) client.fallbackNotificationHandler = async (notification) => onNotification(notification);
        const transport = new StreamableHTTPClientTransport(new URL(server.url), {
          requestInit: { headers: server.headers },
          fetch: fetchAs(server.dialAs),
        });
        try {
          await client.connect(transport, { timeout: timeouts.connectTimeoutMs });
        } catch (error) {
          await client.close().catch(() => undefined);
          throw error;
        }
        return client;
      })().catch((error: unknown) => {
        // The next use dials afresh rather than replaying this failure.
        connected = undefined;
        throw error;
      }));
    const list = async () => {
      const client = await connect();
      const found: Tool[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_TOOL_PAGES; page++) {
        const reply = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeouts.connectTimeoutMs });
        found.push(...reply.tools);
        cursor = reply.nextCursor;
        if (!cursor) break;
      }
      tools = found;
      return found;
    };
    return {
      server,
      listTools: list,
      knownTools: async () => tools ?? list(),
      client: connect,
      async callTool(name, args, options) {
        const client = await connect();
        const result = await client.callTool({ name, arguments: args }, undefined, {
          signal: options.signal,
          timeout: timeouts.callTimeoutMs,
          resetTimeoutOnProgress: true,
          maxTotalTimeout: timeouts.callTimeoutMs * 10,
          onprogress: options.onProgress,
        });
        return result as CallToolResult;
      },
      async close() {
        const client = await connected?.catch(() => undefined);
        connected = undefined;
        await client?.close().catch(() => undefined);
      },
    };
  }

  return {
    open,
    async close() {
      await Promise.all([agents.tenant.close(), agents.operator.close()]);
    },
  };
}

export type UpstreamDialer = ReturnType<typeof createUpstreamDialer>;
