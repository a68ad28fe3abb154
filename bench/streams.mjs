// Thousands of slow streams held at once: what one edge process holds, against the bare forwarder floor and Portkey.
//
// npm run bench:streams builds dist/apps/{gateway,account,sim-upstream} first (or: node bench/streams.mjs)
//   BENCH_STREAMS=1000,5000,10000           concurrent streams per case (default)
//   BENCH_TOKENS=60 BENCH_TOKENS_PER_SECOND=4   each stream's length and drip rate (15 s by default); a list of
//                                           lengths (BENCH_TOKENS=30,60) runs each case at each length in turn
//   BENCH_PROMPT_KIB=16                     each stream's request carries a 16 KiB conversation before its last
//                                           message, as chat clients resend their history (none by default)
//   BENCH_RAMP=100                          streams started every 100 ms (1,000 a second: 10,000 streams open in 10 s)
//   BENCH_WARMUP=2000                       streams through each target, unmeasured, before the cases
//   BENCH_REPEAT=1                          runs of each case, the targets in turn each time; with more than one,
//                                           each target's ratios to the floor's are also given as a median and range
//                                           (memory per stream only from the first run: later ones start from the
//                                           heap it grew)
//   BENCH_TARGETS=floor,edge,portkey        which targets to measure (all by default)
//   BENCH_PORTKEY=0                         skip Portkey (else @portkey-ai/gateway@PORTKEY_VERSION is installed once
// into BENCH_PORTKEY_DIR, by default under the OS temp dir: never a project dependency)
//   BENCH_HEAP=1                            also count what each open stream keeps on the floor's and the edge's heap:
//                                           a heap snapshot before each case and one once its streams are open
//                                           (bench/lib/heap-census.mjs); the targets stop while they write them, so
//                                           the run's CPU and memory figures are not comparable to others (up to
//                                           about 5,000 streams: a snapshot is read as one string)
// BENCH_OUT=1 write the JSON to bench/results/streams-<timestamp>.json (or BENCH_OUT=<file.json>)
//   BENCH_GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'   node flags for the edge (profiling)
//   BENCH_FLOOR_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof-floor'  the same for the floor, to compare profiles
//
// Processes, each its own child: a slow simulator (SIM_TOKENS_PER_SECOND drip) for the streams, a fast one
// (no latency) for the probe, the account service, the edge (the gateway bundle alone, as in services mode),
// the bare forwarder (bench/lib/forwarder.mjs), Portkey's Node server and, per case, the load generator
// (bench/lib/streams-load.mjs). Per case and target, the load generator ramps the streams up (BENCH_RAMP every
// 100 ms), reports once every stream has its first token, probes the target with a one-token non-streamed call
// every 50 ms while they run, and reports when they have all ended. Figures per target:
//   - per-stream memory: (target RSS with every stream open − its RSS before the case) / streams, in KiB;
//   - CPU per relayed token: the target's CPU time over the case / tokens the load generator received, in µs;
//     and the same CPU split at the moment every stream had its first token: while the streams opened, per
//     stream (the tokens relayed meanwhile included), and once all were open, per token relayed to the end
//     (the streams' ends included), so a ratio to the floor's says whether opening or relaying costs more;
//   - the time from a stream's request to its first token, p50 and max, in ms;
//   - probe p50 / p99 in ms, and failures (streams refused, broken, short, or never started).
// Each figure of the edge is also given as a ratio to the floor's and to Portkey's in the same run.
// CPU per relayed token mixes what a target spends per stream (the request, its checks and accounting, opening
// and closing the stream) with what it spends per token, so it depends on the streams' length: a list of
// lengths measures each case at each, one after the other in the same run.
//
// Upstreams speak TLS with a throwaway self-signed certificate (trusted by the targets through
// NODE_EXTRA_CA_CERTS): HTTP/2 by ALPN to clients that offer it, as OpenAI and Anthropic do, HTTP/1.1 to the
// rest. The edge and the floor offer HTTP/2 and carry 100 streams per upstream connection; Portkey fetches with
// Node's fetch, which offers only HTTP/1.1, so it holds one upstream socket per stream.
// File descriptors: this container's hard limit is 20,000 per process (`ulimit -Hn`). A proxy holds a caller
// socket per stream, plus one upstream socket per stream over HTTP/1.1 or one per 100 over HTTP/2, so 10,000
// streams fit the edge and the floor, but not Portkey. Children inherit the limit; Node raises its soft limit.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, setGlobalDispatcher } from 'undici';
import { heapSnapshotArgs, perStream, snapshot } from './lib/heap-census.mjs';
import { cpuMs, freePort, machineCpuMs, startChild, stopChildren, waitReady } from './lib/procs.mjs';
import { table } from './lib/report.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const sizes = (env.BENCH_STREAMS ?? '1000,5000,10000').split(',').map(Number);
const lengths = String(env.BENCH_TOKENS ?? 60)
  .split(',')
  .map(Number);
