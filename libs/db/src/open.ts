import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { applyMigrations, readMigrations } from './migrations';
import { initialisePgliteDirs } from './pglite-init';
import { pgliteConnection, postgresConnection, type SqlConnection } from './sql';
import type { DatabaseTarget } from './target';

/** What every generated Prisma client has; each service passes its own generated class. */
export interface PrismaLike {
  $disconnect(): Promise<void>;
}

export interface OpenDatabaseOptions<Client extends PrismaLike> {
  service: string;
  migrationsDir: string;
  createClient: (adapter: SqlMigrationAwareDriverAdapterFactory) => Client;
  /** Pool size for PostgreSQL; PGlite is a single connection. */
  maxConnections?: number;
  /**
   * PostgreSQL: how long a query may wait for a connection, new or from the pool, before it fails; default 0,
   * for ever. A service that must answer within a deadline (a Kafka member's session) sets it under that.
   */
  connectionTimeoutMs?: number;
}

export interface Database<Client extends PrismaLike> {
  prisma: Client;
  sql: SqlConnection;
  kind: DatabaseTarget['kind'];
  /**
   * PostgreSQL only: the pool Prisma's queries run on, for the few reads that need the driver itself (COPY);
   * a connection taken from it counts against the same bound as Prisma's.
   */
  pool?: pg.Pool;
  /** Migrations this open applied (empty when the schema was current). */
  applied: string[];
  close(): Promise<void>;
}

/**
 * PGlite's defaults size it as a server: 128 MB of shared buffers, written through at start, made each
 * embedded service's instance hold about 170 MiB at idle. An embedded service's hot pages fit in 2 MB of
 * buffers (256 pages; a miss is a read from the OS page cache behind them), every buffer touched stays
 * resident in the instance's WASM memory, and the single backend needs no more connection slots.
 */
const PGLITE_START_PARAMS = [...PGlite.defaultStartParams, '-c', 'shared_buffers=2MB', '-c', 'max_connections=4'];

/**
 * Initialises the PGlite data directories among `targets` that have none yet, with one initdb for all of
 * them: the embedded start calls it for its four services before opening any. Opening does it on its own too.
 */
export async function initialiseDatabases(targets: DatabaseTarget[]): Promise<void> {
  const dataDirs = targets.flatMap((target) =>
    target.kind === 'pglite' && target.dataDir !== 'memory://' ? [target.dataDir] : [],
  );
  await initialisePgliteDirs(dataDirs, PGLITE_START_PARAMS);
}

/** Opens a service's database, applies its pending migrations, and returns a Prisma client over it. */
export async function openDatabase<Client extends PrismaLike>(
  target: DatabaseTarget,
  options: OpenDatabaseOptions<Client>,
): Promise<Database<Client>> {
  const migrations = await readMigrations(options.migrationsDir);
  if (target.kind === 'pglite') {
    await initialiseDatabases([target]);
    const pglite = await PGlite.create({
      dataDir: target.dataDir === 'memory://' ? undefined : target.dataDir,
      startParams: PGLITE_START_PARAMS,
    });
    const sql = pgliteConnection(pglite);
    try {
      const applied = await applyMigrations(sql, options.service, migrations);
      const prisma = options.createClient(new PrismaPGlite(pglite));
      return {
        prisma,
        sql,
        kind: 'pglite',
        applied,
        async close() {
          await prisma.$disconnect();
          await pglite.close();
        },
      };
    } catch (error) {
      await pglite.close();
      throw error;
    }
  }
  const sql = await postgresConnection(target.url);
  try {
    const applied = await applyMigrations(sql, options.service, migrations);
    const pool = new pg.Pool({
      connectionString: target.url,
      max: options.maxConnections ?? 10,
      connectionTimeoutMillis: options.connectionTimeoutMs ?? 0,
      // Probes an idle connection, so one to a server that vanished is found dead rather than reused.
      keepAlive: true,
    });
    // An idle connection's error (the server restarting) must not crash the process; the next query reports it.
    pool.on('error', () => undefined);
    const prisma = options.createClient(new PrismaPg(pool));
    return {
      prisma,
      sql,
      kind: 'postgres',
      pool,
      applied,
      async close() {
        await prisma.$disconnect();
        await pool.end();
        await sql.close();
      },
    };
  } catch (error) {
    await sql.close();
    throw error;
  }
}
