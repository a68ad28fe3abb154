import {
  createServer,
  STATUS_CODES,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SlotSet } from './slot-set';

/**
 * How long and how much a caller may hold the server with. `requestTimeoutMs` bounds receiving a request
 * (headers and body), never the answer: a long stream runs past it.
 */
export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** An idle kept-alive socket is closed after this long. */
  keepAliveTimeoutMs: number;
  maxHeaderBytes: number;
}

/** Node's own defaults for the header size, with keep-alive longer than common load balancers' idle timeouts. */
const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 65_000,
  maxHeaderBytes: 16 * 1024,
};

/** The statuses Node's parser decides on before a handler sees the request. */
export type ClientErrorStatus = 400 | 408 | 413 | 431;

/** Body and headers of such a refusal; `res` is the answer in progress when the request had reached a handler. */
export type RenderClientError = (
  status: ClientErrorStatus,
  res: ServerResponse | undefined,
) => { headers: Record<string, string>; body: string };

export interface ListenOptions {
  host: string;
  port: number;
  limits?: Partial<HttpLimits>;
  /** Without it, these refusals carry an empty body. */
  renderClientError?: RenderClientError;
}

export interface CloseOptions {
  /**
   * Called when the drain time is up, for answers still running to end in their own words; what is still
   * open a second later is cut. Without it, what is left is cut at once.
   */
  onDeadline?: () => void;
}

/** How long answers ended at the deadline get to reach their callers before their sockets are cut. */
const DEADLINE_GRACE_MS = 1_000;

export interface RunningHttpServer {
  server: Server;
  /** `http://host:port` as bound (the real port when 0 was asked for). */
  url: string;
  port: number;
  /**
   * Stops taking connections and lets in-flight requests and streams finish for up to `drainMs`. Idle
   * keep-alive sockets close at once; every answer from then on says `connection: close`, and a kept-alive
   * socket whose answer had already begun closes when that answer ends.
   */
  close(drainMs?: number, options?: CloseOptions): Promise<void>;
}

function statusOf(error: NodeJS.ErrnoException): ClientErrorStatus {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    default:
      return 400;
  }
}

function rawResponse(status: number, headers: Record<string, string>, body: string): string {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  lines.push('connection: close', `content-length: ${Buffer.byteLength(body)}`);
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

// How often Node looks for requests past their timeouts (its default is 30 s, which would stretch a 10 s
// header timeout to 40).
function checkingIntervalMs(limits: HttpLimits): number {
  return Math.max(50, Math.min(1_000, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)));
}

/**
 * Connections the kernel may hold accepted-but-not-yet-taken. Node's default (511) overflows when thousands of
 * streaming callers connect within a second while the event loop is busy relaying, and an overflowing queue
 * drops connections (callers see resets and connect timeouts). The kernel caps it at net.core.somaxconn.
 */
const LISTEN_BACKLOG = 4_096;

/**
 * The answer in progress on a socket, so a client error on it knows whether anything was written, and a drain
 * can tell each answer to close its connection. Kept on the socket rather than in a Map of sockets: a Map that
 * takes an entry and drops it on every request rehashes every few requests, and V8 links each table it replaces
 * to the next (for iterators still walking it). Once a full collection has moved one of those tables to the old
 * generation, every later table and every answer they held outlive each scavenge until the next full
 * collection: whole requests were copied and promoted (docs/benchmarks.md, "Maps that churn").
 */
const ANSWERING = Symbol('answering');
type AnsweringSocket = Socket & { [ANSWERING]?: ServerResponse };

export async function listen(handler: RequestListener, options: ListenOptions): Promise<RunningHttpServer> {
  const limits = { ...DEFAULT_HTTP_LIMITS, ...options.limits };
  let draining = false;
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      maxHeaderSize: limits.maxHeaderBytes,
      connectionsCheckingInterval: checkingIntervalMs(limits),
    },
    (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket as AnsweringSocket;
      socket[ANSWERING] = res;
      res.once('close', () => {
        if (socket[ANSWERING] === res) socket[ANSWERING] = undefined;
      });
      if (draining) res.setHeader('connection', 'close');
      handler(req, res);
    },
  );
  // Node's own refusals (header too large, request too slow, unparsable) in the caller's words, then the
  // socket is closed: it holds a request that cannot go on.
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const res = (socket as AnsweringSocket)[ANSWERING];
    if (error.code === 'ECONNRESET' || !socket.writable || res?.headersSent) {
      socket.destroy();
      return;
    }
    const status = statusOf(error);
    const { headers, body } = options.renderClientError?.(status, res) ?? { headers: {}, body: '' };
    socket.end(rawResponse(status, headers, body), () => socket.destroy());
  });
  // A SlotSet, not a Set: a client that opens a connection per request would make a Set churn (slot-set.ts).
  const sockets = new SlotSet<Socket>();
  server.on('connection', (socket) => socket.once('close', sockets.add(socket)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  const cutAll = () => sockets.forEach((socket) => socket.destroy());
  return {
    server,
    url: `http://${host}:${address.port}`,
    port: address.port,
    close(drainMs = 10_000, closeOptions = {}) {
      closing ??= new Promise<void>((resolve) => {
        draining = true;
        const timer = setTimeout(() => {
          if (!closeOptions.onDeadline) return cutAll();
          closeOptions.onDeadline();
          setTimeout(cutAll, DEADLINE_GRACE_MS).unref();
        }, drainMs);
        timer.unref();
        server.close(() => {
          clearTimeout(timer);
          resolve();
        });
        server.closeIdleConnections();
        // A connection that has sent nothing yet (a spare a client opened ahead) is idle too, though Node
        // counts it as awaiting headers and would hold the drain open for it.
        sockets.forEach((socket) => {
          if (socket.bytesRead === 0) {
            socket.destroy();
            return;
          }
          const res = (socket as AnsweringSocket)[ANSWERING];
          if (!res) return;
          if (!res.headersSent) res.setHeader('connection', 'close');
          // Its header said keep-alive: the socket goes once the answer is out (idle sockets are closed cleanly).
          else res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
        });
      });
      return closing;
    },
  };
}