const TOKENS_PER_SECOND = Number(env.BENCH_TOKENS_PER_SECOND ?? 4);
const RAMP = Number(env.BENCH_RAMP ?? 100); // streams started every 100 ms
const WARMUP = Number(env.BENCH_WARMUP ?? 2000); // streams through each target before the cases
const REPEAT = Math.max(1, Math.floor(Number(env.BENCH_REPEAT ?? 1)) || 1); // runs of each case
const chosen = new Set((env.BENCH_TARGETS ?? 'floor,edge,portkey').split(','));
const PORTKEY_VERSION = '1.15.2';
const withPortkey = env.BENCH_PORTKEY !== '0' && chosen.has('portkey');
const HEAP = env.BENCH_HEAP === '1';
// The history each stream's request carries.
const PROMPT_KIB = Math.max(0, Math.floor(Number(env.BENCH_PROMPT_KIB ?? 0)) || 0);
const portkeyDir =
  env.BENCH_PORTKEY_DIR ?? path.join(tmpdir(), `sbc-bench-portkey-${PORTKEY_VERSION}-hono-node-server-1.14.1`);
const KEY = 'sbc_' + 'benchstreams0123456789abcdefghij';
const SIM_KEY = 'sim-bench-key';

const rssKiB = (pid) => Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

let workDir;
async function cleanup() {
  await stopChildren();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    await cleanup();
    process.exit(130);
  });
}

/** A self-signed certificate for 127.0.0.1, for this run only. */
function selfSignedCert(dir) {
  const cert = path.join(dir, 'sim-cert.pem');
  const key = path.join(dir, 'sim-key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

/**
 * Portkey's Node server entry, installed once into `portkeyDir` (outside the repository) and reused. Its
 * @hono/node-server dependency is pinned to 1.14.1: from 1.14.2 on, a proxied streaming response keeps the
 * upstream fetch's immutable headers and Portkey's own header writes fail every streamed call with a 500
 * (Portkey-AI/gateway issues 1389 and 1550).
 */
function portkeyEntry() {
  const pins = { '@portkey-ai/gateway': PORTKEY_VERSION, '@hono/node-server': '1.14.1' };
  const installedVersion = (name) => {
    try {
      return JSON.parse(readFileSync(path.join(portkeyDir, 'node_modules', name, 'package.json'), 'utf8')).version;
    } catch {
      return undefined;
    }
  };
  const wrong = () => Object.entries(pins).filter(([name, version]) => installedVersion(name) !== version);
  if (wrong().length > 0) {
    console.log(
      `installing @portkey-ai/gateway@${PORTKEY_VERSION} into ${portkeyDir} (for this bench only, not a project ` +
        `dependency)`,
    );
    mkdirSync(portkeyDir, { recursive: true });
    const manifest = {
      private: true,
      dependencies: { '@portkey-ai/gateway': PORTKEY_VERSION },
      overrides: { '@hono/node-server': pins['@hono/node-server'] },
    };
    writeFileSync(path.join(portkeyDir, 'package.json'), JSON.stringify(manifest, null, 2));
    execFileSync('npm', ['install', '--prefix', portkeyDir, '--no-audit', '--no-fund'], { stdio: 'inherit' });
    // An earlier install's lock file can keep other versions; the directory is not ours to clear.
    if (wrong().length > 0)
      throw new Error(
        `${portkeyDir} holds ${JSON.stringify(wrong().map(([name]) => `${name}@${installedVersion(name)}`))}; remove ` +
          `it or set BENCH_PORTKEY_DIR to a fresh one`,
      );
  }
  return path.join(portkeyDir, 'node_modules/@portkey-ai/gateway/build/start-server.js');
}

/** Runs the load generator as its own process; resolves with its `done` line, calling `onOpen` at its `open` line. */
function runLoad(settings, onOpen) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bench/lib/streams-load.mjs'), JSON.stringify(settings)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
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
    child.once('exit', (code) =>
      done ? resolve(done) : reject(new Error(`load generator exited ${code} without a result`)),
    );
  });
}

