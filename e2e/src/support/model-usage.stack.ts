import { randomUUID } from 'node:crypto';
import { createBus, flushWithin, type Bus } from '@sbc/bus';
import { createMemoryPubSub, createMemoryStore, type PubSub, type SharedStore } from '@sbc/cache';
import { hashSecret, maskSecret, newId, newSecret } from '@sbc/ids';
import { createLogger } from '@sbc/logging';
import { createTestDatabase, testBackends, type TestDatabase } from '@sbc/testing';
import type { RunningAccount } from '@sbc/app-account';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { loadUsageLedgerConfig, start as startLedger, type RunningUsageLedger } from '@sbc/app-usage-ledger';
import { KEY, type HouseSpec } from './model-calls.harness';
import { startTestAccount } from './test-account';

/**
 * The model path with its accounting: sim-upstream, account, usage ledger and edge(s), the edges and the
 * ledger sharing one in-process bus, and every edge sharing one memory store the test can read and write
 * (budget counters, the account balance).
 */
export interface UsageStack {
  sim: RunningSim;
  /** A second sim streaming 20 tokens per second, for callers that hang up mid-stream. */
  pacedSim: RunningSim;
  account: RunningAccount;
  ledger: RunningUsageLedger;
  bus: Bus;
  store: SharedStore;
  edge: RunningGateway;
  /** `house` → the paced sim. */
  pacedEdge: RunningGateway;
  userId: string;
  /** A caller key on the bootstrap user, with an optional daily cap in whole credits. */
  createKey(options?: { dailyLimitCredits?: number }): Promise<{ id: string; secret: string }>;
  stop(): Promise<void>;
}

export const requestId = (tag: string) => `req_${tag}_${randomUUID().replace(/-/g, '')}`;

export async function startUsageStack(label: string): Promise<UsageStack> {
  const redisUrl = testBackends().redisUrl;
  const pubsub: PubSub | undefined = redisUrl ? undefined : createMemoryPubSub();
  const store = createMemoryStore();
  const logger = createLogger({ service: 'test', level: 'silent' });
  const bus = createBus({ clientId: 'test', logger });
  const edges: RunningGateway[] = [];
  const dbs: TestDatabase[] = [];
  let sim: RunningSim | undefined;
  let pacedSim: RunningSim | undefined;
  let account: RunningAccount | undefined;
  let ledger: RunningUsageLedger | undefined;
  const stop = async () => {
    for (const edge of edges.splice(0).reverse()) await edge.stop();
    // Events of calls that ended during the drain reach the ledger before it stops (for at most 2 s).
    await flushWithin(bus.producer, 2_000);
    await ledger?.stop();
    await bus.close();
    await account?.stop();
    await pacedSim?.stop();
    await sim?.stop();
    await pubsub?.close();
    await store.close();
    for (const db of dbs) await db.drop();
  };
  try {
    const simEnv = { SIM_PORT: '0', SIM_LATENCY_MS: '0', LOG_LEVEL: 'silent' };
    sim = await startSim(loadSimConfig({ ...simEnv, SIM_TOKENS_PER_SECOND: '0' }));
    pacedSim = await startSim(loadSimConfig({ ...simEnv, SIM_TOKENS_PER_SECOND: '20' }));
    const accountDb = await createTestDatabase(`${label}_account`);
    dbs.push(accountDb);
    account = await startTestAccount({ databaseUrl: accountDb.databaseUrl, redisUrl, pubsub, bootstrapKey: KEY });
    const ledgerDb = await createTestDatabase(`${label}_ledger`);
    dbs.push(ledgerDb);
    ledger = await startLedger(
      loadUsageLedgerConfig({ USAGE_LEDGER_GRPC_PORT: '0', USAGE_LEDGER_HTTP_PORT: '0', DATABASE_URL: ledgerDb.databaseUrl, SBC_DATA_DIR: 'memory://', LOG_LEVEL: 'silent' }),
      { bus },
    );
    const grpc = account.grpcAddress;
    const startEdge = async (house: HouseSpec) => {
      const edge = await startGateway(
        loadGatewayConfig({
          PORT: '0',
          BASE_URL: 'https://gw.test',
          ACCOUNT_GRPC_TARGET: grpc,
          REDIS_URL: redisUrl,
          HOUSE_ENGINES: JSON.stringify(house),
          KEY_USE_FLUSH_MS: '50',
          SHUTDOWN_DRAIN_MS: '1000',
          LOG_LEVEL: 'silent',
        }),
        { pubsub, store, bus },
      );
      edges.push(edge);
      return edge;
    };
    const edge = await startEdge({
      house: [{ dialect: 'openai', base_url: `${sim.url}/v1`, model: 'sim-large' }],
      'house-omni': [{ dialect: 'anthropic', base_url: sim.url, model: 'sim-large' }],
    });
    const pacedEdge = await startEdge({ house: [{ dialect: 'openai', base_url: pacedSim.url, model: 'sim-large' }] });

    const prisma = account.database.prisma;
    const owner = await prisma.callerKey.findUnique({ where: { keyHash: new Uint8Array(hashSecret(KEY)) } });
    const userId = owner!.userId;
    const createKey = async (options: { dailyLimitCredits?: number } = {}) => {
      const secret = newSecret('sbc');
      const id = newId('key');
      await prisma.callerKey.create({
        data: {
          id,
          userId,
          name: `usage test ${id}`,
          keyHash: new Uint8Array(hashSecret(secret)),
          mask: maskSecret(secret),
          scopes: ['gateway:invoke'],
          route: 'auto',
          mode: 'model',
          dailyLimitCredits: options.dailyLimitCredits ?? null,
        },
      });
      return { id, secret };
    };
    return { sim, pacedSim, account, ledger, bus, store, edge, pacedEdge, userId, createKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
