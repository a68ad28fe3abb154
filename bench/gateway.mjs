// Gateway (edge) overhead on model calls: the same request sent straight to sim-upstream and through the edge,
// side by side in one run, with the simulator at zero latency so the difference is the edge's own cost.
//
//   npm run bench:gateway                     builds the embedded and sim-upstream bundles first
//   BENCH_QUICK=1 npm run bench:gateway       smoke run, a few requests per case
//   BENCH_DIRECT_ONLY=1 node bench/gateway.mjs   only the direct half (no gateway started)
//
// Processes: sim-upstream (SIM_LATENCY_MS=0, SIM_TOKENS_PER_SECOND=0) and the embedded bundle, each its own
// child on a free port; HOUSE_ENGINES sends `house` to the sim in the OpenAI dialect and `house-omni` in the
// Anthropic dialect, so chat → house and messages → house-omni are both same-dialect passthroughs.
//
// Priming: before anything is measured, every case is sent through both targets (BENCH_PRIME requests each, at
// c=10), so the sim and the edge are measured as the long-running servers they are, not while V8 is still
// tiering their hot paths up. Without it, CPU per request falls by a third over the first ~8,000 calls at c=10
// and whichever case happens to run first looks worst.
//
// Cases: chat completions and messages, non-streaming and streaming (a 20-token reply via `sim-tokens:20`), at
// concurrency 1, 10 and 50; and chat answered from the response cache (`chat-cached`, `chat-stream-cached`). Per case, direct and edge run in alternating rounds (D E E D D E …) on their own
// warmed pools, so both see the same machine conditions; samples of a target's rounds are merged.
//
// The floor: the same requests also go through a bare Node forwarder (bench/lib/forwarder.mjs: the body
// read and sent to the sim over an undici pool, the reply copied back; no parsing, auth or accounting), so each
// edge's CPU per request is reported against the least any Node edge spends (`× floor`). With
// BENCH_BASELINE_ENTRY the same rounds also run through a second edge bundle (say, one built from an earlier
// commit), against the same account service: before and after, side by side on one machine in one run.
//
// The step table: on the non-streamed chat and messages cases at c=10 only (the headline's case; with no c=10 in
// BENCH_CONCURRENCY, the highest), one more edge per step, each started with SBC_BENCH_STEPS_OFF=<step> (the
// gateway's bench-only switch, apps/gateway/src/bench-steps.ts: `metrics`, `record`, `admit`, `scans`), runs in
// the same alternating rounds as the full edge and in its store mode. A step's cost is the full edge's CPU per
// call less that edge's, so each run measures every step and a regression in one shows as its row growing. The
// full edge the steps are measured against is a control: one more edge of the same bundle, started as the step
// edges are and run in the same rounds with every step. Two copies of one bundle differ by up to a tenth in CPU
// per call within a run on this machine (by the slot they run in, and by chance), so a step measured against the
// headline edge would carry that difference; the control against the headline edge shows how large it was. Only
// those cases and that concurrency, to bound the run: with BENCH_CASES=chat,messages and the default requests the
// five extra edges add 20,000 measured and 30,000 priming calls to the 36,000 and 24,000 of a run without them.
//
// Environment:
//   BENCH_REQUESTS=N        requests per case and target at c ≥ 10 (default 2000); c=1 gets N/4 (default 500)
//   BENCH_CONCURRENCY=1,10,50   BENCH_ROUNDS=4
//   BENCH_CASES=chat,chat-stream,messages,messages-stream,chat-cached,chat-stream-cached,chat-4k,chat-4k-guardrails
//   BENCH_QUICK=1           100 requests (25 at c=1), 2 rounds, short warm-up and priming
//   BENCH_PRIME=N           priming requests per case and target before the first measurement (default 3000)
//   BENCH_DIRECT_ONLY=1     skip the gateway;   BENCH_GATEWAY_ENTRY=path  another edge bundle (default embedded)
//   BENCH_BASELINE_ENTRY=path  a second edge bundle measured beside the first (the "baseline" target)
//   BENCH_MINIMAL=0         skip the accounting floor (bench/lib/minimal-gateway.mjs: parse, key hash, model map,
//                           reply parsed for its tokens and re-rendered), measured by default on non-streamed
//                           cases: the edge's CPU per call is reported as a ratio to it ("× acct floor")
//   BENCH_MEMORY_EDGE=0     with BENCH_REDIS_URL: skip the second edge in memory mode ("edge-memory") that runs
//                           beside the Redis one, so one run gives both modes' ratios and Redis ÷ memory
//   BENCH_STEPS=0           skip the step table;  BENCH_STEPS=metrics,admit  only those steps (default: all four),
//                           against the control edge (every step), which comes with them
//   BENCH_BASELINE_NODE_ARGS='--max-semi-space-size=32'  node flags for the baseline edge's process (say, to
//                           measure a flag: the same bundle in both slots, the flag in one)
//   BENCH_FLOOR_NODE_ARGS='--cpu-prof …'  node flags for the floor's process
//   BENCH_MINIMAL_NODE_ARGS='--cpu-prof …'  node flags for the accounting floor's process
//   BENCH_GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'   node flags for the edge process (profiling)
//   BENCH_TEAM_CAPS=0       with BENCH_REDIS_URL: skip the team-caps phase (the bootstrap key beside a team key
//                           reserving against key, member, team and account caps; Redis writes per call)
//   BENCH_OUT=1             write the JSON to bench/results/gateway-<timestamp>.json (or BENCH_OUT=<file.json>)
//                           instead of printing it;   BENCH_ENFORCE=1  exit 2 when a target fails
//
// It also reports how much CPU other processes and the hypervisor (steal) took while the rounds ran, and warns
// when that passes a tenth of a core: on two shared cores any other load inflates every figure.
//
// Exit status: 1 when any request failed (non-200, broken stream, …) or a process failed; 0 otherwise.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { openPool, runLoad } from './lib/load.mjs';
import {
  assertAlive,
  clockTicks,
  cpuMs,
  freePort,
  machineCpuMs,
  startChild,
  stopChildren,
  waitReady,
} from './lib/procs.mjs';
import { checkTargets, overhead, printReport, stepCosts, summarize } from './lib/report.mjs';
import { measureTeamCaps, startCountingProxy } from './lib/team-caps.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const flag = (name) => env[name] === '1' || env[name] === 'true';
const list = (value, fallback) =>
  value
    ? value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : fallback;
