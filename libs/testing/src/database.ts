import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { testBackends } from './backends';

/** A `DatabaseTarget` (see @sbc/db) made for one test file, with a way to throw it away. */
export interface TestDatabase {
  target: { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string };
  /** The value to give a service as DATABASE_URL (undefined means PGlite). */
  databaseUrl?: string;
  /** The value to give a service as SBC_DATA_DIR (where its PGlite lives when there is no DATABASE_URL). */
  dataDir: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database: a new PostgreSQL database on the test server when there is one (so migrations
 * are tested from empty, and test files never see each other's rows), else PGlite. PGlite is in memory
 * unless the test restarts the service on it (`restarts`): then it lives in a temporary directory, so its
 * rows outlive the restart as a server's do (a first start there costs an initdb, so only when asked).
 */
export async function createTestDatabase(label: string, options: { restarts?: boolean } = {}): Promise<TestDatabase> {
  const serverUrl = testBackends().postgresUrl;
  if (!serverUrl) {
    if (!options.restarts)
      return { target: { kind: 'pglite', dataDir: 'memory://' }, dataDir: 'memory://', drop: async () => undefined };
    const dataDir = await mkdtemp(path.join(tmpdir(), `sbc-test-${label.replace(/[^a-z0-9]/gi, '_').slice(0, 30)}-`));
    // Each service keeps its files under <SBC_DATA_DIR>/<service>.
    return { target: { kind: 'pglite', dataDir }, dataDir, drop: () => rm(dataDir, { recursive: true, force: true }) };
  }
  const name = `t_${label
    .replace(/[^a-z0-9]/gi, '_')
    .toLowerCase()
    .slice(0, 30)}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    target: { kind: 'postgres', url: url.toString() },
    databaseUrl: url.toString(),
    dataDir: 'memory://',
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
