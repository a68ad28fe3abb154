// The built-in guardrail detectors' CPU per 4 KB prompt, this tree's against an earlier commit's, in one process:
// both versions of libs/guardrails are bundled (the earlier one read from git at run time) and applied to the same
// prompts in alternating rounds, so a busy shared machine slows both alike and their ratio still reads true.
//
//   node bench/guardrails.mjs    BENCH_BASELINE_REF=a93fbef (the commit to compare with: the last before the
//                                detectors' rewrite), BENCH_ROUNDS=20, BENCH_CALLS=500 (prompts per round and side)
//   BENCH_ONLY=new|old           one side only, for `node --cpu-prof bench/guardrails.mjs`
//
// The guardrail holds every built-in detector (e-mail, phone, card, IBAN, secret), an operator's pattern and a word
// list, each redacting. Prompts: `prose`, the 4 KB of bench:gateway's chat-4k case (nothing to find), and `mixed`,
// 4 KB of what callers send (prose, code, JSON, numbers and dates) holding an e-mail address, a phone number, a card
// number and an IBAN. Each side's findings are checked equal before the clock starts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BASELINE_REF = process.env.BENCH_BASELINE_REF ?? 'a93fbef';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const CALLS = Number(process.env.BENCH_CALLS ?? 500);
const ONLY = process.env.BENCH_ONLY;

/** Both versions bundled under dist/ (so the bundles resolve node_modules as the sources do). */
async function bundles() {
  const out = path.join(root, 'dist/bench/guardrails');
  const oldSrc = path.join(out, 'baseline/src');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(oldSrc, { recursive: true });
  const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 });
  for (const file of git('ls-tree', '--name-only', `${BASELINE_REF}:libs/guardrails/src`).split('\n'))
    if (file.endsWith('.ts') && !file.endsWith('.test.ts'))
      writeFileSync(path.join(oldSrc, file), git('show', `${BASELINE_REF}:libs/guardrails/src/${file}`));
  const bundle = async (entry, name) => {
    const outfile = path.join(out, `${name}.mjs`);
    await build({ entryPoints: [entry], bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'warning' });
    return import(pathToFileURL(outfile).href);
  };
  return {
    old: await bundle(path.join(oldSrc, 'index.ts'), 'baseline'),
    new: await bundle(path.join(root, 'libs/guardrails/src/index.ts'), 'current'),
  };
}

const DETECTORS = [
  ...['email', 'phone', 'card', 'iban', 'secret'].map((type) => ({ type, action: 'redact' })),
  { type: 'regex', action: 'redact', pattern: '(?i)project\\s+(?:orion|vega)' },
  { type: 'words', action: 'redact', words: ['confidential', 'internal only', 'embargo', 'codename'] },
];

const PROSE = 'The quarterly review covers shipping, support and the roadmap for the next release. '.repeat(49);
// No `(` or `+` right after a letter or digit (`drain(queue)`): the baseline's phone scanner stood still there.
const MIXED_PARTS = [
  'Hi, can you help me tidy up the queue service before the 2026-03-14 release? Our on-call (Dana, dana.ortiz@',
  'example.com, +44 20 7946 0958) says the retry loop in the worker misbehaves when the queue holds more than ',
  '1,250 jobs. Refunds go to GB82 WEST 1234 5698 7654 32; the test card is 4111 1111 1111 1111.\n\n',
  'The settings we deploy with:\n\n```json\n',
  '{"queue": {"max_jobs": 5000, "lease_ms": 60000, "region": "eu-west-1"}, "version": "4.12.7", ',
  '"limits": [10, 20, 50, 100], "owner": "platform-team", "max_tokens": 256, "retry": {"attempts": 3}}\n```\n\n',
  '| day | jobs | p50 ms | p99 ms | failures |\n| --- | --- | --- | --- | --- |\n',
  '| Mon | 17,902 | 41 | 298 | 12 |\n| Tue | 18,442 | 44 | 312 | 19 |\n| Wed | 16,100 | 39 | 287 | 7 |\n\n',
  'Logs from last night:\n\n```\n2026-03-10T02:00:01.114Z INFO drain started limit=100 lease_ms=60000\n',
  '2026-03-10T02:00:31.902Z WARN job 7f3a9c failed after 30000 ms, attempt 2 of 3, delay 4000 ms\n',
  '2026-03-10T02:01:12.377Z INFO drain done handled=98 failed=2 elapsed_ms=71263\n```\n\n',
];
const MIXED_TAIL =
  'Last week it handled 18,442 jobs at a p99 of 312 ms, up from 240 ms in v4.11, and memory went from 412 MB to ' +
  '530 MB on the 8 GB nodes. Please explain where the time goes, suggest changes to the loop, and keep the API ' +
  'the same because three other teams call it from their own cron jobs at 02:00 and 14:30 UTC each day. ';
const fill = (text) => {
  let out = text;
  while (out.length < 4096) out += MIXED_TAIL;
  return out.slice(0, 4096);
};
const PROMPTS = { prose: PROSE, mixed: fill(MIXED_PARTS.join('')) };

const sides = await bundles();
const sets = Object.fromEntries(Object.entries(sides).map(([name, lib]) => [name, new lib.DetectorSet(DETECTORS)]));
for (const [name, prompt] of Object.entries(PROMPTS)) {
  const [a, b] = ['old', 'new'].map((side) => JSON.stringify(sets[side].apply(prompt)));
  if (a !== b) throw new Error(`the two versions disagree on the ${name} prompt:\n${a}\n${b}`);
}

/** CPU µs per prompt of `calls` applications. */
function round(set, prompt) {
  const before = process.cpuUsage();
  for (let call = 0; call < CALLS; call++) set.apply(prompt);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

const figures = {};
for (const name of Object.keys(PROMPTS)) figures[name] = { old: [], new: [] };
for (let index = 0; index < ROUNDS; index++)
  for (const [name, prompt] of Object.entries(PROMPTS))
    // The side that goes first alternates, so neither always runs on a cache the other warmed.
    for (const side of index % 2 === 0 ? ['old', 'new'] : ['new', 'old'])
      if (!ONLY || ONLY === side) figures[name][side].push(round(sets[side], prompt));

const median = (values) => [...values].sort((a, b) => a - b)[values.length >> 1];
console.log(`guardrail detectors: ${BASELINE_REF} (old) against this tree (new), node ${process.version}`);
console.log(`${ROUNDS} alternating rounds of ${CALLS} prompts each; CPU µs per 4 KB prompt, median of the rounds`);
for (const [name, { old, new: current }] of Object.entries(figures)) {
  if (ONLY) {
    console.log(`${name}: ${ONLY} ${median(ONLY === 'old' ? old : current).toFixed(1)} µs`);
    continue;
  }
  // The ratio of each round's pair, so a round slowed by another process counts against both sides alike.
  const ratios = old.map((value, index) => current[index] / value);
  console.log(
    `${name}: old ${median(old).toFixed(1)} µs, new ${median(current).toFixed(1)} µs, new ÷ old ${median(ratios).toFixed(3)} ` +
      `(rounds ${Math.min(...ratios).toFixed(3)} to ${Math.max(...ratios).toFixed(3)})`,
  );
}
