import http from 'node:http';
import { createMemoryPubSub } from '@sbc/cache';
import { hashSecret } from '@sbc/ids';
import { PRESETS, type Scope } from '@sbc/scopes';
import { createApiClient, createContractChecker, createTestDatabase, freePort, type ApiClient, type ContractChecker, type TestDatabase } from '@sbc/testing';
import type { RunningAccount } from '@sbc/app-account';
import { loadGatewayConfig, start as startGateway, type RunningGateway } from '@sbc/app-gateway';
import { loadSimConfig, start as startSim, type RunningSim } from '@sbc/app-sim-upstream';
import { loadXBuildsConfig, start as startXBuilds } from '@sbc/app-x-builds';
import { seedCallerKey, startTestAccount } from './test-account';

export const XB_OWNER_KEY = 'sbc_test_x_builds_owner_key_0123456789';
export const APPS_DOMAIN = 'apps.localhost';

type RunningXBuilds = Awaited<ReturnType<typeof startXBuilds>>;

/**
 * The X builds lane as a caller meets it: the edge (REST routes and apps host) over the account service and
 * the builds service, with house models on a sim-upstream whose output is paced (so a build can be caught
 * mid-stage). Account, builds and edge share one in-process pub/sub. The builds service listens on a fixed
 * port, so it can be stopped and started again ("a worker killed mid-build") behind the same edge.
 */
