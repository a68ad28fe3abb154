// The bare forwarder floor for bench/streams.mjs: the least an HTTP edge in Node can do per stream. It takes
// the caller's request, sends it to the upstream over an undici pool and copies the reply's status, headers
// and bytes back as they come, with backpressure. No auth, no parsing, no accounting: what a gateway costs
// above this is the gateway's own.
//
//   node bench/lib/forwarder.mjs   FORWARD_PORT, FORWARD_UPSTREAM (origin), FORWARD_FAST_UPSTREAM (for /fast/…)
import { createServer } from 'node:http';
import { Agent } from 'undici';

const upstream = process.env.FORWARD_UPSTREAM;
const fast = process.env.FORWARD_FAST_UPSTREAM ?? upstream;
const agent = new Agent({ connections: null, headersTimeout: 120_000, bodyTimeout: 300_000, keepAliveTimeout: 30_000 });

const server = createServer((req, res) => {
  if (req.url === '/readyz') return res.end('ok');
  const toFast = req.url.startsWith('/fast/');
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    agent.dispatch(
      { origin: toFast ? fast : upstream, path: toFast ? req.url.slice(5) : req.url, method: req.method, headers, body: chunks.length ? Buffer.concat(chunks) : null },
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
