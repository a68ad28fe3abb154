import { create, toBinary, type MessageInitShape } from '@bufbuild/protobuf';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { createBus, flushWithin, type Bus } from '@sbc/bus';
import { createMemoryPubSub, createMemoryStore, type PubSub, type SharedStore } from '@sbc/cache';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { hashSecret, newId } from '@sbc/ids';
import { createLogger } from '@sbc/logging';
import { UsageLedgerService } from '@sbc/proto/sbc/usage/v1/ledger_pb';
import { UsageEventSchema, type UsageEvent } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import type { Scope } from '@sbc/scopes';
import { createApiClient, createContractChecker, createTestDatabase, testBackends, type ApiClient, type TestDatabase } from '@sbc/testing';
import type { RunningAccount } from '@sbc/app-account';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { loadUsageLedgerConfig, start as startLedger, type RunningUsageLedger } from '@sbc/app-usage-ledger';
import { seedCallerKey, startTestAccount } from './test-account';

export const USAGE_OWNER_KEY = 'sbc_usage_ledger_owner_key_0123456789ab';

export type UsageEventInit = MessageInitShape<typeof UsageEventSchema>;
/** Fields of a usage event, every one optional; `usageEvent` fills in a plausible house call. */
export type UsageEventFields = Partial<Omit<UsageEvent, '$typeName' | '$unknown' | 'ts'>>;

/**
 * The usage surface as a caller meets it: sim-upstream (no latency), the account service, the usage ledger
 * and the edge, the edge and the ledger sharing one in-process bus and one memory store (the published
 * balances), real PostgreSQL when the run has it. `api` checks every answer against /docs/openapi.json;
 * `ledgerRpc` is the operator's gRPC client (plans, packs, grants); `sendEvents` feeds the ledger usage
 * events directly, as an edge would.
 */
export interface UsageStack {
  sim: RunningSim;
  account: RunningAccount;
  ledger: RunningUsageLedger;
  edge: RunningGateway;
  bus: Bus;
  store: SharedStore;
  api: ApiClient;
  ledgerRpc: RpcClientOf<typeof UsageLedgerService>;
  ownerId: string;
  seedUser(): Promise<string>;
  seedKey(options?: { userId?: string; scopes?: readonly Scope[]; orgId?: string; name?: string; incognito?: boolean; dailyLimitCredits?: number }): Promise<{ id: string; secret: string }>;
  /** Publishes usage events on the bus and resolves once the ledger has applied them. */
  sendEvents(events: UsageEventInit[]): Promise<void>;
  /** Stops the ledger and starts it again on the same ports and database (the bus keeps what it did not ack). */
  restartLedger(): Promise<void>;
  stop(): Promise<void>;
}

export function usageEvent(init: UsageEventFields & { atMs: number }): UsageEventInit {
  const { atMs, ...rest } = init;
  return {
    model: 'house',
    upstream: 'house',
    provider: 'sim-upstream (bundled simulator)',
    dialectIn: 'chat',
    dialectOut: 'openai',
    route: 'auto',
    status: 200,
    inputTokens: 100n,
    outputTokens: 50n,
    listCostUsd: 0.00006,
    creditsCharged: 0.06,
    latencyMs: 12n,
    ttftMs: 3n,
    ts: timestampFromMs(atMs),
    ...rest,
  };
}

