// Usage ledger throughput: events per second applied by one consumer against PostgreSQL, each batch in one
// transaction (idempotent multi-row insert of the calls, hourly and daily rollups, account bookkeeping).
//
//   node bench/ledger.mjs
//   BENCH_EVENTS=20000 node bench/ledger.mjs
//
// The ledger is bundled from its sources (as tools/build-app.mjs does, into dist/bench/usage-ledger, but as a
// library: the bundle does not start itself) and started in this process on its own fresh database, with a
// bus stand-in that captures the ledger's batch handler: the bench then hands it the events
// in batches of the ledger's own size, back to back, one at a time, as a bus partition does. Events are real
// protobuf UsageEvents (proto/sbc/usage/v1/usage_event.proto), spread over accounts, keys, models and two days
// of hours so the rollups see realistic cardinality. A second pass feeds every event again (a full
// redelivery), which must change nothing.
//
// BENCH_READS=1 runs the read phase instead: the usage routes as a dashboard and an export call them, through
// HTTP against the real edge route. The account service and the usage ledger (each on its own fresh PostgreSQL
// database) and the edge run as separate processes from bundles built into
// dist/bench/ledger-reads. Calls are seeded straight into usage_generations with generate_series, and the
// rollups are built from them by the ledger's own rollup SQL (ROLLUP_CTES in store/generations.ts), for:
// 10k, 100k and 1M calls of one account over 90 days, and 1M calls spread over 1,000 accounts (the reader's
// share: 1,000). Each route is timed BENCH_RUNS times after one unmeasured call (p50 printed); the export is
// a 90-day CSV, read to its end, in rows/s.
//
// Environment:
//   DATABASE_URL   PostgreSQL server to use (default postgres://postgres@127.0.0.1:5432/test); the bench makes
//                  and drops its own databases there
//   BENCH_READS=1  the read phase;  BENCH_SIZES=10000,100000,1000000,1000000x1000 (calls, or calls x accounts)
//   BENCH_RUNS     timed calls per route (default 5; the export 3)
//   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'   node flags for the ledger and edge processes
//   BENCH_EVENTS   events to apply (default 50000)      BENCH_ACCOUNTS  accounts they spread over (default 200)
//   LEDGER_BATCH_SIZE  events per transaction (the ledger's setting, default 500)
//   BENCH_TARGET   events/s to meet (default 5000); exit 2 below it when BENCH_ENFORCE=1
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { build } from 'esbuild';
import pg from 'pg';
import { request } from 'undici';
import { cpuMs, freePort, startChild, stopChildren, waitReady } from './lib/procs.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const events = Number(env.BENCH_EVENTS ?? 50_000);
const accounts = Number(env.BENCH_ACCOUNTS ?? 200);
const target = Number(env.BENCH_TARGET ?? 5_000);
const serverUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/**
 * `apps/<app>/src/<entry>` bundled into dist/bench/<dir>, with the app's migrations beside it. `entryOf` names the
 * bundle for libs/lifecycle: the app's own name starts the service; anything else leaves it a library.
 */
async function bundle(app, entry, dir, entryOf) {
  const outdir = path.join(root, 'dist/bench', dir);
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: [path.join(root, 'apps', app, 'src', entry)],
    outfile: path.join(outdir, 'main.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    tsconfig: path.join(root, 'tsconfig.base.json'),
    logLevel: 'warning',
    define: { SBC_BUNDLE_ENTRY: JSON.stringify(entryOf) },
  });
  const migrations = path.join(root, 'apps', app, 'prisma/migrations');
  if (existsSync(migrations)) cpSync(migrations, path.join(outdir, 'migrations', app), { recursive: true });
  return path.join(outdir, 'main.js');
}

