import { createCacheAdapters, type PubSub } from '@sbc/cache';
import { isBundleEntry, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
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

export type RunningAccount = RunningBackend<PrismaClient>;

export async function start(config: AccountConfig, overrides: AccountOverrides = {}): Promise<RunningAccount> {
  const logger = overrides.logger ?? createLogger({ service: 'account', level: config.logLevel });
  const cache = overrides.pubsub ? undefined : createCacheAdapters({ redisUrl: config.redisUrl });
  const pubsub = overrides.pubsub ?? cache!.pubsub;
  const closeCache = async () => {
    await cache?.close();
  };
  try {
    return await startBackend({
      service: 'account',
      config,
      logger,
      appDir: __dirname,
      createClient: (adapter) => new PrismaClient({ adapter }),
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
