import { createMemoryPubSub, type PubSub } from '@sbc/cache';
import type { Resolver } from '@sbc/egress';
import { hashSecret, newId, newSecret } from '@sbc/ids';
import type { Scope } from '@sbc/scopes';
import { createApiClient, createContractChecker, createTestDatabase, testBackends, type ApiClient, type ContractChecker, type TestDatabase } from '@sbc/testing';
import type { RunningAccount } from '@sbc/app-account';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { seedCallerKey, startTestAccount } from './test-account';

export const OWNER_KEY = 'sbc_test_account_surface_owner_key_0123';

/**
 * The account surface as a caller meets it: the edge's REST routes over the account service (real
 * PostgreSQL/Redis when the run has them), plus a sim-upstream to probe. `api` checks every answer against
 * the edge's own /docs/openapi.json. Rows a test needs before it can call the routes (another user, a key
 * with chosen scopes, a session) are seeded straight into the account service's tables.
 */
export interface AccountSurfaceStack {
  edge: RunningGateway;
  account: RunningAccount;
  sim: RunningSim;
  api: ApiClient;
  contract: ContractChecker;
  /** The bootstrap owner (holds OWNER_KEY, Full access). */
  ownerId: string;
  seedUser(email?: string): Promise<string>;
  /** A caller key on `userId` (default: the owner) with the given scopes (default: Full access). */
  seedKey(options?: { userId?: string; scopes?: readonly Scope[] | null; orgId?: string; name?: string }): Promise<{ id: string; secret: string }>;
  /** A signed-in session of `userId` (default: the owner). */
  seedSession(userId?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startAccountSurface(
  label: string,
  extra: { edgeEnv?: Record<string, string>; accountEnv?: Record<string, string>; egressResolve?: Resolver } = {},
): Promise<AccountSurfaceStack> {
  const redisUrl = testBackends().redisUrl;
  const pubsub: PubSub | undefined = redisUrl ? undefined : createMemoryPubSub();
  let db: TestDatabase | undefined;
  let sim: RunningSim | undefined;
  let account: RunningAccount | undefined;
  let edge: RunningGateway | undefined;
  const stop = async () => {
    await edge?.stop();
    await account?.stop();
    await sim?.stop();
    await pubsub?.close();
    await db?.drop();
  };
  try {
    sim = await startSim(loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }));
    db = await createTestDatabase(`${label}_account`);
    account = await startTestAccount({ databaseUrl: db.databaseUrl, redisUrl, pubsub, bootstrapKey: OWNER_KEY, env: extra.accountEnv });
    edge = await startGateway(
      loadGatewayConfig({
        PORT: '0',
        BASE_URL: 'https://gw.test',
        ACCOUNT_GRPC_TARGET: account.grpcAddress,
        REDIS_URL: redisUrl,
        HOUSE_ENGINES: JSON.stringify({ house: [{ dialect: 'openai', base_url: `${sim.url}/v1`, model: 'sim-large' }] }),
        KEY_USE_FLUSH_MS: '50',
        LOG_LEVEL: 'silent',
        ...extra.edgeEnv,
      }),
      { pubsub, egressResolve: extra.egressResolve },
    );
    const document = (await (await fetch(`${edge.url}/docs/openapi.json`)).json()) as Parameters<typeof createContractChecker>[0];
    const contract = createContractChecker(document);
    const prisma = account.database.prisma;
    const owner = await prisma.callerKey.findUnique({ where: { keyHash: new Uint8Array(hashSecret(OWNER_KEY)) } });
    const ownerId = owner!.userId;

    const seedUser = async (email = `${newId('usr').toLowerCase()}@example.test`) => {
      const user = await prisma.user.create({ data: { id: newId('usr'), email } });
      return user.id;
    };
    const seedKey: AccountSurfaceStack['seedKey'] = (options = {}) => seedCallerKey(prisma, { ...options, userId: options.userId ?? ownerId });
    const seedSession = async (userId = ownerId) => {
      const secret = newSecret('sbs');
      await prisma.session.create({ data: { tokenHash: new Uint8Array(hashSecret(secret)), userId, expiresAt: new Date(Date.now() + 86_400_000) } });
      return secret;
    };
    return { edge, account, sim, api: createApiClient(edge.url, contract), contract, ownerId, seedUser, seedKey, seedSession, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