/** One UsageEvent in protobuf wire format (field numbers from usage_event.proto). */
function encodeEvent(e) {
  const w = new BinaryWriter();
  const str = (field, value) => w.tag(field, WireType.LengthDelimited).string(value);
  const i64 = (field, value) => w.tag(field, WireType.Varint).int64(value);
  str(1, e.requestId);
  str(2, e.accountId);
  str(3, e.accountId);
  str(4, e.keyId);
  str(6, e.model);
  str(7, e.model);
  str(8, 'house');
  str(9, 'sim-upstream');
  str(10, 'chat');
  str(11, 'openai');
  str(12, 'auto');
  i64(13, e.input);
  i64(14, e.output);
  i64(15, e.cacheRead);
  w.tag(18, WireType.Bit64).double(e.listUsd);
  w.tag(19, WireType.Bit64).double(e.credits);
  w.tag(21, WireType.Varint).int32(200);
  i64(22, 40 + (e.n % 900));
  i64(23, 5 + (e.n % 90));
  w.tag(25, WireType.LengthDelimited).fork();
  w.tag(1, WireType.Varint).int64(Math.floor(e.atMs / 1000));
  w.tag(2, WireType.Varint).int32((e.atMs % 1000) * 1e6);
  w.join();
  str(27, e.keyLabel);
  return w.finish();
}

function makeEvents(count) {
  const models = ['house', 'house-omni', 'house-fast'];
  const start = Date.now() - 48 * 3_600_000;
  return Array.from({ length: count }, (_, n) => {
    const account = n % accounts;
    const input = 200 + ((n * 7919) % 4000);
    const output = 20 + ((n * 104729) % 800);
    const listUsd = Math.round((input * 200 + output * 800) * 1e-9 * 1e9) / 1e9;
    const value = encodeEvent({
      n,
      requestId: `req_bench_${n.toString(36).padStart(8, '0')}`,
      accountId: `usr_bench_${account}`,
      keyId: `key_bench_${account}_${n % 5}`,
      keyLabel: `bench key ${n % 5}`,
      model: models[n % 3],
      input,
      output,
      cacheRead: n % 4 === 0 ? 100 : 0,
      listUsd,
      credits: Math.round(listUsd * 1e3 * 1e6) / 1e6,
      atMs: start + Math.floor((n / count) * 48 * 3_600_000),
    });
    return {
      topic: 'usage.events.v1',
      key: `usr_bench_${account}`,
      value,
      headers: {},
      partition: 0,
      offset: String(n),
    };
  });
}

/** Holds the ledger's batch handler instead of delivering; the bench is the partition. */
function captureBus() {
  const captured = {};
  const noop = async () => undefined;
  return {
    captured,
    bus: {
      kind: 'in-process',
      producer: { send() {}, flush: noop, stats: () => ({ pending: 0, sent: 0, failed: 0, dropped: 0 }), close: noop },
      consumer: {
        subscribe: async () => ({ stop: noop }),
        subscribeBatches: async ({ handler, maxBatchSize }) => {
          Object.assign(captured, { handler, maxBatchSize });
          return { stop: noop };
        },
        close: noop,
      },
      close: noop,
    },
  };
}

/** Just enough of the shared store for the balances the ledger publishes on first sight of an account. */
function memoryStore() {
  const values = new Map();
  return {
    get: async (key) => values.get(key) ?? null,
    set: async (key, value) => void values.set(key, value),
    del: async (key) => void values.delete(key),
    incrBy: async (key, amount) => {
      const next = Number(values.get(key) ?? 0) + amount;
      values.set(key, String(next));
      return next;
    },
    getMany: async (keys) => keys.map((key) => values.get(key) ?? null),
    slidingWindowHit: async () => ({ allowed: true }),
    close: async () => undefined,
  };
}

async function applyAll(handler, batchSize, list) {
  const started = performance.now();
  for (let i = 0; i < list.length; i += batchSize) await handler(list.slice(i, i + batchSize));
  return (performance.now() - started) / 1000;
}

