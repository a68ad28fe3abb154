import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, jsonOf } from '@sbc/testing';

// These tests run the built bundle as `npm start` does; `npm test` builds it first (pretest).
const BUNDLE = path.resolve(__dirname, '../../../dist/apps/embedded/main.js');
const KEY = 'sbc_process_test_key_0123456789abcdef';

interface Child {
  process: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
}

function run(env: Record<string, string>): Child {
  const child = spawn(process.execPath, [BUNDLE], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env } });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { process: child, output: () => output, exited };
}

// A first start creates four PGlite databases (initdb in WASM, one after another): tens of seconds on a
// loaded 2-core machine.
const FIRST_START_MS = 90_000;

async function waitFor(child: Child, pattern: RegExp, timeoutMs = FIRST_START_MS - 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pattern.test(child.output())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; output:\n${child.output()}`);
    if (child.process.exitCode !== null)
      throw new Error(`exited ${child.process.exitCode}; output:\n${child.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('the embedded bundle as a process', () => {
  let dataDir: string;
  beforeAll(async () => {
    if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run "npm run build" first (npm test does)`);
    dataDir = await mkdtemp(path.join(tmpdir(), 'sbc-process-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it(
    'prints the base URL and the new key once, serves with it, and exits 0 on SIGTERM after in-flight requests finish',
    async () => {
      const port = await freePort();
      const child = run({ SBC_DATA_DIR: path.join(dataDir, 'fresh'), PORT: String(port) });
      try {
        await waitFor(child, /serving at http:\/\/localhost:\d+/);
        const key = /bootstrap key \(shown once; saved to [^)]+\): (sbc_\S+)/.exec(child.output())?.[1];
        expect(key).toBeDefined();
        const base = `http://127.0.0.1:${port}`;
        expect((await fetch(`${base}/v1/keys/whoami`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(
          200,
        );

        // A burst in flight when SIGTERM lands: every request the server accepted is answered in full.
        const burst = Array.from({ length: 40 }, () =>
          fetch(`${base}/v1/keys/whoami`, { headers: { authorization: `Bearer ${key}` } }).then(
            async (res) => ({ status: res.status, body: await jsonOf(res) }),
            () => ({ status: 0, body: null }),
          ),
        );
        await Promise.race(burst); // at least one answered, the rest still in flight
        child.process.kill('SIGTERM');
        const results = await Promise.all(burst);
        const answered = results.filter((r) => r.status !== 0);
        expect(answered.length).toBeGreaterThan(0);
        for (const result of answered) {
          expect(result.status).toBe(200);
          expect(result.body.name).toBe('bootstrap');
        }
        expect(await child.exited).toBe(0);
      } finally {
        child.process.kill('SIGKILL');
      }
    },
    FIRST_START_MS + 30_000,
  );

  it(
    'an acknowledged write survives the process being killed mid-request',
    async () => {
      const port = await freePort();
      const env = { SBC_DATA_DIR: path.join(dataDir, 'killed'), PORT: String(port), SBC_BOOTSTRAP_KEY: KEY };
      const base = `http://127.0.0.1:${port}`;
      const first = run(env);
      try {
        await waitFor(first, /serving at/);
        const me = await jsonOf(await fetch(`${base}/v1/keys/whoami`, { headers: { authorization: `Bearer ${KEY}` } }));
        // Keep requests in flight while the acknowledged revocation lands, then kill without warning.
        const inflight = Array.from({ length: 20 }, () =>
          fetch(`${base}/v1/keys/whoami`, { headers: { authorization: `Bearer ${KEY}` } }).catch(() => undefined),
        );
        const revoked = await fetch(`${base}/v1/keys/${me.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${KEY}` },
        });
        expect(revoked.status).toBe(200);
        first.process.kill('SIGKILL');
        await first.exited;
        await Promise.all(inflight);
      } finally {
        first.process.kill('SIGKILL');
      }

      const second = run(env);
      try {
        await waitFor(second, /serving at/);
        const res = await fetch(`${base}/v1/keys/whoami`, { headers: { authorization: `Bearer ${KEY}` } });
        expect(res.status).toBe(403);
        expect((await jsonOf(res)).error).toBe('insufficient_scope');
      } finally {
        second.process.kill('SIGTERM');
        await second.exited;
      }
    },
    FIRST_START_MS + 30_000,
  );

  it('refuses to start on a bad variable, naming it', async () => {
    const child = run({ SBC_DATA_DIR: path.join(dataDir, 'bad'), PORT: 'eighty', SBC_BOOTSTRAP_KEY: 'not-a-key' });
    expect(await child.exited).toBe(1);
    expect(child.output()).toMatch(/PORT: /);
    expect(child.output()).toMatch(/SBC_BOOTSTRAP_KEY: /);
  });
});
