import { createCacheAdapters, type PubSub, type SharedStore } from '@sbc/cache';
import { isBundleEntry, migrateBackend, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { Counter, Gauge } from '@sbc/metrics';
import { AccountService } from '@sbc/proto/sbc/account/v1/account_pb';
import { AuditService } from '@sbc/proto/sbc/account/v1/audit_pb';
import { BatchesService } from '@sbc/proto/sbc/runs/v1/batches_pb';
import { FilesService } from '@sbc/proto/sbc/runs/v1/files_pb';
import { ResponsesService } from '@sbc/proto/sbc/runs/v1/responses_pb';
import { RunsService } from '@sbc/proto/sbc/runs/v1/runs_pb';
import { BODY_MESSAGE_MAX_BYTES, createAuditLog, createRpcClient } from '@sbc/rpc';
import { loadRunsConfig, type RunsConfig } from './config';
import { PrismaClient } from './generated/prisma/client';
import { createBatchesService } from './rpc/batches-service';
import { createFilesService } from './rpc/files-service';
import { createResponsesService } from './rpc/responses-service';
import { createRunsService } from './rpc/runs-service';
import { createEgress } from './tools/egress';
import { sweepFiles } from './store/files';
import { createWebhookSender } from './webhooks/sender';
import { createBatchRunner } from './workers/batch-runner';
import { createResponsePurge } from './workers/response-purge';
import { createInvokeKeys } from './workers/invoke-keys';
import { createWorkerPool } from './workers/pool';

export { loadRunsConfig, type RunsConfig } from './config';

const UPLOAD_ABANDONED_MS = 3_600_000;

/** Collaborators the embedded app shares between services in one process. */
export interface RunsOverrides {
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
 * The runs service owns projects, agent runs, run events, webhook deliveries, stored OpenAI Responses, files and
 * batches.
 * Besides its gRPC API it runs the workers that execute runs (claimed from its PostgreSQL), the webhook sender
 * and the purge of expired responses and files.
 */
export async function start(config: RunsConfig, overrides: RunsOverrides = {}): Promise<RunningBackend<PrismaClient>> {
  const logger = overrides.logger ?? createLogger({ service: 'runs', level: config.logLevel });
  const cache = overrides.pubsub ? undefined : createCacheAdapters({ redisUrl: config.redisUrl, logger });
  const pubsub = overrides.pubsub ?? cache!.pubsub;
  const accountRpc = { target: overrides.accountTarget ?? config.accountTarget, deadlineMs: config.rpcDeadlineMs };
  const account = createRpcClient(AccountService, accountRpc);
  const auditClient = createRpcClient(AuditService, accountRpc);
  const audit = createAuditLog({ client: auditClient, logger });
  const gatewayUrl = () => overrides.gatewayUrl?.() ?? config.gatewayUrl;
  const egress = createEgress({
    privateEgress: config.egress.private,
    ownOrigins: () => [...config.egress.ownOrigins, overrides.gatewayUrl?.()],
    timeoutMs: Math.max(config.fetchTimeoutMs, config.webhooks.timeoutMs),
  });
  const closing = new AbortController();
  // The batch lane is made once the database is up; a batch created before then wakes nothing (the lane polls).
  let wakeBatchLane = () => {};
  let stopWorkers: () => Promise<void> = () => Promise.resolve();
  const release = async () => {
    await stopWorkers();
    account.close();
    auditClient.close();
    await egress.close();
    await cache?.close();
  };
  let backend: RunningBackend<PrismaClient>;
  try {
    backend = await startBackend({
      service: 'runs',
      config,
      logger,
      appDir: __dirname,
      createClient: (adapter) => new PrismaClient({ adapter }),
      // A stored response and its context travel whole (the edge bounds them).
      rpcServerOptions: { 'grpc.max_receive_message_length': BODY_MESSAGE_MAX_BYTES },
      register(rpc, database) {
        rpc.add(
          RunsService,
          createRunsService({ db: database.prisma, pubsub, logger, egress, audit, closing: closing.signal }),
        );
        rpc.add(
          ResponsesService,
          createResponsesService({
            db: database.prisma,
            bounds: {
              maxResponses: config.responses.maxPerAccount,
              maxBytes: config.responses.maxBytesPerAccount,
              ttlMs: config.responses.ttlMs,
            },
          }),
        );
        rpc.add(FilesService, createFilesService({ db: database.prisma, bounds: config.files }));
        rpc.add(BatchesService, createBatchesService({ db: database.prisma, onQueued: () => wakeBatchLane() }));
      },
      beforeClose: release,
    });
  } catch (error) {
    await release();
    throw error;
  }
  const writer = { db: backend.database.prisma, pubsub, logger };
  const keys = createInvokeKeys(account);
  const batchRunner = createBatchRunner({
    db: writer.db,
    logger,
    keys,
    gatewayUrl,
    ...config.batches,
  });
  const pool = createWorkerPool({
    writer,
    egress,
    logger,
    keys,
    gatewayUrl,
    budget: config.budget,
    fetchTimeoutMs: config.fetchTimeoutMs,
    concurrency: config.workers.concurrency,
    pollMs: config.workers.pollMs,
    leaseMs: config.workers.leaseMs,
    maxAttempts: config.workers.maxAttempts,
  });
  const deliveries = new Counter({
    name: 'sbc_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, retry_scheduled, exhausted, endpoint_disabled).',
    labelNames: ['outcome'],
    registers: [backend.metrics],
  });
  new Gauge({
    name: 'sbc_runs_queued',
    help: 'Runs waiting for a worker.',
    registers: [backend.metrics],
    async collect() {
      this.set(await writer.db.run.count({ where: { status: 'queued' } }));
    },
  });
  const sender = createWebhookSender({
    db: writer.db,
    egress,
    logger,
    ...config.webhooks,
    onOutcome: (outcome) => deliveries.inc({ outcome }),
  });
  const purged = new Counter({
    name: 'sbc_stored_responses_purged_total',
    help: 'Stored responses deleted because they expired.',
    registers: [backend.metrics],
  });
  const purge = createResponsePurge({
    db: writer.db,
    logger,
    intervalMs: config.responses.purgeIntervalMs,
    onPurged: (count) => purged.inc(count),
  });
  const fileSweep = createResponsePurge({
    db: writer.db,
    logger,
    intervalMs: config.responses.purgeIntervalMs,
    what: 'abandoned uploads and expired files',
    // An upload not committed within the hour lost its edge.
    purge: (now) => sweepFiles(writer.db, now, new Date(now.getTime() - UPLOAD_ABANDONED_MS)),
  });
  stopWorkers = async () => {
    await Promise.all([pool.stop(), sender.stop(), purge.stop(), fileSweep.stop(), batchRunner.stop()]);
  };
  try {
    await pool.start();
    sender.start();
    purge.start();
    fileSweep.start();
    batchRunner.start();
    wakeBatchLane = batchRunner.wake;
  } catch (error) {
    await backend.stop();
    throw error;
  }
  const running = backend;
  return {
    ...running,
    async stop() {
      // Event streams end first, so the RPC drain does not wait on them; the edge resumes them elsewhere.
      closing.abort();
      await running.stop();
    },
  };
}

if (isBundleEntry('runs')) {
  runService({
    name: 'runs',
    load: () => loadRunsConfig(process.env),
    start,
    migrate: (config) =>
      migrateBackend({
        service: 'runs',
        config,
        logger: createLogger({ service: 'runs', level: config.logLevel }),
        appDir: __dirname,
        createClient: (adapter) => new PrismaClient({ adapter }),
      }),
  });
}