/** The write phase: events applied per second by one consumer, then the same events redelivered. */
async function writes(dbUrl) {
  const ledger = createRequire(import.meta.url)(await bundle('usage-ledger', 'main.ts', 'usage-ledger', 'bench'));
  let running;
  try {
    const { bus, captured } = captureBus();
    running = await ledger.start(
      ledger.loadUsageLedgerConfig({
        ...env,
        DATABASE_URL: dbUrl,
        USAGE_LEDGER_GRPC_PORT: '0',
        USAGE_LEDGER_HTTP_PORT: '0',
        SBC_DATA_DIR: 'memory://',
        LOG_LEVEL: 'warn',
      }),
      { bus, store: memoryStore() },
    );
    const list = makeEvents(events);
    const firstSeconds = await applyAll(captured.handler, captured.maxBatchSize, list);
    const shuffled = [...list].sort(() => Math.random() - 0.5);
    const replaySeconds = await applyAll(captured.handler, captured.maxBatchSize, shuffled);

    const check = new pg.Client({ connectionString: dbUrl });
    await check.connect();
    const { rows } = await check.query(
      `SELECT (SELECT count(*) FROM usage_generations)::int AS calls, (SELECT sum(requests) FROM usage_hourly)::int ` +
        `AS hourly, (SELECT sum(requests) FROM usage_daily)::int AS daily`,
    );
    await check.end();
    const result = {
      events,
      accounts,
      batch_size: captured.maxBatchSize,
      applied_events_per_s: Math.round(events / firstSeconds),
      redelivered_events_per_s: Math.round(events / replaySeconds),
      seconds: { first: Number(firstSeconds.toFixed(2)), redelivery: Number(replaySeconds.toFixed(2)) },
      rows: rows[0],
      target_events_per_s: target,
    };
    console.log(JSON.stringify(result, null, 2));
    console.log(
      `\nusage ledger: ${result.applied_events_per_s} events/s applied by one consumer ` +
        `(${result.redelivered_events_per_s}/s redelivered), target ${target}/s`,
    );
    if (rows[0].calls !== events || rows[0].hourly !== events || rows[0].daily !== events) {
      console.error('rows do not add up to the events applied');
      return 1;
    }
    return env.BENCH_ENFORCE === '1' && result.applied_events_per_s < target ? 2 : 0;
  } finally {
    await running?.stop();
  }
}

// --- read phase ---------------------------------------------------------------------------------------------

const READ_KEY = 'sbc_' + 'benchledgerreads0123456789abcdef'; // the account service's bootstrap key
const DAY_MS = 86_400_000;
const SPAN_DAYS = 90;

/**
 * "10000" is 10,000 calls of the reader's account; "1000000x1000" is 1M calls over 1,000 accounts, the reader one of
 * them.
 */
function sizeOf(spec) {
  const [calls, accountsOver = '1'] = spec.split('x');
  return { name: spec, calls: Number(calls), accounts: Number(accountsOver) };
}

/**
 * Replaces every call with `size.calls` calls spread evenly over the last 90 days (every `accounts`-th one the
 * reader's, the rest other accounts'), 3 models, 5 keys per account, 2% failed, and builds the rollups from
 * them with the ledger's own rollup statement.
 */
