// The accounting floor for bench/gateway.mjs (BENCH_MINIMAL=1): the least a Node gateway that authenticates,
// routes by model and counts usage from the reply must do for one non-streamed call, and nothing more. Beside
// the bare forwarder (bench/lib/forwarder.mjs, which never looks at a body) it shows how much of the edge's CPU
// the work itself needs, and how much is the edge's own way of doing it.
//
// Per call: read the body and parse it; hash the presented key (SHA-256, as the edge keys its credential
// cache) and look it up; map the model to its engine and re-serialize the body for it; send it over an
// undici pool (dialed as the edge and the forwarder dial: one request at a time on an HTTP/1.1 connection);
// read the whole reply, parse it, add its tokens to the key's total, name the caller's model, and send it
// back with content-length and a request id. No validation, limits, budgets, metrics, usage event, fallbacks
// or error envelopes: each of those is the edge's, and none is free.
//
//   node bench/lib/minimal-gateway.mjs   PORT, HOUSE_ENGINES (the edge's JSON: model → engines; the first is
//                                        used), MINIMAL_KEY (the one key it accepts)
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { Agent } from 'undici';

const engines = new Map(
  Object.entries(JSON.parse(process.env.HOUSE_ENGINES)).map(([model, [engine]]) => {
    const url = new URL(engine.base_url);
    const anthropic = engine.dialect === 'anthropic';
    return [
      model,
      {
        origin: url.origin,
        path: `${url.pathname}${anthropic ? '/messages' : '/chat/completions'}`,
        model: engine.model,
        headers: anthropic
          ? { 'content-type': 'application/json', 'x-api-key': engine.api_key, 'anthropic-version': '2023-06-01' }
          : { 'content-type': 'application/json', authorization: `Bearer ${engine.api_key}` },
      },
    ];
  }),
);
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const tokensByKey = new Map([[sha256(process.env.MINIMAL_KEY), 0]]);
const agent = new Agent({ connections: 200, headersTimeout: 120_000, bodyTimeout: 300_000, keepAliveTimeout: 30_000 });
let calls = 0;

const server = createServer((req, res) => {
  if (req.url === '/readyz') return res.end('ok');
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const header = req.headers.authorization ?? req.headers['x-api-key'] ?? '';
    const keyHash = sha256(header.startsWith('Bearer ') ? header.slice(7) : header);
    if (!tokensByKey.has(keyHash)) return res.writeHead(401).end();
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const callerModel = body.model;
    const engine = engines.get(callerModel);
    if (!engine) return res.writeHead(404).end();
    body.model = engine.model;
    const reply = [];
    let status = 0;
    agent.dispatch(
      {
        origin: engine.origin,
        path: engine.path,
        method: 'POST',
        headers: engine.headers,
        body: JSON.stringify(body),
        idempotent: true,
      },
      {
        onRequestStart() {},
        onResponseStart(_controller, statusCode) {
          status = statusCode;
        },
        onResponseData(_controller, chunk) {
          reply.push(chunk);
        },
        onResponseEnd() {
          const parsed = JSON.parse(Buffer.concat(reply).toString('utf8'));
          const usage = parsed.usage ?? {};
          const tokens =
            (usage.prompt_tokens ?? usage.input_tokens ?? 0) + (usage.completion_tokens ?? usage.output_tokens ?? 0);
          tokensByKey.set(keyHash, tokensByKey.get(keyHash) + tokens);
          parsed.model = callerModel;
          const payload = JSON.stringify(parsed);
          calls += 1;
          res.writeHead(status, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            'x-request-id': `req_${calls}`,
          });
          res.end(payload);
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
server.listen(Number(process.env.PORT), '127.0.0.1', 4_096);
process.once('SIGTERM', () => process.exit(0));
