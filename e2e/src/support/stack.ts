import http from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { create, toBinary } from '@bufbuild/protobuf';
import { createBus, flushWithin, type Bus } from '@sbc/bus';
import { createMemoryPubSub, createMemoryStore, type PubSub, type SharedStore } from '@sbc/cache';
import type { Resolver } from '@sbc/egress';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { hashSecret, newId, newSecret } from '@sbc/ids';
import { createLogger } from '@sbc/logging';
import { UsageLedgerService } from '@sbc/proto/sbc/usage/v1/ledger_pb';
import { UsageEventSchema } from '@sbc/proto/sbc/usage/v1/usage_event_pb';
import { createRpcClient, type RpcClientOf } from '@sbc/rpc';
import {
  createApiClient,
  createContractChecker,
  createTestDatabase,
  freePort,
  testBackends,
  type ApiClient,
  type ContractChecker,
  type TestDatabase,
} from '@sbc/testing';
import type { RunningAccount } from '@sbc/app-account';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { loadRunsConfig, start as startRuns } from '@sbc/app-runs';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { loadUsageLedgerConfig, start as startLedger, type RunningUsageLedger } from '@sbc/app-usage-ledger';
import { loadXBuildsConfig, start as startXBuilds } from '@sbc/app-x-builds';
import { seedCallerKey, startTestAccount, type SeededKeyOptions } from './test-account';
import type { UsageEventInit } from './usage-events';

/** The bootstrap owner's key (Full access) in every stack; each stack has its own database, so its own owner. */
export const OWNER_KEY = 'sbc_test_stack_owner_key_0123456789abcdef';
/** The apps host of a stack with the builds service: `<slug>.apps.localhost`. */
export const APPS_DOMAIN = 'apps.localhost';

/** One house engine as HOUSE_ENGINES spells it. */
export interface EngineSpec {
  dialect: 'openai' | 'anthropic';
  base_url: string;
  model: string;
  label?: string;
}
export type HouseSpec = Partial<Record<'house' | 'house-omni' | 'house-fast' | 'house-embed', EngineSpec[]>>;

/** `house` in the OpenAI dialect on the sim: what a stack's edge serves unless told otherwise. */
export function simHouseOnly(simUrl: string, model = 'sim-large'): HouseSpec {
  return { house: [{ dialect: 'openai', base_url: `${simUrl}/v1`, model }] };
}

