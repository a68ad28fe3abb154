// Figures and printing for bench/gateway.mjs: per-target summaries, the edge's overhead, the targets.
import { percentile } from './load.mjs';

const round = (value, digits = 3) =>
  value === null || value === undefined || Number.isNaN(value) ? null : Number(value.toFixed(digits));

/**
 * Merges the rounds of one target into its figures:
 * - rps: good responses per second of measured wall time (the rounds' durations summed, warm-ups excluded);
 * - p50_ms / p99_ms: total time per request, start → body fully read;
 * - ttft_p50_ms / ttft_p99_ms: start → first generated token (streaming) or first body byte (non-streaming);
 * - cpu_ms_per_req: CPU (user+system) the process used during the measured rounds ÷ requests sent, for the
 *   sim and (edge runs) the gateway. Idle work (timers, background flushes) in that window counts too.
 */
export function summarize(rounds, cpu) {
  const total = rounds.flatMap((r) => r.total).sort((a, b) => a - b);
  const ttft = rounds.flatMap((r) => r.ttft).sort((a, b) => a - b);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  const errors = new Map();
  for (const r of rounds) for (const [message, n] of r.errors) errors.set(message, (errors.get(message) ?? 0) + n);
  const sent = total.length + [...errors.values()].reduce((a, b) => a + b, 0);
  const perRequest = (ms) => (ms === undefined ? null : round(ms / Math.max(1, sent), 4));
  return {
    requests: sent,
    ok: total.length,
    errors: sent - total.length,
    error_samples: Object.fromEntries([...errors].slice(0, 5)),
    seconds: round(seconds),
    rps: round(total.length / seconds, 1),
    p50_ms: percentile(total, 50),
    p99_ms: percentile(total, 99),
    ttft_p50_ms: percentile(ttft, 50),
    ttft_p99_ms: percentile(ttft, 99),
    sim_cpu_ms_per_req: perRequest(cpu.sim),
    gateway_cpu_ms_per_req: perRequest(cpu.gateway),
  };
}

/**
 * What the edge adds over calling the sim directly (positive = slower through the edge):
 * added p50/p99 of total time, added TTFT p50, and edge RPS ÷ direct RPS (1.0 = no throughput lost).
 */
export function overhead(direct, edge, floor, baseline, minimal, modes = {}) {
  // Against the accounting floor (the least a gateway that authenticates, routes and counts must do): the
  // yardstick of issue 54, for the edge in each mode this run measured.
  const timesAccounting = (target) =>
    target?.gateway_cpu_ms_per_req && minimal?.gateway_cpu_ms_per_req
      ? round(target.gateway_cpu_ms_per_req / minimal.gateway_cpu_ms_per_req)
      : null;
  const timesFloor = (target) =>
    target && floor?.gateway_cpu_ms_per_req
      ? round(target.gateway_cpu_ms_per_req / floor.gateway_cpu_ms_per_req)
      : null;
  const diff = (key) => (direct[key] === null || edge[key] === null ? null : round(edge[key] - direct[key]));
  return {
    added_p50_ms: diff('p50_ms'),
    added_p99_ms: diff('p99_ms'),
    added_ttft_p50_ms: diff('ttft_p50_ms'),
    rps_ratio: direct.rps ? round(edge.rps / direct.rps) : null,
    gateway_cpu_ms_per_req: edge.gateway_cpu_ms_per_req,
    sim_cpu_ms_per_req_direct: direct.sim_cpu_ms_per_req,
    floor_cpu_ms_per_req: floor?.gateway_cpu_ms_per_req ?? null,
    edge_cpu_x_floor: timesFloor(edge),
    baseline_cpu_ms_per_req: baseline?.gateway_cpu_ms_per_req ?? null,
    baseline_cpu_x_floor: timesFloor(baseline),
    minimal_cpu_ms_per_req: minimal?.gateway_cpu_ms_per_req ?? null,
    minimal_cpu_x_floor: timesFloor(minimal),
    memory_cpu_ms_per_req: modes.memory?.gateway_cpu_ms_per_req ?? null,
    memory_x_accounting: timesAccounting(modes.memory),
    redis_cpu_ms_per_req: modes.redis?.gateway_cpu_ms_per_req ?? null,
    redis_x_accounting: timesAccounting(modes.redis),
    redis_x_memory:
      modes.memory?.gateway_cpu_ms_per_req && modes.redis?.gateway_cpu_ms_per_req
        ? round(modes.redis.gateway_cpu_ms_per_req / modes.memory.gateway_cpu_ms_per_req)
        : null,
  };
}

/**
 * The step table's rows for one case: per step, the CPU per call of the edge started without it (target
 * `step_<step>`), the full edge's in the same rounds, the step's share of the full edge's CPU and its cost in µs
 * per call (full − without). A step whose edge failed its requests has no figures.
 */
export function stepCosts(row, steps, control) {
  const full = row[`step_${control}`]?.gateway_cpu_ms_per_req ?? null;
  return steps.map((step) => {
    const off = row[`step_${step}`]?.gateway_cpu_ms_per_req ?? null;
    const measured = full !== null && off !== null && full > 0;
    return {
      step,
      off_cpu_ms_per_req: off,
      full_cpu_ms_per_req: full,
      share: measured ? round((full - off) / full) : null,
      cost_us_per_call: measured ? round((full - off) * 1000, 1) : null,
    };
  });
}