/**
 * A conversation of about `kib` KiB before the last user message (BENCH_PROMPT_KIB): turns of about 1 KiB,
 * user and assistant in turn, as a chat client resends its history with every call.
 */
function history(kib) {
  const turn = (i) => `Turn ${i}: ${'the quick brown fox jumps over the lazy dog '.repeat(23)}`;
  return Array.from({ length: kib }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: turn(i) }));
}

function chatBody(model, tokens, stream, promptKiB = 0) {
  return JSON.stringify({
    model,
    stream,
    max_tokens: 1024,
    messages: [...history(promptKiB), { role: 'user', content: `Benchmark stream. sim-tokens:${tokens}` }],
  });
}

/**
 * `sim` is the slow simulator's pid: its CPU over the case says how close the machine was to saturation.
 * `census`: count what each open stream keeps on the target's heap (BENCH_HEAP, targets started with a heap dir).
 */
async function measure(target, streams, tokens, sim, census = false) {
  const settleMs = 1500;
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const heapBefore = census ? await snapshot(target.pid, target.heapDir) : undefined;
  let heapOpen;
  const rssBefore = rssKiB(target.pid);
  const cpuBefore = cpuMs(target.pid);
  const simCpuBefore = cpuMs(sim);
  const machineBefore = machineCpuMs().busy;
  let rssOpen = 0;
  let fdsOpen = 0;
  let cpuOpen;
  let open;
  let load1m;
  const result = await runLoad(
    {
      origin: target.origin,
      streams,
      rampBatch: RAMP,
      rampEveryMs: 100,
      probeEveryMs: 50,
      deadlineMs: 60_000 + (tokens / TOKENS_PER_SECOND) * 1000,
      stream: {
        path: '/v1/chat/completions',
        headers: target.streamHeaders,
        body: chatBody(target.model, tokens, true, PROMPT_KIB),
      },
      probe: {
        method: 'POST',
        path: target.probePath,
        headers: target.probeHeaders,
        body: chatBody(target.probeModel, 1, false),
      },
    },
    (event) => {
      open = event;
      cpuOpen = cpuMs(target.pid);
      rssOpen = rssKiB(target.pid);
      fdsOpen = readdirSync(`/proc/${target.pid}/fd`).length;
      load1m = loadavg()[0];
      if (census) {
        heapOpen = snapshot(target.pid, target.heapDir);
        // Awaited once the case is over; a failure then ends the bench, not an unhandled rejection now.
        heapOpen.catch(() => undefined);
      }
    },
  );
  const cpu = cpuMs(target.pid) - cpuBefore;
  const heap = heapOpen && open?.open ? perStream(heapBefore, await heapOpen, open.open) : undefined;
  const simCpu = cpuMs(sim) - simCpuBefore;
  const cores = (ms) => Math.round((ms / 1000 / result.seconds) * 100) / 100;
  const otherCpu = machineCpuMs().busy - machineBefore - cpu - simCpu - result.cpu_ms;
  // Unfinished at the deadline: streams that had their first token (stalled) and streams that never did.
  if (result.stalled > 0) result.failures['stalled mid-stream at the deadline'] = result.stalled;
  if (result.unfinished > result.stalled)
    result.failures['no first token by the deadline'] = result.unfinished - result.stalled;
  const failed = Object.values(result.failures).reduce((a, b) => a + b, 0);
  return {
    streams,
    tokens_per_stream: tokens,
    opened: open?.open ?? 0,
    open_ms: open?.ms ?? null,
    failed,
    failures: result.failures,
    kib_per_stream: Math.round(((rssOpen - rssBefore) / streams) * 10) / 10,
    rss_open_mib: Math.round(rssOpen / 1024),
    fds_open: fdsOpen,
    cpu_us_per_token: result.tokens ? Math.round(((cpu * 1000) / result.tokens) * 10) / 10 : null,
    // Split where every stream had its first token (see the figures above).
    cpu_us_per_stream_opening:
      cpuOpen !== undefined && open.open ? Math.round(((cpuOpen - cpuBefore) * 1000) / open.open) : null,
    cpu_us_per_token_held:
      cpuOpen !== undefined && result.tokens > open.tokens
        ? Math.round((((cpuBefore + cpu - cpuOpen) * 1000) / (result.tokens - open.tokens)) * 10) / 10
        : null,
    tokens: result.tokens,
    probe_p50_ms: result.probe.p50,
    probe_p99_ms: result.probe.p99,
    probe_failures: result.probe.failures,
    // ms from a stream's request to its first token: the simulator sends the first token at once, so a max
    // far above the p50 means some stream was held back (a queue, a buffer) even if it then ended well.
    first_token_p50_ms: result.first_token_ms.p50,
    first_token_max_ms: result.first_token_ms.max,
    head_max_ms: result.head_ms.max,
    load_1m: load1m === undefined ? null : Math.round(load1m * 10) / 10,
    // Cores used over the case by the target, the slow simulator and the load generator.
    // `others`: every other process on the machine (this benchmark's idle children, other people's work).
    cores: { target: cores(cpu), sim: cores(simCpu), load: cores(result.cpu_ms), others: cores(Math.max(0, otherCpu)) },
    ...(heap ? { heap } : {}),
  };
}

