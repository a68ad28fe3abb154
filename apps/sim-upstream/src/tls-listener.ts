import { once } from 'node:events';
import { constants, createSecureServer, Http2ServerResponse, type Http2ServerRequest } from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Express } from 'express';
import { keyCheck } from './routes/auth';
import type { RouteDeps } from './routes/call';
import { answerChatCompletions } from './routes/chat-completions';
import { labelSimulated } from './server';
import { SimError, requestDialect, sendError } from './wire/errors';

/** The same cap as the Express JSON parser's. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/**
 * node:http2's compatibility response with the two Express methods the routes use. Express itself cannot
 * serve HTTP/2 requests (it swaps the request's prototype for http.IncomingMessage's).
 */
class SimH2Response extends Http2ServerResponse {
  constructor(...args: ConstructorParameters<typeof Http2ServerResponse>) {
    super(...args);
    // The SSE writer reads `destroyed`, which node:http2's response does not have (its stream does).
    Object.defineProperty(this, 'destroyed', { get: () => this.stream.destroyed });
  }

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  json(body: unknown): this {
    this.setHeader('content-type', 'application/json; charset=utf-8');
    this.end(JSON.stringify(body));
    return this;
  }

  /** HTTP/2 has no connection-specific headers (RFC 9113 §8.2.2); the SSE writer's `connection` is left out. */
  override setHeader(name: string, value: string | number | readonly string[]): void {
    if (name.toLowerCase() !== 'connection') super.setHeader(name, value);
  }

  /** node:http2's response has it too (it sends the head), but its type declarations leave it out. */
  flushHeaders(): void {
    if (!this.headersSent) this.writeHead(this.statusCode);
  }
}

/** The request body as JSON, refused in the OpenAI envelope's words when too large or not JSON. */
async function readJson(req: Http2ServerRequest): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new SimError(413, 'request entity too large');
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new SimError(400, 'We could not parse the JSON body of your request.');
  }
}

export interface RunningTlsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * One TLS port that speaks HTTP/2 to clients offering it by ALPN, as the big vendors do, and HTTP/1.1 (the
 * Express app, every route) to the rest. Over HTTP/2 it serves the streamed and whole Chat Completions route,
 * with the same bytes as over HTTP/1.1: an HTTP/1.1 upstream costs a proxy a socket per stream, an HTTP/2 one
 * carries a hundred streams on one socket.
 */
export async function listenTls(
  app: Express,
  deps: RouteDeps & { apiKey: string | undefined },
  options: { cert: Buffer; key: Buffer; host: string; port: number },
): Promise<RunningTlsServer> {
  const checkKey = keyCheck(deps.apiKey);

  async function answerH2(req: Http2ServerRequest, res: SimH2Response): Promise<void> {
    labelSimulated(res);
    const path = req.url.split('?', 1)[0]!;
    const dialect = requestDialect({ path, headers: req.headers });
    try {
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        throw new SimError(
          404,
          `sim-upstream has no route ${req.method} ${path} over HTTP/2 (HTTP/1.1 serves every route)`,
          null,
          'unknown_url',
        );
      }
      const refusal = checkKey(req.headers, dialect);
      if (refusal) throw refusal;
      await answerChatCompletions(await readJson(req), res, deps);
    } catch (error) {
      if (res.headersSent) {
        res.stream.close(constants.NGHTTP2_INTERNAL_ERROR);
        return;
      }
      if (!(error instanceof SimError))
        deps.logger.error({ err: error, requestId: res.getHeader('request-id'), route: path }, 'unhandled error');
      sendError(
        res,
        dialect,
        error instanceof SimError ? error : new SimError(500, 'sim-upstream failed unexpectedly.'),
      );
    }
  }

  const server = createSecureServer(
    { cert: options.cert, key: options.key, allowHTTP1: true, Http2ServerResponse: SimH2Response },
    (req, res) => {
      // With allowHTTP1, HTTP/1.1 requests arrive as plain http.IncomingMessage / ServerResponse, which Express serves.
      if (req.httpVersionMajor !== 2) app(req as never, res as never);
      else void answerH2(req, res as SimH2Response);
    },
  );
  const sockets = new Set<TLSSocket>();
  server.on('secureConnection', (socket: TLSSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