/** What each step removes when switched off (apps/gateway/src/bench-steps.ts says exactly). */
const STEP_NAMES = {
  metrics: 'request and model-call metrics, GenAI span and histograms',
  record: 'budget settle, key tpm correction, usage event',
  admit: 'credential lookup, request bucket, budget reservation',
  scans: 'hostile-input scans, request id, hang-up listeners',
};

/**
 * Targets (2-core machine, zero-latency upstream); `rows` are { case, stream, concurrency, overhead }. `store`
 * ('memory' | 'redis') picks the CPU-against-the-floor limit: the redesign's goal of 1.3× in memory, 1.6× with
 * Redis.
 */
export function checkTargets(rows, store = 'memory') {
  const floorLimit = store === 'redis' ? 1.6 : 1.3;
  const checks = [];
  const add = (name, row, value, limit, ok) =>
    checks.push({
      target: name,
      case: row.case,
      concurrency: row.concurrency,
      value,
      limit,
      pass: value !== null && ok(value, limit),
    });
  const le = (v, l) => v <= l;
  for (const row of rows) {
    const o = row.overhead;
    if (!row.stream && row.concurrency === 10) {
      add('added p50 ≤ 1 ms (non-streaming, c=10)', row, o.added_p50_ms, 1, le);
      add('added p99 ≤ 3 ms (non-streaming, c=10)', row, o.added_p99_ms, 3, le);
    }
    if (row.concurrency === 50) add('edge RPS ≥ 15% of direct (c=50)', row, o.rps_ratio, 0.15, (v, l) => v >= l);
    if (row.stream && row.concurrency === 1)
      add('added TTFT p50 ≤ 1 ms (streaming, c=1)', row, o.added_ttft_p50_ms, 1, le);
    // CPU per request is judged under load (c ≥ 10). At c=1 every process pays a wake-up per request (the
    // simulator alone shows ~0.3–0.5 ms there), so that row is reported but not held to the target.
    if (!row.stream && row.concurrency >= 10)
      add('gateway CPU ≤ 0.25 ms/request (non-streaming, c ≥ 10)', row, o.gateway_cpu_ms_per_req, 0.25, le);
    if (!row.stream && row.concurrency === 10 && o.edge_cpu_x_floor !== null)
      add(`edge CPU ≤ ${floorLimit}× floor (non-streaming, c=10, ${store})`, row, o.edge_cpu_x_floor, floorLimit, le);
    // Issue 54's goals, against the accounting floor: memory mode at most 2× it, Redis mode at most 1.15× memory.
    if (!row.stream && row.concurrency === 10 && o.memory_x_accounting != null)
      add('memory edge CPU ≤ 2× accounting floor (non-streaming, c=10)', row, o.memory_x_accounting, 2, le);
    if (!row.stream && row.concurrency === 10 && o.redis_x_memory != null)
      add('Redis edge CPU ≤ 1.15× memory edge (non-streaming, c=10)', row, o.redis_x_memory, 1.15, le);
  }
  return checks.sort((a, b) => a.target.localeCompare(b.target)); // stable: cases keep their order
}