export async function startUsageStack(label: string, extra: { ledgerEnv?: Record<string, string>; edgeEnv?: Record<string, string> } = {}): Promise<UsageStack> {
  const redisUrl = testBackends().redisUrl;
  const pubsub: PubSub | undefined = redisUrl ? undefined : createMemoryPubSub();
  const store = createMemoryStore();
  const logger = createLogger({ service: 'test', level: 'silent' });
  // Room for a burst the ledger has not caught up with yet, and for a ledger that is restarting.
  const bus = createBus({ clientId: 'usage-test', logger, maxBuffered: 200_000 });
  const dbs: TestDatabase[] = [];
  let sim: RunningSim | undefined;
  let account: RunningAccount | undefined;
  let ledger: RunningUsageLedger | undefined;
  let edge: RunningGateway | undefined;
  let ledgerRpc: RpcClientOf<typeof UsageLedgerService> | undefined;
  const stop = async () => {
    ledgerRpc?.close();
    await edge?.stop();
    await flushWithin(bus.producer, 2_000);
    await ledger?.stop();
    await bus.close();
    await account?.stop();
    await sim?.stop();
    await pubsub?.close();
    await store.close();
    for (const db of dbs) await db.drop();
  };
  try {
    sim = await startSim(loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: '0', LOG_LEVEL: 'silent' }));
    const accountDb = await createTestDatabase(`${label}_account`);
    dbs.push(accountDb);
    account = await startTestAccount({ databaseUrl: accountDb.databaseUrl, redisUrl, pubsub, bootstrapKey: USAGE_OWNER_KEY });
    // Its rows outlive restartLedger, on PGlite too.
    const ledgerDb = await createTestDatabase(`${label}_ledger`, { restarts: true });
    dbs.push(ledgerDb);
    const ledgerEnv = (ports: { grpc: string; http: string }) =>
      loadUsageLedgerConfig({
        USAGE_LEDGER_GRPC_PORT: ports.grpc,
        USAGE_LEDGER_HTTP_PORT: ports.http,
        DATABASE_URL: ledgerDb.databaseUrl,
        SBC_DATA_DIR: ledgerDb.dataDir,
        LOG_LEVEL: 'silent',
        ...extra.ledgerEnv,
      });
    ledger = await startLedger(ledgerEnv({ grpc: '0', http: '0' }), { bus, store, pubsub });
    const ledgerPorts = { grpc: ledger.grpcAddress.split(':').at(-1)!, http: new URL(ledger.httpUrl).port };
    edge = await startGateway(
      loadGatewayConfig({
        PORT: '0',
        BASE_URL: 'https://gw.test',
        ACCOUNT_GRPC_TARGET: account.grpcAddress,
        USAGE_LEDGER_GRPC_TARGET: ledger.grpcAddress,
        REDIS_URL: redisUrl,
        HOUSE_ENGINES: JSON.stringify({ house: [{ dialect: 'openai', base_url: `${sim.url}/v1`, model: 'sim-large' }] }),
        KEY_USE_FLUSH_MS: '50',
        SHUTDOWN_DRAIN_MS: '1000',
        LOG_LEVEL: 'silent',
        ...extra.edgeEnv,
      }),
      { pubsub, store, bus },
    );
    ledgerRpc = createRpcClient(UsageLedgerService, { target: ledger.grpcAddress, deadlineMs: 10_000 });
    const document = (await (await fetch(`${edge.url}/docs/openapi.json`)).json()) as Parameters<typeof createContractChecker>[0];
    const api = createApiClient(edge.url, createContractChecker(document));

    const prisma = account.database.prisma;
    const owner = await prisma.callerKey.findUnique({ where: { keyHash: new Uint8Array(hashSecret(USAGE_OWNER_KEY)) } });
    const ownerId = owner!.userId;
    const seedUser = async () => (await prisma.user.create({ data: { id: newId('usr'), email: `${newId('usr').toLowerCase()}@example.test` } })).id;
    const seedKey: UsageStack['seedKey'] = (options = {}) => seedCallerKey(prisma, { name: 'usage key', ...options, userId: options.userId ?? ownerId });
    const sendEvents = async (events: UsageEventInit[]) => {
      for (const init of events) {
        const event = create(UsageEventSchema, init);
        bus.producer.send(USAGE_EVENTS_TOPIC, { key: event.accountId, value: toBinary(UsageEventSchema, event) });
      }
      await bus.producer.flush();
    };
    const running = { sim, account, ledger, edge, bus, store, api, ledgerRpc, ownerId, seedUser, seedKey, sendEvents, stop } as UsageStack;
    running.restartLedger = async () => {
      await running.ledger.stop();
      running.ledger = await startLedger(ledgerEnv(ledgerPorts), { bus, store, pubsub });
      ledger = running.ledger;
    };
    return running;
  } catch (error) {
    await stop();
    throw error;
  }
}