async function seed(db, size, readerId, rollupCtes) {
  await db.query('TRUNCATE usage_generations, usage_hourly, usage_daily');
  const started = performance.now();
  await db.query(
    `INSERT INTO usage_generations (event_id, request_id, account_id, user_id, key_id, key_label, model, upstream, ` +
      `provider, dialect_in, dialect_out, route,
       tokens_prompt, tokens_completion, cache_read, total_cost_usd, credits_charged, status, latency_ms, ttft_ms, ` +
      `stream, session_id, ts)
     SELECT 'evt_' || g, 'req_' || g, a, a, 'key_' || (g % ` +
      `5), 'bench key ' || (g % 5), (ARRAY['house', 'house-omni', ` +
      `'house-fast'])[(g % 3 + 1)::int],
            'house', 'sim-upstream', 'chat', 'openai', 'auto', ` +
      `200 + (g * 7919) % 4000, 20 + (g * 104729) % 800, CASE ` +
      `WHEN g % 4 = 0 THEN 100 ELSE 0 END,
            c, c * 1000, CASE WHEN g % 50 = 0 THEN 502 ELSE 200 END, 40 + g % 900, 5 + g % 90, g % 2 = 0, 'ses_' || ` +
      `(g % 1000),
            $2::timestamptz - (g::float8 / $1) * interval '${SPAN_DAYS} days'
     FROM generate_series(1, $1::bigint) AS g,
          LATERAL (SELECT CASE WHEN g % $3 = 0 THEN $4 ELSE 'usr_bench_' || (g % $3) END AS a,
                          ((200 + (g * 7919) % 4000) * 200 + (20 + (g * 104729) % 800) * 800) * 0.000000001::numeric ` +
      `AS c) AS row`,
    [size.calls, new Date().toISOString(), size.accounts, readerId],
  );
  await db.query(`WITH inserted AS (SELECT * FROM usage_generations), ${rollupCtes} SELECT 1`);
  await db.query('VACUUM ANALYZE usage_generations, usage_hourly, usage_daily');
  const { rows } = await db.query('SELECT count(*)::int AS calls FROM usage_generations WHERE account_id = $1', [
    readerId,
  ]);
  return { seconds: (performance.now() - started) / 1000, readerCalls: rows[0].calls };
}

