import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/**
 * The raw SQL connection a service keeps beside its Prisma client: migrations, advisory locks and the few
 * statements Prisma does not express (SKIP LOCKED claims, LISTEN/NOTIFY). One interface for both drivers.
 */
export interface SqlConnection {
  /** Runs one or more statements without parameters (simple query protocol). */
  exec(sql: string): Promise<void>;
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

export function pgliteConnection(db: PGlite): SqlConnection {
  return {
    async exec(sql) {
      await db.exec(sql);
    },
    async query<Row>(sql: string, params: unknown[] = []) {
      const result = await db.query<Row>(sql, params);
      return result.rows;
    },
    async close() {
      // The PGlite instance is shared with the Prisma adapter and closed by the database owner.
    },
  };
}

export async function postgresConnection(url: string): Promise<SqlConnection> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // A connection error after start must not crash the process; the next query reports it instead.
  client.on('error', () => undefined);
  return {
    async exec(sql) {
      await client.query(sql);
    },
    async query<Row>(sql: string, params: unknown[] = []) {
      const result = await client.query(sql, params);
      return result.rows as Row[];
    },
    async close() {
      await client.end();
    },
  };
}