/** Node flags for a process, from a space-separated variable (BENCH_GATEWAY_NODE_ARGS and its kin). */
const nodeArgsOf = (variable) => list(env[variable]?.replaceAll(' ', ','), []);

const quick = flag('BENCH_QUICK');
const directOnly = flag('BENCH_DIRECT_ONLY');
const baseRequests = Number(env.BENCH_REQUESTS ?? (quick ? 100 : 2000));
const requestsAt = (c) => (c === 1 ? Math.max(1, Math.ceil(baseRequests / 4)) : baseRequests);
const concurrencies = list(env.BENCH_CONCURRENCY, ['1', '10', '50']).map(Number);
const stepConcurrency = concurrencies.includes(10) ? 10 : Math.max(...concurrencies);
const rounds = Math.max(1, Number(env.BENCH_ROUNDS ?? (quick ? 2 : 4)));
const warmupAt = (c) => (quick ? 2 * c : Math.max(200, 4 * c)); // unmeasured requests before the first round
const primeRequests = Math.max(0, Number(env.BENCH_PRIME ?? (quick ? 50 : 3000)));
const PRIME_CONCURRENCY = 10;
const TOKENS = 20; // streamed content deltas per reply
const KEY = 'sbc_' + 'benchgateway0123456789abcdefghij'; // bootstrap key: sbc_ + 32 fixed chars
const SIM_KEY = 'sim-bench-key'; // the sim requires it, so the edge's upstream credential is exercised too
// The edge runs as its own process (as in services mode), so its CPU figure is the edge's alone; the account
// service it authenticates against runs beside it on PGlite.
const gatewayEntry = path.resolve(root, env.BENCH_GATEWAY_ENTRY ?? 'dist/apps/gateway/main.js');
const accountEntry = path.resolve(root, 'dist/apps/account/main.js');
const baselineEntry = env.BENCH_BASELINE_ENTRY ? path.resolve(env.BENCH_BASELINE_ENTRY) : undefined;
const forwarderEntry = path.join(root, 'bench/lib/forwarder.mjs');
// The steps an edge can be started without (SBC_BENCH_STEPS_OFF; the gateway refuses any other name).
const STEPS = ['metrics', 'record', 'admit', 'scans'];
const steps = directOnly || env.BENCH_STEPS === '0' ? [] : list(env.BENCH_STEPS, STEPS);
const unknownSteps = steps.filter((step) => !STEPS.includes(step));
if (unknownSteps.length > 0) {
  console.error(`BENCH_STEPS: no step ${unknownSteps.join(', ')}; the steps are ${STEPS.join(', ')}`);
  process.exit(1);
}
const STEP_CASES = ['chat', 'messages'];
// The step edges' full edge: the same bundle with every step, started and run as they are (the step table's header).
const CONTROL = 'control';
const minimalEntry = path.join(root, 'bench/lib/minimal-gateway.mjs');