/** A plain left/right-aligned text table: `columns` are [header, row => value]. */
export function table(rows, columns) {
  const cells = [columns.map(([h]) => h), ...rows.map((row) => columns.map(([, get]) => String(get(row) ?? '–')))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  const line = (values) => values.map((v, i) => (i < 3 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  return [line(cells[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function printReport(results, checks, directOnly, store = 'memory') {
  const stepTargets = Object.keys(STEP_NAMES).map((step) => `step_${step}`);
  const perTarget = results.flatMap((r) =>
    ['direct', 'floor', 'edge', 'edge_memory', 'baseline', 'minimal', ...stepTargets]
      .filter((t) => r[t])
      .map((t) => ({ ...r[t], case: r.case, c: r.concurrency, target: t })),
  );
  console.log('\nPer target (times in ms; cpu = ms of process CPU per request):\n');
  console.log(
    table(perTarget, [
      ['case', (r) => r.case],
      ['c', (r) => r.c],
      ['target', (r) => r.target],
      ['requests', (r) => r.requests],
      ['rps', (r) => r.rps],
      ['p50', (r) => r.p50_ms],
      ['p99', (r) => r.p99_ms],
      ['ttft p50', (r) => r.ttft_p50_ms],
      ['ttft p99', (r) => r.ttft_p99_ms],
      ['sim cpu', (r) => r.sim_cpu_ms_per_req],
      ['gw cpu', (r) => r.gateway_cpu_ms_per_req],
      ['errors', (r) => r.errors],
    ]),
  );
  for (const r of perTarget)
    for (const [message, n] of Object.entries(r.error_samples))
      console.log(`  ! ${r.case} c=${r.c} ${r.target}: ${n}× ${message}`);
  if (directOnly) return console.log('\nBENCH_DIRECT_ONLY=1: edge skipped, no overhead figures or targets.');

  console.log('\nEdge overhead (edge − direct; rps ratio = edge ÷ direct; cpu in ms per request):\n');
  console.log(
    table(results, [
      ['case', (r) => r.case],
      ['c', (r) => r.concurrency],
      ['', () => ''],
      ['+p50', (r) => r.overhead.added_p50_ms],
      ['+p99', (r) => r.overhead.added_p99_ms],
      ['+ttft p50', (r) => r.overhead.added_ttft_p50_ms],
      ['rps ratio', (r) => r.overhead.rps_ratio],
      ['gateway cpu', (r) => r.overhead.gateway_cpu_ms_per_req],
      ['sim cpu (direct)', (r) => r.overhead.sim_cpu_ms_per_req_direct],
    ]),
  );
  console.log("\nCPU per request against the floor (a bare Node forwarder; × floor = that process ÷ the floor's):\n");
  console.log(
    table(results, [
      ['case', (r) => r.case],
      ['c', (r) => r.concurrency],
      ['floor cpu', (r) => r.overhead.floor_cpu_ms_per_req],
      ['edge cpu', (r) => r.overhead.gateway_cpu_ms_per_req],
      ['edge × floor', (r) => r.overhead.edge_cpu_x_floor],
      ['baseline cpu', (r) => r.overhead.baseline_cpu_ms_per_req],
      ['baseline × floor', (r) => r.overhead.baseline_cpu_x_floor],
      ['minimal cpu', (r) => r.overhead.minimal_cpu_ms_per_req],
      ['minimal × floor', (r) => r.overhead.minimal_cpu_x_floor],
    ]),
  );
  const accounted = results.filter(
    (r) => r.overhead.memory_x_accounting != null || r.overhead.redis_x_accounting != null,
  );
  if (accounted.length > 0) {
    console.log(
      '\nCPU per call against the accounting floor (bench/lib/minimal-gateway.mjs; × acct = edge ÷ accounting floor):\n',
    );
    console.log(
      table(accounted, [
        ['case', (r) => r.case],
        ['c', (r) => r.concurrency],
        ['acct floor cpu', (r) => r.overhead.minimal_cpu_ms_per_req],
        ['memory cpu', (r) => r.overhead.memory_cpu_ms_per_req],
        ['memory × acct', (r) => r.overhead.memory_x_accounting],
        ['redis cpu', (r) => r.overhead.redis_cpu_ms_per_req],
        ['redis × acct', (r) => r.overhead.redis_x_accounting],
        ['redis ÷ memory', (r) => r.overhead.redis_x_memory],
      ]),
    );
    const headline = accounted.find((r) => r.case === 'chat' && r.concurrency === 10) ?? accounted[0];
    const o = headline.overhead;
    console.log(
      `\nHeadline (${headline.case}, c=${headline.concurrency}): edge CPU per call = ` +
        [
          o.memory_x_accounting != null ? `${o.memory_x_accounting}× the accounting floor in memory mode` : null,
          o.redis_x_accounting != null ? `${o.redis_x_accounting}× in Redis mode` : null,
          o.redis_x_memory != null ? `Redis ÷ memory ${o.redis_x_memory}` : null,
        ]
          .filter(Boolean)
          .join(', '),
    );
  }
  const stepped = results.filter((r) => r.steps);
  if (stepped.length > 0) {
    console.log(
      `\nStep table, ${store} mode (edge cpu without one step against the control edge, the same bundle with every ` +
        "step, in the same rounds, ms per call; share = that step's part of the control's CPU; cost = control − " +
        'without, µs per call):\n',
    );
    console.log(
      table(
        stepped.flatMap((r) => r.steps.map((s) => ({ ...s, case: r.case, c: r.concurrency }))),
        [
          ['case', (s) => s.case],
          ['c', (s) => s.c],
          ['step off', (s) => `${s.step} (${STEP_NAMES[s.step]})`],
          ['without it', (s) => s.off_cpu_ms_per_req],
          ['control', (s) => s.full_cpu_ms_per_req],
          ['share', (s) => (s.share === null ? null : `${(s.share * 100).toFixed(1)}%`)],
          ['µs per call', (s) => s.cost_us_per_call],
        ],
      ),
    );
    // Two copies of one bundle in one run: what a step's row cannot tell from chance.
    for (const r of stepped) {
      const control = r.steps[0]?.full_cpu_ms_per_req;
      const edge = r.edge?.gateway_cpu_ms_per_req;
      if (control && edge)
        console.log(
          `  ${r.case}: control ${control} ms against the headline edge's ${edge} (the same bundle): ` +
            `${(((control - edge) / edge) * 100).toFixed(1)}%`,
        );
    }
  }
  console.log('\nTargets (2-core machine, zero-latency upstream):');
  for (const c of checks)
    console.log(
      `  ${c.pass ? 'PASS' : 'FAIL'}  ${c.target.padEnd(46)} ${c.case.padEnd(16)} ` +
        `c=${String(c.concurrency).padEnd(3)} ${c.value ?? 'n/a'} (limit ${c.limit})`,
    );
}
