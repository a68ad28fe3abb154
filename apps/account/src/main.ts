import path from 'node:path';
import { createCacheAdapters, type PubSub } from '@sbc/cache';
import { locateMigrations } from '@sbc/db';
import { isBundleEntry, runService, startBackend } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { loadAccountConfig, type AccountConfig } from './config';
import { PrismaClient } from './generated/prisma/client';
import { createAccountService } from './rpc/account-service';
import { ensureBootstrap } from './store/bootstrap';

export { loadAccountConfig, type AccountConfig } from './config';

/** Collaborators the embedded app shares between services in one process (in-process pub/sub). */
export interface AccountOverrides {
  pubsub?: PubSub;
  logger?: Logger;
}

export interface RunningAccount {
  grpcAddress: string;
  httpUrl: string;
  stop(): Promise<void>;
}

export async function start(config: AccountConfig, overrides: AccountOverrides = {}): Promise<RunningAccount> {
  const logger = overrides.logger ?? createLogger({ service: 'account', level: config.logLevel });
  const cache = overrides.pubsub ? undefined : createCacheAdapters({ redisUrl: config.redisUrl });
  const pubsub = overrides.pubsub ?? cache!.pubsub;
  const closeCache = async () => {
    await cache?.pubsub.close();
    await cache?.store.close();
  };
  try {
    return await startBackend({
      service: 'account',
      logger,
      database: {
        url: config.databaseUrl,
        dataDir: config.dataDir,
        migrationsDir: locateMigrations('account', __dirname, path.resolve(__dirname, '../prisma/migrations')),
        createClient: (adapter) => new PrismaClient({ adapter }),
      },
      grpc: config.grpc,
      http: config.http,
      shutdownDrainMs: config.shutdownDrainMs,
      async prepare(database) {
        if (!config.bootstrap) return;
        const result = await ensureBootstrap(database.prisma, config.bootstrap);
        logger.info({ userId: result.userId, keyId: result.keyId, created: result.created }, 'bootstrap key ensured');
      },
      register(rpc, database) {
        rpc.add(AccountService, createAccountService({ db: database.prisma, pubsub }));
      },
      beforeClose: closeCache,
    });
  } catch (error) {
    await closeCache();
    throw error;
  }
}

if (isBundleEntry('account')) {
  runService({ name: 'account', load: () => loadAccountConfig(process.env), start });
}