// Each case: the dialect's path, how it authenticates, the model named direct vs. through the edge.
const CASES = [
  { name: 'chat', dialect: 'chat', stream: false },
  { name: 'chat-stream', dialect: 'chat', stream: true },
  { name: 'messages', dialect: 'messages', stream: false },
  { name: 'messages-stream', dialect: 'messages', stream: true },
  // Response-cache hits: the edge's calls send `x-sbc-cache-ttl`, so after the preflight's miss every call is a
  // hit, answered without the sim; direct and the floor still forward each request to the sim. The edge's CPU
  // per hit against the floor's per forwarded request is what a hit costs.
  { name: 'chat-cached', dialect: 'chat', stream: false, cached: true },
  { name: 'chat-stream-cached', dialect: 'chat', stream: true, cached: true },
  // A 4 KB prompt with no guardrail, and the same through a guardrail of every built-in detector (e-mail, phone,
  // card, IBAN, secret; redact) that the edge's calls add by `x-sbc-guardrails`: what the detectors cost a call.
  { name: 'chat-4k', dialect: 'chat', stream: false, prompt4k: true },
  { name: 'chat-4k-guardrails', dialect: 'chat', stream: false, prompt4k: true, guarded: true },
].filter((c) => list(env.BENCH_CASES, null)?.includes(c.name) ?? true);

/** About 4 KB of ordinary prose with nothing a detector finds, ending with the sim's token count. */
const PROSE_4K = 'The quarterly review covers shipping, support and the roadmap for the next release. '.repeat(49);

function requestSpec(kase, key, model) {
  const prefix = kase.prompt4k ? PROSE_4K : '';
  const text = `${prefix}Benchmark prompt: reply with exactly twenty tokens. sim-tokens:${TOKENS}`;
  const common = { 'content-type': 'application/json' };
  if (kase.dialect === 'chat') {
    return {
      ...kase,
      tokens: TOKENS,
      path: '/v1/chat/completions',
      headers: { ...common, authorization: `Bearer ${key}` },
      body: JSON.stringify({
        model,
        messages: [{ role: 'user', content: text }],
        max_tokens: 256,
        stream: kase.stream,
      }),
    };
  }
  return {
    ...kase,
    tokens: TOKENS,
    path: '/v1/messages',
    headers: { ...common, 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: text }], max_tokens: 256, stream: kase.stream }),
  };
}

/**
 * The edge's request of a cached case: it opts in to the response cache for an hour. A replayed stream carries
 * the reply's text as one delta (the cache keeps the reply, not how the upstream cut it).
 */
function cachedOnEdge(kase, spec) {
  if (!kase.cached) return spec;
  return { ...spec, headers: { ...spec.headers, 'x-sbc-cache-ttl': '3600' }, tokens: kase.stream ? 1 : spec.tokens };
}

/** The guardrail the guarded cases add on the edge (made once the edge is up). */
let benchGuardrail;

function guardedOnEdge(kase, spec) {
  if (!kase.guarded) return spec;
  return { ...spec, headers: { ...spec.headers, 'x-sbc-guardrails': benchGuardrail } };
}