const ratio = (a, b) => (a != null && b ? Math.round((a / b) * 100) / 100 : null);

/** The median, least and greatest of the figures that are there ("–" when none is). */
function spread(values) {
  const sorted = values.filter((value) => value != null).sort((a, b) => a - b);
  if (sorted.length === 0) return '–';
  const middle = sorted.length >> 1;
  const median =
    sorted.length % 2 ? sorted[middle] : Math.round(((sorted[middle - 1] + sorted[middle]) / 2) * 100) / 100;
  return `${median} (${sorted[0]} to ${sorted.at(-1)})`;
}

/** The columns that name a case's row in the printed tables: its size, run, stream length and target. */
const caseColumns = [
  ['streams', (r) => r.streams],
  ...(REPEAT > 1 ? [['run', (r) => r.run]] : []),
  ...(lengths.length > 1 ? [['tokens', (r) => r.tokens_per_stream]] : []),
  ['target', (r) => r.target],
  ['', () => ''],
];

/** A case's row named in a line: its target, size, and stream length and run where there are several. */
const caseLabel = (row) =>
  `${row.target} ` +
  `@ ${row.streams}${
    lengths.length > 1 ? ` × ${row.tokens_per_stream} ` + `tokens` : ''
  }${REPEAT > 1 ? ` run ${row.run}` : ''}`;

/** What each open stream kept on the floor's and the edge's heap (BENCH_HEAP), and the kinds with the most objects. */
function printHeap(rows) {
  const counted = rows.filter((row) => row.heap);
  console.log(
    '\nWhat each open stream keeps on the JavaScript heap (a snapshot before the case and one with its streams open; ' +
      'the difference ÷ open streams):\n',
  );
  const floorOf = (row) =>
    counted.find(
      (other) =>
        other.target === 'floor' &&
        other.streams === row.streams &&
        other.run === row.run &&
        other.tokens_per_stream === row.tokens_per_stream,
    );
  console.log(
    table(counted, [
      ...caseColumns,
      ['objects', (r) => r.heap.objects],
      ['objects over floor', (r) => (floorOf(r) ? r.heap.objects - floorOf(r).heap.objects : '–')],
      ['heap KiB', (r) => r.heap.kib],
      ['KiB over floor', (r) => (floorOf(r) ? Math.round((r.heap.kib - floorOf(r).heap.kib) * 10) / 10 : '–')],
    ]),
  );
  for (const row of counted) {
    console.log(`\n${caseLabel(row)}, the kinds with the most objects per stream (count, bytes):`);
    console.log(`  ${row.heap.top.map((kind) => `${kind.kind} ${kind.count} (${kind.bytes} B)`).join('; ')}`);
  }
}

