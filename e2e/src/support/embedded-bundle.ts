import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The embedded bundle as `npm start` runs it; `npm test` builds it first (pretest). */
export const BUNDLE = path.resolve(__dirname, '../../../dist/apps/embedded/main.js');

/** A first start creates the PGlite databases: tens of seconds on a loaded machine. */
export const FIRST_START_MS = 90_000;

export interface RunningBundle {
  child: ChildProcess;
  url: string;
  output: () => string;
}

/**
 * Starts the bundle on `port` with `env` (over PATH and LOG_LEVEL=warn) and resolves once it serves; a start that
 * fails or takes longer than FIRST_START_MS is killed and thrown with its output.
 */
export async function startBundle(port: number, env: Record<string, string>): Promise<RunningBundle> {
  const child = spawn(process.execPath, [BUNDLE], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', PORT: String(port), ...env },
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + FIRST_START_MS - 5_000;
  while (!/serving at/.test(output)) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { child, url: `http://127.0.0.1:${port}`, output: () => output };
}

/** Resolves once the child has exited (at once if it already has); after `ms`, kills it and resolves. */
export async function exited(child: ChildProcess, ms: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * What a suite that starts the bundle needs around it: the bundle built (checked before the suite), a fresh folder
 * for its data (`dir()`, removed after the suite), and the children it starts killed if a test left them running.
 */
export function bundleScratch(prefix: string): { dir: () => string; children: ChildProcess[] } {
  let dir = '';
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run "npm run build" first (npm test does)`);
    dir = await mkdtemp(path.join(tmpdir(), prefix));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return { dir: () => dir, children };
}