/** A guardrail of every built-in detector on the bootstrap account, through the API. */
async function createBenchGuardrail(origin) {
  const detectors = ['email', 'phone', 'card', 'iban', 'secret'].map((type) => ({ type, action: 'redact' }));
  const answer = await fetch(`${origin}/v1/guardrails`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'detectors', name: 'bench built-ins', detectors }),
  });
  if (answer.status !== 201) throw new Error(`creating the bench guardrail: ${answer.status} ${await answer.text()}`);
  const id = (await answer.json()).id;
  // Without Redis the account service's "key changed" message stays in its own process, so this edge knows the new
  // guardrail once its cached entry for the key is read again: wait until a call may name it.
  const deadline = Date.now() + 120_000;
  for (;;) {
    const call = await fetch(`${origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'x-sbc-guardrails': id },
      body: JSON.stringify({ model: 'house', max_tokens: 8, messages: [{ role: 'user', content: 'ready?' }] }),
    });
    const text = await call.text();
    if (call.status === 200) return id;
    if (call.status !== 400 || Date.now() > deadline)
      throw new Error(`calling with the bench guardrail: ${call.status} ${text}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Publishes the bench owner's balance in Redis, as the usage ledger does in services mode (there is no ledger
 * here): an edge enforces a published balance, and serves a busy account's calls from its leases on it with no
 * round trip (docs/leased-limits.md); an unpublished one is reserved per call. A balance no bench run can spend.
 */
async function publishOwnerBalance(origin, redisUrl) {
  const answer = await fetch(`${origin}/v1/keys/whoami`, { headers: { authorization: `Bearer ${KEY}` } });
  if (answer.status !== 200) throw new Error(`reading the bench owner: ${answer.status} ${await answer.text()}`);
  const owner = (await answer.json()).user_id;
  const redis = new Redis(redisUrl);
  try {
    await redis.set(`credits:available:${owner}`, String(1e15), 'PX', 3_600_000);
  } finally {
    await redis.quit();
  }
}

/**
 * Waits for the warning an edge logs at start when it runs without a step: an edge bundle that does not know
 * SBC_BENCH_STEPS_OFF (one built before it) would run every step, and its row would silently read as free.
 */
async function confirmStepOff(edge, step) {
  const deadline = Date.now() + 10_000;
  while (!edge.output.includes('SBC_BENCH_STEPS_OFF')) {
    if (Date.now() > deadline)
      throw new Error(`${edge.name} does not say it runs without ${step}: does this bundle know SBC_BENCH_STEPS_OFF?`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let dataDir;
let interrupted = false;
let redisProxy;
async function cleanup() {
  await stopChildren();
  await redisProxy?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    interrupted = true;
    console.error(`\n${signal}: stopping the sim and the gateway…`);
    await cleanup();
    process.exit(130);
  });
}

async function main() {
  const machine = {
    cores: cpus().length,
    cpu_model: cpus()[0]?.model,
    node: process.version,
    platform: `${process.platform}/${process.arch}`,
    clk_tck: clockTicks(),
  };
  // With BENCH_REDIS_URL the edge keeps its request buckets and budget counters in Redis, as services mode
  // does (one pipeline per priced call); without it, in memory, as embedded mode does.
  const store = env.BENCH_REDIS_URL ? 'redis' : 'memory';
  const settings = {
    quick,
    direct_only: directOnly,
    store,
    requests: Object.fromEntries(concurrencies.map((c) => [c, requestsAt(c)])),
    rounds,
    concurrencies,
    cases: CASES.map((c) => c.name),
    stream_tokens: TOKENS,
    prime_requests: primeRequests,
    prime_concurrency: PRIME_CONCURRENCY,
    baseline_entry: baselineEntry,
    steps_off: steps,
    step_cases: steps.length > 0 ? CASES.filter((c) => STEP_CASES.includes(c.name)).map((c) => c.name) : [],
    step_concurrency: steps.length > 0 ? stepConcurrency : undefined,
  };
  console.log(
    `gateway bench: ${machine.cores} cores, node ${machine.node}; edge store: ${store}; ${rounds} alternating rounds ` +
      `per case; requests per case and target ${JSON.stringify(settings.requests)}`,
  );
  if (machine.cores !== 2)
    console.log(`note: the targets are set for a 2-core machine; this one has ${machine.cores}.`);

  // --- processes -------------------------------------------------------------------------------------------
  const simPort = await freePort();
  const sim = startChild('sim-upstream', path.join(root, 'dist/apps/sim-upstream/main.js'), {
    SIM_PORT: String(simPort),
    SIM_HOST: '127.0.0.1',
    SIM_LATENCY_MS: '0',
    SIM_TOKENS_PER_SECOND: '0',
    SIM_API_KEY: SIM_KEY,
    LOG_LEVEL: 'warn',
  });
  const simOrigin = `http://127.0.0.1:${simPort}`;
  await waitReady(sim, `${simOrigin}/v1/models`, { authorization: `Bearer ${SIM_KEY}` });

  let gateway;
  let account;
  let edgeOrigin;
  let baseline;
  let baselineOrigin;
  let floor;
  let floorOrigin;
  let minimal;
  let minimalOrigin;
  let edgeMemory;
  let edgeMemoryOrigin;
  // step → { child, origin }: the edges without one step each (the step table).
  const stepEdges = new Map();
  if (!directOnly) {
    // The edge's Redis traffic goes through a counting proxy for the team-caps phase.
    if (env.BENCH_REDIS_URL && env.BENCH_TEAM_CAPS !== '0') redisProxy = await startCountingProxy(env.BENCH_REDIS_URL);
    const redisUrl = redisProxy?.url ?? env.BENCH_REDIS_URL;
    const engine = (dialect, model) => [{ dialect, base_url: `${simOrigin}/v1`, api_key: SIM_KEY, model }];
    const gatewayPort = await freePort();
    const [accountGrpcPort, accountHttpPort] = [await freePort(), await freePort()];
    dataDir = mkdtempSync(path.join(tmpdir(), 'sbc-bench-gateway-'));
    account = startChild('account', accountEntry, {
      SBC_DATA_DIR: dataDir,
      SBC_BOOTSTRAP_KEY: KEY,
      ACCOUNT_GRPC_PORT: String(accountGrpcPort),
      ACCOUNT_HTTP_PORT: String(accountHttpPort),
      LOG_LEVEL: 'warn',
    });
    await waitReady(account, `http://127.0.0.1:${accountHttpPort}/readyz`);
    const startEdge = (name, entry, port, nodeArgs, { memory = false, stepOff } = {}) =>
      startChild(
        name,
        entry,
        {
          ACCOUNT_GRPC_TARGET: `127.0.0.1:${accountGrpcPort}`,
          PORT: String(port),
          HOST: '127.0.0.1',
          LOG_LEVEL: 'warn',
          // The per-key bucket (1,200 a minute) would refuse a benchmark's load; it is measured apart.
          RATE_LIMIT_PER_MINUTE: '100000000',
          // No broker here: the edge still encodes every usage event, and sends it nowhere.
          USAGE_EVENTS: 'off',
          ...(redisUrl && !memory ? { REDIS_URL: redisUrl } : {}),
          // Bench only: this edge runs without one step (the gateway takes it only with USAGE_EVENTS=off).
          ...(stepOff ? { SBC_BENCH_STEPS_OFF: stepOff } : {}),
          HOUSE_ENGINES: JSON.stringify({
            house: engine('openai', 'sim-large'),
            'house-omni': engine('anthropic', 'sim-large'),
            'house-fast': engine('openai', 'sim-small'),
          }),
        },
        nodeArgs,
      );
    gateway = startEdge('gateway', gatewayEntry, gatewayPort, nodeArgsOf('BENCH_GATEWAY_NODE_ARGS'));
    edgeOrigin = `http://127.0.0.1:${gatewayPort}`;
    await waitReady(gateway, `${edgeOrigin}/readyz`);
    if (CASES.some((kase) => kase.guarded)) benchGuardrail = await createBenchGuardrail(edgeOrigin);
    if (env.BENCH_REDIS_URL) await publishOwnerBalance(edgeOrigin, env.BENCH_REDIS_URL);
    if (baselineEntry) {
      const baselinePort = await freePort();
      baseline = startEdge('baseline', baselineEntry, baselinePort, nodeArgsOf('BENCH_BASELINE_NODE_ARGS'));
      baselineOrigin = `http://127.0.0.1:${baselinePort}`;
      await waitReady(baseline, `${baselineOrigin}/readyz`);
    }
    const floorPort = await freePort();
    floor = startChild(
      'floor',
      forwarderEntry,
      { FORWARD_PORT: String(floorPort), FORWARD_UPSTREAM: simOrigin },
      nodeArgsOf('BENCH_FLOOR_NODE_ARGS'),
    );
    floorOrigin = `http://127.0.0.1:${floorPort}`;
    await waitReady(floor, `${floorOrigin}/readyz`);
    if (env.BENCH_REDIS_URL && env.BENCH_MEMORY_EDGE !== '0') {
      // The same edge with no REDIS_URL: its limits in memory, as embedded mode keeps them.
      const memoryPort = await freePort();
      edgeMemory = startEdge('edge-memory', gatewayEntry, memoryPort, [], { memory: true });
      edgeMemoryOrigin = `http://127.0.0.1:${memoryPort}`;
      await waitReady(edgeMemory, `${edgeMemoryOrigin}/readyz`);
    }
    if (CASES.some((kase) => STEP_CASES.includes(kase.name))) {
      for (const step of steps.length > 0 ? [CONTROL, ...steps] : []) {
        const port = await freePort();
        const stepOff = step === CONTROL ? undefined : step;
        const child = startEdge(`edge-no-${step}`, gatewayEntry, port, [], { stepOff });
        const origin = `http://127.0.0.1:${port}`;
        await waitReady(child, `${origin}/readyz`);
        if (stepOff) await confirmStepOff(child, step);
        stepEdges.set(step, { child, origin });
      }
    }
    if (env.BENCH_MINIMAL !== '0') {
      const minimalPort = await freePort();
      minimal = startChild(
        'minimal',
        minimalEntry,
        {
          PORT: String(minimalPort),
          MINIMAL_KEY: KEY,
          HOUSE_ENGINES: JSON.stringify({
            house: engine('openai', 'sim-large'),
            'house-omni': engine('anthropic', 'sim-large'),
          }),
        },
        nodeArgsOf('BENCH_MINIMAL_NODE_ARGS'),
      );
      minimalOrigin = `http://127.0.0.1:${minimalPort}`;
      await waitReady(minimal, `${minimalOrigin}/readyz`);
    }
  }

  // --- per case: preflight, warm-up, alternating measured rounds -------------------------------------------
  // `concurrency` undefined (priming): every target the case is measured on at any concurrency.
  const targetsFor = (kase, concurrency) => {
    const direct = requestSpec(kase, SIM_KEY, 'sim-large');
    const targets = [{ name: 'direct', origin: simOrigin, spec: direct }];
    if (directOnly) return targets;
    const viaEdge = guardedOnEdge(
      kase,
      cachedOnEdge(kase, requestSpec(kase, KEY, kase.dialect === 'chat' ? 'house' : 'house-omni')),
    );
    // `front`: the process in front of the sim whose CPU per request is the target's own.
    targets.push({ name: 'floor', origin: floorOrigin, spec: direct, front: floor });
    targets.push({ name: 'edge', origin: edgeOrigin, spec: viaEdge, front: gateway });
    if (baseline) targets.push({ name: 'baseline', origin: baselineOrigin, spec: viaEdge, front: baseline });
    if (edgeMemory) targets.push({ name: 'edge_memory', origin: edgeMemoryOrigin, spec: viaEdge, front: edgeMemory });
    // The accounting floor answers whole replies only (it has no stream relay) and no cached cases.
    if (minimal && !kase.stream && !kase.cached)
      targets.push({ name: 'minimal', origin: minimalOrigin, spec: viaEdge, front: minimal });
    if (STEP_CASES.includes(kase.name) && (concurrency === undefined || concurrency === stepConcurrency))
      for (const [step, edge] of stepEdges)
        targets.push({ name: `step_${step}`, origin: edge.origin, spec: viaEdge, front: edge.child });
    return targets;
  };
  if (primeRequests > 0) {
    const started = performance.now();
    for (const kase of CASES) {
      for (const t of targetsFor(kase)) {
        const pool = openPool(t.origin, PRIME_CONCURRENCY);
        const primed = await runLoad(pool, t.spec, primeRequests, PRIME_CONCURRENCY);
        await pool.close();
        if (primed.errors.size > 0)
          throw new Error(`${t.name} failed while priming ${kase.name}:\n  ${[...primed.errors.keys()][0]}`);
      }
    }
    console.log(
      `  primed: ${primeRequests} requests per case and target at c=${PRIME_CONCURRENCY} ` +
        `in ${((performance.now() - started) / 1000).toFixed(1)} s (not measured)`,
    );
  }
  // Everything else that ran while the rounds were measured: the machine's busy time less the benchmark's own
  // processes. Other work on the two cores inflates every figure, the edge's most (it is the third process).
  const ourCpuMs = () => {
    const bench = process.cpuUsage();
    return (
      cpuMs(sim.child.pid) +
      [gateway, baseline, floor, minimal, edgeMemory, ...[...stepEdges.values()].map((edge) => edge.child)].reduce(
        (sum, front) => sum + (front ? cpuMs(front.child.pid) : 0),
        0,
      ) +
      (account ? cpuMs(account.child.pid) : 0) +
      (bench.user + bench.system) / 1000
    );
  };
  const loadBefore = { machine: machineCpuMs(), ours: ourCpuMs(), at: performance.now() };
  const results = [];
  for (const concurrency of concurrencies) {
    for (const kase of CASES) {
      const targets = targetsFor(kase, concurrency);
      for (const t of targets) {
        t.pool = openPool(t.origin, concurrency);
        t.rounds = [];
        t.cpu = { sim: 0, gateway: t.front ? 0 : undefined };
        // One request first: a wrong status or broken stream stops the bench here, with the answer shown.
        const probe = await runLoad(t.pool, t.spec, 1, 1);
        if (probe.errors.size > 0) {
          const [message] = probe.errors.keys();
          throw new Error(
            `${t.name} failed the preflight for ${kase.name} (POST ${t.origin}${t.spec.path}, ` +
              `model ${JSON.parse(t.spec.body).model}):\n  ${message}`,
          );
        }
        await runLoad(t.pool, t.spec, warmupAt(concurrency), concurrency);
      }
      const total = requestsAt(concurrency);
      for (let r = 0; r < rounds; r += 1) {
        const n = Math.floor(total / rounds) + (r < total % rounds ? 1 : 0);
        for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
          // reopen connections idle since last round
          if (r > 0) await runLoad(t.pool, t.spec, concurrency, concurrency);
          const before = { sim: cpuMs(sim.child.pid), front: t.front && cpuMs(t.front.child.pid) };
          t.rounds.push(await runLoad(t.pool, t.spec, n, concurrency));
          t.cpu.sim += cpuMs(sim.child.pid) - before.sim;
          if (t.front) t.cpu.gateway += cpuMs(t.front.child.pid) - before.front;
          assertAlive(sim);
          if (t.front) assertAlive(t.front);
        }
      }
      const row = { case: kase.name, dialect: kase.dialect, stream: kase.stream, concurrency };
      for (const t of targets) {
        await t.pool.close();
        row[t.name] = summarize(t.rounds, t.cpu);
      }
      if (row.edge)
        row.overhead = overhead(row.direct, row.edge, row.floor, row.baseline, row.minimal, {
          store,
          memory: store === 'memory' ? row.edge : row.edge_memory,
          redis: store === 'redis' ? row.edge : undefined,
        });
      if (row.edge && targets.some((t) => t.name.startsWith('step_'))) row.steps = stepCosts(row, steps, CONTROL);
      results.push(row);
      const e = row.edge;
      console.log(
        `  ${kase.name} c=${concurrency}: direct ${row.direct.rps} rps p50 ${row.direct.p50_ms} ms` +
          (e ? ` | edge ${e.rps} rps p50 ${e.p50_ms} ms, gateway cpu ${e.gateway_cpu_ms_per_req} ms/req` : '') +
          (row.floor ? ` | floor cpu ${row.floor.gateway_cpu_ms_per_req}` : '') +
          (row.baseline ? ` | baseline cpu ${row.baseline.gateway_cpu_ms_per_req}` : '') +
          (row.edge_memory ? ` | edge-memory cpu ${row.edge_memory.gateway_cpu_ms_per_req}` : '') +
          (row.minimal ? ` | acct floor cpu ${row.minimal.gateway_cpu_ms_per_req}` : '') +
          (row.steps
            ? ` | control ${row[`step_${CONTROL}`]?.gateway_cpu_ms_per_req ?? '–'}, without ` +
              row.steps.map((s) => `${s.step} ${s.off_cpu_ms_per_req ?? '–'}`).join(', ')
            : ''),
      );
    }
  }

  const teamCaps =
    redisProxy && CASES.some((c) => c.name === 'chat')
      ? await measureTeamCaps({
          edgeOrigin,
          gateway,
          ownerKey: KEY,
          proxy: redisProxy,
          requestSpec,
          kase: CASES.find((c) => c.name === 'chat'),
          requests: Math.max(200, requestsAt(10) / 2),
          rounds,
        })
      : undefined;

  const machineAfter = machineCpuMs();
  const seconds = (performance.now() - loadBefore.at) / 1000;
  const otherMs = Math.max(0, machineAfter.busy - loadBefore.machine.busy - (ourCpuMs() - loadBefore.ours));
  const machineLoad = {
    seconds: Number(seconds.toFixed(1)),
    other_processes_cores: Number((otherMs / 1000 / seconds).toFixed(3)),
    steal_cores: Number(((machineAfter.steal - loadBefore.machine.steal) / 1000 / seconds).toFixed(3)),
  };

  // --- report ----------------------------------------------------------------------------------------------
  const checks = directOnly ? [] : checkTargets(results, store);
  printReport(results, checks, directOnly, store);
  console.log(
    `\nWhile measuring (${machineLoad.seconds} s): other processes used ${machineLoad.other_processes_cores} of a ` +
      `core on average, hypervisor steal ${machineLoad.steal_cores}.`,
  );
  if (machineLoad.other_processes_cores + machineLoad.steal_cores > 0.1) {
    console.log(
      "WARNING: the machine was not quiet; every figure above is inflated, the edge's most. Re-run on an idle machine.",
    );
  }
  const failedRequests = results.reduce(
    (n, r) =>
      n +
      ['direct', 'floor', 'edge', 'baseline', 'minimal', 'edge_memory', ...STEPS.map((step) => `step_${step}`)].reduce(
        (sum, t) => sum + (r[t]?.errors ?? 0),
        0,
      ),
    0,
  );
  const report = {
    bench: 'gateway',
    at: new Date().toISOString(),
    machine,
    settings,
    machine_load: machineLoad,
    results,
    step_table: results
      .filter((r) => r.steps)
      .map((r) => ({ case: r.case, concurrency: r.concurrency, store, steps: r.steps })),
    team_caps: teamCaps,
    targets: checks,
    failed_requests: failedRequests,
  };
  const json = JSON.stringify(report, null, 2);
  if (env.BENCH_OUT) {
    const file = env.BENCH_OUT.endsWith('.json')
      ? path.resolve(env.BENCH_OUT)
      : path.join(root, 'bench/results', `gateway-${report.at.replace(/[:.]/g, '-')}.json`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, json + '\n');
    console.log(`\nJSON written to ${file}`);
  } else {
    console.log('\n' + json);
  }
  if (failedRequests > 0) {
    console.error(`\nFAILED: ${failedRequests} request(s) did not get a good answer (see "!" lines above).`);
    return 1;
  }
  if (flag('BENCH_ENFORCE') && checks.some((c) => !c.pass)) {
    console.error('\nFAILED: targets missed (BENCH_ENFORCE=1).');
    return 2;
  }
  return 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  if (!interrupted) console.error(`\ngateway bench FAILED: ${error.message}`);
} finally {
  if (!interrupted) await cleanup();
}
if (!interrupted) process.exit(code);
