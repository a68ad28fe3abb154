// Routing under a provider's bad day: one house model served by two simulators in order (HOUSE_ENGINES
// `house`: [flaky, steady]), under steady closed-loop load, while the first one misbehaves on cue.
//
//   npm run bench:routing                    builds gateway, account and sim-upstream first
//   BENCH_QUICK=1 npm run bench:routing      short phases, a smoke run
//
// Phases, back to back on the same warmed edge:
//   healthy   both targets healthy: the reference for added latency
//   flaky     the first target fails 30 % of its calls (429 with retry-after: 1, and 503, half each)
//   outage    the first target drops every connection for 10 s ...
//   recovery  ... then serves again (the plan's failure rate is 0 after down_for_ms)
//
// Per phase it reports what callers saw (success, p50/p99 and what the failures added to them, attempts per call
// from the reply's x-sbc-attempts) and, from the flaky simulator's call log (GET /__faults), the calls that reached
// it while it was cooling: the log is replayed through @sbc/route-health's rules to find the cooldown windows.
// The goals: ≥ 99.9 % success, p99 added ≤ 50 ms outside the outage, ≤ 1 half-open call per cooldown window
// (one edge here).
//
// It needs the routing policy in the edge (x-sbc-attempts on every reply) and stops at the first reply without it.
//
// Environment:
//   BENCH_CONCURRENCY=50   BENCH_PHASE_S=15 (healthy, flaky and recovery; the outage is BENCH_OUTAGE_S=10)
//   BENCH_SIM_LATENCY_MS=0 time to first token of both simulators   BENCH_STREAM=1  streamed chat instead of whole
//   BENCH_COOLING_SLACK_MS     calls arriving this soon after a window opened may have been sent before the edge
//                              knew (not counted); default the phase's p99 (or the healthy one's, if higher): the
//                              most a call's two transits (failure back to the edge, next call out) take here
//   BENCH_REDIS_URL=redis://…  the edge gets REDIS_URL (shared cooldowns, when the edge wires them)
//   BENCH_OUT=1 / file.json    write the JSON report;   BENCH_ENFORCE=1  exit 2 when a goal is missed
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Pool, request } from 'undici';
import { assertAlive, freePort, startChild, stopChildren, waitReady } from './lib/procs.mjs';
import { table } from './lib/report.mjs';
import { callsWhileCooling, summarizeCalls } from './lib/routing-figures.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const flag = (name) => env[name] === '1' || env[name] === 'true';
const quick = flag('BENCH_QUICK');
const concurrency = Number(env.BENCH_CONCURRENCY ?? 50);
const phaseS = Number(env.BENCH_PHASE_S ?? (quick ? 4 : 15));
const outageS = Number(env.BENCH_OUTAGE_S ?? (quick ? 3 : 10));
const stream = flag('BENCH_STREAM');
const RETRY_AFTER_S = 1;
const KEY = 'sbc_' + 'benchrouting0123456789abcdefghij'; // bootstrap key: sbc_ + 32 fixed chars
const SIM_KEY = 'sim-bench-key';
const GOALS = { success_pct: 99.9, p99_added_ms: 50, half_open_per_window: 1 };

let dataDir;
let interrupted = false;
async function cleanup() {
  await stopChildren();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    interrupted = true;
    await cleanup();
    process.exit(130);
  });
}

