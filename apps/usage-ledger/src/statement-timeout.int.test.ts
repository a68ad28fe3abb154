import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { create, toBinary } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { createBus, type Bus } from '@sbc/bus';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger } from '@sbc/logging';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { createTestDatabase, testBackends, type TestDatabase } from '@sbc/testing';
import pg from 'pg';
import type { RunningUsageLedger } from './main';
import { startTestLedger } from './test-ledger';

const logger = createLogger({ service: 'usage-ledger-test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const STATEMENT_TIMEOUT_MS = 300;

// A lock held by another session is what a statement of the ledger waits on here; PGlite has one session.
const onPostgres = testBackends().postgresUrl ? describe : describe.skip;
if (!testBackends().postgresUrl) console.warn('statement timeout: needs PostgreSQL (TEST_DATABASE_URL); skipped');

onPostgres('the ledger applying usage with LEDGER_STATEMENT_TIMEOUT_MS', () => {
  let db: TestDatabase;
  let dataDir: string;
  let bus: Bus;
  let ledger: RunningUsageLedger;
  /** Holds the lock. */
  let operator: pg.Client;
  /** Watches the ledger's sessions (outside the lock's transaction, whose statistics would stay as first read). */
  let observer: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase('statement_timeout');
    dataDir = await mkdtemp(path.join(tmpdir(), 'usage-ledger-'));
    bus = createBus({ clientId: 'usage-ledger-test', logger, retry: { initialMs: 50, maxMs: 200 } });
    ledger = await startTestLedger({
      databaseUrl: db.databaseUrl,
      dataDir,
      bus,
      logger,
      env: { LEDGER_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), LEDGER_BATCH_LINGER_MS: '0' },
    });
    operator = new pg.Client({ connectionString: db.databaseUrl });
    await operator.connect();
    observer = new pg.Client({ connectionString: db.databaseUrl });
    await observer.connect();
  });

  afterAll(async () => {
    await operator?.end();
    await observer?.end();
    await ledger?.stop();
    await bus?.close();
    await db?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('a batch stuck behind a lock is cancelled by the server and applied once the lock is gone', async () => {
    await operator.query('BEGIN');
    await operator.query('LOCK TABLE usage_generations IN ACCESS EXCLUSIVE MODE');
    const event = create(UsageEventSchema, {
      eventId: 'evt_locked',
      requestId: 'req_locked',
      accountId: 'usr_locked',
      model: 'house',
      status: 200,
      ts: timestampFromMs(Date.now()),
    });
    bus.producer.send(USAGE_EVENTS_TOPIC, { key: event.accountId, value: toBinary(UsageEventSchema, event) });
    // How long the ledger's longest wait on the lock has lasted, sampled while the lock is held for 2.5 s.
    let longestWaitS = 0;
    let waitsSeen = 0;
    for (const until = Date.now() + 2_500; Date.now() < until;) {
      const { rows } = await observer.query<{ waited: number | null }>(
        `SELECT max(extract(epoch FROM clock_timestamp() - query_start))::float AS waited FROM pg_stat_activity
         WHERE wait_event_type = 'Lock' AND datname = current_database()`,
      );
      if (rows[0]?.waited != null) {
        waitsSeen++;
        longestWaitS = Math.max(longestWaitS, rows[0].waited);
      }
      await sleep(50);
    }
    await operator.query('COMMIT');
    expect(waitsSeen).toBeGreaterThan(0); // the ledger did try, and waited on the lock
    // Never the whole 2.5 s: the server cancelled each attempt (the margin is for a loaded machine).
    expect(longestWaitS).toBeLessThan(1.5);
    await bus.producer.flush();
    const rows = await ledger.database.prisma.usageGeneration.findMany({ where: { accountId: 'usr_locked' } });
    expect(rows.map((row) => row.eventId)).toEqual(['evt_locked']);
  });
});
