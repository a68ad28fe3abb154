import express from 'express';
import { chooseDatabase, describeTarget, openDatabase, type Database, type OpenDatabaseOptions, type PrismaLike } from '@sbc/db';
import { healthRoutes, listen } from '@sbc/http';
import type { Logger } from '@sbc/logging';
import { createRpcServer, type RpcServer } from '@sbc/rpc';

export interface BackendOptions<Client extends PrismaLike> {
  service: string;
  logger: Logger;
  database: { url?: string; dataDir: string; migrationsDir: string; createClient: OpenDatabaseOptions<Client>['createClient'] };
  grpc: { host: string; port: number };
  http: { host: string; port: number };
  shutdownDrainMs: number;
  /** Runs once the database is open and before anything is served (seed rows, recover leases). */
  prepare?: (database: Database<Client>) => Promise<void>;
  /** Adds the service's RPC implementations once its database is open. */
  register: (rpc: RpcServer, database: Database<Client>) => void;
  /** Stops the service's own workers before the database closes. */
  beforeClose?: () => Promise<void>;
}

export interface RunningBackend<Client extends PrismaLike> {
  grpcAddress: string;
  httpUrl: string;
  database: Database<Client>;
  stop(): Promise<void>;
}

/**
 * The shell every backend service shares: open its database (applying migrations), serve its gRPC API with
 * health, answer /healthz and /readyz over HTTP, and stop in order: readiness off, RPCs drained, workers
 * stopped, database closed.
 */
export async function startBackend<Client extends PrismaLike>(options: BackendOptions<Client>): Promise<RunningBackend<Client>> {
  const { logger } = options;
  const target = chooseDatabase({ databaseUrl: options.database.url, dataDir: options.database.dataDir, service: options.service });
  const database = await openDatabase(target, {
    service: options.service,
    migrationsDir: options.database.migrationsDir,
    createClient: options.database.createClient,
  });
  logger.info({ database: describeTarget(target), applied: database.applied }, 'database ready');

  let rpc: RpcServer | undefined;
  try {
    await options.prepare?.(database);
    rpc = createRpcServer({ logger });
    options.register(rpc, database);
    const grpcAddress = await rpc.listen(`${options.grpc.host}:${options.grpc.port}`);
    let draining = false;
    const app = express();
    app.disable('x-powered-by');
    app.use(healthRoutes(() => !draining));
    const http = await listen(app, options.http);
    logger.info({ grpc: grpcAddress, http: http.url }, `${options.service} listening`);

    const server = rpc;
    let stopping: Promise<void> | undefined;
    return {
      grpcAddress,
      httpUrl: http.url,
      database,
      stop() {
        stopping ??= (async () => {
          draining = true;
          server.setServing('', false);
          await server.stop(options.shutdownDrainMs);
          await http.close(options.shutdownDrainMs);
          await options.beforeClose?.();
          await database.close();
          logger.info(`${options.service} stopped`);
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
