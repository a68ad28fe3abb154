import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestDatabase, type TestDatabase } from '@sbc/testing';
import { applyMigrations, readMigrations } from './migrations';
import { pgliteConnection, postgresConnection, type SqlConnection } from './sql';
import { PGlite } from '@electric-sql/pglite';

const fixtures = path.join(__dirname, '__fixtures__/migrations');

async function connect(db: TestDatabase): Promise<{ sql: SqlConnection; close(): Promise<void> }> {
  if (db.target.kind === 'postgres') {
    const sql = await postgresConnection(db.target.url);
    return { sql, close: () => sql.close() };
  }
  const pglite = await PGlite.create();
  return { sql: pgliteConnection(pglite), close: () => pglite.close() };
}

describe('migrations', () => {
  let db: TestDatabase;
  let conn: { sql: SqlConnection; close(): Promise<void> };
  beforeEach(async () => {
    db = await createTestDatabase('migrations');
    conn = await connect(db);
  });
  afterEach(async () => {
    await conn.close();
    await db.drop();
  });

  it('applies every migration in order to an empty database, once', async () => {
    const migrations = await readMigrations(fixtures);
    expect(await applyMigrations(conn.sql, 'svc', migrations)).toEqual(['0001_notes.sql', '0002_note_created_at.sql']);
    expect(await applyMigrations(conn.sql, 'svc', migrations)).toEqual([]);
    await conn.sql.query('INSERT INTO notes (id, body) VALUES ($1, $2)', ['n1', 'hello']);
    const rows = await conn.sql.query<{ id: string; created_at: Date }>('SELECT id, created_at FROM notes');
    expect(rows[0]?.id).toBe('n1');
    expect(rows[0]?.created_at).toBeInstanceOf(Date);
  });

  it('refuses to start when an applied migration was edited', async () => {
    const migrations = await readMigrations(fixtures);
    await applyMigrations(conn.sql, 'svc', migrations);
    const edited = migrations.map((m, i) => (i === 0 ? { ...m, checksum: 'changed' } : m));
    await expect(applyMigrations(conn.sql, 'svc', edited)).rejects.toThrow(/0001_notes.sql was edited/);
  });

  it('refuses to start when the database is ahead of the build', async () => {
    const migrations = await readMigrations(fixtures);
    await applyMigrations(conn.sql, 'svc', migrations);
    await expect(applyMigrations(conn.sql, 'svc', migrations.slice(0, 1))).rejects.toThrow(/does not know: 0002/);
  });

  it('rolls a failing migration back whole, leaving no half-applied schema', async () => {
    const broken = [
      { name: '0001_broken.sql', checksum: 'x', sql: 'CREATE TABLE half (id int); SELECT no_such_function();' },
    ];
    await expect(applyMigrations(conn.sql, 'svc', broken)).rejects.toThrow(/0001_broken.sql failed/);
    const tables = await conn.sql.query(`SELECT 1 FROM information_schema.tables WHERE table_name = 'half'`);
    expect(tables).toHaveLength(0);
    expect(await conn.sql.query('SELECT name FROM _migrations')).toHaveLength(0);
  });

  it('rejects stray files in the migrations folder', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'mig-'));
    try {
      await cp(fixtures, dir, { recursive: true });
      await writeFile(path.join(dir, 'notes.sql'), 'SELECT 1;');
      await expect(readMigrations(dir)).rejects.toThrow(/unexpected files notes.sql/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