/** One GET through the edge, read to its end: milliseconds, body bytes and lines. */
async function timedGet(origin, pathAndQuery) {
  const started = performance.now();
  const res = await request(`${origin}${pathAndQuery}`, {
    headers: { authorization: `Bearer ${READ_KEY}` },
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
  }
  if (res.statusCode !== 200) throw new Error(`GET ${pathAndQuery}: ${res.statusCode}`);
  return { ms: performance.now() - started, bytes, lines };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

async function p50(origin, pathAndQuery, runs) {
  await timedGet(origin, pathAndQuery); // unmeasured: connection, first plan
  const samples = [];
  for (let n = 0; n < runs; n++) samples.push(await timedGet(origin, pathAndQuery));
  return { ms: median(samples.map((s) => s.ms)), bytes: samples[0].bytes, lines: samples[0].lines };
}

/** The usage routes as the dashboard calls them, and a 90-day CSV export. */
/**
 * The PostgreSQL backends connected to `dbName` (their process titles name it), as processes to read CPU time
 * from: only on a server on this machine; elsewhere none.
 */
function backendsOf(dbName) {
  const found = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const title = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.includes(` ${dbName} `))
        found.push({ name: 'postgres', child: { pid: Number(pid) } });
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** CPU milliseconds used by each named group of processes while `run` runs; 0 for a process not readable here. */
async function cpuWhile(processes, run, dbName) {
  const read = () =>
    processes.map((p) => {
      try {
        return cpuMs(p.child.pid);
      } catch {
        return 0; // gone, or a remote server
      }
    });
  const before = read();
  const client = process.cpuUsage();
  const result = await run();
  const after = read();
  // A backend the pool opened during the run counts from zero; one it closed is lost (the pool keeps them while busy).
  const extra = backendsOf(dbName).filter((b) => !processes.some((p) => p.child.pid === b.child.pid));
  for (const b of extra) {
    processes = [...processes, b];
    before.push(0);
    after.push(cpuMs(b.child.pid));
  }
  const used = { client: (process.cpuUsage(client).user + process.cpuUsage(client).system) / 1000 };
  processes.forEach((p, i) => (used[p.name] = (used[p.name] ?? 0) + after[i] - before[i]));
  return { result, used };
}

async function readRoutes(origin, runs, processes, dbName) {
  const firstPage = JSON.parse(
    await (
      await request(`${origin}/v1/usage/requests?limit=50`, { headers: { authorization: `Bearer ${READ_KEY}` } })
    ).body.text(),
  );
  const exportFrom = new Date(Date.now() - (SPAN_DAYS + 1) * DAY_MS).toISOString();
  const routes = {
    usage: '/v1/usage',
    daily: '/v1/usage/daily',
    // A zone whose midnights fall inside UTC hours (+05:30): the hours they cut are read from the calls.
    daily_kolkata: '/v1/usage/daily?tz=Asia/Kolkata',
    breakdown_day: '/v1/usage/breakdown?group=model',
    breakdown_hour: '/v1/usage/breakdown?bucket=hour&group=key',
    report: '/v1/usage/report',
    requests: '/v1/usage/requests?limit=50',
    requests_next: `/v1/usage/requests?limit=50&after_id=${firstPage.last_id}`,
  };
  const times = {};
  for (const [name, route] of Object.entries(routes)) times[name] = (await p50(origin, route, runs)).ms;
  const exportRuns = Math.max(1, Math.ceil(runs / 2));
  const { result: exported, used } = await cpuWhile(
    [...processes, ...backendsOf(dbName)],
    () => p50(origin, `/v1/usage/export?format=csv&from=${exportFrom}`, exportRuns),
    dbName,
  );
  const rows = exported.lines - 1; // the header
  // CPU per 1,000 exported rows, per process (every export counted, the unmeasured first one too): where the
  // time goes, whatever else the machine is running.
  const cpuPer1k = Object.fromEntries(
    Object.entries(used).map(([name, ms]) => [
      name,
      Number(((ms / (exportRuns + 1) / Math.max(1, rows)) * 1000).toFixed(2)),
    ]),
  );
  return {
    times,
    export: {
      rows,
      mb: exported.bytes / 1e6,
      ms: exported.ms,
      rows_per_s: rows / (exported.ms / 1000),
      cpu_ms_per_1k_rows: cpuPer1k,
    },
  };
}

async function reads(dbUrl, accountDbUrl) {
  const sizes = (env.BENCH_SIZES ?? '10000,100000,1000000,1000000x1000').split(',').map(sizeOf);
  const runs = Math.max(1, Number(env.BENCH_RUNS ?? 5));
  const dir = 'ledger-reads';
  const [ledgerMain, accountMain, gatewayMain] = await Promise.all([
    bundle('usage-ledger', 'main.ts', `${dir}/usage-ledger`, 'usage-ledger'),
    bundle('account', 'main.ts', `${dir}/account`, 'account'),
    bundle('gateway', 'main.ts', `${dir}/gateway`, 'gateway'),
  ]);
  const { ROLLUP_CTES } = createRequire(import.meta.url)(
    await bundle('usage-ledger', 'store/generations.ts', `${dir}/generations`, 'bench'),
  );
  const db = new pg.Client({ connectionString: dbUrl });
  try {
    const [ledgerGrpc, ledgerHttp, accountGrpc, accountHttp, edgePort] = await Promise.all([
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const nodeArgs = env.BENCH_NODE_ARGS ? env.BENCH_NODE_ARGS.split(' ').filter(Boolean) : [];
    const ledger = startChild(
      'usage-ledger',
      ledgerMain,
      {
        DATABASE_URL: dbUrl,
        USAGE_LEDGER_GRPC_PORT: String(ledgerGrpc),
        USAGE_LEDGER_HTTP_PORT: String(ledgerHttp),
        LOG_LEVEL: 'warn',
      },
      nodeArgs,
    );
    const account = startChild('account', accountMain, {
      DATABASE_URL: accountDbUrl,
      UPSTREAM_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      SBC_BOOTSTRAP_KEY: READ_KEY,
      ACCOUNT_GRPC_PORT: String(accountGrpc),
      ACCOUNT_HTTP_PORT: String(accountHttp),
      LOG_LEVEL: 'warn',
    });
    await waitReady(ledger, `http://127.0.0.1:${ledgerHttp}/readyz`);
    await waitReady(account, `http://127.0.0.1:${accountHttp}/readyz`);
    const edge = startChild(
      'gateway',
      gatewayMain,
      {
        ACCOUNT_GRPC_TARGET: `127.0.0.1:${accountGrpc}`,
        USAGE_LEDGER_GRPC_TARGET: `127.0.0.1:${ledgerGrpc}`,
        PORT: String(edgePort),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        // The request bucket would refuse a benchmark's pace (an export costs 20 requests); it is measured apart.
        RATE_LIMIT_PER_MINUTE: '100000000',
      },
      nodeArgs,
    );
    const origin = `http://127.0.0.1:${edgePort}`;
    await waitReady(edge, `${origin}/readyz`);
    const whoami = JSON.parse(
      await (
        await request(`${origin}/v1/keys/whoami`, { headers: { authorization: `Bearer ${READ_KEY}` } })
      ).body.text(),
    );
    const readerId = whoami.user_id;
    if (!readerId) throw new Error(`whoami gave no user_id: ${JSON.stringify(whoami)}`);
    await db.connect();

    const results = [];
    for (const size of sizes) {
      const seeded = await seed(db, size, readerId, ROLLUP_CTES);
      console.log(
        `${size.name}: seeded ${size.calls.toLocaleString('en-US')} calls ` +
          `(${seeded.readerCalls.toLocaleString('en-US')} the reader's) in ${seeded.seconds.toFixed(1)} s`,
      );
      results.push({
        size,
        seeded,
        ...(await readRoutes(origin, runs, [ledger, edge], new URL(dbUrl).pathname.slice(1))),
      });
    }
    printReads(results, runs);
  } finally {
    await db.end().catch(() => undefined);
    await stopChildren();
  }
  return 0;
}

function printReads(results, runs) {
  const label = ({ size, seeded }) =>
    size.accounts === 1
      ? `${compact(size.calls)} calls, 1 account`
      : `${compact(size.calls)} calls, ${size.accounts.toLocaleString('en-US')} accounts ` +
        `(${compact(seeded.readerCalls)} the reader's)`;
  const ms = (value) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
  const names = Object.keys(results[0].times);
  console.log(`\nusage reads through the edge, p50 of ${runs} in ms; export: a 90-day CSV\n`);
  console.log(`| calls | ${names.map((n) => n.replace('_', ' ')).join(' | ')} | export | export rows/s |`);
  console.log(`| --- | ${names.map(() => '---:').join(' | ')} | ---: | ---: |`);
  for (const r of results) {
    console.log(
      `| ${label(r)} | ${names.map((n) => ms(r.times[n])).join(' | ')} | ${(r.export.ms / 1000).toFixed(2)} s ` +
        `(${r.export.mb.toFixed(0)} MB) | ${Math.round(r.export.rows_per_s).toLocaleString('en-US')} |`,
    );
  }
  console.log('\nexport CPU per 1,000 rows, ms:');
  for (const r of results)
    console.log(
      `  ${label(r)}: ${Object.entries(r.export.cpu_ms_per_1k_rows)
        .map(([name, value]) => `${name} ${value}`)
        .join(', ')}`,
    );
  console.log(
    JSON.stringify(
      results.map((r) => ({
        size: r.size.name,
        reader_calls: r.seeded.readerCalls,
        seed_seconds: Number(r.seeded.seconds.toFixed(1)),
        ms: r.times,
        export: r.export,
      })),
    ),
  );
}

const compact = (value) => new Intl.NumberFormat('en-US', { notation: 'compact' }).format(value);

// The ledger's database, and the account service's for the read phase, made here and dropped at the end.
const dbName = `bench_ledger_${process.pid}_${Date.now()}`;
const databases = env.BENCH_READS === '1' ? [dbName, `${dbName}_account`] : [dbName];
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
const urlOf = (name) => {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
};
let exitCode = 1;
try {
  for (const name of databases) await admin.query(`CREATE DATABASE ${name}`);
  exitCode =
    env.BENCH_READS === '1' ? await reads(urlOf(dbName), urlOf(`${dbName}_account`)) : await writes(urlOf(dbName));
} finally {
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
process.exit(exitCode);
