import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import pg from 'pg';
import {
  type Child,
  collect,
  createTestDatabase,
  freePort,
  testBackends,
  type TestDatabase,
  waitReady,
} from '@sbc/testing';

// deploy/Dockerfile's runtime stage without Docker: each app's bundle (with its migrations) alone in a
// directory beside a production-only install from the lockfile, started as the image's ENTRYPOINT starts it,
// on PostgreSQL and Redis. A runtime import that is only a devDependency fails here as it would in the image.
// `npm test` builds the bundles first (pretest).

const ROOT = path.resolve(__dirname, '../..');
const KEY = 'sbc_images_test_key_0123456789abcdef01';
const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
const DATABASE_APPS = ['account', 'usage-ledger', 'x-builds', 'runs'] as const;
const IMAGES = ['gateway', ...DATABASE_APPS, 'sim-upstream'] as const;
type App = (typeof IMAGES)[number];

/**
 * `from` copied to `to` as hard links (copied outright where `to` is on another file system), symlinks as symlinks:
 * a folder of a thousand packages in seconds. A link shares its file with the checkout, so what is done to the copy
 * may remove or replace files but never write into one.
 */
function linkTree(from: string, to: string): void {
  mkdirSync(to);
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) linkTree(source, target);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else {
      try {
        linkSync(source, target);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
        copyFileSync(source, target);
      }
    }
  }
}

async function stop(child: Child): Promise<{ app: string; code: number | null }> {
  child.process.kill('SIGTERM');
  return { app: child.app, code: await child.exited };
}

const backends = testBackends();
const describeWithServices = backends.postgresUrl && backends.redisUrl ? describe : describe.skip;
if (!backends.postgresUrl || !backends.redisUrl)
  console.warn('TEST_DATABASE_URL and TEST_REDIS_URL are needed for the production image tests: skipped');

