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
// Environment:
//   DATABASE_URL   PostgreSQL server to use (default postgres://postgres@127.0.0.1:5432/test); the bench makes
//                  and drops its own database there
//   BENCH_EVENTS   events to apply (default 50000)      BENCH_ACCOUNTS  accounts they spread over (default 200)
//   LEDGER_BATCH_SIZE  events per transaction (the ledger's setting, default 500)
//   BENCH_TARGET   events/s to meet (default 5000); exit 2 below it when BENCH_ENFORCE=1
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { build } from 'esbuild';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const events = Number(env.BENCH_EVENTS ?? 50_000);
const accounts = Number(env.BENCH_ACCOUNTS ?? 200);
const target = Number(env.BENCH_TARGET ?? 5_000);
const serverUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The ledger as a library: its main.ts bundled with its migrations beside it, not marked as a bundle entry. */
async function buildLedger() {
  const dir = path.join(root, 'dist/bench/usage-ledger');
  rmSync(dir, { recursive: true, force: true });
  await build({
    entryPoints: [path.join(root, 'apps/usage-ledger/src/main.ts')],
    outfile: path.join(dir, 'main.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    tsconfig: path.join(root, 'tsconfig.base.json'),
    logLevel: 'warning',
    define: { SBC_BUNDLE_ENTRY: JSON.stringify('bench') },
  });
  cpSync(path.join(root, 'apps/usage-ledger/prisma/migrations'), path.join(dir, 'migrations/usage-ledger'), { recursive: true });
  return createRequire(import.meta.url)(path.join(dir, 'main.js'));
}

const ledger = await buildLedger();

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
    return { topic: 'usage.events.v1', key: `usr_bench_${account}`, value, headers: {}, partition: 0, offset: String(n) };
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

const dbName = `bench_ledger_${process.pid}_${Date.now()}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const dbUrl = new URL(serverUrl);
dbUrl.pathname = `/${dbName}`;

let running;
let exitCode = 0;
try {
  const { bus, captured } = captureBus();
  running = await ledger.start(
    ledger.loadUsageLedgerConfig({ ...env, DATABASE_URL: dbUrl.toString(), USAGE_LEDGER_GRPC_PORT: '0', USAGE_LEDGER_HTTP_PORT: '0', SBC_DATA_DIR: 'memory://', LOG_LEVEL: 'warn' }),
    { bus, store: memoryStore() },
  );
  const list = makeEvents(events);
  const firstSeconds = await applyAll(captured.handler, captured.maxBatchSize, list);
  const shuffled = [...list].sort(() => Math.random() - 0.5);
  const replaySeconds = await applyAll(captured.handler, captured.maxBatchSize, shuffled);

  const check = new pg.Client({ connectionString: dbUrl.toString() });
  await check.connect();
  const { rows } = await check.query(
    `SELECT (SELECT count(*) FROM usage_generations)::int AS calls, (SELECT sum(requests) FROM usage_hourly)::int AS hourly, (SELECT sum(requests) FROM usage_daily)::int AS daily`,
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
  console.log(`\nusage ledger: ${result.applied_events_per_s} events/s applied by one consumer (${result.redelivered_events_per_s}/s redelivered), target ${target}/s`);
  if (rows[0].calls !== events || rows[0].hourly !== events || rows[0].daily !== events) {
    console.error('rows do not add up to the events applied');
    exitCode = 1;
  } else if (env.BENCH_ENFORCE === '1' && result.applied_events_per_s < target) exitCode = 2;
} finally {
  await running?.stop();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}
process.exit(exitCode);