export interface XBuildsStack {
  edge: RunningGateway;
  account: RunningAccount;
  builds: RunningXBuilds;
  sim: RunningSim;
  api: ApiClient;
  contract: ContractChecker;
  ownerId: string;
  /** A caller key on the owner with the given scopes (default: Full access). */
  seedKey(scopes?: readonly Scope[]): Promise<string>;
  /** Stops the builds service (its running stages are abandoned, as in a crash) and starts a new one on its port. */
  restartBuilds(): Promise<void>;
  /** A request to the apps host: the edge, with `Host: <slug>.apps.localhost`. */
  appGet(slug: string, path?: string, method?: string): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>;
  /** Polls GET /v1/x-builds/{id} until `done(job)` holds. */
  waitForJob(key: string, id: string, done: (job: XbJob) => boolean, timeoutMs?: number): Promise<XbJob>;
  stop(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type XbJob = Record<string, any>;

/** The X account the poller reads, on a fake X API; X-sourced jobs belong to (and bill) the bootstrap owner. */
export interface XAccountOptions {
  apiUrl: string;
  accountId: string;
  bearerToken: string;
  userAccessToken: string;
}

export async function startXBuildsStack(
  label: string,
  options: {
    buildsEnv?: Record<string, string>;
    /** Account settings, e.g. SBC_SIGNUP_ENABLED or X_BUILDS_ADMIN_USER_IDS (which the account service reads). */
    accountEnv?: Record<string, string>;
    simTokensPerSecond?: number;
    x?: XAccountOptions;
    /** The sim model behind `house` (e.g. `sim-error-503` for an upstream that keeps failing). */
    houseModel?: string;
  } = {},
): Promise<XBuildsStack> {
  const pubsub = createMemoryPubSub();
  const dbs: TestDatabase[] = [];
  let sim: RunningSim | undefined;
  let account: RunningAccount | undefined;
  let builds: RunningXBuilds | undefined;
  let edge: RunningGateway | undefined;
  const stop = async () => {
    await edge?.stop();
    await builds?.stop();
    await account?.stop();
    await sim?.stop();
    await pubsub.close();
    for (const db of dbs) await db.drop();
  };
  try {
    sim = await startSim(loadSimConfig({ SIM_PORT: '0', SIM_LATENCY_MS: '0', SIM_TOKENS_PER_SECOND: String(options.simTokensPerSecond ?? 0), LOG_LEVEL: 'silent' }));
    const accountDb = await createTestDatabase(`${label}_account`);
    dbs.push(accountDb);
    account = await startTestAccount({ databaseUrl: accountDb.databaseUrl, pubsub, bootstrapKey: XB_OWNER_KEY, env: options.accountEnv });
    const prisma = account.database.prisma;
    const owner = await prisma.callerKey.findUnique({ where: { keyHash: new Uint8Array(hashSecret(XB_OWNER_KEY)) } });
    const ownerId = owner!.userId;
    const xEnv: Record<string, string> = options.x
      ? {
          X_API_BASE_URL: options.x.apiUrl,
          X_ACCOUNT_ID: options.x.accountId,
          X_BEARER_TOKEN: options.x.bearerToken,
          X_USER_ACCESS_TOKEN: options.x.userAccessToken,
          X_OPERATOR_USER_ID: ownerId,
          X_POLL_MS: '200',
        }
      : {};
    // Its rows outlive restartBuilds, on PGlite too.
    const buildsDb = await createTestDatabase(`${label}_builds`, { restarts: true });
    dbs.push(buildsDb);
    const buildsPort = await freePort();
    const accountTarget = account.grpcAddress;
    const startBuilds = () =>
      startXBuilds(
        loadXBuildsConfig({
          X_BUILDS_GRPC_PORT: String(buildsPort),
          X_BUILDS_HTTP_PORT: '0',
          DATABASE_URL: buildsDb.databaseUrl,
          SBC_DATA_DIR: buildsDb.dataDir,
          LOG_LEVEL: 'silent',
          BASE_URL: 'http://localhost:8080',
          APPS_DOMAIN,
          X_BUILDS_DISPATCH_POLL_MS: '100',
          // A browser costs seconds per build: only the browser tests turn it on.
          X_BUILDS_CHROMIUM_PATH: 'off',
          SHUTDOWN_DRAIN_MS: '500',
          ...xEnv,
          ...options.buildsEnv,
        }),
        { pubsub, accountTarget, gatewayUrl: () => edge?.url },
      );
    builds = await startBuilds();
    edge = await startGateway(
      loadGatewayConfig({
        PORT: '0',
        BASE_URL: 'http://localhost:8080',
        APPS_DOMAIN,
        ACCOUNT_GRPC_TARGET: accountTarget,
        X_BUILDS_GRPC_TARGET: `127.0.0.1:${buildsPort}`,
        HOUSE_ENGINES: JSON.stringify({ house: [{ dialect: 'openai', base_url: `${sim.url}/v1`, model: options.houseModel ?? 'sim-large' }] }),
        KEY_USE_FLUSH_MS: '50',
        SHUTDOWN_DRAIN_MS: '1000',
        LOG_LEVEL: 'silent',
      }),
      { pubsub },
    );
    const edgeUrl = edge.url;
    const document = (await (await fetch(`${edgeUrl}/docs/openapi.json`)).json()) as Parameters<typeof createContractChecker>[0];
    const contract = createContractChecker(document);
    const api = createApiClient(edgeUrl, contract);

    const stack: XBuildsStack = {
      edge,
      account,
      builds,
      sim,
      api,
      contract,
      ownerId,
      async seedKey(scopes = PRESETS.full_access) {
        return (await seedCallerKey(prisma, { userId: ownerId, scopes, name: 'x builds test key' })).secret;
      },
      async restartBuilds() {
        await builds!.stop();
        builds = await startBuilds();
        stack.builds = builds;
      },
      appGet(slug, path = '/', method = 'GET') {
        const url = new URL(path, edgeUrl);
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
      },
      async waitForJob(key, id, done, timeoutMs = 30_000) {
        const deadline = Date.now() + timeoutMs;
        let job: XbJob | undefined;
        while (Date.now() < deadline) {
          const answer = await api('GET', `/v1/x-builds/${id}`, { key }).catch(() => undefined);
          if (answer?.status === 200) {
            job = answer.body as XbJob;
            if (done(job)) return job;
          }
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        throw new Error(`job ${id} did not get there in ${timeoutMs} ms; last seen: ${JSON.stringify(job)}`);
      },
      stop,
    };
    return stack;
  } catch (error) {
    await stop();
    throw error;
  }
}
