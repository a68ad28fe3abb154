import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';
import {
  type Child,
  collect,
  createTestDatabase,
  freePort,
  testBackends,
  type TestDatabase,
  waitReady,
} from '@sbc/testing';

// docs/operations.md's "Running services separately", run as written: each command's environment, read from
// the page, with only what a shared test machine must change: the databases, Redis and the broker named by
// the test environment, and free ports instead of the defaults (rewritten wherever the commands name them).

const ROOT = path.resolve(__dirname, '../..');
const KEY = 'sbc_operations_test_key_0123456789abcdef';
const SECRETS_KEY = Buffer.alloc(32, 5).toString('base64');
const APPS = ['account', 'usage-ledger', 'x-builds', 'runs', 'sim-upstream', 'gateway'] as const;
type App = (typeof APPS)[number];
/** A command of the page: an app started, or the ledger's migrate, which runs first. */
type Command = App | 'usage-ledger migrate';

/** Each `node dist/apps/<app>/main.js [migrate]` line of the page's shell block, as `{command: {VAR: value}}`. */
function commandsOf(markdown: string): Record<Command, Record<string, string>> {
  const section = markdown.slice(markdown.indexOf('## Running services separately'));
  const block = section.slice(section.indexOf('```sh') + 5, section.indexOf('```', section.indexOf('```sh') + 5));
  const commands = {} as Record<Command, Record<string, string>>;
  for (const line of block.split('\n')) {
    const found = /node dist\/apps\/([a-z-]+)\/main\.js( migrate)?\s*$/.exec(line);
    if (!found) continue;
    const app = (found[2] ? `${found[1]} migrate` : found[1]) as Command;
    const env: Record<string, string> = {};
    for (const [, name, value] of line.matchAll(/([A-Z_]+)=('[^']*'|\$\([^)]*\)|\S+)/g))
      env[name] = value.startsWith("'") ? value.slice(1, -1) : value;
    commands[app] = env;
  }
  return commands;
}

const commands = commandsOf(readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8'));
const bundle = (app: App) => path.join(ROOT, 'dist/apps', app, 'main.js');

function run(app: App, env: Record<string, string>, args: string[] = []): Child {
  return collect(
    app,
    spawn(process.execPath, [bundle(app), ...args], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    }),
  );
}

describe("docs/operations.md's services-mode commands", () => {
  it('start every app the page lists, the simulator among them, and give the edge a broker and house engines', () => {
    expect(Object.keys(commands).sort()).toEqual([...APPS, 'usage-ledger migrate'].sort());
    expect(commands.gateway).toMatchObject({ KAFKA_BROKERS: expect.any(String), HOUSE_ENGINES: expect.any(String) });
    expect(commands['usage-ledger'].KAFKA_BROKERS).toBe(commands.gateway.KAFKA_BROKERS);
  });

  it("run the ledger's migrate, which makes the topic, on the same broker and database before any app", () => {
    const block = Object.keys(commands);
    expect(block.indexOf('usage-ledger migrate')).toBeLessThan(block.indexOf('usage-ledger'));
    expect(block.indexOf('usage-ledger migrate')).toBeLessThan(block.indexOf('gateway'));
    expect(commands['usage-ledger migrate']).toMatchObject({
      KAFKA_BROKERS: commands.gateway.KAFKA_BROKERS,
      DATABASE_URL: commands['usage-ledger'].DATABASE_URL,
    });
  });

  it('the edge, without the broker the page starts, refuses to start and says why', async () => {
    if (!existsSync(bundle('gateway'))) throw new Error(`${bundle('gateway')} is missing: run "npm run build" first`);
    const { KAFKA_BROKERS: _dropped, ...withoutBroker } = commands.gateway;
    const edge = run('gateway', { ...withoutBroker, PORT: String(await freePort()) });
    expect(await edge.exited).not.toBe(0);
    expect(edge.output()).toContain('No usage sink: KAFKA_BROKERS is not set');
    expect(edge.output()).toContain('USAGE_EVENTS=off');
  });
});

const backends = testBackends();
const withBroker = backends.postgresUrl && backends.redisUrl && backends.kafkaBrokers ? describe : describe.skip;
if (!backends.kafkaBrokers) console.warn('TEST_KAFKA_BROKERS is needed to bill a call through the commands: skipped');

withBroker('the commands, run on PostgreSQL, Redis and a broker', () => {
  const databases: Partial<Record<App, TestDatabase>> = {};
  const children: Child[] = [];
  const ports: Record<string, number> = {};

  beforeAll(async () => {
    for (const app of APPS) if (!existsSync(bundle(app))) throw new Error(`${bundle(app)} is missing: npm run build`);
    for (const name of ['account', 'ledger', 'builds', 'runs']) {
      ports[name] = await freePort();
      ports[`${name}Http`] = await freePort();
    }
    ports.sim = await freePort();
    ports.gateway = await freePort();
    for (const app of ['account', 'usage-ledger', 'x-builds', 'runs'] as const)
      databases[app] = await createTestDatabase(`operations_${app.replace('-', '_')}`);
  }, 60_000);
  afterAll(async () => {
    for (const child of children) child.process.kill('SIGKILL');
    for (const database of Object.values(databases)) await database?.drop();
  });

  // A topic prefix of this run's own: migrate makes its topic, whatever an earlier run left on the broker.
  const topicPrefix = `operations-${process.pid}-${Date.now()}.`;

  /** The page's environment for `app`, with this machine's services and free ports in place of the defaults. */
  function envOf(command: Command): Record<string, string> {
    const app = command.replace(/ migrate$/, '') as App;
    const rewrite = (value: string) =>
      value
        .replace('127.0.0.1:50051', `127.0.0.1:${ports.account}`)
        .replace('127.0.0.1:8090', `127.0.0.1:${ports.sim}`)
        .replace(/^postgres:\/\/.*$/, databases[app]?.databaseUrl ?? value)
        .replace(/^redis:\/\/.*$/, backends.redisUrl!)
        .replace(/^localhost:9092$/, backends.kafkaBrokers!.join(','))
        .replace(/^sbc_…$/, KEY)
        .replace(/^\$\(openssl rand -base64 32\)$/, SECRETS_KEY);
    const env = Object.fromEntries(Object.entries(commands[command]).map(([name, value]) => [name, rewrite(value)]));
    if (env.KAFKA_BROKERS) env.KAFKA_TOPIC_PREFIX = topicPrefix;
    const own = {
      account: { ACCOUNT_GRPC_PORT: ports.account, ACCOUNT_HTTP_PORT: ports.accountHttp },
      'usage-ledger': { USAGE_LEDGER_GRPC_PORT: ports.ledger, USAGE_LEDGER_HTTP_PORT: ports.ledgerHttp },
      'x-builds': {
        X_BUILDS_GRPC_PORT: ports.builds,
        X_BUILDS_HTTP_PORT: ports.buildsHttp,
        ACCOUNT_GRPC_TARGET: `127.0.0.1:${ports.account}`,
      },
      runs: {
        RUNS_GRPC_PORT: ports.runs,
        RUNS_HTTP_PORT: ports.runsHttp,
        ACCOUNT_GRPC_TARGET: `127.0.0.1:${ports.account}`,
      },
      'sim-upstream': { SIM_PORT: ports.sim },
      gateway: {
        PORT: ports.gateway,
        USAGE_LEDGER_GRPC_TARGET: `127.0.0.1:${ports.ledger}`,
        X_BUILDS_GRPC_TARGET: `127.0.0.1:${ports.builds}`,
        RUNS_GRPC_TARGET: `127.0.0.1:${ports.runs}`,
      },
    }[app];
    return { ...env, ...Object.fromEntries(Object.entries(own).map(([name, value]) => [name, String(value)])) };
  }

  const readyUrl = (app: App) =>
    ({
      account: `http://127.0.0.1:${ports.accountHttp}`,
      'usage-ledger': `http://127.0.0.1:${ports.ledgerHttp}`,
      'x-builds': `http://127.0.0.1:${ports.buildsHttp}`,
      runs: `http://127.0.0.1:${ports.runsHttp}`,
      'sim-upstream': `http://127.0.0.1:${ports.sim}`,
      gateway: `http://127.0.0.1:${ports.gateway}`,
    })[app] + '/readyz';

  it('bill a house-model call in the ledger', async () => {
    const migrate = run('usage-ledger', envOf('usage-ledger migrate'), ['migrate']);
    expect({ code: await migrate.exited, output: migrate.output() }).toEqual({ code: 0, output: expect.any(String) });
    for (const app of APPS) {
      const child = run(app, envOf(app));
      children.push(child);
      await waitReady(child, readyUrl(app), 90_000);
    }
    const gateway = `http://127.0.0.1:${ports.gateway}`;
    const openai = new OpenAI({ apiKey: KEY, baseURL: `${gateway}/v1`, maxRetries: 0 });
    const { response } = await openai.chat.completions
      .create({ model: 'house', messages: [{ role: 'user', content: 'bill me' }] })
      .withResponse();
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    // A usage row's `id` is its event id (the ledger's key); the caller's x-request-id is its `request_id`.
    let rows: Array<{ id: string; request_id: string; model: string }> = [];
    for (
      const deadline = Date.now() + 30_000;
      !rows.some((row) => row.request_id === requestId) && Date.now() < deadline;
    ) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const page = await fetch(`${gateway}/v1/usage/requests?limit=100`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      rows = ((await page.json()) as { data: typeof rows }).data;
    }
    expect(rows.filter((row) => row.request_id === requestId)).toEqual([
      expect.objectContaining({ request_id: requestId, model: 'house' }),
    ]);
  }, 180_000);
});
