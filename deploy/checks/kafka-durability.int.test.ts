import { execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { build } from 'esbuild';
import { createBus, createTopicAdmin, MIN_RETENTION_MS, provisionTopic, type Bus } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import {
  type Child,
  collect,
  createTestDatabase,
  freePort,
  startTcpProxy,
  testBackends,
  type TestDatabase,
  waitReady,
} from '@sbc/testing';
import { loadUsageLedgerConfig, start as startLedger, type RunningUsageLedger } from '@sbc/app-usage-ledger';

// Issue 42's real-broker suite: usage events from an edge's producer (with its spool) to the ledger, through a
// real Kafka, while the broker, the ledger, the group and the database misbehave. Each scenario has a topic
// prefix and a consumer group of its own. It needs TEST_KAFKA_BROKERS and TEST_DATABASE_URL; the broker outage
// also needs TEST_KAFKA_CONTAINER, the docker container of a single-node broker it may pause, and the kill -9
// needs the ledger's bundle (`npm run build`). deploy/README.md "Tests against the fake and a real broker" has
// the commands. Every scenario checks the same end state: each event applied once, in the rows and in the
// rollups, nothing dropped, the spool drained.

const ROOT = path.resolve(__dirname, '../..');
const backends = testBackends();
const brokers = backends.kafkaBrokers;
const container = process.env.TEST_KAFKA_CONTAINER;
const withBroker = brokers && backends.postgresUrl ? describe : describe.skip;
if (!brokers || !backends.postgresUrl)
  console.warn(
    'kafka durability: TEST_KAFKA_BROKERS and TEST_DATABASE_URL are needed; the real-broker suite is skipped',
  );
const itWithContainer = container ? it : it.skip;
const ledgerBundle = path.join(ROOT, 'dist/apps/usage-ledger/main.js');
const logger = createLogger({ service: 'kafka-durability-test', level: 'warn' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** A usage event as the edge encodes it, keyed and identified by `id`; every event charges 1 credit. */
function usageEvent(id: string, accountId: string, ts = Date.now()): { key: string; value: Uint8Array } {
  const event = create(UsageEventSchema, {
    eventId: id,
    requestId: `req_${id}`,
    accountId,
    model: 'house',
    status: 200,
    creditsCharged: 1,
    outputTokens: 10n,
    ts: timestampFromMs(ts),
  });
  return { key: accountId, value: toBinary(UsageEventSchema, event) };
}

/** One scenario's names, topic and database. */
interface Scenario {
  prefix: string;
  partitions: number;
  groupId: string;
  db: TestDatabase;
  spoolDir: string;
  /** The edge's producer: Kafka behind the spool, as in services mode. */
  edge: Bus;
  cleanup(): Promise<void>;
}

/** Makes the scenario's topic as migrate does (the apps never create it), unless `provision` is false. */
async function scenario(
  label: string,
  partitions: number,
  options: { provision?: boolean; maxBuffered?: number } = {},
): Promise<Scenario> {
  const prefix = `durability-${randomUUID().slice(0, 8)}.`;
  if (options.provision ?? true) await provisionScenarioTopic(prefix, partitions);
  const db = await createTestDatabase(`durability_${label}`);
  const spoolDir = mkdtempSync(path.join(tmpdir(), 'sbc-durability-spool-'));
  const edge = createBus({
    kafkaBrokers: brokers,
    clientId: 'durability-edge',
    logger,
    topicPrefix: prefix,
    outboxDir: spoolDir,
    spoolAfterMs: 500,
    maxBuffered: options.maxBuffered,
    spool: { leaseMs: 3_000 },
  });
  return {
    prefix,
    partitions,
    groupId: `ledger-${prefix}`,
    db,
    spoolDir,
    edge,
    async cleanup() {
      await edge.close();
      await db.drop();
      rmSync(spoolDir, { recursive: true, force: true });
    },
  };
}

function provisionScenarioTopic(prefix: string, partitions: number) {
  const admin = createTopicAdmin({ brokers: brokers!, clientId: 'durability-migrate', logger });
  return provisionTopic(
    admin,
    { topic: prefix + USAGE_EVENTS_TOPIC, partitions, retentionMs: MIN_RETENTION_MS },
    logger,
  );
}

function ledgerEnv(s: Scenario, databaseUrl = s.db.databaseUrl!): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    KAFKA_TOPIC_PARTITIONS: String(s.partitions),
    KAFKA_BROKERS: brokers!.join(','),
    KAFKA_TOPIC_PREFIX: s.prefix,
    KAFKA_GROUP_ID: s.groupId,
    KAFKA_PROVISION_TOPIC: 'false',
    LEDGER_BATCH_SIZE: '50',
    LOG_LEVEL: 'warn',
  };
}

/** The ledger in this process, consuming on its own Kafka client, as `node dist/apps/usage-ledger/main.js` does. */
function startInProcessLedger(s: Scenario, env: Record<string, string> = {}): Promise<RunningUsageLedger> {
  return startLedger(
    loadUsageLedgerConfig({ USAGE_LEDGER_GRPC_PORT: '0', USAGE_LEDGER_HTTP_PORT: '0', ...ledgerEnv(s), ...env }),
    { logger },
  );
}

/** Sends `count` events over `spreadMs` (under load, not all at once), each awaited until durable. */
async function sendUnderLoad(s: Scenario, ids: string[], spreadMs: number): Promise<{ slowestMs: number }> {
  let slowestMs = 0;
  const pauseEvery = Math.max(1, Math.floor(ids.length / Math.max(1, spreadMs / 10)));
  const durable: Promise<void>[] = [];
  for (const [i, id] of ids.entries()) {
    const started = Date.now();
    const event = usageEvent(id, `acct_${i % 37}`);
    durable.push(
      s.edge.producer.sendDurable(USAGE_EVENTS_TOPIC, event).then(() => {
        slowestMs = Math.max(slowestMs, Date.now() - started);
      }),
    );
    if (i % pauseEvery === 0) await sleep(10);
  }
  await Promise.all(durable);
  return { slowestMs };
}

interface LedgerCounts {
  rows: number;
  /** Calls counted in the daily rollup: a second application of an event would count it twice. */
  requests: number;
  parked: number;
  distinctIds: number;
}

async function countsIn(databaseUrl: string): Promise<LedgerCounts> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<LedgerCounts>(
      `SELECT (SELECT count(*) FROM usage_generations)::int AS rows,
              (SELECT count(DISTINCT event_id) FROM usage_generations)::int AS "distinctIds",
              (SELECT coalesce(sum(requests), 0) FROM usage_daily)::int AS requests,
              (SELECT count(*) FROM usage_dead_letters)::int AS parked`,
    );
    return rows[0]!;
  } finally {
    await client.end();
  }
}

