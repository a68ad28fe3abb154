// Interactive calls while a batch runs on the same key: `npm start`'s bundle (every service in one process, the
// bundled simulator behind the house models) answers a steady stream of interactive chat calls alone, then the
// same stream while a batch of chat lines on the same key is being run by the batch lane. The figure is what the
// interactive caller sees: latency percentiles and refusals in each phase, and how far the batch got meanwhile.
//
//   node bench/batch-latency.mjs        needs dist/apps/embedded (npx nx run embedded:build)
//   BENCH_LINES=N                       lines in the batch (default 2000)
//   BENCH_CALLS=N                       interactive calls per phase (default 400), BENCH_CONCURRENCY=N (default 4)
//   BENCH_SIM_LATENCY_MS=N              the simulator's time to answer (default 100), as a model's would be
//   BENCH_BATCHES_WORKERS=N             the lane's lines at once (the runs service's BATCHES_WORKERS; default its own)
//
// The data directory is a fresh temp dir, removed at the end.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild, stopChildren, waitReady } from './lib/procs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const LINES = Number(env.BENCH_LINES ?? 2000);
const CALLS = Number(env.BENCH_CALLS ?? 400);
const CONCURRENCY = Number(env.BENCH_CONCURRENCY ?? 4);
const SIM_LATENCY_MS = Number(env.BENCH_SIM_LATENCY_MS ?? 100);
const KEY = 'sbc_' + 'benchbatchlatency0123456789abcdef';
const nodeArgs = (
  /^node ((?:--\S+ )*)/.exec(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start)?.[1] ?? ''
)
  .split(' ')
  .filter(Boolean);

let origin;
const headers = { authorization: `Bearer ${KEY}` };

async function api(method, route, body) {
  const res = await fetch(`${origin}${route}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** `CALLS` interactive calls, `CONCURRENCY` at a time: each one's latency in ms, and the statuses of the others. */
async function interactive(label) {
  const latencies = [];
  const refused = new Map();
  let next = 0;
  const worker = async () => {
    while (next < CALLS) {
      next++;
      const started = performance.now();
      const res = await fetch(`${origin}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'house',
          max_tokens: 16,
          messages: [{ role: 'user', content: `${label} call` }],
        }),
      });
      await res.arrayBuffer();
      if (res.status === 200) latencies.push(performance.now() - started);
      else refused.set(res.status, (refused.get(res.status) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  latencies.sort((a, b) => a - b);
  const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]?.toFixed(1) ?? '–';
  return { label, answered: latencies.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), refused: [...refused] };
}

async function createBatch() {
  const lines = Array.from({ length: LINES }, (_, index) =>
    JSON.stringify({
      custom_id: `line-${index + 1}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'house', max_tokens: 16, messages: [{ role: 'user', content: `batch line ${index + 1}` }] },
    }),
  );
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([`${lines.join('\n')}\n`], { type: 'application/jsonl' }), 'lines.jsonl');
  const upload = await fetch(`${origin}/v1/files`, { method: 'POST', headers, body: form });
  if (upload.status !== 200) throw new Error(`POST /v1/files: ${upload.status} ${await upload.text()}`);
  const file = await upload.json();
  return api('POST', '/v1/batches', {
    input_file_id: file.id,
    endpoint: '/v1/chat/completions',
    completion_window: '24h',
  });
}

/** Waits until the batch has answered some lines, so the second phase runs beside a lane at full pace. */
async function untilRunning(batchId) {
  for (;;) {
    const batch = await api('GET', `/v1/batches/${batchId}`);
    if (batch.request_counts.completed + batch.request_counts.failed > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'sbc-bench-batch-latency-'));
try {
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  const child = startChild(
    'embedded',
    path.join(root, 'dist/apps/embedded/main.js'),
    {
      PORT: String(port),
      SBC_DATA_DIR: dataDir,
      SBC_BOOTSTRAP_KEY: KEY,
      LOG_LEVEL: 'warn',
      SIM_LATENCY_MS: String(SIM_LATENCY_MS),
      ...(env.BENCH_BATCHES_WORKERS ? { BATCHES_WORKERS: env.BENCH_BATCHES_WORKERS } : {}),
    },
    nodeArgs,
  );
  await waitReady(child, `${origin}/readyz`, {}, 300_000);
  console.log(
    `batch latency bench: node ${process.version}; ${CALLS} interactive calls at c=${CONCURRENCY} per phase, ` +
      `a batch of ${LINES} lines on the same key, simulator latency ${SIM_LATENCY_MS} ms`,
  );
  await interactive('warm-up');
  const alone = await interactive('alone');
  const batch = await createBatch();
  await untilRunning(batch.id);
  const before = (await api('GET', `/v1/batches/${batch.id}`)).request_counts;
  const startedAt = performance.now();
  const beside = await interactive('beside a batch');
  const seconds = (performance.now() - startedAt) / 1000;
  const after = (await api('GET', `/v1/batches/${batch.id}`)).request_counts;
  const lines = after.completed + after.failed - (before.completed + before.failed);
  console.table([alone, beside]);
  console.log(
    `the batch answered ${lines} lines (${(lines / seconds).toFixed(1)} a second) while the second phase ran; ` +
      `${after.completed + after.failed} of ${LINES} by its end`,
  );
  await api('POST', `/v1/batches/${batch.id}/cancel`);
} finally {
  await stopChildren();
  rmSync(dataDir, { recursive: true, force: true });
}