async function main() {
  console.log(
    `streams bench: ${cpus().length} cores, node ${process.version}; ${lengths.join(' and ')} tokens per stream ` +
      `at ${TOKENS_PER_SECOND}/s${PROMPT_KIB ? `, ${PROMPT_KIB} KiB prompts` : ''}; ` +
      `sizes ${sizes.join(', ')}${REPEAT > 1 ? `, ${REPEAT} runs each` : ''}; load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  workDir = mkdtempSync(path.join(tmpdir(), 'sbc-bench-streams-'));
  const tls = selfSignedCert(workDir);
  // This process polls the simulators' readiness over the same TLS.
  setGlobalDispatcher(new Agent({ connect: { ca: readFileSync(tls.cert) } }));
  const trustSim = { NODE_EXTRA_CA_CERTS: tls.cert };
  const portkey = withPortkey ? portkeyEntry() : undefined;

  const [slowPort, fastPort, forwardPort, edgePort, portkeyPort, accountGrpc, accountHttp] = await Promise.all(
    Array.from({ length: 7 }, freePort),
  );
  const simEnv = {
    SIM_HOST: '127.0.0.1',
    SIM_LATENCY_MS: '0',
    SIM_API_KEY: SIM_KEY,
    SIM_TLS_CERT: tls.cert,
    SIM_TLS_KEY: tls.key,
    LOG_LEVEL: 'warn',
  };
  const simEntry = path.join(root, 'dist/apps/sim-upstream/main.js');
  const slow = startChild('sim-slow', simEntry, {
    ...simEnv,
    SIM_PORT: String(slowPort),
    SIM_TOKENS_PER_SECOND: String(TOKENS_PER_SECOND),
  });
  const fast = startChild('sim-fast', simEntry, { ...simEnv, SIM_PORT: String(fastPort), SIM_TOKENS_PER_SECOND: '0' });
  const slowOrigin = `https://127.0.0.1:${slowPort}`;
  const fastOrigin = `https://127.0.0.1:${fastPort}`;
  await waitReady(slow, `${slowOrigin}/v1/models`, { authorization: `Bearer ${SIM_KEY}` });
  await waitReady(fast, `${fastOrigin}/v1/models`, { authorization: `Bearer ${SIM_KEY}` });

  // BENCH_HEAP: the floor and the edge write heap snapshots into their own directory when signalled.
  const heapDirs = { floor: path.join(workDir, 'heap-floor'), edge: path.join(workDir, 'heap-edge') };
  const nodeArgs = (name, extra) => [
    ...(HEAP ? heapSnapshotArgs(heapDirs[name]) : []),
    ...(extra ? extra.split(' ') : []),
  ];
  if (HEAP) for (const dir of Object.values(heapDirs)) mkdirSync(dir);
  const forwarder = startChild(
    'forwarder',
    path.join(root, 'bench/lib/forwarder.mjs'),
    { ...trustSim, FORWARD_PORT: String(forwardPort), FORWARD_UPSTREAM: slowOrigin, FORWARD_FAST_UPSTREAM: fastOrigin },
    nodeArgs('floor', env.BENCH_FLOOR_NODE_ARGS),
  );
  await waitReady(forwarder, `http://127.0.0.1:${forwardPort}/readyz`);

  const account = startChild('account', path.join(root, 'dist/apps/account/main.js'), {
    SBC_DATA_DIR: path.join(workDir, 'data'),
    SBC_BOOTSTRAP_KEY: KEY,
    ACCOUNT_GRPC_PORT: String(accountGrpc),
    ACCOUNT_HTTP_PORT: String(accountHttp),
    LOG_LEVEL: 'warn',
  });
  await waitReady(account, `http://127.0.0.1:${accountHttp}/readyz`, {}, 120_000);
  // House engines are the operator's: the edge dials them as configured (its egress policy guards callers' own
  // endpoints).
  const engine = (origin) => [{ dialect: 'openai', base_url: `${origin}/v1`, api_key: SIM_KEY, model: 'sim-large' }];
  const edge = startChild(
    'gateway',
    path.join(root, 'dist/apps/gateway/main.js'),
    {
      ...trustSim,
      ACCOUNT_GRPC_TARGET: `127.0.0.1:${accountGrpc}`,
      PORT: String(edgePort),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000000',
      // No broker here: the edge still encodes every usage event, and sends it nowhere.
      USAGE_EVENTS: 'off',
      HOUSE_ENGINES: JSON.stringify({ house: engine(slowOrigin), 'house-fast': engine(fastOrigin) }),
    },
    nodeArgs('edge', env.BENCH_GATEWAY_NODE_ARGS),
  );
  const edgeOrigin = `http://127.0.0.1:${edgePort}`;
  await waitReady(edge, `${edgeOrigin}/readyz`);

  const json = { 'content-type': 'application/json' };
  const simAuth = { ...json, authorization: `Bearer ${SIM_KEY}` };
  const targets = {
    floor: {
      pid: forwarder.child.pid,
      heapDir: heapDirs.floor,
      origin: `http://127.0.0.1:${forwardPort}`,
      streamHeaders: simAuth,
      probeHeaders: simAuth,
      model: 'sim-large',
      probeModel: 'sim-large',
      probePath: '/fast/v1/chat/completions',
    },
    edge: {
      pid: edge.child.pid,
      heapDir: heapDirs.edge,
      origin: edgeOrigin,
      streamHeaders: { ...json, authorization: `Bearer ${KEY}` },
      probeHeaders: { ...json, authorization: `Bearer ${KEY}` },
      model: 'house',
      probeModel: 'house-fast',
      probePath: '/v1/chat/completions',
    },
  };
  if (portkey) {
    // Portkey's OpenAI provider with a custom host (it trusts loopback hosts by default); the caller's bearer
    // key goes to the upstream as is. --headless: no web UI.
    const portkeyServer = startChild(
      'portkey',
      portkey,
      { ...trustSim, NODE_ENV: 'production' },
      [],
      [`--port=${portkeyPort}`, '--headless'],
    );
    const viaPortkey = (origin) => ({
      ...simAuth,
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${origin}/v1`,
    });
    targets.portkey = {
      pid: portkeyServer.child.pid,
      origin: `http://127.0.0.1:${portkeyPort}`,
      streamHeaders: viaPortkey(slowOrigin),
      probeHeaders: viaPortkey(fastOrigin),
      model: 'sim-large',
      probeModel: 'sim-large',
      probePath: '/v1/chat/completions',
    };
    await waitReady(portkeyServer, `${targets.portkey.origin}/`);
  }
  for (const name of Object.keys(targets)) if (!chosen.has(name)) delete targets[name];
  // A warm-up through each, so none is measured while V8 is still compiling its hot paths and growing its heap:
  // after 200 streams the edge's first case of 1,000 still cost half again what its later ones did.
  for (const target of Object.values(targets)) await measure(target, WARMUP, lengths[0], slow.child.pid);

  const rows = [];
  // A case's targets run one after another, so a ratio compares runs about a minute apart; repeats show how far
  // the machine moves them.
  for (const streams of sizes)
    for (let run = 1; run <= REPEAT; run++)
      for (const tokens of lengths) {
        const byTarget = {};
        for (const [name, target] of Object.entries(targets)) {
          byTarget[name] = {
            target: name,
            run,
            ...(await measure(target, streams, tokens, slow.child.pid, HEAP && name !== 'portkey')),
          };
          console.log(JSON.stringify(byTarget[name]));
        }
        const { floor, portkey: viaPortkey } = byTarget;
        for (const row of Object.values(byTarget)) {
          rows.push({
            ...row,
            kib_over_floor: floor ? Math.round((row.kib_per_stream - floor.kib_per_stream) * 10) / 10 : null,
            cpu_vs_floor: floor ? ratio(row.cpu_us_per_token, floor.cpu_us_per_token) : null,
            opening_vs_floor: floor ? ratio(row.cpu_us_per_stream_opening, floor.cpu_us_per_stream_opening) : null,
            held_vs_floor: floor ? ratio(row.cpu_us_per_token_held, floor.cpu_us_per_token_held) : null,
            cpu_vs_portkey: viaPortkey ? ratio(row.cpu_us_per_token, viaPortkey.cpu_us_per_token) : null,
            kib_vs_portkey: viaPortkey ? ratio(row.kib_per_stream, viaPortkey.kib_per_stream) : null,
            p99_over_floor_ms:
              row.probe_p99_ms != null && floor?.probe_p99_ms != null
                ? Math.round((row.probe_p99_ms - floor.probe_p99_ms) * 100) / 100
                : null,
          });
        }
      }
  console.log(
    `\n${lengths.join(' and ')} tokens per stream at ${TOKENS_PER_SECOND}/s (KiB per stream = RSS growth ÷ streams; ` +
      `CPU per relayed token, and split where every stream had its first token: per stream while they opened, per ` +
      `token once all were open; probe times in ms; cores used over the case by the target, the slow simulator, the ` +
      `load generator and every other process; the machine's 1-minute load average when every stream was open):\n`,
  );
  console.log(
    table(rows, [
      ...caseColumns,
      ['opened', (r) => r.opened],
      ['failed', (r) => r.failed],
      ['KiB/stream', (r) => r.kib_per_stream],
      ['RSS open MiB', (r) => r.rss_open_mib],
      ['fds open', (r) => r.fds_open],
      ['CPU µs/token', (r) => r.cpu_us_per_token],
      ['× floor', (r) => r.cpu_vs_floor],
      ['× Portkey', (r) => r.cpu_vs_portkey],
      ['opening µs/stream', (r) => r.cpu_us_per_stream_opening],
      ['opening × floor', (r) => r.opening_vs_floor],
      ['held µs/token', (r) => r.cpu_us_per_token_held],
      ['held × floor', (r) => r.held_vs_floor],
      ['1st token p50/max', (r) => `${r.first_token_p50_ms}/${r.first_token_max_ms}`],
      ['probe p50', (r) => r.probe_p50_ms],
      ['probe p99', (r) => r.probe_p99_ms],
      ['cores t/sim/load/others', (r) => `${r.cores.target}/${r.cores.sim}/${r.cores.load}/${r.cores.others}`],
      ['load avg', (r) => r.load_1m],
    ]),
  );
  if (HEAP) printHeap(rows);
  for (const row of rows)
    if (row.failed > 0) console.log(`  ! ${caseLabel(row)}: failures ${JSON.stringify(row.failures)}`);
  if (REPEAT > 1 && targets.floor) {
    console.log(`\nAgainst the floor in the same run, median (least to greatest) over ${REPEAT} runs:\n`);
    const summaries = [];
    for (const streams of sizes)
      for (const tokens of lengths) {
        for (const name of Object.keys(targets)) {
          if (name === 'floor') continue;
          const runs = rows.filter(
            (row) => row.streams === streams && row.tokens_per_stream === tokens && row.target === name,
          );
          // Memory from a size's first run at the first length only: later cases start from the heap it grew, so they
          // show little growth.
          const kib = tokens === lengths[0] ? runs[0]?.kib_over_floor : undefined;
          summaries.push({
            streams,
            tokens,
            target: name,
            cpu: spread(runs.map((row) => row.cpu_vs_floor)),
            opening: spread(runs.map((row) => row.opening_vs_floor)),
            held: spread(runs.map((row) => row.held_vs_floor)),
            p99: spread(runs.map((row) => row.p99_over_floor_ms)),
            kib: kib ?? '–',
            failed: runs.reduce((sum, row) => sum + row.failed, 0),
          });
        }
      }
    console.log(
      table(summaries, [
        ['streams', (r) => r.streams],
        ...(lengths.length > 1 ? [['tokens', (r) => r.tokens]] : []),
        ['target', (r) => r.target],
        ['', () => ''],
        ['CPU per token × floor', (r) => r.cpu],
        ['opening × floor', (r) => r.opening],
        ['held × floor', (r) => r.held],
        ['probe p99 over floor (ms)', (r) => r.p99],
        ['KiB/stream over floor (run 1)', (r) => r.kib],
        ['failed (all runs)', (r) => r.failed],
      ]),
    );
  }

  const report = {
    bench: 'streams',
    at: new Date().toISOString(),
    machine: { cores: cpus().length, memory_gib: Math.round(totalmem() / 2 ** 30), node: process.version },
    settings: {
      tokens: lengths,
      tokens_per_second: TOKENS_PER_SECOND,
      prompt_kib: PROMPT_KIB,
      ramp_per_100ms: RAMP,
      sizes,
      repeat: REPEAT,
      targets: Object.keys(targets),
      portkey: withPortkey ? PORTKEY_VERSION : null,
    },
    rows,
  };
  if (env.BENCH_OUT) {
    const file = env.BENCH_OUT.endsWith('.json')
      ? path.resolve(env.BENCH_OUT)
      : path.join(root, 'bench/results', `streams-${report.at.replace(/[:.]/g, '-')}.json`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
    console.log(`\nJSON written to ${file}`);
  }
  // Portkey's failures are its own figures; the bench fails when the edge or the floor did.
  return rows.some((row) => row.target !== 'portkey' && row.failed > 0) ? 1 : 0;
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
