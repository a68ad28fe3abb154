// Thousands of slow streams held at once: what one edge process holds, against the bare forwarder floor.
//
//   npm run bench:streams                   builds dist/apps/{gateway,account,sim-upstream} first (or: node bench/streams.mjs)
//   BENCH_STREAMS=1000,5000,9000            concurrent streams per case (default)
//   BENCH_TOKENS=60 BENCH_TOKENS_PER_SECOND=4   each stream's length and drip rate (15 s by default)
//   BENCH_RAMP=300                          streams started every 100 ms
//   BENCH_GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'   node flags for the edge (profiling)
//
// Processes, each its own child: a slow simulator (SIM_TOKENS_PER_SECOND drip) for the streams, a fast one
// (no latency) for the probe, the account service, the edge (the gateway bundle alone, as in services mode),
// the bare forwarder (bench/lib/forwarder.mjs) and, per case, the load generator (bench/lib/streams-load.mjs).
// Per case and target, the load generator ramps the streams up (BENCH_RAMP every 100 ms), reports once every stream
// has its first token, probes the target with a one-token non-streamed call every 50 ms while they run, and
// reports when they have all ended. Figures per target:
//   - per-stream memory: (target RSS with every stream open − its RSS before the case) / streams, in KiB;
//   - CPU per relayed token: the target's CPU time over the case / tokens the load generator received, in µs;
//   - probe p50 / p99 in ms, and failures (streams refused, broken, short, or never started).
// Each figure of the edge is also given as a ratio to the floor's in the same run.
//
// File descriptors: at N streams the edge holds N caller sockets and N upstream sockets. This container's
// hard limit is 20,000 (`ulimit -Hn`), so 10,000 streams cannot be held by any single proxy process here;
// the default sizes stop at 9,000. Children inherit the limit; Node raises its soft limit to the hard one.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, freePort, startChild, stopChildren, waitReady } from './lib/procs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const sizes = (env.BENCH_STREAMS ?? '1000,5000,9000').split(',').map(Number);
const TOKENS = Number(env.BENCH_TOKENS ?? 60);
const TOKENS_PER_SECOND = Number(env.BENCH_TOKENS_PER_SECOND ?? 4);
const RAMP = Number(env.BENCH_RAMP ?? 300); // streams started every 100 ms
const KEY = 'sbc_' + 'benchstreams0123456789abcdefghij';
const SIM_KEY = 'sim-bench-key';

const rssKiB = (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

let dataDir;
async function cleanup() {
  await stopChildren();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await cleanup();
    process.exit(130);
  });
}

/** Runs the load generator as its own process; resolves with its `done` line, calling `onOpen` at its `open` line. */
function runLoad(settings, onOpen) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bench/lib/streams-load.mjs'), JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let buffered = '';
    let done;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      let newline;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const event = JSON.parse(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        if (event.event === 'open') onOpen(event);
        else done = event;
      }
    });
    child.once('exit', (code) => (done ? resolve(done) : reject(new Error(`load generator exited ${code} without a result`))));
  });
}

function chatBody(model, tokens, stream) {
  return JSON.stringify({ model, stream, max_tokens: 1024, messages: [{ role: 'user', content: `Benchmark stream. sim-tokens:${tokens}` }] });
}

async function measure(target, streams) {
  const settleMs = 1500;
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const rssBefore = rssKiB(target.pid);
  const cpuBefore = cpuMs(target.pid);
  let rssOpen = 0;
  let open;
  const result = await runLoad(
    {
      origin: target.origin,
      streams,
      rampBatch: RAMP,
      rampEveryMs: 100,
      probeEveryMs: 50,
      deadlineMs: 60_000 + (TOKENS / TOKENS_PER_SECOND) * 1000,
      stream: { path: '/v1/chat/completions', headers: target.headers, body: chatBody(target.model, TOKENS, true) },
      probe: { method: 'POST', path: target.probePath, headers: target.headers, body: chatBody(target.probeModel, 1, false) },
    },
    (event) => {
      open = event;
      rssOpen = rssKiB(target.pid);
    },
  );
  const cpu = cpuMs(target.pid) - cpuBefore;
  const failed = Object.values(result.failures).reduce((a, b) => a + b, 0) + result.unfinished;
  return {
    streams,
    opened: open?.open ?? 0,
    open_ms: open?.ms ?? null,
    failed,
    failures: result.failures,
    kib_per_stream: Math.round(((rssOpen - rssBefore) / streams) * 10) / 10,
    rss_open_mib: Math.round(rssOpen / 1024),
    cpu_us_per_token: result.tokens ? Math.round(((cpu * 1000) / result.tokens) * 10) / 10 : null,
    tokens: result.tokens,
    probe_p50_ms: result.probe.p50,
    probe_p99_ms: result.probe.p99,
    probe_failures: result.probe.failures,
  };
}