/** @sbc/route-health from its sources, for the replay of the cooldown rules. */
async function loadRouteHealth() {
  const outfile = path.join(root, 'dist/bench/route-health/index.js');
  await build({
    entryPoints: [path.join(root, 'libs/route-health/src/index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    tsconfig: path.join(root, 'tsconfig.base.json'),
    logLevel: 'warning',
  });
  return createRequire(import.meta.url)(outfile);
}

async function startSim(name) {
  const port = await freePort();
  const sim = startChild(name, path.join(root, 'dist/apps/sim-upstream/main.js'), {
    SIM_PORT: String(port),
    SIM_HOST: '127.0.0.1',
    SIM_LATENCY_MS: env.BENCH_SIM_LATENCY_MS ?? '0',
    SIM_TOKENS_PER_SECOND: '0',
    SIM_API_KEY: SIM_KEY,
    SIM_FAULTS: 'true',
    LOG_LEVEL: 'warn',
  });
  sim.origin = `http://127.0.0.1:${port}`;
  await waitReady(sim, `${sim.origin}/v1/models`, { authorization: `Bearer ${SIM_KEY}` });
  return sim;
}

/** POST (a plan), DELETE or GET the simulator's /__faults; throws on anything but 200. */
async function faults(sim, method, plan) {
  const res = await request(`${sim.origin}/__faults`, {
    method,
    headers: plan ? { 'content-type': 'application/json' } : {},
    body: plan ? JSON.stringify(plan) : undefined,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${method} ${sim.name} /__faults answered ${res.statusCode}: ${text}`);
  return JSON.parse(text);
}

const requestBody = JSON.stringify({
  model: 'house',
  messages: [{ role: 'user', content: 'Routing bench: a short reply. sim-tokens:20' }],
  max_tokens: 64,
  stream,
});

/** One call through the edge: when it was sent, how long it took, whether the answer was whole, its attempts. */
async function call(pool) {
  const sentAt = Date.now();
  const t0 = performance.now();
  try {
    const res = await pool.request({
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: requestBody,
    });
    const text = await res.body.text();
    const header = res.headers['x-sbc-attempts'];
    const attempts = header === undefined ? undefined : Number(header);
    const whole = stream ? text.includes('data: [DONE]') : text.includes('"choices"');
    const ok = res.statusCode === 200 && whole;
    const error = ok ? undefined : `HTTP ${res.statusCode}: ${text.slice(0, 160)}`;
    return { sentAt, ms: performance.now() - t0, ok, attempts, error };
  } catch (error) {
    return {
      sentAt,
      ms: performance.now() - t0,
      ok: false,
      attempts: undefined,
      error: `${error.code ?? ''} ${error.message}`,
    };
  }
}

/** Closed-loop load for `seconds`: `concurrency` callers, each sending its next call when the last one ends. */
async function loadFor(pool, seconds) {
  const samples = [];
  const end = performance.now() + seconds * 1000;
  const caller = async () => {
    while (performance.now() < end) samples.push(await call(pool));
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  return samples;
}

async function main() {
  console.log(
    `routing bench: c=${concurrency}, phases ${phaseS} s (outage ${outageS} s), ${stream ? 'streamed' : 'whole'} ` +
      'chat completions to `house` = [flaky sim, steady sim]',
  );
  const routeHealth = await loadRouteHealth();
  const [flaky, steady] = [await startSim('sim-flaky'), await startSim('sim-steady')];

  const [accountGrpcPort, accountHttpPort, gatewayPort] = [await freePort(), await freePort(), await freePort()];
  dataDir = mkdtempSync(path.join(tmpdir(), 'sbc-bench-routing-'));
  const account = startChild('account', path.join(root, 'dist/apps/account/main.js'), {
    SBC_DATA_DIR: dataDir,
    SBC_BOOTSTRAP_KEY: KEY,
    ACCOUNT_GRPC_PORT: String(accountGrpcPort),
    ACCOUNT_HTTP_PORT: String(accountHttpPort),
    LOG_LEVEL: 'warn',
  });
  await waitReady(account, `http://127.0.0.1:${accountHttpPort}/readyz`);
  const engine = (sim) => ({ dialect: 'openai', base_url: `${sim.origin}/v1`, api_key: SIM_KEY, model: 'sim-large' });
  const gateway = startChild('gateway', path.join(root, 'dist/apps/gateway/main.js'), {
    ACCOUNT_GRPC_TARGET: `127.0.0.1:${accountGrpcPort}`,
    PORT: String(gatewayPort),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '100000000',
    USAGE_EVENTS: 'off',
    ...(env.BENCH_REDIS_URL ? { REDIS_URL: env.BENCH_REDIS_URL } : {}),
    HOUSE_ENGINES: JSON.stringify({ house: [engine(flaky), engine(steady)] }),
  });
  const edgeOrigin = `http://127.0.0.1:${gatewayPort}`;
  await waitReady(gateway, `${edgeOrigin}/readyz`);

  const pool = new Pool(edgeOrigin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const preflight = await call(pool);
  if (!preflight.ok) throw new Error(`the edge failed the preflight call: ${preflight.error}`);
  if (preflight.attempts === undefined || !Number.isFinite(preflight.attempts)) {
    throw new Error(
      'the edge answered without a numeric x-sbc-attempts header: it has no routing policy yet ' +
        '(merge branch `routing`), so attempts and cooldowns cannot be measured',
    );
  }
  await loadFor(pool, quick ? 1 : 3); // warm-up, not measured

  const phases = [];
  const measure = async (name, seconds) => {
    const samples = await loadFor(pool, seconds);
    for (const child of [flaky, steady, gateway, account]) assertAlive(child);
    const missing = samples.filter((s) => s.ok && s.attempts === undefined).length;
    if (missing > 0) throw new Error(`${missing} good replies in phase ${name} had no x-sbc-attempts header`);
    phases.push({ name, samples });
    return samples;
  };
  await faults(flaky, 'DELETE');
  await measure('healthy', phaseS);

  await faults(flaky, 'POST', { failure_rate: 0.3, failures: { 429: 1, 503: 1 }, retry_after_s: RETRY_AFTER_S });
  await measure('flaky 30 %', phaseS);
  const flakyLog = await faults(flaky, 'GET');

  const outage = await faults(flaky, 'POST', { down_for_ms: outageS * 1000, down_with: 'reset' });
  const outageSamples = await measure('outage + recovery', outageS + phaseS);
  const outageEnd = outage.active_since_ms + outageS * 1000;
  const outageLog = await faults(flaky, 'GET');
  await faults(flaky, 'DELETE');
  await pool.close();

  // --- figures ---------------------------------------------------------------------------------------------
  const healthy = summarizeCalls(phases[0].samples);
  // A call that reaches the flaky target this soon into a window may have left the edge before the edge heard of
  // the failure: the slowest calls of the phase (its p99, or the healthy one's if higher) bound both transits.
  const slackFor = (calls) =>
    Number(env.BENCH_COOLING_SLACK_MS ?? Math.ceil(Math.max(25, healthy.p99_ms ?? 0, calls.p99_ms ?? 0)));
  const withReplay = (calls, log) => {
    const slackMs = slackFor(calls);
    const replayed = callsWhileCooling(log.calls_while_active, {
      health: routeHealth.memoryTargetHealth(),
      retryAfterMs: RETRY_AFTER_S * 1000,
      slackMs,
    });
    return { ...calls, flaky: { log, slack_ms: slackMs, ...replayed } };
  };
  const rows = [
    { phase: 'healthy', ...healthy },
    { phase: 'flaky 30 %', ...withReplay(summarizeCalls(phases[1].samples), flakyLog) },
    {
      phase: `outage ${outageS} s`,
      ...withReplay(summarizeCalls(outageSamples.filter((s) => s.sentAt < outageEnd)), outageLog),
    },
    { phase: 'recovery', ...summarizeCalls(outageSamples.filter((s) => s.sentAt >= outageEnd)) },
  ].map((row) => ({
    ...row,
    p50_added_ms: row.p50_ms === null ? null : Number((row.p50_ms - healthy.p50_ms).toFixed(1)),
    p99_added_ms: row.p99_ms === null ? null : Number((row.p99_ms - healthy.p99_ms).toFixed(1)),
  }));

  console.log(
    '\n' +
      table(rows, [
        ['phase', (r) => r.phase],
        ['calls', (r) => r.calls],
        ['success %', (r) => r.success_pct],
        ['p50 ms', (r) => r.p50_ms],
        ['p99 ms', (r) => r.p99_ms],
        ['+p50', (r) => r.p50_added_ms],
        ['+p99', (r) => r.p99_added_ms],
        ['attempts/call', (r) => r.attempts_mean],
        ['max', (r) => r.attempts_max],
        ['flaky calls', (r) => r.flaky?.log.counts.calls],
        ['failed', (r) => r.flaky?.log.counts.failed],
        ['windows', (r) => r.flaky?.windows],
        ['slack ms', (r) => r.flaky?.slack_ms],
        ['while cooling', (r) => r.flaky?.calls_while_cooling],
        ['max/window', (r) => r.flaky?.max_calls_per_window],
      ]),
  );
  console.log(
    '\n"while cooling": calls the flaky target received more than "slack ms" into a cooldown window of the replayed ' +
      'rules (earlier ones may have left the edge before it heard of the failure).',
  );
  for (const row of rows) {
    for (const [error, count] of Object.entries(row.errors)) console.log(`  ! ${row.phase}: ${count} × ${error}`);
  }

  const all = rows.reduce((acc, r) => ({ calls: acc.calls + r.calls, ok: acc.ok + r.succeeded }), { calls: 0, ok: 0 });
  const successPct = (100 * all.ok) / all.calls;
  const outsideOutage = rows.filter((r) => r.phase === 'flaky 30 %' || r.phase === 'recovery');
  const worstP99Added = Math.max(...outsideOutage.map((r) => r.p99_added_ms ?? Infinity));
  const worstPerWindow = Math.max(...rows.map((r) => r.flaky?.max_calls_per_window ?? 0));
  const goals = [
    { goal: `callers' success ≥ ${GOALS.success_pct} %`, value: successPct.toFixed(3), pass: successPct >= 99.9 },
    {
      goal: `p99 added ≤ ${GOALS.p99_added_ms} ms outside the outage`,
      value: worstP99Added,
      pass: worstP99Added <= GOALS.p99_added_ms,
    },
    {
      goal: `≤ ${GOALS.half_open_per_window} call per cooldown window reaches the cooling target (one edge)`,
      value: worstPerWindow,
      pass: worstPerWindow <= GOALS.half_open_per_window,
    },
  ];
  console.log(
    '\n' +
      table(goals, [
        ['goal', (g) => g.goal],
        ['value', (g) => g.value],
        ['', (g) => (g.pass ? 'PASS' : 'MISS')],
      ]),
  );

  const report = {
    bench: 'routing',
    at: new Date().toISOString(),
    settings: {
      concurrency,
      phase_s: phaseS,
      outage_s: outageS,
      stream,
      redis: !!env.BENCH_REDIS_URL,
    },
    phases: rows.map(({ flaky: f, ...row }) => ({
      ...row,
      flaky_target: f && {
        counts: f.log.counts,
        windows: f.windows,
        slack_ms: f.slack_ms,
        cooling_ms: f.cooling_ms,
        calls_while_cooling: f.calls_while_cooling,
        max_calls_per_window: f.max_calls_per_window,
        ms_into_window: f.ms_into_window,
      },
    })),
    goals,
  };
  if (env.BENCH_OUT) {
    const file = env.BENCH_OUT.endsWith('.json')
      ? path.resolve(env.BENCH_OUT)
      : path.join(root, 'bench/results', `routing-${report.at.replace(/[:.]/g, '-')}.json`);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, JSON.stringify(report, null, 2) + '\n');
    console.log(`\nJSON written to ${file}`);
  }
  if (flag('BENCH_ENFORCE') && goals.some((g) => !g.pass)) {
    console.error('\nFAILED: goals missed (BENCH_ENFORCE=1).');
    return 2;
  }
  return 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  if (!interrupted) console.error(`\nrouting bench FAILED: ${error.message}`);
} finally {
  if (!interrupted) await cleanup();
}
if (!interrupted) process.exit(code);
