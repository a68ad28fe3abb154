import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '@sbc/errors';
import type { Logger } from '@sbc/logging';
import type { Principal } from '../auth/authenticator';
import type { McpRequestContext } from './request-context';
import { accessFor, authInfoFor, type ToolGatewaySession } from './tool-gateway';
import type { ToolServerSource } from './tool-server-source';

/** Slugs as the account service makes them; anything else names no server. */
const SLUG = /^[a-z0-9][a-z0-9-]{0,47}$/;

export interface McpSessionLimits {
  /** Open sessions on this edge; past it, the least recently used one is closed. */
  maxSessions: number;
  /** A session with no request for this long is closed (an open GET stream does not count). */
  idleMs: number;
}

interface Entry {
  id: string;
  transport: StreamableHTTPServerTransport;
  session: ToolGatewaySession;
  /** The credential that opened it: no other may use it. */
  owner: string;
  slug: string | undefined;
  lastSeenMs: number;
  /** Requests in flight (a tool call running): a session with one is not idle. */
  active: number;
  closed: boolean;
}

/** Who a session belongs to: the key, the session or the device that opened it. */
function ownerOf(principal: Principal): string {
  if (principal.key) return `key:${principal.key.id}`;
  if (principal.deviceId) return `device:${principal.deviceId}`;
  return `${principal.kind}:${principal.userId}:${principal.session ?? ''}`;
}

function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.statusCode = status;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * The gateway's MCP sessions on this edge (Streamable HTTP, the official SDK's server transport, one MCP server
 * each). A session is bound to the credential that opened it and to its path (`/mcp` or `/mcp/{slug}`); they are
 * bounded in number and in idle time, and all end when the edge drains.
 */
export class McpSessions {
  // In order of last use: the first is the least recently used.
  private readonly sessions = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly deps: {
      limits: McpSessionLimits;
      source: ToolServerSource;
      open(slug: string | undefined): ToolGatewaySession;
      logger: Logger;
      now?: () => number;
    },
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(1_000, Math.min(deps.limits.idleMs / 2, 30_000)));
    this.sweeper.unref();
  }

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  get size(): number {
    return this.sessions.size;
  }

  /**
   * One request to `/mcp` or `/mcp/{slug}`, its credential already checked: to its session, or opening one on an
   * `initialize`. A slug the credential cannot reach is 404 before any session is made.
   */
  async handle(
    req: IncomingMessage,
    res: ServerResponse,
    slug: string | undefined,
    body: unknown,
    context: McpRequestContext,
  ): Promise<void> {
    if (slug !== undefined) {
      const access = SLUG.test(slug) ? await accessFor(this.deps.source, context) : undefined;
      if (!access?.bySlug.has(slug)) throw new ApiError('not_found', `No tool server "${slug}" for this key.`);
    }
    (req as IncomingMessage & { auth?: unknown }).auth = authInfoFor(context);
    const owner = ownerOf(context.principal);
    const header = req.headers['mcp-session-id'];
    if (header !== undefined) {
      const entry = typeof header === 'string' ? this.sessions.get(header) : undefined;
      // Another credential's session, or one of another path, is as absent as an ended one.
      if (!entry || entry.owner !== owner || entry.slug !== slug) {
        rpcError(res, 404, -32001, 'Session not found');
        return;
      }
      await this.serve(entry, req, res, body);
      return;
    }
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      rpcError(res, 400, -32000, 'Bad Request: no valid session id (mcp-session-id); start with initialize.');
      return;
    }
    await this.start(req, res, slug, body, owner);
  }

  private async start(
    req: IncomingMessage,
    res: ServerResponse,
    slug: string | undefined,
    body: unknown,
    owner: string,
  ): Promise<void> {
    const session = this.deps.open(slug);
    const entry: Entry = {
      id: '',
      transport: undefined as unknown as StreamableHTTPServerTransport,
      session,
      owner,
      slug,
      lastSeenMs: this.now(),
      active: 0,
      closed: false,
    };
    entry.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        entry.id = id;
        this.sessions.set(id, entry);
        this.evictPastLimit(entry);
      },
    });
    entry.transport.onclose = () => void this.close(entry);
    await session.server.connect(entry.transport);
    await this.serve(entry, req, res, body);
    // An initialize the transport refused made no session: nothing of it stays.
    if (!entry.id) await this.close(entry);
  }

  private async serve(entry: Entry, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    // A client's GET stream stays open (and is reopened) for as long as it is connected: only its requests keep a
    // session in use.
    if (req.method !== 'GET') {
      entry.lastSeenMs = this.now();
      if (entry.id) {
        this.sessions.delete(entry.id);
        this.sessions.set(entry.id, entry);
      }
      entry.active += 1;
      res.once('close', () => {
        entry.active -= 1;
        entry.lastSeenMs = this.now();
      });
    }
    await entry.transport.handleRequest(req, res, body);
  }

  private evictPastLimit(keep: Entry): void {
    if (this.sessions.size <= this.deps.limits.maxSessions) return;
    const candidates = [...this.sessions.values()].filter((entry) => entry !== keep);
    const victim = candidates.find((entry) => entry.active === 0) ?? candidates[0];
    if (!victim) return;
    this.deps.logger.info({ sessions: this.sessions.size }, 'MCP session limit reached: the least recently used ends');
    void this.close(victim);
  }

  /** Closes sessions idle past the limit. */
  sweep(): void {
    const cutoff = this.now() - this.deps.limits.idleMs;
    for (const entry of [...this.sessions.values()])
      if (entry.active === 0 && entry.lastSeenMs <= cutoff) void this.close(entry);
  }

  private async close(entry: Entry): Promise<void> {
    if (entry.closed) return;
    entry.closed = true;
    if (entry.id) this.sessions.delete(entry.id);
    await entry.session.close();
  }

  /** Ends every session (the edge is draining or stopping). */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.sessions.values()].map((entry) => this.close(entry)));
  }
}
