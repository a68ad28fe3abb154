import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the proxy passed on, as the upstream received it. */
export interface RecordedRequest {
  method: string;
  /** Path and query, as sent to the proxy. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The upstream's status. */
  status: number;
}

export interface RecordingProxy {
  /** The proxy's origin: an engine's or endpoint's base URL points here (with any path the upstream serves). */
  url: string;
  requests: RecordedRequest[];
  /** The model calls (POSTs) recorded so far whose path starts with `path`. */
  posts(path?: string): RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A transparent HTTP proxy in front of `target` (an origin) that records every request: what an engine or endpoint
 * behind the gateway was sent, headers included, and what it answered. Replies stream through untouched.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const recorded: RecordedRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: body.toString('utf8'),
        status: 0,
      };
      requests.push(recorded);
      const upstream = request(
        new URL(recorded.url, target),
        { method: recorded.method, headers: { ...req.headers, host: new URL(target).host } },
        (answer) => {
          recorded.status = answer.statusCode ?? 0;
          res.writeHead(recorded.status, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    posts: (path = '') => requests.filter((item) => item.method === 'POST' && item.url.startsWith(path)),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
