import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testBackends } from './backends';

/** A `DatabaseTarget` (see @sbc/db) made for one test file, with a way to throw it away. */
export interface TestDatabase {
  target: { kind: 'postgres'; url: string } | { kind: 'pglite'; dataDir: string };
  /** The value to give a service as DATABASE_URL (undefined means PGlite). */
  databaseUrl?: string;
  drop(): Promise<void>;
}

/**
 * A fresh, empty database: a new PostgreSQL database on the test server when there is one (so migrations
 * are tested from empty, and test files never see each other's rows), else an in-memory PGlite.
 */
export async function createTestDatabase(label: string): Promise<TestDatabase> {
  const serverUrl = testBackends().postgresUrl;
  if (!serverUrl) {
    return { target: { kind: 'pglite', dataDir: 'memory://' }, drop: async () => undefined };
  }
  const name = `t_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase().slice(0, 30)}_${randomBytes(5).toString('hex')}`;
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
