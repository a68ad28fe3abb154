import { createCacheAdapters, type PubSub } from '@sbc/cache';
import { isBundleEntry, migrateBackend, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { loadAccountConfig, type AccountConfig } from './config';
import { PrismaClient } from './generated/prisma/client';
import { createRoutingWrites, type RoutingWrites } from './routing/writes';
import { DeviceService } from '@sbc/proto/sbc/account/v1/devices_pb';
import { SessionService } from '@sbc/proto/sbc/account/v1/sessions_pb';
import { TeamService } from '@sbc/proto/sbc/account/v1/teams_pb';
import { UpstreamService } from '@sbc/proto/sbc/account/v1/upstreams_pb';
import { GuardrailService } from '@sbc/proto/sbc/account/v1/guardrails_pb';
import { McpServerService } from '@sbc/proto/sbc/account/v1/mcp_pb';
import { AuditService } from '@sbc/proto/sbc/account/v1/audit_pb';
import { createAccountService } from './rpc/account-service';
import { createAuditService } from './rpc/audit';
import { createDeviceService } from './rpc/devices';
import { createSessionService } from './rpc/sessions';
import { createTeamService } from './rpc/teams';
import { createUpstreamService } from './rpc/upstreams';
import { createGuardrailService } from './rpc/guardrails';
import { createMcpServerService } from './rpc/mcp-servers';
import { createOperators } from './operators';
import { ensureBootstrap, findOwnerId } from './store/bootstrap';
import { createSecretCipher, loadOrCreateSecretsKey } from './store/secrets';

export { loadAccountConfig, type AccountConfig } from './config';
export type { RoutingWrites } from './routing/writes';
export type { SaveAliasInput } from './store/aliases';
export type { SaveUpstreamInput, UpstreamProbe } from './store/upstreams';

/** Collaborators the embedded app shares between services in one process (in-process pub/sub). */
export interface AccountOverrides {
  pubsub?: PubSub;
  logger?: Logger;
}

export interface RunningAccount extends RunningBackend<PrismaClient> {
  /** Saves endpoints and aliases the way the REST routes do (encrypted, change published): for seeding in tests. */
  routing: RoutingWrites;
}

export async function start(config: AccountConfig, overrides: AccountOverrides = {}): Promise<RunningAccount> {
  const logger = overrides.logger ?? createLogger({ service: 'account', level: config.logLevel });
  // loadAccountConfig already refused a PostgreSQL without a key, so reaching the file means embedded PGlite.
  const secretsKey = config.upstreamSecretsKey ?? (await loadOrCreateSecretsKey(config.dataDir)).key;
  const cipher = createSecretCipher(secretsKey);
  const cache = overrides.pubsub ? undefined : createCacheAdapters({ redisUrl: config.redisUrl });
  const pubsub = overrides.pubsub ?? cache!.pubsub;
  const closeCache = async () => {
    await cache?.close();
  };
  // The bootstrap owner is an operator when X_BUILDS_ADMIN_USER_IDS is empty; found once the tables are ready.
  let ownerId: string | undefined;
  try {
    const backend = await startBackend({
      service: 'account',
      config,
      logger,
      appDir: __dirname,
      createClient: (adapter) => new PrismaClient({ adapter }),
      async prepare(database) {
        if (!config.bootstrap) {
          ownerId = await findOwnerId(database.prisma, config.bootstrapEmail);
          return;
        }
        const result = await ensureBootstrap(database.prisma, config.bootstrap);
        ownerId = result.userId;
        logger.info({ userId: result.userId, keyId: result.keyId, created: result.created }, 'bootstrap key ensured');
      },
      register(rpc, database) {
        const operators = createOperators({ adminUserIds: config.adminUserIds, ownerId });
        const deps = { db: database.prisma, pubsub, cipher, logger, config, operators };
        rpc.add(AccountService, createAccountService(deps));
        rpc.add(SessionService, createSessionService(deps));
        rpc.add(UpstreamService, createUpstreamService(deps));
        rpc.add(TeamService, createTeamService(deps));
        rpc.add(DeviceService, createDeviceService(deps));
        rpc.add(AuditService, createAuditService(deps));
        rpc.add(GuardrailService, createGuardrailService(deps));
        rpc.add(McpServerService, createMcpServerService(deps));
      },
      beforeClose: closeCache,
    });
    return { ...backend, routing: createRoutingWrites({ db: backend.database.prisma, cipher, pubsub }) };
  } catch (error) {
    await closeCache();
    throw error;
  }
}

if (isBundleEntry('account')) {
  runService({
    name: 'account',
    load: () => loadAccountConfig(process.env),
    start,
    migrate: (config) =>
      migrateBackend({
        service: 'account',
        config,
        logger: createLogger({ service: 'account', level: config.logLevel }),
        appDir: __dirname,
        createClient: (adapter) => new PrismaClient({ adapter }),
      }),
  });
}
