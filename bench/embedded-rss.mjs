// Idle resident memory and start time of `npm start` (the embedded bundle, every service in one process on
// PGlite): a cold start on an empty data directory, then a warm start on the same directory.
//
//   node bench/embedded-rss.mjs            needs dist/apps/embedded (npx nx run embedded:build)
//   BENCH_IDLE_MS=N                        how long the process idles before its RSS is read (default 5000)
//   BENCH_BUNDLE=path/main.js              another build to measure (e.g. a copy of an earlier one, to compare)
//   BENCH_NODE_ARGS='…'                    node flags (default: those of package.json's start script)
//
// Each start is timed from spawn to the edge answering /readyz; RSS is read from /proc/<pid>/status after
// the idle wait (VmRSS, and VmHWM for the peak). startCpuS is the CPU time the start took (the process and
// the children it waited for, from /proc/<pid>/stat): on a busy machine it varies less than the wall time.
// The data directory is a fresh temp dir, removed at the end.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startChild, stopChildren, waitReady } from './lib/procs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const idleMs = Number(process.env.BENCH_IDLE_MS ?? 5000);
const bundle = path.resolve(root, process.env.BENCH_BUNDLE ?? 'dist/apps/embedded/main.js');
// The node flags `npm start` runs the bundle with (package.json's start script), so the figures are its own.
const nodeArgs = (
  process.env.BENCH_NODE_ARGS ??
  /^node ((?:--\S+ )*)/.exec(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start)?.[1] ??
  ''
)
  .split(' ')
  .filter(Boolean);
const KEY = 'sbc_' + 'benchembeddedrss0123456789abcdef';

function memoryOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  return { rssMiB: Math.round(field('VmRSS')), peakMiB: Math.round(field('VmHWM')) };
}

// Fields 14-17 after the command name: utime, stime, cutime, cstime, in clock ticks (100 a second on Linux).
function cpuSecondsOf(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
}

async function startOnce(label, dataDir) {
  const port = await freePort();
  const startedAt = performance.now();
  const state = startChild(
    label,
    bundle,
    {
      PORT: String(port),
      SBC_DATA_DIR: dataDir,
      SBC_BOOTSTRAP_KEY: KEY,
      LOG_LEVEL: 'warn',
    },
    nodeArgs,
  );
  await waitReady(state, `http://127.0.0.1:${port}/readyz`, {}, 300_000);
  const startMs = Math.round(performance.now() - startedAt);
  const startCpuS = cpuSecondsOf(state.child.pid);
  await new Promise((resolve) => setTimeout(resolve, idleMs));
  const memory = memoryOf(state.child.pid);
  await stopChildren();
  return { start: label, startMs, startCpuS, ...memory };
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'sbc-rss-'));
try {
  const rows = [await startOnce('cold (empty data dir)', dataDir), await startOnce('warm (same data dir)', dataDir)];
  console.table(rows);
} finally {
  await stopChildren();
  rmSync(dataDir, { recursive: true, force: true });
}