describeWithServices(
  'each image as it runs: the bundle over a production-only install, on PostgreSQL and Redis',
  () => {
    let work = '';
    const databases = {} as Record<(typeof DATABASE_APPS)[number], TestDatabase>;
    const ports: Record<string, number> = {};
    const children: Child[] = [];
    const redis = { REDIS_URL: backends.redisUrl! };

    /**
     * `node --enable-source-maps main.js [args]` in the app's directory, as the image's ENTRYPOINT; NODE_ENV as the
     * image sets it.
     */
    function run(app: App, env: Record<string, string>, args: string[] = []): Child {
      const child = spawn(process.execPath, ['--enable-source-maps', 'main.js', ...args], {
        cwd: path.join(work, app),
        env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production', LOG_LEVEL: 'warn', ...env },
      });
      const running = collect(app, child);
      children.push(running);
      return running;
    }

    beforeAll(async () => {
      for (const app of IMAGES) {
        if (!existsSync(path.join(ROOT, 'dist/apps', app, 'main.js')))
          throw new Error(`dist/apps/${app} is missing: run "npm run build" first (npm test does)`);
      }
      work = mkdtempSync(path.join(tmpdir(), 'sbc-images-'));
      // What the image keeps, shared by every app: deploy/Dockerfile installs from the lockfile, as CI has just done
      // for this checkout, then runs `npm prune --omit=dev`. So does this, on a linked copy of the checkout's
      // node_modules (a second install, even from npm's cache, took a minute and a half). Prune removes whole
      // packages, which only unlinks them; the one file it rewrites, npm's record of the tree, is a copy of its own.
      const install = path.join(work, 'install');
      mkdirSync(install);
      for (const file of ['package.json', 'package-lock.json'])
        copyFileSync(path.join(ROOT, file), path.join(install, file));
      linkTree(path.join(ROOT, 'node_modules'), path.join(install, 'node_modules'));
      const treeRecord = path.join(install, 'node_modules', '.package-lock.json');
      if (existsSync(treeRecord)) {
        rmSync(treeRecord);
        copyFileSync(path.join(ROOT, 'node_modules', '.package-lock.json'), treeRecord);
      }
      // `npm test` hands its scripts npm_config_* variables naming this checkout (local_prefix among them):
      // the prune gets none of them and an explicit prefix, so it can never prune the checkout's own node_modules.
      const env = Object.fromEntries(
        Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
      );
      const args = ['prune', '--prefix', install, '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts'];
      const npm = collect('npm prune', spawn('npm', args, { cwd: install, env }));
      if ((await npm.exited) !== 0) throw new Error(`npm prune --omit=dev failed:\n${npm.output()}`);
      if (existsSync(path.join(install, 'node_modules', 'jest')))
        throw new Error(`npm prune --omit=dev left the devDependencies (jest among them):\n${npm.output()}`);
      for (const app of IMAGES) {
        cpSync(path.join(ROOT, 'dist/apps', app), path.join(work, app), { recursive: true });
        symlinkSync(path.join(install, 'node_modules'), path.join(work, app, 'node_modules'), 'dir');
      }
      for (const app of DATABASE_APPS) databases[app] = await createTestDatabase(`img_${app}`);
      for (const name of [
        'sim',
        'gateway',
        'metrics',
        'account',
        'accountHttp',
        'ledger',
        'ledgerHttp',
        'builds',
        'buildsHttp',
        'runs',
        'runsHttp',
      ])
        ports[name] = await freePort();
    }, 120_000);

    afterAll(async () => {
      for (const child of children) child.process.kill('SIGKILL');
      for (const database of Object.values(databases)) await database.drop();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    // Usage events cross from the edge to the ledger only over Kafka in services mode (the in-process bus
    // lives inside one process), so the usage check needs a broker (TEST_KAFKA_BROKERS).
    // Without one, the edge must be told outright that its usage goes nowhere, or it refuses to start.
    // A topic prefix of this run's own: the ledger's migrate makes its topic, whatever an earlier run left.
    const kafka: Record<string, string> = backends.kafkaBrokers
      ? { KAFKA_BROKERS: backends.kafkaBrokers.join(','), KAFKA_TOPIC_PREFIX: `images-${process.pid}-${Date.now()}.` }
      : {};
    const edgeUsage = backends.kafkaBrokers ? kafka : { USAGE_EVENTS: 'off' };
    const gatewayUrl = () => `http://127.0.0.1:${ports.gateway}`;
    const env = (app: App): Record<string, string> => {
      const account = `127.0.0.1:${ports.account}`;
      switch (app) {
        case 'sim-upstream':
          return { SIM_PORT: String(ports.sim), SIM_LATENCY_MS: '5', SIM_TOKENS_PER_SECOND: '0' };
        case 'account':
          return {
            ...redis,
            DATABASE_URL: databases.account.databaseUrl!,
            ACCOUNT_GRPC_PORT: String(ports.account),
            ACCOUNT_HTTP_PORT: String(ports.accountHttp),
            SBC_BOOTSTRAP_KEY: KEY,
            UPSTREAM_SECRETS_KEY: SECRETS_KEY,
          };
        case 'usage-ledger':
          return {
            ...redis,
            ...kafka,
            DATABASE_URL: databases['usage-ledger'].databaseUrl!,
            USAGE_LEDGER_GRPC_PORT: String(ports.ledger),
            USAGE_LEDGER_HTTP_PORT: String(ports.ledgerHttp),
          };
        case 'x-builds':
          return {
            ...redis,
            DATABASE_URL: databases['x-builds'].databaseUrl!,
            X_BUILDS_GRPC_PORT: String(ports.builds),
            X_BUILDS_HTTP_PORT: String(ports.buildsHttp),
            ACCOUNT_GRPC_TARGET: account,
            GATEWAY_URL: gatewayUrl(),
          };
        case 'runs':
          return {
            ...redis,
            DATABASE_URL: databases.runs.databaseUrl!,
            RUNS_GRPC_PORT: String(ports.runs),
            RUNS_HTTP_PORT: String(ports.runsHttp),
            ACCOUNT_GRPC_TARGET: account,
            GATEWAY_URL: gatewayUrl(),
          };
        case 'gateway':
          return {
            ...redis,
            ...edgeUsage,
            PORT: String(ports.gateway),
            METRICS_PORT: String(ports.metrics),
            ACCOUNT_GRPC_TARGET: account,
            USAGE_LEDGER_GRPC_TARGET: `127.0.0.1:${ports.ledger}`,
            X_BUILDS_GRPC_TARGET: `127.0.0.1:${ports.builds}`,
            RUNS_GRPC_TARGET: `127.0.0.1:${ports.runs}`,
            HOUSE_ENGINES: JSON.stringify({
              house: [{ dialect: 'openai', base_url: `http://127.0.0.1:${ports.sim}`, model: 'sim-large' }],
            }),
          };
      }
    };
    const readyUrl = (app: App) =>
      ({
        gateway: gatewayUrl(),
        'sim-upstream': `http://127.0.0.1:${ports.sim}`,
        account: `http://127.0.0.1:${ports.accountHttp}`,
        'usage-ledger': `http://127.0.0.1:${ports.ledgerHttp}`,
        'x-builds': `http://127.0.0.1:${ports.buildsHttp}`,
        runs: `http://127.0.0.1:${ports.runsHttp}`,
      })[app] + '/readyz';

    it.each(DATABASE_APPS)(
      '%s migrates an empty database as a one-shot command (`<image> migrate`) and exits 0',
      async (app) => {
        const migration = run(app, env(app), ['migrate']);
        expect({ app, code: await migration.exited, output: migration.output() }).toEqual({
          app,
          code: 0,
          output: expect.any(String),
        });
      },
    );

    it('the account migration created its tables', async () => {
      const client = new pg.Client({ connectionString: databases.account.databaseUrl });
      await client.connect();
      try {
        const tables = await client.query(
          `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_name = 'caller_keys'`,
        );
        expect(tables.rows[0].n).toBe(1);
      } finally {
        await client.end();
      }
    });

    it.each([...DATABASE_APPS, 'sim-upstream'] as const)(
      '%s started alone reaches /readyz and exits 0 on SIGTERM',
      async (app) => {
        const child = run(app, env(app));
        await waitReady(child, readyUrl(app));
        expect(await stop(child)).toEqual({ app, code: 0 });
      },
    );

    describe('all of them together, each its own process', () => {
      const together: Child[] = [];
      const openai = () => new OpenAI({ apiKey: KEY, baseURL: `${gatewayUrl()}/v1`, maxRetries: 0 });

      beforeAll(async () => {
        // The order deploy/README.md gives: the simulator and the backends, then the edge (ready once account serves).
        for (const app of ['sim-upstream', ...DATABASE_APPS, 'gateway'] as const) {
          const child = run(app, env(app));
          together.push(child);
          await waitReady(child, readyUrl(app));
        }
      }, 120_000);

      it(
        'the edge answers a REST call from the account service and model calls (plain and streamed) with the ' +
          'official SDK',
        async () => {
          const whoami = await fetch(`${gatewayUrl()}/v1/keys/whoami`, { headers: { authorization: `Bearer ${KEY}` } });
          expect(whoami.status).toBe(200);
          const completion = await openai().chat.completions.create({
            model: 'house',
            messages: [{ role: 'user', content: 'hello from an image' }],
          });
          expect(completion.model).toBe('house');
          expect(completion.choices[0]?.message.content).toMatch(/\S/);
          const stream = await openai().chat.completions.create({
            model: 'house',
            stream: true,
            messages: [{ role: 'user', content: 'sim-tokens:5' }],
          });
          let text = '';
          for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
          expect(text).toMatch(/\S/);
        },
      );

      it('the edge serves GET /v1/usage/requests from the ledger process', async () => {
        const usage = await fetch(`${gatewayUrl()}/v1/usage/requests`, { headers: { authorization: `Bearer ${KEY}` } });
        expect(usage.status).toBe(200);
        expect(await usage.json()).toMatchObject({ object: 'list', data: expect.any(Array) });
      });

      (backends.kafkaBrokers ? it : it.skip)(
        'a model call made through the edge shows up in GET /v1/usage/requests (over Kafka)',
        async () => {
          const { response } = await openai()
            .chat.completions.create({ model: 'house', messages: [{ role: 'user', content: 'count me' }] })
            .withResponse();
          const requestId = response.headers.get('x-request-id');
          expect(requestId).toBeTruthy();
          // A usage row's `id` is its event id (the ledger's key); the caller's x-request-id is its `request_id`.
          const deadline = Date.now() + 30_000;
          let rows: Array<{ id: string; request_id: string; model: string }> = [];
          while (!rows.some((row) => row.request_id === requestId) && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 200));
            const page = await fetch(`${gatewayUrl()}/v1/usage/requests?limit=100`, {
              headers: { authorization: `Bearer ${KEY}` },
            });
            rows = ((await page.json()) as { data: typeof rows }).data;
          }
          expect(rows.filter((row) => row.request_id === requestId)).toEqual([
            expect.objectContaining({ request_id: requestId, model: 'house' }),
          ]);
        },
        60_000,
      );

      it('every process stops on SIGTERM with exit 0, the edge first', async () => {
        for (const child of [...together].reverse()) expect(await stop(child)).toEqual({ app: child.app, code: 0 });
      }, 60_000);
    });
  },
);