/** Waits for every one of `expected` events to be applied, then checks none was applied twice. */
async function expectAppliedOnce(s: Scenario, expected: number, timeoutMs = 120_000): Promise<void> {
  await waitUntil(async () => (await countsIn(s.db.databaseUrl!)).rows >= expected, timeoutMs, `${expected} rows`);
  await sleep(2_000); // a late redelivery would show now
  expect(await countsIn(s.db.databaseUrl!)).toEqual({
    rows: expected,
    distinctIds: expected,
    requests: expected,
    parked: 0,
  });
  await s.edge.producer.flush();
  expect(s.edge.producer.stats()).toMatchObject({ pending: 0, dropped: 0, spooled: 0 });
}

const ids = (label: string, count: number) => Array.from({ length: count }, (_, i) => `evt_${label}_${i}`);

withBroker('usage events through a real broker, while things fail', () => {
  jest.setTimeout(300_000);

  itWithContainer(
    'a broker outage under load, with timeouts after writes: no reply waits on it, none lost',
    async () => {
      const s = await scenario('outage', 6);
      const ledger = await startInProcessLedger(s);
      try {
        const sending = sendUnderLoad(s, ids('outage', 3_000), 20_000);
        await sleep(3_000);
        // Paused mid-stream: requests already on the wire may be written and never answered (a timeout after
        // a write), and kafkajs's request timeout (30 s) passes before the broker is back.
        execFileSync('docker', ['pause', container!]);
        await sleep(40_000);
        execFileSync('docker', ['unpause', container!]);
        const { slowestMs } = await sending;
        expect(slowestMs).toBeLessThan(5_000); // each event was durable (acked or spooled) within the spool's bound
        await expectAppliedOnce(s, 3_000);
      } finally {
        await ledger.stop();
        await s.cleanup();
      }
    },
  );

  it('the ledger killed (-9) between its database and offset commits: redelivered, applied once', async () => {
    if (!existsSync(ledgerBundle)) throw new Error(`${ledgerBundle} is missing: run "npm run build" first`);
    const s = await scenario('kill', 6);
    const ports = { grpc: await freePort(), http: await freePort() };
    const run = (): Child =>
      collect(
        'usage-ledger',
        spawn(process.execPath, [ledgerBundle], {
          env: {
            PATH: process.env.PATH ?? '',
            ...ledgerEnv(s),
            USAGE_LEDGER_GRPC_PORT: String(ports.grpc),
            USAGE_LEDGER_HTTP_PORT: String(ports.http),
          },
        }),
      );
    let ledger = run();
    try {
      await waitReady(ledger, `http://127.0.0.1:${ports.http}/readyz`, 60_000);
      const sending = sendUnderLoad(s, ids('kill', 5_000), 15_000);
      // Batches of 50 commit to the database, then their offsets: a kill at any moment under load lands in
      // that window for some batch now and then, so three kills make a redelivery of applied events likely.
      for (let kill = 0; kill < 3; kill++) {
        await sleep(2_000 + Math.floor(Math.random() * 1_000));
        ledger.process.kill('SIGKILL');
        await ledger.exited;
        ledger = run();
        await waitReady(ledger, `http://127.0.0.1:${ports.http}/readyz`, 60_000);
      }
      await sending;
      await expectAppliedOnce(s, 5_000);
    } finally {
      ledger.process.kill('SIGKILL');
      await s.cleanup();
    }
  });

  it('a rebalance mid-stream on 6 partitions: members join and leave, every event applied once', async () => {
    const s = await scenario('rebalance', 6);
    const ledgers: RunningUsageLedger[] = [await startInProcessLedger(s)];
    try {
      const sending = sendUnderLoad(s, ids('rebalance', 4_000), 12_000);
      await sleep(3_000);
      ledgers.push(await startInProcessLedger(s)); // joins: partitions move to it mid-stream
      await sleep(3_000);
      ledgers.push(await startInProcessLedger(s));
      await sleep(2_000);
      await ledgers.shift()!.stop(); // leaves: its partitions move again
      await sending;
      await expectAppliedOnce(s, 4_000);
    } finally {
      for (const ledger of ledgers) await ledger.stop();
      await s.cleanup();
    }
  });

  it('poison on a live multi-partition topic, lone, in a batch and undecodable: parked, the rest applied', async () => {
    const s = await scenario('poison', 3);
    const ledger = await startInProcessLedger(s, { LEDGER_PARK_LONE_AFTER_ATTEMPTS: '3' });
    try {
      const good = ids('poison', 600);
      // A date PostgreSQL's timestamptz cannot hold: it decodes, and the database refuses it (SQLSTATE 22009).
      const refused = (id: string, account: string) => usageEvent(id, account, -8.64e15);
      const undecodable = (account: string) => ({ key: account, value: new Uint8Array(randomBytes(64)) });
      const send = (event: { key: string; value: Uint8Array }) =>
        s.edge.producer.sendDurable(USAGE_EVENTS_TOPIC, event);
      await Promise.all(good.slice(0, 200).map((id, i) => send(usageEvent(id, `acct_${i % 11}`))));
      await send(refused('evt_refused_lone', 'acct_lone')); // alone on its partition for a moment
      await send(undecodable('acct_lone'));
      // In the middle of a burst: the batch that holds them is split, and only they are parked.
      await Promise.all([
        ...good.slice(200, 400).map((id, i) => send(usageEvent(id, `acct_${i % 11}`))),
        send(refused('evt_refused_batch', 'acct_3')),
        send(undecodable('acct_5')),
        ...good.slice(400).map((id, i) => send(usageEvent(id, `acct_${i % 11}`))),
      ]);
      await waitUntil(async () => (await countsIn(s.db.databaseUrl!)).rows >= good.length, 120_000, 'the good events');
      await waitUntil(async () => (await countsIn(s.db.databaseUrl!)).parked >= 4, 60_000, 'four dead letters');
      await sleep(2_000);
      expect(await countsIn(s.db.databaseUrl!)).toEqual({
        rows: good.length,
        distinctIds: good.length,
        requests: good.length,
        parked: 4,
      });
      const parked = await ledger.database.prisma.usageDeadLetter.findMany({ orderBy: { offset: 'asc' } });
      expect(parked.map((row) => row.eventId).sort()).toEqual(
        [null, null, 'evt_refused_batch', 'evt_refused_lone'].sort(),
      );
    } finally {
      await ledger.stop();
      await s.cleanup();
    }
  });

  it('a PostgreSQL blackhole longer than the session timeout: the member stays, a stall shows, none lost', async () => {
    const s = await scenario('blackhole', 3);
    const server = new URL(s.db.databaseUrl!);
    const proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const throughProxy = new URL(s.db.databaseUrl!);
    throughProxy.host = proxy.address;
    const ledger = await startLedger(
      loadUsageLedgerConfig({
        USAGE_LEDGER_GRPC_PORT: '0',
        USAGE_LEDGER_HTTP_PORT: '0',
        ...ledgerEnv(s, throughProxy.toString()),
        LEDGER_LAG_INTERVAL_MS: '1000',
        LEDGER_STALL_AFTER_MS: '10000',
      }),
      { logger },
    );
    const admin = new Kafka({ clientId: 'durability-admin', brokers: brokers!, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const members = async () =>
      (await admin.describeGroups([s.groupId])).groups[0]!.members.map((member) => member.memberId).sort();
    const stalledPartitions = async () => {
      const text = await (await fetch(`${ledger.httpUrl}/metrics`)).text();
      return [...text.matchAll(/^sbc_usage_consumer_stalled\{[^}]*partition="(\d+)"[^}]*\} 1$/gm)].length;
    };
    try {
      await sendUnderLoad(s, ids('before', 300), 2_000);
      await waitUntil(async () => (await countsIn(s.db.databaseUrl!)).rows >= 300, 60_000, 'the first events');
      const before = await members();
      proxy.blackhole();
      await sendUnderLoad(s, ids('during', 600), 3_000);
      await sleep(40_000); // past kafkajs's 30 s session timeout
      expect(await stalledPartitions()).toBeGreaterThan(0);
      expect(await members()).toEqual(before); // heartbeats went on: not evicted, no rebalance
      proxy.restore();
      await expectAppliedOnce(s, 900);
      await waitUntil(async () => (await stalledPartitions()) === 0, 30_000, 'the stall to clear');
    } finally {
      proxy.restore();
      await admin.disconnect();
      await ledger.stop();
      await proxy.close();
      await s.cleanup();
    }
  });

  itWithContainer('the broker stopped and started again under load: replies never wait on it, none lost', async () => {
    const s = await scenario('stopped', 6);
    const ledger = await startInProcessLedger(s);
    try {
      const sending = sendUnderLoad(s, ids('stopped', 3_000), 20_000);
      await sleep(3_000);
      execFileSync('docker', ['stop', '--time', '0', container!]); // connections refused, not merely slow
      await sleep(20_000);
      execFileSync('docker', ['start', container!]);
      const { slowestMs } = await sending;
      expect(slowestMs).toBeLessThan(5_000);
      await expectAppliedOnce(s, 3_000);
    } finally {
      await ledger.stop();
      await s.cleanup();
    }
  });

  itWithContainer('more events than the in-memory bound while the broker is down: the spool is the queue', async () => {
    const s = await scenario('bound', 6, { maxBuffered: 200 });
    const ledger = await startInProcessLedger(s);
    try {
      execFileSync('docker', ['pause', container!]);
      const sending = sendUnderLoad(s, ids('bound', 2_000), 5_000); // ten times what memory holds
      const { slowestMs } = await sending;
      expect(slowestMs).toBeLessThan(5_000); // each on disk within the spool's bound
      expect(s.edge.producer.stats().spooled).toBeGreaterThan(1_000);
      execFileSync('docker', ['unpause', container!]);
      await expectAppliedOnce(s, 2_000);
    } finally {
      unpauseQuietly();
      await ledger.stop();
      await s.cleanup();
    }
  });

  it('the edge killed (-9), started again on the same spool: every acknowledged event applied once', async () => {
    const s = await scenario('edge-kill', 6);
    const ledger = await startInProcessLedger(s);
    const child = await spoolEdgeBundle();
    const acked = new Set<string>();
    const runEdge = (from: number, count: number) => {
      const edge = spawn(process.execPath, [child], {
        env: {
          PATH: process.env.PATH ?? '',
          EDGE_BROKERS: brokers!.join(','),
          EDGE_PREFIX: s.prefix,
          EDGE_SPOOL: s.spoolDir,
          EDGE_FROM: String(from),
          EDGE_COUNT: String(count),
        },
      });
      edge.stdout.setEncoding('utf8');
      let buffered = '';
      edge.stdout.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop()!;
        for (const line of lines) if (line.startsWith('acked ')) acked.add(line.slice(6));
      });
      return { edge, exited: new Promise<number | null>((resolve) => edge.once('exit', resolve)) };
    };
    try {
      const first = runEdge(0, 4_000);
      await waitUntil(async () => acked.size >= 500, 60_000, 'the first acknowledgements');
      // With the broker paused (when the test may), what is acked then is on the spool only when the edge dies.
      if (container) execFileSync('docker', ['pause', container]);
      await sleep(1_500);
      first.edge.kill('SIGKILL');
      await first.exited;
      if (container) execFileSync('docker', ['unpause', container]);
      const second = runEdge(4_000, 500); // a new process on the same spool root adopts the dead one's spool
      expect(await second.exited).toBe(0);
      const ackedIds = [...acked];
      await waitUntil(
        async () => (await appliedIds(s.db.databaseUrl!, ackedIds)) === ackedIds.length,
        120_000,
        'every acknowledged event',
      );
      await sleep(2_000);
      const counts = await countsIn(s.db.databaseUrl!);
      expect(counts.rows).toBe(counts.distinctIds); // each applied once
      expect(counts.requests).toBe(counts.rows);
      expect(await appliedIds(s.db.databaseUrl!, ackedIds)).toBe(ackedIds.length);
    } finally {
      unpauseQuietly();
      await ledger.stop();
      await s.cleanup();
    }
  });

  it('apps started before migrate, the broker auto-creating topics: they wait, migrate makes it', async () => {
    const s = await scenario('before-migrate', 6, { provision: false });
    const topic = s.prefix + USAGE_EVENTS_TOPIC;
    const admin = new Kafka({ clientId: 'durability-admin', brokers: brokers!, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const starting = startInProcessLedger(s, { KAFKA_TOPIC_WAIT_MS: '120000' });
      const sending = sendUnderLoad(s, ids('before', 300), 2_000); // the edge's sends fail and spool meanwhile
      await sleep(5_000);
      expect(await admin.listTopics()).not.toContain(topic); // neither the edge nor the ledger made it
      await provisionScenarioTopic(s.prefix, 6);
      const ledger = await starting;
      try {
        await sending;
        const [metadata] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
        expect(metadata!.partitions).toHaveLength(6); // as migrate made it, not the broker's default
        await expectAppliedOnce(s, 300);
      } finally {
        await ledger.stop();
      }
    } finally {
      await admin.disconnect();
      await s.cleanup();
    }
  });
});

