import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SqlConnection } from './sql';

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

const MIGRATION_FILE = /^\d{4}_[a-z0-9_]+\.sql$/;

/** Reads `NNNN_name.sql` files in order. Any other file in the folder is a mistake and stops the start. */
export async function readMigrations(dir: string): Promise<Migration[]> {
  const names = (await readdir(dir)).filter((name) => !name.startsWith('.')).sort();
  const bad = names.filter((name) => !MIGRATION_FILE.test(name));
  if (bad.length > 0)
    throw new Error(`migrations in ${dir}: unexpected files ${bad.join(', ')} (expected NNNN_name.sql)`);
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/** A stable 32-bit advisory-lock id per service, so replicas of one service migrate one at a time. */
function lockId(service: string): number {
  return createHash('sha256').update(`sbc-migrations:${service}`).digest().readInt32BE(0);
}

/**
 * Applies pending migrations, each in its own transaction together with its ledger row, under an advisory
 * lock. An applied migration whose file changed since stops the start: migrations are append-only.
 * Returns the names applied by this call.
 */
export async function applyMigrations(sql: SqlConnection, service: string, migrations: Migration[]): Promise<string[]> {
  // Keyed by service too, so services that are pointed at one database by mistake still keep apart ledgers.
  await sql.exec(`CREATE TABLE IF NOT EXISTS _migrations (
    service text NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (service, name)
  )`);
  const lock = lockId(service);
  await sql.query('SELECT pg_advisory_lock($1)', [lock]);
  try {
    const rows = await sql.query<{ name: string; checksum: string }>(
      'SELECT name, checksum FROM _migrations WHERE service = $1',
      [service],
    );
    const applied = new Map(rows.map((row) => [row.name, row.checksum]));
    const known = new Set(migrations.map((m) => m.name));
    const unknown = [...applied.keys()].filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new Error(`${service}: the database has migrations this build does not know: ${unknown.join(', ')}`);
    }
    const done: string[] = [];
    for (const migration of migrations) {
      const checksum = applied.get(migration.name);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(
            `${service}: migration ${migration.name} was edited after it was applied; add a new migration instead`,
          );
        }
        continue;
      }
      await sql.exec('BEGIN');
      try {
        await sql.exec(migration.sql);
        await sql.query('INSERT INTO _migrations (service, name, checksum) VALUES ($1, $2, $3)', [
          service,
          migration.name,
          migration.checksum,
        ]);
        await sql.exec('COMMIT');
      } catch (error) {
        await sql.exec('ROLLBACK');
        throw new Error(`${service}: migration ${migration.name} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      done.push(migration.name);
    }
    return done;
  } finally {
    await sql.query('SELECT pg_advisory_unlock($1)', [lock]);
  }
}
