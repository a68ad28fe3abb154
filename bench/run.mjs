// Edge overhead benchmark: starts the built embedded bundle on loopback and measures the authenticated
// steady-state path (auth cache hit, no database or gRPC round trip) against the cheapest possible answer
// (a refused request that never looks anything up), side by side in one run.
//
//   npm run bench                        (builds first)
//   BENCH_REQUESTS=20000 BENCH_CONCURRENCY=32 npm run bench
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { freePort } from './lib/procs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const requests = Number(process.env.BENCH_REQUESTS ?? 5000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const KEY = 'sbc_bench_key_0123456789abcdefghijkl';

async function measure(label, url, headers, expectStatus) {
  const agent = new Agent({ connections: concurrency, pipelining: 1 });
  const latencies = [];
  let next = 0;
  let wrong = 0;
  const started = performance.now();
  async function worker() {
    while (next < requests) {
      next += 1;
      const t0 = performance.now();
      const res = await request(url, { headers, dispatcher: agent });
      await res.body.dump();
      latencies.push(performance.now() - t0);
      if (res.statusCode !== expectStatus) wrong += 1;
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  latencies.sort((a, b) => a - b);
  const pct = (p) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(2);
  return {
    label,
    requests: latencies.length,
    rps: Math.round(latencies.length / seconds),
    p50_ms: pct(50),
    p99_ms: pct(99),
    unexpected_status: wrong,
  };
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'sbc-bench-'));
const port = await freePort();
const child = spawn(process.execPath, [path.join(root, 'dist/apps/embedded/main.js')], {
  env: { ...process.env, SBC_DATA_DIR: dataDir, PORT: String(port), SBC_BOOTSTRAP_KEY: KEY, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
let output = '';
child.stdout.on('data', (chunk) => (output += chunk));
try {
  const deadline = Date.now() + 60_000;
  while (!output.includes('serving at')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`embedded did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const base = `http://127.0.0.1:${port}`;
  // Warm the authentication cache and the connection pools before measuring.
  await measure('warm-up', `${base}/v1/keys/whoami`, { authorization: `Bearer ${KEY}` }, 200);
  await measure('warm-up', `${base}/v1/keys/whoami`, {}, 401);
  const results = [
    await measure('401 without a key (no lookup)', `${base}/v1/keys/whoami`, {}, 401),
    await measure('whoami, cached key', `${base}/v1/keys/whoami`, { authorization: `Bearer ${KEY}` }, 200),
  ];
  console.log(`edge overhead: ${requests} requests per case, ${concurrency} concurrent, loopback, embedded mode`);
  console.table(results);
  const [floor, cached] = results;
  console.log(
    `cached-auth p50 over the no-lookup floor: ${(cached.p50_ms / floor.p50_ms).toFixed(2)}x; throughput ` +
      `ratio ${(cached.rps / floor.rps).toFixed(2)}`,
  );
} finally {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