/** simHouseOnly with `house-embed` on the sim too: what the embeddings suites call. */
export function simHouseAndEmbed(simUrl: string): HouseSpec {
  return {
    ...simHouseOnly(simUrl),
    'house-embed': [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-embed' }],
  };
}

export function openAiFor(url: string, apiKey = OWNER_KEY): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${url}/v1`, maxRetries: 0 });
}

export function anthropicFor(url: string, apiKey = OWNER_KEY): Anthropic {
  return new Anthropic({ apiKey, baseURL: url, maxRetries: 0 });
}

/** The model-path mapping: the same sim behind both upstream dialects (with and without `/v1`). */
export function simHouse(
  simUrl: string,
  fast: EngineSpec = { dialect: 'openai', base_url: simUrl, model: 'sim-error-429' },
): HouseSpec {
  return {
    house: [{ dialect: 'openai', base_url: `${simUrl}/v1`, model: 'sim-large' }],
    'house-omni': [{ dialect: 'anthropic', base_url: simUrl, model: 'sim-large' }],
    'house-fast': [fast],
  };
}

/** The X account the builds poller reads, on a fake X API; X-sourced jobs belong to (and bill) the owner. */
export interface XAccountOptions {
  apiUrl: string;
  accountId: string;
  bearerToken: string;
  userAccessToken: string;
}

export interface StackOptions {
  /** Names the stack's test databases. */
  label: string;
  /** Tokens per second the sim streams (default 0: as fast as it can). */
  simTokensPerSecond?: number;
  /** How long the first sim holds `sim-slow` before its first byte (default: the sim's own, 10 s). */
  simSlowMs?: number;
  /** The first edge's house models, given the sim's URL (default: simHouseOnly). */
  house?: (simUrl: string) => HouseSpec;
  accountEnv?: Record<string, string>;
  /** Settings of every edge of the stack, over the stack's own. */
  edgeEnv?: Record<string, string>;
  egressResolve?: Resolver;
  /** A second sim streaming at this rate, behind `house` on a second edge (pacedSim, pacedEdge). */
  paced?: { tokensPerSecond: number };
  /** The usage ledger, fed by the edges over one in-process bus. */
  ledger?: {
    env?: Record<string, string>;
    /**
     * Whether the ledger publishes balances into the edges' store and pub/sub (default true); false leaves it
     * its own, for a test that sets a balance in the store and reads back what the edge charged.
     */
    sharesStore?: boolean;
  };
  /** The runs service on its own database, its workers' model calls going back through the edge. */
  runs?: { env?: Record<string, string> };
  /** The X builds service (and the edge's apps host), on a fixed port so it can be restarted. */
  builds?: { env?: Record<string, string>; x?: XAccountOptions };
}

/**
 * The apps as a caller meets them: a sim-upstream, the account service with OWNER_KEY as its bootstrap key, and
 * an edge over them, on real PostgreSQL/Redis when the run has them. `api` checks every answer against the
 * edge's own /docs/openapi.json. Rows a test needs before it can call the routes (another user, a key with
 * chosen scopes, a session) are seeded straight into the account service's tables.
 */
export interface Stack {
  sim: RunningSim;
  account: RunningAccount;
  edge: RunningGateway;
  api: ApiClient;
  contract: ContractChecker;
  /** SDK clients of the edge, holding OWNER_KEY. */
  openai: OpenAI;
  anthropic: Anthropic;
  /** The bootstrap owner (holds OWNER_KEY, Full access). */
  ownerId: string;
  seedUser(email?: string): Promise<string>;
  /** A caller key on `userId` (default: the owner) with the given scopes (default: Full access). */
  seedKey(options?: Partial<SeededKeyOptions>): Promise<{ id: string; secret: string }>;
  /** A signed-in session of `userId` (default: the owner). */
  seedSession(userId?: string): Promise<string>;
  /** Starts a further edge over the same services (stopped with the stack). */
  startEdge(house: HouseSpec, extraEnv?: Record<string, string>): Promise<RunningGateway>;
  stop(): Promise<void>;
}

export interface PacedParts {
  pacedSim: RunningSim;
  /** `house` → the paced sim. */
  pacedEdge: RunningGateway;
}

/** The usage ledger's parts: the edges and the ledger share `bus` and `store` (the published balances). */
export interface LedgerParts {
  ledger: RunningUsageLedger;
  bus: Bus;
  store: SharedStore;
  /** The operator's gRPC client (plans, packs, grants). */
  ledgerRpc: RpcClientOf<typeof UsageLedgerService>;
  /** Publishes usage events on the bus, as an edge would, and resolves once the bus has delivered them. */
  sendEvents(events: UsageEventInit[]): Promise<void>;
  /** Stops the ledger and starts it again on the same ports and database (the bus keeps what it did not ack). */
  restartLedger(): Promise<void>;
}

export type RunningRuns = Awaited<ReturnType<typeof startRuns>>;

export interface RunsParts {
  runs: RunningRuns;
  runsDb: TestDatabase;
  /** The settings every runs service of this stack starts with (add to them for another one). */
  runsEnv: Record<string, string>;
  /** Another runs service on the same database (more workers), stopped with the stack. */
  startRunsService(env?: Record<string, string>): Promise<RunningRuns>;
  /** A project of the owner. */
  createProject(body?: Record<string, unknown>): Promise<string>;
}

export interface AppAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

type RunningXBuilds = Awaited<ReturnType<typeof startXBuilds>>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type XbJob = Record<string, any>;

export interface BuildsParts {
  builds: RunningXBuilds;
  /** Stops the builds service (its running stages are abandoned, as in a crash) and starts a new one on its port. */
  restartBuilds(): Promise<void>;
  /** A request to the apps host: the edge, with `Host: <slug>.apps.localhost`. */
  appGet(slug: string, path?: string, method?: string): Promise<AppAnswer>;
  /** Polls GET /v1/x-builds/{id} until `done(job)` holds. */
  waitForJob(key: string, id: string, done: (job: XbJob) => boolean, timeoutMs?: number): Promise<XbJob>;
}

export type AccountSurfaceStack = Stack;
export type UsageStack = Stack & LedgerParts;
export type RunsStack = Stack & RunsParts;
export type XBuildsStack = Stack & BuildsParts;

/** The stack `options` asks for: the core, and each optional part it names. */
export type StackWith<O extends StackOptions> = Stack &
  (O extends { paced: object } ? PacedParts : unknown) &
  (O extends { ledger: object } ? LedgerParts : unknown) &
  (O extends { runs: object } ? RunsParts : unknown) &
  (O extends { builds: object } ? BuildsParts : unknown);

const SILENT = { LOG_LEVEL: 'silent' };

export async function startStack<O extends StackOptions>(options: O): Promise<StackWith<O>> {
  // The builds service has no Redis of its own here: it shares an in-process pub/sub with account and edge.
  const redisUrl = options.builds ? undefined : testBackends().redisUrl;
  const pubsub: PubSub | undefined = redisUrl ? undefined : createMemoryPubSub();
  // Parts stop in the reverse of the order they started in, each after everything that uses it.
  const stops: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const stopPart of stops.splice(0).reverse()) await stopPart();
  };
  const database = async (suffix: string, restarts = false) => {
    const db = await createTestDatabase(`${options.label}_${suffix}`, { restarts });
    stops.push(() => db.drop());
    return db;
  };
  const sim = async (tokensPerSecond: number, slowMs?: number) => {
    const running = await startSim(
      loadSimConfig({
        SIM_PORT: '0',
        SIM_LATENCY_MS: '0',
        SIM_TOKENS_PER_SECOND: String(tokensPerSecond),
        ...(slowMs === undefined ? {} : { SIM_SLOW_MS: String(slowMs) }),
        ...SILENT,
      }),
    );
    stops.push(() => running.stop());
    return running;
  };
  if (pubsub) stops.push(() => pubsub.close());
  try {
    const stack = { stop } as StackWith<StackOptions> & Partial<PacedParts & LedgerParts & RunsParts & BuildsParts>;
    stack.sim = await sim(options.simTokensPerSecond ?? 0, options.simSlowMs);
    const accountDb = await database('account');
    stack.account = await startTestAccount({
      databaseUrl: accountDb.databaseUrl,
      redisUrl,
      pubsub,
      bootstrapKey: OWNER_KEY,
      env: options.accountEnv,
    });
    stops.push(() => stack.account.stop());
    const edgeEnv: Record<string, string> = {};
    let edgeDeps: { store?: SharedStore; bus?: Bus } = {};
    if (options.ledger) {
      Object.assign(edgeEnv, await startLedgerParts(stack, options.ledger, { database, stops, pubsub }));
      edgeDeps = { store: stack.store, bus: stack.bus };
    } else {
      // No ledger in this stack: the edge is told outright that its usage goes nowhere.
      edgeEnv.USAGE_EVENTS = 'off';
    }
    if (options.builds) {
      Object.assign(edgeEnv, await startBuildsParts(stack, options.builds, { database, stops, pubsub }));
    }
    const runsPort = options.runs ? await freePort() : undefined;
    if (runsPort) edgeEnv.RUNS_GRPC_TARGET = `127.0.0.1:${runsPort}`;

    const accountTarget = stack.account.grpcAddress;
    stack.startEdge = async (house, extraEnv = {}) => {
      const edge = await startGateway(
        loadGatewayConfig({
          PORT: '0',
          BASE_URL: 'https://gw.test',
          ACCOUNT_GRPC_TARGET: accountTarget,
          REDIS_URL: redisUrl,
          HOUSE_ENGINES: JSON.stringify(house),
          KEY_USE_FLUSH_MS: '50',
          ...SILENT,
          ...edgeEnv,
          ...options.edgeEnv,
          ...extraEnv,
        }),
        { pubsub, ...edgeDeps, egressResolve: options.egressResolve },
      );
      stops.push(() => edge.stop());
      return edge;
    };
    stack.edge = await stack.startEdge((options.house ?? simHouseOnly)(stack.sim.url));
    if (options.paced) {
      stack.pacedSim = await sim(options.paced.tokensPerSecond);
      const pacedHouse: EngineSpec = { dialect: 'openai', base_url: stack.pacedSim.url, model: 'sim-large' };
      stack.pacedEdge = await stack.startEdge({ house: [pacedHouse] });
    }
    const documentAnswer = await fetch(`${stack.edge.url}/docs/openapi.json`);
    const document = (await documentAnswer.json()) as Parameters<typeof createContractChecker>[0];
    stack.contract = createContractChecker(document);
    stack.api = createApiClient(stack.edge.url, stack.contract);
    stack.openai = openAiFor(stack.edge.url);
    stack.anthropic = anthropicFor(stack.edge.url);

    const prisma = stack.account.database.prisma;
    const ownerId = await ownerIdOf(stack.account);
    stack.ownerId = ownerId;
    stack.seedUser = async (email = `${newId('usr').toLowerCase()}@example.test`) => {
      const user = await prisma.user.create({ data: { id: newId('usr'), email } });
      return user.id;
    };
    stack.seedKey = (seed = {}) => seedCallerKey(prisma, { ...seed, userId: seed.userId ?? ownerId });
    stack.seedSession = async (userId = ownerId) => {
      const secret = newSecret('sbs');
      await prisma.session.create({
        data: { tokenHash: new Uint8Array(hashSecret(secret)), userId, expiresAt: new Date(Date.now() + 86_400_000) },
      });
      return secret;
    };
    if (options.runs) await startRunsParts(stack, options.runs, { database, stops, redisUrl, runsPort: runsPort! });
    return stack as StackWith<O>;
  } catch (error) {
    await stop();
    throw error;
  }
}

interface PartContext {
  database(suffix: string, restarts?: boolean): Promise<TestDatabase>;
  stops: (() => Promise<unknown>)[];
  pubsub: PubSub | undefined;
}

/** Starts the ledger and its bus and store; returns the edges' settings for it. */
async function startLedgerParts(
  stack: Partial<LedgerParts>,
  options: NonNullable<StackOptions['ledger']>,
  { database, stops, pubsub }: PartContext,
): Promise<Record<string, string>> {
  const store = createMemoryStore();
  stops.push(() => store.close());
  // Room for a burst the ledger has not caught up with yet, and for a ledger that is restarting.
  const logger = createLogger({ service: 'test', level: 'silent' });
  const bus = createBus({ clientId: 'e2e-stack', logger, maxBuffered: 200_000 });
  stops.push(() => bus.close());
  // Its rows outlive restartLedger, on PGlite too.
  const ledgerDb = await database('ledger', true);
  const deps = options.sharesStore === false ? { bus } : { bus, store, pubsub };
  const config = (ports: { grpc: string; http: string }) =>
    loadUsageLedgerConfig({
      USAGE_LEDGER_GRPC_PORT: ports.grpc,
      USAGE_LEDGER_HTTP_PORT: ports.http,
      DATABASE_URL: ledgerDb.databaseUrl,
      SBC_DATA_DIR: ledgerDb.dataDir,
      ...SILENT,
      ...options.env,
    });
  stack.ledger = await startLedger(config({ grpc: '0', http: '0' }), deps);
  stops.push(async () => {
    // Events of calls that ended during the edges' drain reach the ledger before it stops (for at most 2 s).
    await flushWithin(bus.producer, 2_000);
    await stack.ledger!.stop();
  });
  const ports = { grpc: stack.ledger.grpcAddress.split(':').at(-1)!, http: new URL(stack.ledger.httpUrl).port };
  stack.restartLedger = async () => {
    await stack.ledger!.stop();
    stack.ledger = await startLedger(config(ports), deps);
  };
  const ledgerRpc = createRpcClient(UsageLedgerService, { target: stack.ledger.grpcAddress, deadlineMs: 10_000 });
  stops.push(async () => ledgerRpc.close());
  stack.ledgerRpc = ledgerRpc;
  stack.bus = bus;
  stack.store = store;
  stack.sendEvents = async (events) => {
    for (const init of events) {
      const event = create(UsageEventSchema, init);
      bus.producer.send(USAGE_EVENTS_TOPIC, { key: event.accountId, value: toBinary(UsageEventSchema, event) });
    }
    await bus.producer.flush();
  };
  return { USAGE_LEDGER_GRPC_TARGET: stack.ledger.grpcAddress, SHUTDOWN_DRAIN_MS: '1000' };
}

/** Starts the builds service (before the edge, which it reaches lazily); returns the edges' settings for it. */
async function startBuildsParts(
  stack: Partial<Stack & BuildsParts>,
  options: NonNullable<StackOptions['builds']>,
  { database, stops, pubsub }: PartContext,
): Promise<Record<string, string>> {
  const ownerId = await ownerIdOf(stack.account!);
  const x = options.x;
  const xEnv: Record<string, string> = x
    ? {
        X_API_BASE_URL: x.apiUrl,
        X_ACCOUNT_ID: x.accountId,
        X_BEARER_TOKEN: x.bearerToken,
        X_USER_ACCESS_TOKEN: x.userAccessToken,
        X_OPERATOR_USER_ID: ownerId,
        X_POLL_MS: '200',
      }
    : {};
  // Its rows outlive restartBuilds, on PGlite too.
  const buildsDb = await database('builds', true);
  const buildsPort = await freePort();
  const start = () =>
    startXBuilds(
      loadXBuildsConfig({
        X_BUILDS_GRPC_PORT: String(buildsPort),
        X_BUILDS_HTTP_PORT: '0',
        DATABASE_URL: buildsDb.databaseUrl,
        SBC_DATA_DIR: buildsDb.dataDir,
        ...SILENT,
        BASE_URL: 'http://localhost:8080',
        APPS_DOMAIN,
        X_BUILDS_DISPATCH_POLL_MS: '100',
        // A browser costs seconds per build: only the browser tests turn it on.
        X_BUILDS_CHROMIUM_PATH: 'off',
        SHUTDOWN_DRAIN_MS: '500',
        ...xEnv,
        ...options.env,
      }),
      { pubsub, accountTarget: stack.account!.grpcAddress, gatewayUrl: () => stack.edge?.url },
    );
  stack.builds = await start();
  stops.push(() => stack.builds!.stop());
  stack.restartBuilds = async () => {
    await stack.builds!.stop();
    stack.builds = await start();
  };
  stack.appGet = (slug, path = '/', method = 'GET') => {
    const url = new URL(path, stack.edge!.url);
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method, headers: { host: `${slug}.${APPS_DOMAIN}:8080` } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
  };
  stack.waitForJob = async (key, id, done, timeoutMs = 30_000) => {
    const deadline = Date.now() + timeoutMs;
    let job: XbJob | undefined;
    while (Date.now() < deadline) {
      const answer = await stack.api!('GET', `/v1/x-builds/${id}`, { key }).catch(() => undefined);
      if (answer?.status === 200) {
        job = answer.body as XbJob;
        if (done(job)) return job;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`job ${id} did not get there in ${timeoutMs} ms; last seen: ${JSON.stringify(job)}`);
  };
  return {
    BASE_URL: 'http://localhost:8080',
    APPS_DOMAIN,
    X_BUILDS_GRPC_TARGET: `127.0.0.1:${buildsPort}`,
    SHUTDOWN_DRAIN_MS: '1000',
  };
}

/** Starts the runs service (after the edge, which its workers call) on the port the edge dials. */
async function startRunsParts(
  stack: Stack & Partial<RunsParts>,
  options: NonNullable<StackOptions['runs']>,
  context: Omit<PartContext, 'pubsub'> & { redisUrl: string | undefined; runsPort: number },
): Promise<void> {
  const { database, stops, redisUrl, runsPort } = context;
  const runsDb = await database('runs');
  const runsEnv: Record<string, string> = {
    RUNS_GRPC_PORT: '0',
    RUNS_HTTP_PORT: '0',
    SBC_DATA_DIR: 'memory://',
    ...(runsDb.databaseUrl ? { DATABASE_URL: runsDb.databaseUrl } : {}),
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ACCOUNT_GRPC_TARGET: stack.account.grpcAddress,
    GATEWAY_URL: stack.edge.url,
    RUNS_POLL_MS: '200',
    RUNS_WEBHOOK_POLL_MS: '100',
    // The tests' webhook receivers listen on loopback: runs dials them for the owner, an operator.
    ...SILENT,
    ...options.env,
  };
  const startService = async (env: Record<string, string>) => {
    const service = await startRuns(loadRunsConfig({ ...runsEnv, ...env }));
    stops.push(() => service.stop());
    return service;
  };
  stack.runs = await startService({ RUNS_GRPC_PORT: String(runsPort) });
  stack.runsDb = runsDb;
  stack.runsEnv = runsEnv;
  // Without PostgreSQL every service would get its own in-memory database, so extra services could not
  // share the runs: they are only offered with a database server.
  stack.startRunsService = async (env = {}) => {
    if (!runsDb.databaseUrl) throw new Error('a second runs service needs TEST_DATABASE_URL (a shared PostgreSQL)');
    return startService(env);
  };
  stack.createProject = async (body = {}) => {
    const res = await stack.api('POST', '/v1/projects', { key: OWNER_KEY, body: { name: 'demo', ...body } });
    if (res.status !== 201) throw new Error(`creating a project answered ${res.status}`);
    return res.body.id as string;
  };
}

async function ownerIdOf(account: RunningAccount): Promise<string> {
  const owner = await account.database.prisma.callerKey.findUnique({
    where: { keyHash: new Uint8Array(hashSecret(OWNER_KEY)) },
  });
  return owner!.userId;
}
