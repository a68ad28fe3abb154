// Load generator for bench/streams.mjs, in its own process: opens `streams` slow streams through one target
// (ramped, so the listen backlog is not the thing measured), reports on stdout when all are open, probes
// the target with a small call every `probeEveryMs` while they run, and prints its result as one JSON line.
// Bounded: it gives up after `deadlineMs` whatever state the streams are in.
//
//   node bench/lib/streams-load.mjs '<json settings>'
import { Agent } from 'undici';

const settings = JSON.parse(process.argv[2]);
const { origin, stream, probe, streams, rampBatch, rampEveryMs, probeEveryMs, deadlineMs } = settings;
const agent = new Agent({ connections: null, headersTimeout: 60_000, bodyTimeout: 60_000, keepAliveTimeout: 60_000 });
const probeAgent = new Agent({ connections: 1, headersTimeout: 10_000, bodyTimeout: 10_000 });
const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

const TOKEN = /"content":"(?!")/g;
let firstBytes = 0;
let ended = 0;
let tokens = 0;
const failures = new Map();
const fail = (why) => failures.set(why, (failures.get(why) ?? 0) + 1);
const settledCount = () => ended + [...failures.values()].reduce((a, b) => a + b, 0);
// Streams with a first token that have not ended: at the deadline these are the stalled ones.
let streaming = 0;
// Per stream, ms from its request to its response head and to its first token: a stream held back anywhere
// (a queue, a buffer) shows here even when it ends well.
const headMs = [];
const firstTokenMs = [];

/** A refusal's message, short and without ids, so equal refusals count together. */
function refusal(text) {
  let message = text;
  try {
    const body = JSON.parse(text);
    message = body.error?.message ?? body.message ?? text;
  } catch {
    // not JSON: the text itself
  }
  return String(message)
    .replace(/\b(req|chatcmpl|call)[-_][\w-]+/g, '$1_…')
    .slice(0, 120);
}

async function oneStream() {
  const t0 = performance.now();
  let res;
  try {
    res = await agent.request({
      origin,
      method: 'POST',
      path: stream.path,
      headers: stream.headers,
      body: stream.body,
    });
    headMs.push(performance.now() - t0);
  } catch (error) {
    return fail(`request failed: ${error.code ?? error.message}`);
  }
  if (res.statusCode !== 200) {
    return fail(`HTTP ${res.statusCode}: ${refusal(await res.body.text().catch(() => ''))}`);
  }
  let first = false;
  let tail = '';
  let done = false;
  try {
    res.body.setEncoding('utf8');
    for await (const chunk of res.body) {
      const text = tail + chunk;
      const found = text.match(TOKEN)?.length ?? 0;
      if (found > 0 && !first) {
        first = true;
        firstTokenMs.push(performance.now() - t0);
        firstBytes += 1;
        streaming += 1;
      }
      tokens += found;
      if (text.includes('[DONE]')) done = true;
      // A marker may straddle two chunks; the tail is kept short enough never to hold a whole one twice.
      tail = chunk.slice(-8);
    }
  } catch (error) {
    if (first) streaming -= 1;
    return fail(`body broke: ${error.code ?? error.message}`);
  }
  if (first) streaming -= 1;
  if (!done) return fail('stream ended without [DONE]');
  ended += 1;
}

const probes = [];
let probeFailures = 0;
async function probeOnce() {
  const t0 = performance.now();
  try {
    const res = await probeAgent.request({
      origin,
      method: probe.method,
      path: probe.path,
      headers: probe.headers,
      body: probe.body,
    });
    await res.body.dump();
    if (res.statusCode !== 200) probeFailures += 1;
    else probes.push(performance.now() - t0);
  } catch {
    probeFailures += 1;
  }
}

const startedAt = performance.now();
const deadline = startedAt + deadlineMs;
const running = [];
for (let i = 0; i < streams; i += rampBatch) {
  for (let j = i; j < Math.min(streams, i + rampBatch); j++) running.push(oneStream());
  await new Promise((resolve) => setTimeout(resolve, rampEveryMs));
}
while (firstBytes + settledCount() - ended < streams && performance.now() < deadline)
  await new Promise((resolve) => setTimeout(resolve, 20));
say({
  event: 'open',
  open: firstBytes,
  failed: settledCount() - ended,
  ms: Math.round(performance.now() - startedAt),
  tokens,
});
// Probes run while the streams do (and stop with them, or at the deadline).
while (settledCount() < streams && performance.now() < deadline) {
  await probeOnce();
  await new Promise((resolve) => setTimeout(resolve, probeEveryMs));
}
const cpu = process.cpuUsage();
const percentile = (values, p) => {
  if (values.length === 0) return null;
  const sorted = values.sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] * 100) / 100;
};
say({
  event: 'done',
  firstBytes,
  ended,
  unfinished: streams - settledCount(),
  stalled: streaming,
  failures: Object.fromEntries(failures),
  tokens,
  probe: { count: probes.length, failures: probeFailures, p50: percentile(probes, 50), p99: percentile(probes, 99) },
  head_ms: { max: percentile(headMs, 100) },
  first_token_ms: { p50: percentile(firstTokenMs, 50), max: percentile(firstTokenMs, 100) },
  seconds: (performance.now() - startedAt) / 1000,
  cpu_ms: (cpu.user + cpu.system) / 1000,
});
process.exit(0);
