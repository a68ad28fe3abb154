import type { PubSub } from '@sbc/cache';
import { loadAccountConfig, start as startAccount, type RunningAccount } from '@sbc/app-account';
import { hashSecret, maskSecret, newId, newSecret } from '@sbc/ids';
import { PRESETS, type Scope } from '@sbc/scopes';

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

export interface SeededKeyOptions {
  userId: string;
  /** Default: Full access. null = a key minted before scopes were stored (the legacy set). */
  scopes?: readonly Scope[] | null;
  orgId?: string;
  name?: string;
  incognito?: boolean;
  dailyLimitCredits?: number;
}

/** A caller key written straight into the account service's table, for tests that need one before the routes. */
export async function seedCallerKey(
  prisma: RunningAccount['database']['prisma'],
  options: SeededKeyOptions,
): Promise<{ id: string; secret: string }> {
  const secret = newSecret('sbc');
  const id = newId('key');
  await prisma.callerKey.create({
    data: {
      id,
      userId: options.userId,
      name: options.name ?? `seeded ${id}`,
      keyHash: new Uint8Array(hashSecret(secret)),
      mask: maskSecret(secret),
      ...(options.scopes === null ? {} : { scopes: [...(options.scopes ?? PRESETS.full_access)] }),
      orgId: options.orgId ?? null,
      incognito: options.incognito ?? false,
      dailyLimitCredits: options.dailyLimitCredits ?? null,
    },
  });
  return { id, secret };
}
