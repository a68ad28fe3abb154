import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { createBus, type Bus } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { createTestDatabase, startTcpProxy, testBackends, type TcpProxy, type TestDatabase } from '@sbc/testing';
import type { RunningUsageLedger } from './main';
import { startTestLedger } from './test-ledger';

const logger = createLogger({ service: 'usage-ledger-test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The network to PostgreSQL goes dark (a TCP proxy in between); PGlite has no network.
const onPostgres = testBackends().postgresUrl ? describe : describe.skip;
if (!testBackends().postgresUrl) console.warn('database blackhole: needs PostgreSQL (TEST_DATABASE_URL); skipped');

onPostgres("the ledger while its database's network is a blackhole", () => {
  let db: TestDatabase;
  let dataDir: string;
  let bus: Bus;
  let proxy: TcpProxy;
  let ledger: RunningUsageLedger;

  const send = (id: string, accountId: string) => {
    const event = create(UsageEventSchema, {
      eventId: id,
      requestId: `req_${id}`,
      accountId,
      model: 'house',
      status: 200,
      creditsChargedMicrocredits: 1_000_000n,
      ts: timestampFromMs(Date.now()),
    });
    bus.producer.send(USAGE_EVENTS_TOPIC, { key: accountId, value: toBinary(UsageEventSchema, event) });
  };

  beforeAll(async () => {
    db = await createTestDatabase('database_blackhole');
    dataDir = await mkdtemp(path.join(tmpdir(), 'usage-ledger-'));
    const server = new URL(db.databaseUrl!);
    proxy = await startTcpProxy({ host: server.hostname, port: Number(server.port || 5432) });
    const throughProxy = new URL(db.databaseUrl!);
    throughProxy.host = proxy.address;
    bus = createBus({ clientId: 'usage-ledger-test', logger, retry: { initialMs: 50, maxMs: 300 } });
    ledger = await startTestLedger({
      databaseUrl: throughProxy.toString(),
      dataDir,
      bus,
      logger,
      env: {
        LEDGER_DB_CONNECT_TIMEOUT_MS: '300',
        LEDGER_STATEMENT_TIMEOUT_MS: '500',
        // Two failures of an unknown kind would park a lone event: the blackhole's must not count as such.
        LEDGER_PARK_LONE_AFTER_ATTEMPTS: '2',
        LEDGER_BATCH_LINGER_MS: '0',
      },
    });
  });

  afterAll(async () => {
    proxy?.restore();
    await ledger?.stop();
    await bus?.close();
    await proxy?.close();
    await db?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('lone events sent meanwhile wait out the outage, never parked, and are applied once it ends', async () => {
    send('evt_before', 'usr_before');
    await bus.producer.flush();
    proxy.blackhole();
    for (const account of ['usr_a', 'usr_b', 'usr_c']) {
      send(`evt_${account}`, account);
      await sleep(300); // each one alone in its batch
    }
    await sleep(8_000); // several rounds of timeouts and retries
    expect(bus.producer.stats().pending).toBe(3); // none applied, none given up on
    proxy.restore();
    await bus.producer.flush();
    const prisma = ledger.database.prisma;
    const rows = await prisma.usageGeneration.findMany({ orderBy: { eventId: 'asc' } });
    expect(rows.map((row) => row.eventId)).toEqual(['evt_before', 'evt_usr_a', 'evt_usr_b', 'evt_usr_c']);
    expect(await prisma.usageDeadLetter.count()).toBe(0);
  }, 60_000);
});
