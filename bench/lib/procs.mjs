// Child-process plumbing for bench/gateway.mjs: free ports, starting a bundle, readiness polling, CPU time
// from /proc, and making sure every child dies with the benchmark (normal end, failure or Ctrl-C).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'undici';

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const children = new Set();

/**
 * Starts `node <nodeArgs> <entry> <args>` with `env` added to ours. Output is kept (last 16 KB) so a failure to start
 * or a crash mid-run can show what the child said; LOG_LEVEL=warn keeps it quiet otherwise.
 */
export function startChild(name, entry, env, nodeArgs = [], args = []) {
  const child = spawn(process.execPath, [...nodeArgs, entry, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const state = { name, child, output: '' };
  const keep = (chunk) => (state.output = (state.output + chunk).slice(-16_384));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  children.add(state);
  child.once('exit', (code, signal) => {
    children.delete(state);
    state.exited = { code, signal };
  });
  return state;
}

/**
 * Polls `url` until it answers 200; throws with the child's output when it exits or `timeoutMs` passes. The bound
 * is wide because PGlite's first migration alone took 50 s on a loaded 2-core machine.
 */
export async function waitReady(state, url, headers = {}, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (state.exited)
      throw new Error(`${state.name} exited (${JSON.stringify(state.exited)}) before it was ready:\n${state.output}`);
    try {
      const res = await request(url, { headers, headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`${state.name} not ready at ${url} after ${timeoutMs} ms:\n${state.output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Fails loudly when a child died while the benchmark was using it. */
export function assertAlive(state) {
  if (state?.exited)
    throw new Error(`${state.name} died during the run (${JSON.stringify(state.exited)}):\n${state.output}`);
}

let ticksPerSecond;
/** Kernel clock ticks per second (`getconf CLK_TCK`, almost always 100), read once. */
export function clockTicks() {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/**
 * CPU time (user + system, all threads) the process has used so far, in milliseconds, from /proc/<pid>/stat
 * fields 14 (utime) and 15 (stime). The command name (field 2) may hold spaces, so fields are counted from
 * the last ')'. Resolution is one clock tick (10 ms at 100 Hz): runs should use far more than that.
 */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks();
}

/** SIGTERM every child still running, SIGKILL after `graceMs`, and wait for them to go. */
export async function stopChildren(graceMs = 5000) {
  await Promise.all(
    [...children].map(
      ({ child }) =>
        new Promise((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

/** Last-resort cleanup: `exit` handlers must be synchronous, so whatever is left is killed outright. */
process.once('exit', () => {
  for (const { child } of children) child.kill('SIGKILL');
});

/**
 * The whole machine's CPU time so far from /proc/stat, in milliseconds: `busy` (every non-idle state, steal
 * included) and `steal` (time the hypervisor gave this VM's CPUs to someone else). With the benchmark's own
 * processes subtracted, `busy` says how much else ran during a measurement.
 */
export function machineCpuMs() {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user)
  const [user, nice, system, , , irq, softirq, steal] = fields;
  const perTick = 1000 / clockTicks();
  return { busy: (user + nice + system + irq + softirq + steal) * perTick, steal: steal * perTick };
}
