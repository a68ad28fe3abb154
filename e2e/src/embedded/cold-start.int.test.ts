import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from '@sbc/testing';

/**
 * The first start of the embedded bundle (`npm start`) on an empty data directory, killed while it makes the
 * services' databases: no service directory is left that a later start would take for a database, and the
 * next start makes them and serves, with what it stores kept across a further start.
 */
const BUNDLE = path.resolve(__dirname, '../../../dist/apps/embedded/main.js');
const KEY = 'sbc_cold_start_key_0123456789abcdefghij';
const SERVICES = ['account', 'usage-ledger', 'x-builds', 'runs'];
// A first start makes the PGlite databases: tens of seconds on a loaded machine.
const START_MS = 120_000;

function launch(dataDir: string, port: number): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [BUNDLE], {
    env: {
      PATH: process.env.PATH ?? '',
      LOG_LEVEL: 'warn',
      SBC_DATA_DIR: dataDir,
      PORT: String(port),
      SBC_BOOTSTRAP_KEY: KEY,
    },
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}

async function until(what: string, ready: () => boolean, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + START_MS - 5_000;
  while (!ready()) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`never ${what}:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function stop(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await exited;
}

describe('the first start of the embedded bundle', () => {
  let root: string;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run "npm run build" first (npm test does)`);
    root = await mkdtemp(path.join(tmpdir(), 'sbc-cold-start-'));
  });
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    await rm(root, { recursive: true, force: true });
  });

  it(
    'killed while it makes the databases, is redone by the next start, whose data a later start keeps',
    async () => {
      const dataDir = path.join(root, 'data');
      const port = await freePort();
      const killed = launch(dataDir, port);
      children.push(killed.child);
      const initdbRunning = () =>
        existsSync(dataDir) && readdirSync(dataDir).some((name) => name.startsWith('.pglite-initdb-'));
      await until('began initdb', initdbRunning, killed.child, killed.output);
      await stop(killed.child, 'SIGKILL');
      for (const service of SERVICES) expect(existsSync(path.join(dataDir, service, 'PG_VERSION'))).toBe(false);

      const cold = launch(dataDir, port);
      children.push(cold.child);
      await until('served', () => /serving at/.test(cold.output()), cold.child, cold.output);
      const minted = await fetch(`http://127.0.0.1:${port}/v1/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'made on the first start', preset: 'gateway' }),
      });
      expect(minted.status).toBe(201);
      const mintedKey = ((await minted.json()) as { key: string }).key;
      await stop(cold.child, 'SIGTERM');
      // No initdb template or half-made copy left over, the killed start's included.
      expect(
        (await readdir(dataDir)).filter((name) => name.startsWith('.pglite-initdb-') || name.endsWith('.initialising')),
      ).toEqual([]);

      const warm = launch(dataDir, port);
      children.push(warm.child);
      await until('served', () => /serving at/.test(warm.output()), warm.child, warm.output);
      const whoami = await fetch(`http://127.0.0.1:${port}/v1/keys/whoami`, {
        headers: { authorization: `Bearer ${mintedKey}` },
      });
      expect(whoami.status).toBe(200);
      await stop(warm.child, 'SIGTERM');
    },
    3 * START_MS,
  );
});
