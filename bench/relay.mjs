// The edge's JavaScript per relayed token, without sockets: bench/lib/relay-harness.ts (the real stream relay
// over many cold streams), bundled, run in a fresh process each time. bench:streams measures the whole edge;
// this isolates the part a token costs in the relay itself, which that bench's noise hides.
//
//   npm run bench:relay      BENCH_REPEAT=9 runs (the median and range are printed), HARNESS_STREAMS=10000,
//                            HARNESS_TOKENS=30 (passed to the harness)
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPEAT = Math.max(1, Math.floor(Number(process.env.BENCH_REPEAT ?? 9)) || 1);
// Under dist/, so that the bundle resolves the packages left out of it (the tokenizer's data) from node_modules.
const bundle = path.join(root, 'dist/bench/relay-harness.cjs');
await build({
  entryPoints: [path.join(root, 'bench/lib/relay-harness.ts')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  outfile: bundle,
  tsconfig: path.join(root, 'tsconfig.base.json'),
  external: ['gpt-tokenizer'],
  logLevel: 'warning',
});

const run = (feedOnly) =>
  JSON.parse(
    execFileSync(process.execPath, [bundle], {
      env: { ...process.env, HARNESS_FEED_ONLY: feedOnly ? '1' : '0' },
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop(),
  );
const runs = [];
for (let i = 0; i < REPEAT; i++) runs.push(run(false));
const feed = run(true);
const ns = runs.map((r) => r.cpuNsPerToken).sort((a, b) => a - b);
console.log(
  `relay harness: ${runs[0].streams} streams, ${runs[0].tokens} tokens each, node ${process.version}, ${REPEAT} runs`,
);
console.log(
  `CPU per relayed token: median ${ns[ns.length >> 1]} ns (${ns[0]} to ${ns[ns.length - 1]}); handing out the tokens ` +
    `alone: ${feed.cpuNsPerToken} ns`,
);
