/**
 * Runs one coding-agent CLI headless, bounded in time, in a throwaway home: nothing it writes reaches the real
 * home or the repository, and it sees only the environment the test gives it (no key or setting of the person
 * or CI running the suite leaks in).
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const KEPT_OUTPUT_CHARS = 64 * 1024;

export interface CliOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  ms: number;
}

/** A home and a working folder of its own for one run, removed by `remove`. */
export interface Sandbox {
  home: string;
  work: string;
  remove(): Promise<void>;
}

export async function makeSandbox(label: string): Promise<Sandbox> {
  const root = await mkdtemp(path.join(tmpdir(), `sbc-agent-${label}-`));
  const sandbox = { home: path.join(root, 'home'), work: path.join(root, 'work') };
  await mkdir(sandbox.home, { recursive: true });
  await mkdir(sandbox.work, { recursive: true });
  return { ...sandbox, remove: () => rm(root, { recursive: true, force: true }) };
}

/**
 * The environment every CLI starts from: the same PATH (so a Node-script CLI runs on the Node running the suite),
 * the sandbox as every home and config folder, and every proxy variable aimed at `refusingProxyUrl` except for
 * loopback, where the gateway is. npm runs offline, for CLIs that install plugins on the fly.
 */
export function baseEnv(sandbox: Sandbox, refusingProxyUrl: string): Record<string, string> {
  const { home } = sandbox;
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    HOME: home,
    TMPDIR: tmpdir(),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    HTTPS_PROXY: refusingProxyUrl,
    HTTP_PROXY: refusingProxyUrl,
    ALL_PROXY: refusingProxyUrl,
    https_proxy: refusingProxyUrl,
    http_proxy: refusingProxyUrl,
    all_proxy: refusingProxyUrl,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
    npm_config_offline: 'true',
    npm_config_cache: path.join(home, '.npm'),
  };
}

function keepTail(text: string): string {
  return text.length > KEPT_OUTPUT_CHARS ? `…${text.slice(-KEPT_OUTPUT_CHARS)}` : text;
}

/** Runs `command` with no standard input; after `timeoutMs` its whole process group is killed. */
export function runCli(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<CliOutcome> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a timeout also ends the shells and helpers it started.
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout = keepTail(stdout + chunk)));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = keepTail(stderr + chunk)));
    let timedOut = false;
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (exitCode, signal) => {
      clearTimeout(timer);
      // Helpers it left behind (a shell the agent started) go with it.
      killGroup();
      resolve({ exitCode, signal, timedOut, stdout, stderr, ms: Date.now() - started });
    });
  });
}
