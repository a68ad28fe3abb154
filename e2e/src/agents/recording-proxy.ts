/**
 * Two small HTTP servers the coding-agent suite puts around a CLI (written by hand: each is a few lines over
 * node:http, and a proxy library would hide exactly what the test must see):
 *
 * - a recording proxy in front of the gateway: every request the CLI makes (`HEAD /`, `count_tokens`, the model
 *   calls) passes through it, streamed as it comes, and is recorded with its status; a refusal keeps its body
 *   so a failing test can say why;
 * - a refusing forward proxy the CLI's `HTTPS_PROXY` points at: anything the CLI tries to reach beyond the
 *   gateway (telemetry, update checks, plugin syncs) is refused and its host recorded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

const KEPT_BODY_BYTES = 4_096;

export interface RecordedExchange {
  method: string;
  /** Path and query, as the CLI sent them. */
  path: string;
  /** The gateway's status; 502 when it could not be reached at all. */
  status: number;
  /** The gateway's `x-sbc-dropped-fields`, when it named any. */
  droppedFields?: string;
  /** The start of the reply's body, for a status outside 2xx. */
  body?: string;
}

export interface RecordingProxy {
  url: string;
  exchanges: RecordedExchange[];
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

function readable(body: Buffer, encoding: string | undefined): string {
  try {
    if (encoding === 'gzip') return zlib.gunzipSync(body).toString('utf8');
    if (encoding === 'br') return zlib.brotliDecompressSync(body).toString('utf8');
    if (encoding === 'deflate') return zlib.inflateSync(body).toString('utf8');
  } catch {
    return `(a ${encoding} body that did not decode)`;
  }
  return body.toString('utf8');
}

export async function startRecordingProxy(targetUrl: string): Promise<RecordingProxy> {
  const target = new URL(targetUrl);
  const exchanges: RecordedExchange[] = [];
  const server = http.createServer((req, res) => {
    const exchange: RecordedExchange = { method: req.method ?? 'GET', path: req.url ?? '/', status: 0 };
    exchanges.push(exchange);
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        exchange.status = answer.statusCode ?? 0;
        const dropped = answer.headers['x-sbc-dropped-fields'];
        if (typeof dropped === 'string') exchange.droppedFields = dropped;
        res.writeHead(exchange.status, answer.headers);
        const refused = exchange.status < 200 || exchange.status >= 300;
        const kept: Buffer[] = [];
        let keptBytes = 0;
        answer.on('data', (chunk: Buffer) => {
          if (refused && keptBytes < KEPT_BODY_BYTES) {
            kept.push(chunk);
            keptBytes += chunk.length;
          }
        });
        answer.on('end', () => {
          if (refused) {
            const encoding = answer.headers['content-encoding'];
            exchange.body = readable(Buffer.concat(kept), encoding).slice(0, KEPT_BODY_BYTES);
          }
        });
        answer.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      exchange.status = 502;
      exchange.body = `the gateway could not be reached: ${error.message}`;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(exchange.body);
    });
    // The CLI hanging up mid-stream must not leave the gateway's side open.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  const url = await listen(server);
  return { url, exchanges, close: () => close(server) };
}

export interface RefusingProxy {
  url: string;
  /** `host:port` (CONNECT) or the absolute URL (plain HTTP) of every attempt. */
  attempts: string[];
  close(): Promise<void>;
}

export async function startRefusingProxy(): Promise<RefusingProxy> {
  const attempts: string[] = [];
  const server = http.createServer((req, res) => {
    attempts.push(`${req.method} ${req.url}`);
    res.writeHead(403, { 'content-type': 'text/plain' });
    res.end('this test allows no network beyond the gateway');
  });
  server.on('connect', (req: http.IncomingMessage, socket) => {
    attempts.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
  });
  const url = await listen(server);
  return { url, attempts, close: () => close(server) };
}