async function main() {
  console.log(`streams bench: ${cpus().length} cores, node ${process.version}; ${TOKENS} tokens per stream at ${TOKENS_PER_SECOND}/s; sizes ${sizes.join(', ')}`);
  const [slowPort, fastPort, forwardPort, edgePort, accountGrpc, accountHttp] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  const simEnv = { SIM_HOST: '127.0.0.1', SIM_LATENCY_MS: '0', SIM_API_KEY: SIM_KEY, LOG_LEVEL: 'warn' };
  const simEntry = path.join(root, 'dist/apps/sim-upstream/main.js');
  const slow = startChild('sim-slow', simEntry, { ...simEnv, SIM_PORT: String(slowPort), SIM_TOKENS_PER_SECOND: String(TOKENS_PER_SECOND) });
  const fast = startChild('sim-fast', simEntry, { ...simEnv, SIM_PORT: String(fastPort), SIM_TOKENS_PER_SECOND: '0' });
  const slowOrigin = `http://127.0.0.1:${slowPort}`;
  const fastOrigin = `http://127.0.0.1:${fastPort}`;
  await waitReady(slow, `${slowOrigin}/v1/models`, { authorization: `Bearer ${SIM_KEY}` });
  await waitReady(fast, `${fastOrigin}/v1/models`, { authorization: `Bearer ${SIM_KEY}` });

  const forwarder = startChild('forwarder', path.join(root, 'bench/lib/forwarder.mjs'), { FORWARD_PORT: String(forwardPort), FORWARD_UPSTREAM: slowOrigin, FORWARD_FAST_UPSTREAM: fastOrigin });
  await waitReady(forwarder, `http://127.0.0.1:${forwardPort}/readyz`);

  dataDir = mkdtempSync(path.join(tmpdir(), 'sbc-bench-streams-'));
  const account = startChild('account', path.join(root, 'dist/apps/account/main.js'), {
    SBC_DATA_DIR: dataDir,
    SBC_BOOTSTRAP_KEY: KEY,
    ACCOUNT_GRPC_PORT: String(accountGrpc),
    ACCOUNT_HTTP_PORT: String(accountHttp),
    LOG_LEVEL: 'warn',
  });
  await waitReady(account, `http://127.0.0.1:${accountHttp}/readyz`, {}, 120_000);
  const engine = (origin) => [{ dialect: 'openai', base_url: `${origin}/v1`, api_key: SIM_KEY, model: 'sim-large' }];
  const edge = startChild('gateway', path.join(root, 'dist/apps/gateway/main.js'), {
    ACCOUNT_GRPC_TARGET: `127.0.0.1:${accountGrpc}`,
    PORT: String(edgePort),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    HOUSE_ENGINES: JSON.stringify({ house: engine(slowOrigin), 'house-fast': engine(fastOrigin) }),
  }, env.BENCH_GATEWAY_NODE_ARGS ? env.BENCH_GATEWAY_NODE_ARGS.split(' ') : []);
  const edgeOrigin = `http://127.0.0.1:${edgePort}`;
  await waitReady(edge, `${edgeOrigin}/readyz`);

  const targets = {
    floor: { pid: forwarder.child.pid, origin: `http://127.0.0.1:${forwardPort}`, headers: { 'content-type': 'application/json', authorization: `Bearer ${SIM_KEY}` }, model: 'sim-large', probeModel: 'sim-large', probePath: '/fast/v1/chat/completions' },
    edge: { pid: edge.child.pid, origin: edgeOrigin, headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, model: 'house', probeModel: 'house-fast', probePath: '/v1/chat/completions' },
  };
  // A small warm-up through both, so neither is measured while V8 is still compiling its hot paths.
  for (const target of Object.values(targets)) await measure(target, 200);

  const rows = [];
  for (const streams of sizes) {
    const floor = await measure(targets.floor, streams);
    const gateway = await measure(targets.edge, streams);
    const ratio = (a, b) => (a != null && b ? Math.round((a / b) * 100) / 100 : null);
    rows.push({ target: 'floor', ...floor });
    rows.push({ target: 'edge', ...gateway, kib_over_floor: Math.round((gateway.kib_per_stream - floor.kib_per_stream) * 10) / 10, cpu_ratio: ratio(gateway.cpu_us_per_token, floor.cpu_us_per_token), p99_over_floor_ms: Math.round((gateway.probe_p99_ms - floor.probe_p99_ms) * 100) / 100 });
    console.log(JSON.stringify(rows.at(-2)));
    console.log(JSON.stringify(rows.at(-1)));
  }
  console.table(rows.map(({ failures, ...row }) => row));
  for (const row of rows) if (row.failed > 0) console.log(`${row.target} @ ${row.streams}: failures ${JSON.stringify(row.failures)}`);
  return rows.some((row) => row.failed > 0) ? 1 : 0;
}

main()
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  })
  .catch(async (error) => {
    console.error(error);
    await cleanup();
    process.exit(1);
  });