/** Unpauses the test broker if a scenario left it paused (docker refuses an unpause of a running container). */
function unpauseQuietly(): void {
  if (!container) return;
  try {
    execFileSync('docker', ['unpause', container], { stdio: 'ignore' });
  } catch {
    // It was not paused.
  }
}

/** How many of `ids` the ledger applied (rows whose event id is one of them). */
async function appliedIds(databaseUrl: string, eventIds: string[]): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number }>(
      'SELECT count(DISTINCT event_id)::int AS n FROM usage_generations WHERE event_id = ANY($1)',
      [eventIds],
    );
    return rows[0]!.n;
  } finally {
    await client.end();
  }
}

/**
 * The edge's producer as a process of its own, so it can be killed with SIGKILL: bundled from spool-edge.ts with
 * its packages left external, beside node_modules so they resolve.
 */
async function spoolEdgeBundle(): Promise<string> {
  const dir = path.join(ROOT, 'node_modules/.cache/sbc-durability');
  mkdirSync(dir, { recursive: true });
  const outfile = path.join(dir, `spool-edge-${process.pid}.cjs`);
  const result = await build({
    entryPoints: [path.join(__dirname, 'support/spool-edge.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    packages: 'external',
    write: false,
    tsconfig: path.join(ROOT, 'tsconfig.base.json'),
    logLevel: 'warning',
  });
  writeFileSync(outfile, result.outputFiles[0]!.text);
  return outfile;
}
