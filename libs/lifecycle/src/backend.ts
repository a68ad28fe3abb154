import path from 'node:path';
import express from 'express';
import type { BackendConfig } from '@sbc/config';
import {
  chooseDatabase,
  describeTarget,
  locateMigrations,
  openDatabase,
  type Database,
  type OpenDatabaseOptions,
  type PrismaLike,
} from '@sbc/db';
import { healthRoutes, listen } from '@sbc/http';
import type { Logger } from '@sbc/logging';
import { createMetricsRegistry, writeMetrics, type Registry } from '@sbc/metrics';
import { createRpcServer, type RpcServer, type RpcServerOptions } from '@sbc/rpc';

export interface BackendOptions<Client extends PrismaLike> {
  service: string;
  config: BackendConfig;
  logger: Logger;
  /**
   * The `__dirname` of the app's main.ts: beside a bundle it holds `migrations/<service>`; in the sources
   * the migrations are at `../prisma/migrations` from it.
   */
  appDir: string;
  createClient: OpenDatabaseOptions<Client>['createClient'];
  /** Runs once the database is open and before anything is served (seed rows, recover leases). */
  prepare?: (database: Database<Client>) => Promise<void>;
  /** Adds the service's RPC implementations once its database is open. */
  register: (rpc: RpcServer, database: Database<Client>) => void;
  /** Stops the service's own workers before the database closes. */
  beforeClose?: () => Promise<void>;
  /** Where the service's own metrics are registered; one is made when absent. Served at /metrics. */
  metrics?: Registry;
  /** See OpenDatabaseOptions.connectionTimeoutMs. */
  connectionTimeoutMs?: number;
  /** grpc-js options of the service's RPC server (a larger message limit for RPCs that carry callers' bodies). */
  rpcServerOptions?: RpcServerOptions['serverOptions'];
}

export interface RunningBackend<Client extends PrismaLike> {
  grpcAddress: string;
  httpUrl: string;
  database: Database<Client>;
  metrics: Registry;
  stop(): Promise<void>;
}

type DatabaseOptions<Client extends PrismaLike> = Pick<
  BackendOptions<Client>,
  'service' | 'config' | 'logger' | 'appDir' | 'createClient' | 'connectionTimeoutMs'
>;

/**
 * Opens the service's database, applying its pending migrations under the migrations lock. Exported for
 * operator commands that work on the database without starting the service.
 */
export async function openServiceDatabase<Client extends PrismaLike>(
  options: DatabaseOptions<Client>,
): Promise<Database<Client>> {
  const { logger, config, service } = options;
  const target = chooseDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, service });
  const database = await openDatabase(target, {
    service,
    migrationsDir: locateMigrations(service, options.appDir, path.resolve(options.appDir, '../prisma/migrations')),
    createClient: options.createClient,
    connectionTimeoutMs: options.connectionTimeoutMs,
  });
  logger.info({ database: describeTarget(target), applied: database.applied }, 'database ready');
  return database;
}

/** `<app> migrate`: applies the service's migrations and closes, for a one-shot job before a rollout. */
export async function migrateBackend<Client extends PrismaLike>(options: DatabaseOptions<Client>): Promise<void> {
  const database = await openServiceDatabase(options);
  await database.close();
}

/**
 * The shell every backend service shares: open its database (applying migrations), serve its gRPC API with
 * health, answer /healthz and /readyz over HTTP, and stop in order: readiness off, RPCs drained, workers
 * stopped, database closed.
 */
export async function startBackend<Client extends PrismaLike>(
  options: BackendOptions<Client>,
): Promise<RunningBackend<Client>> {
  const { logger, config, service } = options;
  const database = await openServiceDatabase(options);
  const metrics = options.metrics ?? createMetricsRegistry(service);

  let rpc: RpcServer | undefined;
  try {
    await options.prepare?.(database);
    rpc = createRpcServer({ logger, serverOptions: options.rpcServerOptions });
    options.register(rpc, database);
    const grpcAddress = await rpc.listen(`${config.grpc.host}:${config.grpc.port}`);
    let draining = false;
    const app = express();
    app.disable('x-powered-by');
    app.use(healthRoutes(() => !draining));
    app.get('/metrics', (req, res) => void writeMetrics(metrics, req, res));
    const http = await listen(app, config.http);
    logger.info({ grpc: grpcAddress, http: http.url }, `${service} listening`);

    const server = rpc;
    let stopping: Promise<void> | undefined;
    return {
      grpcAddress,
      httpUrl: http.url,
      database,
      metrics,
      stop() {
        stopping ??= (async () => {
          draining = true;
          server.setServing('', false);
          await server.stop(config.shutdownDrainMs);
          await http.close(config.shutdownDrainMs);
          await options.beforeClose?.();
          await database.close();
          logger.info(`${service} stopped`);
        })();
        return stopping;
      },
    };
  } catch (error) {
    await rpc?.stop(0);
    await database.close();
    throw error;
  }
}
