import { createCacheAdapters, type PubSub, type SharedStore } from '@sbc/cache';
import { XBUILDS_APP_CHANGED_CHANNEL, XBUILDS_JOB_CANCELLED_CHANNEL } from '@sbc/events';
import { isBundleEntry, migrateBackend, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { Gauge } from '@sbc/metrics';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { AuditService } from '@sbc/proto/sbc/account/v1/audit_pb';
import { XBuildsService } from '@sbc/proto/sbc/xbuilds/v1/xbuilds_pb';
import { createAuditLog, createRpcClient } from '@sbc/rpc';
import { findChromium } from './browser/judge';
import { loadXBuildsConfig, type XBuildsConfig } from './config';
import { OPEN_STATUSES } from './jobs/statuses';
import { PrismaClient } from './generated/prisma/client';
import { createXBuildsService } from './rpc/xbuilds-service';
import { createDispatcher, type Dispatcher } from './worker/dispatcher';
import { createXPoller, type XPoller } from './x/poller';

export { loadXBuildsConfig, type XBuildsConfig } from './config';
// For end-to-end tests elsewhere in the repo: X is a third party, so tests run the poller against this fake.
export { startFakeXApi, type FakeXApi } from './testing/fake-x-api';

/** Collaborators the embedded app shares between services in one process. */
export interface XBuildsOverrides {
  logger?: Logger;
  /** Shared pub/sub and store (in memory embedded; otherwise built from REDIS_URL). */
  pubsub?: PubSub;
  store?: SharedStore;
  /** The account service's gRPC address, when only known once it has bound its port. */
  accountTarget?: string;
  /** The edge's address for model calls, when only known once it listens; read when a call is made. */
  gatewayUrl?: () => string | undefined;
}

/**
 * The X builds service owns build jobs, the queue, published apps and media. Every replica serves the gRPC
 * API, runs a dispatcher (claims are coordinated in PostgreSQL) and competes for the single X poller lease.
 */
export async function start(
  config: XBuildsConfig,
  overrides: XBuildsOverrides = {},
): Promise<RunningBackend<PrismaClient>> {
  const logger = overrides.logger ?? createLogger({ service: 'x-builds', level: config.logLevel });
  const cache = overrides.pubsub ? undefined : createCacheAdapters({ redisUrl: config.redisUrl });
  const pubsub = overrides.pubsub ?? cache!.pubsub;
  const accountRpc = { target: overrides.accountTarget ?? config.accountTarget, deadlineMs: config.rpcDeadlineMs };
  const account = createRpcClient(AccountService, accountRpc);
  const auditClient = createRpcClient(AuditService, accountRpc);
  const audit = createAuditLog({ client: auditClient, logger });
  const gatewayUrl = () => overrides.gatewayUrl?.() ?? config.gatewayUrl;
  const notConfigured = () => {
    if (!config.enabled) return 'X_BUILDS_ENABLED is false';
    if (!gatewayUrl()) return 'GATEWAY_URL (where builds make their model calls) is not set';
    return undefined;
  };
  const xReplies = Boolean(config.x?.userAccessToken);
  const chromiumPath = findChromium(config.chromiumPath);
  if (chromiumPath) logger.info({ chromium: chromiumPath }, 'verification opens published apps in headless Chromium');
  else
    logger.warn(
      'no Chromium found (X_BUILDS_CHROMIUM_PATH, /usr/bin/chromium): the browser checks of verification are skipped',
    );
  const appChanged = (slug: string) => pubsub.publish(XBUILDS_APP_CHANGED_CHANNEL, slug);
  const jobCancelled = (jobId: string) => pubsub.publish(XBUILDS_JOB_CANCELLED_CHANNEL, jobId);
  let dispatcher: Dispatcher | undefined;
  let poller: XPoller | undefined;
  const release = async () => {
    await poller?.stop();
    await dispatcher?.stop();
    account.close();
    auditClient.close();
    await cache?.close();
  };
  try {
    const backend = await startBackend({
      service: 'x-builds',
      config,
      logger,
      appDir: __dirname,
      createClient: (adapter) => new PrismaClient({ adapter }),
      register(rpc, database) {
        const db = database.prisma;
        dispatcher = createDispatcher({ db, config, logger, pubsub, account, gatewayUrl, xReplies, chromiumPath });
        const wake = () => dispatcher?.wake();
        if (config.x) poller = createXPoller({ db, config: config.x, limits: config, logger, notConfigured, wake });
        rpc.add(
          XBuildsService,
          createXBuildsService({ db, config, logger, notConfigured, wake, xReplies, appChanged, jobCancelled, audit }),
        );
      },
      beforeClose: release,
    });
    // Queue depth and builds in flight, read at each scrape.
    new Gauge({
      name: 'sbc_xbuilds_jobs',
      help: 'Open X builds jobs by status (queued is the queue depth; the others are builds in flight).',
      labelNames: ['status'],
      registers: [backend.metrics],
      async collect() {
        const counts = await backend.database.prisma.buildJob.groupBy({
          by: ['status'],
          where: { status: { in: [...OPEN_STATUSES] } },
          _count: { _all: true },
        });
        this.reset();
        for (const status of OPEN_STATUSES)
          this.set({ status }, counts.find((row) => row.status === status)?._count._all ?? 0);
      },
    });
    await dispatcher!.start();
    poller?.start();
    return backend;
  } catch (error) {
    await release();
    throw error;
  }
}

if (isBundleEntry('x-builds')) {
  runService({
    name: 'x-builds',
    load: () => loadXBuildsConfig(process.env),
    start,
    migrate: (config) =>
      migrateBackend({
        service: 'x-builds',
        config,
        logger: createLogger({ service: 'x-builds', level: config.logLevel }),
        appDir: __dirname,
        createClient: (adapter) => new PrismaClient({ adapter }),
      }),
  });
}
