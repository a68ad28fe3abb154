import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { applyMigrations, pgliteConnection, postgresConnection, readMigrations, type SqlConnection } from '@sbc/db';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';

const MIGRATIONS = path.join(__dirname, '../prisma/migrations');
const AUDIT_LOG = '0007_audit_log.sql';
/** What Full access and Read-only query stored before audit:read existed. */
const OLD_READ_ONLY = [
  'usage:read',
  'billing:read',
  'keys:read',
  'endpoints:read',
  'teams:read',
  'devices:read',
  'builds:read',
  'runs:read',
];
const OLD_FULL_ACCESS = [
  'gateway:invoke',
  ...OLD_READ_ONLY,
  'keys:write',
  'endpoints:write',
  'teams:write',
  'devices:write',
  'builds:write',
  'runs:write',
];

async function connect(db: TestDatabase): Promise<{ sql: SqlConnection; close(): Promise<void> }> {
  if (db.target.kind === 'postgres') {
    const sql = await postgresConnection(db.target.url);
    return { sql, close: () => sql.close() };
  }
  const pglite = await PGlite.create();
  return { sql: pgliteConnection(pglite), close: () => pglite.close() };
}

describe(`migration ${AUDIT_LOG}`, () => {
  let db: TestDatabase;
  let conn: { sql: SqlConnection; close(): Promise<void> };
  beforeAll(async () => {
    db = await createTestDatabase('audit_migration');
    conn = await connect(db);
  });
  afterAll(async () => {
    await conn?.close();
    await db?.drop();
  });

  it('gives audit:read to the keys minted with Full access or Read-only before it, and to no other key', async () => {
    const migrations = await readMigrations(MIGRATIONS);
    await applyMigrations(
      conn.sql,
      'account',
      migrations.filter((migration) => migration.name < AUDIT_LOG),
    );
    await conn.sql.query(`INSERT INTO users (id, email) VALUES ('usr_1', 'one@example.test')`);
    const keys: [string, string[] | null][] = [
      ['key_full', OLD_FULL_ACCESS],
      ['key_full_operator', [...OLD_FULL_ACCESS, 'builds:admin']],
      ['key_read_only', OLD_READ_ONLY],
      ['key_gateway', ['gateway:invoke']],
      ['key_some_reads', ['usage:read', 'keys:read']],
      ['key_legacy', null],
    ];
    for (const [id, scopes] of keys) {
      await conn.sql.query(
        `INSERT INTO caller_keys (id, user_id, name, key_hash, mask, scopes)
         VALUES ($1, 'usr_1', $1, decode(md5($1), 'hex'), 'sbc_…', $2::jsonb)`,
        [id, scopes === null ? null : JSON.stringify(scopes)],
      );
    }

    await applyMigrations(conn.sql, 'account', migrations);

    const rows = await conn.sql.query<{ id: string; scopes: string[] | null }>(
      'SELECT id, scopes FROM caller_keys ORDER BY id',
    );
    const holds = Object.fromEntries(rows.map((row) => [row.id, row.scopes?.includes('audit:read') ?? null]));
    expect(holds).toEqual({
      key_full: true,
      key_full_operator: true,
      key_read_only: true,
      key_gateway: false,
      key_some_reads: false,
      key_legacy: null,
    });
  });
});
