// The bare forwarder floor for bench/streams.mjs: the least an HTTP edge in Node can do per stream. It takes
// the caller's request, sends it to the upstream over an undici pool and copies the reply's status, headers
// and bytes back as they come, with backpressure. No auth, no parsing, no accounting: what a gateway costs
// above this is the gateway's own.
//
// Upstreams are dialed as the edge dials them: HTTP/2 when the upstream offers it by ALPN over TLS, with up to
// 100 streams on one connection (the edge's H2_STREAMS_PER_CONNECTION); one request at a time on an HTTP/1.1
// connection (bench:gateway's plain-HTTP simulator).
//
//   node bench/lib/forwarder.mjs   FORWARD_PORT, FORWARD_UPSTREAM (origin), FORWARD_FAST_UPSTREAM (for /fast/…),
//                                  FORWARD_CONNECTIONS (per upstream origin, 200: 20,000 streams over HTTP/2)
//   A private CA for https upstreams comes from NODE_EXTRA_CA_CERTS.
import { createServer } from 'node:http';
import { Agent, buildConnector, Client, Pool } from 'undici';

const upstream = process.env.FORWARD_UPSTREAM;
const fast = process.env.FORWARD_FAST_UPSTREAM ?? upstream;
// Connections per upstream are capped: undici's pool opens a new connection for every request sent while each
// connection it has is still connecting, so a burst of streams would otherwise dial one TLS connection each.
// Each connection carries one request at a time until it negotiates HTTP/2, then up to 100 streams, as the
// edge's do: HTTP/1.1 pipelining (undici's `pipelining` on a plain connection) would let this floor answer
// ten calls with one socket read and write, which no gateway can do safely, and make the floor look cheaper
// than it is.
const H2_STREAMS_PER_CONNECTION = 100;
const connector = buildConnector({ allowH2: true, timeout: 10_000 });
const clientFor = (origin, options) => {
  const client = new Client(origin, {
    ...options,
    allowH2: true,
    connect: (connectOptions, callback) =>
      connector(connectOptions, (error, socket) => {
        if (!error && socket?.alpnProtocol === 'h2') client.pipelining = H2_STREAMS_PER_CONNECTION;
        callback(error, socket);
      }),
  });
  return client;
};
const agent = new Agent({
  connections: Number(process.env.FORWARD_CONNECTIONS ?? 200),
  allowH2: true,
  headersTimeout: 120_000,
  bodyTimeout: 300_000,
  keepAliveTimeout: 30_000,
  factory: (origin, options) => new Pool(origin, { ...options, factory: clientFor }),
});

const server = createServer((req, res) => {
  if (req.url === '/readyz') return res.end('ok');
  const toFast = req.url.startsWith('/fast/');
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = chunks.length ? Buffer.concat(chunks) : null;
    // The data listener stays on the request as long as its reply runs: it must not keep the body's chunks.
    chunks.length = 0;
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    agent.dispatch(
      // Idempotent, as the edge marks its calls: undici sends a non-idempotent request on an HTTP/2 connection
      // only when nothing else is in flight on it (so that a failure cannot take retried requests with it).
      {
        origin: toFast ? fast : upstream,
        path: toFast ? req.url.slice(5) : req.url,
        method: req.method,
        headers,
        body,
        idempotent: true,
      },
      {
        onRequestStart(controller) {
          res.once('close', () => {
            if (!res.writableFinished) controller.abort(new Error('caller gone'));
          });
          this.controller = controller;
        },
        onResponseStart(_controller, status, headers) {
          res.writeHead(status, headers);
          res.flushHeaders();
        },
        onResponseData(controller, chunk) {
          if (!res.write(chunk)) {
            controller.pause();
            res.once('drain', () => controller.resume());
          }
        },
        onResponseEnd() {
          res.end();
        },
        onResponseError(_controller, error) {
          if (!res.headersSent) res.writeHead(502).end(String(error.message));
          else res.destroy();
        },
      },
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.FORWARD_PORT), '127.0.0.1', 4_096);
process.once('SIGTERM', () => process.exit(0));
