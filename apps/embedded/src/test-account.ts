import type { PubSub } from '@sbc/cache';
import { loadAccountConfig, start as startAccount, type RunningAccount } from '@sbc/app-account';

/**
 * The account service as the cross-service tests run it: on the test's own database, ports picked by the OS,
 * the given bootstrap key, and a fixed secrets key (required with a shared PostgreSQL; any 32 bytes do for a
 * throwaway database). `env` adds or overrides account settings.
 */
export function startTestAccount(options: {
  /** Unset when the run has no PostgreSQL: the service then keeps its tables in memory (PGlite). */
  databaseUrl?: string;
  redisUrl?: string;
  pubsub?: PubSub;
  bootstrapKey: string;
  env?: Record<string, string>;
}): Promise<RunningAccount> {
  return startAccount(
    loadAccountConfig({
      ACCOUNT_GRPC_PORT: '0',
      ACCOUNT_HTTP_PORT: '0',
      DATABASE_URL: options.databaseUrl,
      SBC_DATA_DIR: 'memory://',
      REDIS_URL: options.redisUrl,
      SBC_BOOTSTRAP_KEY: options.bootstrapKey,
      UPSTREAM_SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      LOG_LEVEL: 'silent',
      ...options.env,
    }),
    { pubsub: options.pubsub },
  );
}
