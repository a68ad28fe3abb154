import {
  checkTopic,
  createBus,
  createLagAdmin,
  createTopicAdmin,
  provisionTopic,
  watchConsumerLag,
  type Bus,
  type Subscription,
} from '@sbc/bus';
import { createCacheAdapters, type PubSub, type SharedStore } from '@sbc/cache';
import {
  isBundleEntry,
  migrateBackend,
  openServiceDatabase,
  runService,
  startBackend,
  type RunningBackend,
} from '@sbc/lifecycle';
import { USAGE_EVENTS_TOPIC } from '@sbc/events';
import { createLogger, type Logger } from '@sbc/logging';
import { Counter, createMetricsRegistry, Gauge, Histogram, type Registry } from '@sbc/metrics';
import { UsageLedgerService } from '@sbc/proto/sbc/usage/v1/ledger_pb';
import { createBalancePublisher, type BalancePublisher } from './caps/balance-publisher';
import { loadUsageLedgerConfig, type UsageLedgerConfig } from './config';
import { deadLettersCommand } from './consumer/dead-letters-command';
import { subscribeUsageEvents } from './consumer/usage-consumer';
import { PrismaClient } from './generated/prisma/client';
import { createLedgerService } from './rpc/ledger-service';
import { anthropicCostReport, openAiCostReport, type CostReportReader } from './spend/cost-reports';
import { createSpend } from './spend/spend';
import { exportPagesFor } from './store/export-pages';
import { createUsageReports } from './store/usage-reports';

export { loadUsageLedgerConfig, type UsageLedgerConfig } from './config';
export { balanceKey } from './caps/balance-publisher';

/** Collaborators the embedded app shares between services in one process. */
export interface UsageLedgerOverrides {
  logger?: Logger;
  /** The bus the edge publishes usage events on; the ledger subscribes to it but never closes it. */
  bus?: Bus;
  /** Where balances are published for the edge (in memory embedded; otherwise REDIS_URL). */
  store?: SharedStore;
  pubsub?: PubSub;
}

export interface RunningUsageLedger extends RunningBackend<PrismaClient> {
  /** Publishes and reconciles balances; `sweep` runs one reconciliation pass now (tests, operators). */
  balances: BalancePublisher;
}

/**
 * The usage ledger owns usage, credits and spend: it applies usage events in batches, serves usage reports,
 * credits and spend over gRPC, and publishes each account's balance for the edge, reconciling it on a timer.
 */
export async function start(
  config: UsageLedgerConfig,
  overrides: UsageLedgerOverrides = {},
): Promise<RunningUsageLedger> {
  const logger = overrides.logger ?? createLogger({ service: 'usage-ledger', level: config.logLevel });
  const ownBus = overrides.bus
    ? undefined
    : createBus({
        kafkaBrokers: config.kafkaBrokers,
        clientId: 'usage-ledger',
        logger,
        topicPrefix: config.topic.prefix,
      });
  const bus = overrides.bus ?? ownBus!;
  const cache = overrides.store ? undefined : createCacheAdapters({ redisUrl: config.redisUrl, logger });
  const store = overrides.store ?? cache!.store;
  const costReports: Partial<Record<string, CostReportReader>> = {
    ...(config.costSources.openai ? { openai: openAiCostReport(config.costSources.openai) } : {}),
    ...(config.costSources.anthropic ? { anthropic: anthropicCostReport(config.costSources.anthropic) } : {}),
  };
  let subscription: Subscription | undefined;
  let lagWatch: { stop(): Promise<void> } | undefined;
  let sweepTimer: NodeJS.Timeout | undefined;
  let sweeping: Promise<unknown> | undefined;
  let balances: BalancePublisher | undefined;
  // Waits for the batch being applied to commit (its offsets are then committed too), and only then lets the
  // database close; a shared bus and store stay open for the services that share them.
  const stopWorkers = async () => {
    clearInterval(sweepTimer);
    sweepTimer = undefined;
    await lagWatch?.stop();
    lagWatch = undefined;
    await subscription?.stop();
    subscription = undefined;
    await sweeping;
    await ownBus?.close();
    await cache?.close();
  };
  // The bus lag: how far behind the calls the ledger applies their events.
  const metrics = createMetricsRegistry('usage-ledger');
  const applied = new Counter({
    name: 'sbc_usage_events_applied_total',
    help: 'Usage events handled: applied, or duplicate (already applied, e.g. a redelivery).',
    labelNames: ['outcome'],
    registers: [metrics],
  });
  const lag = new Histogram({
    name: 'sbc_usage_event_lag_seconds',
    help: 'From a call to its usage event being committed by the ledger (the oldest event of each batch).',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers: [metrics],
  });
  const deadLetters = new Counter({
    name: 'sbc_usage_dead_letters_total',
    help:
      'Usage events parked in usage_dead_letters instead of applied: undecodable, or refused by the database ' +
      'while the events around them were applied.',
    labelNames: ['reason'],
    registers: [metrics],
  });
  try {
    const backend = await startBackend({
      service: 'usage-ledger',
      config,
      logger,
      metrics,
      appDir: __dirname,
      createClient: (adapter) => new PrismaClient({ adapter }),
      connectionTimeoutMs: config.database.connectionTimeoutMs,
      async prepare(database) {
        const publisher = createBalancePublisher({
          db: database.prisma,
          store,
          logger,
          quietMs: config.reconcileQuietMs,
        });
        balances = publisher;
        // After migrations, so every event lands in the current schema.
        subscription = await subscribeUsageEvents(bus.consumer, {
          db: database.prisma,
          logger,
          batchSize: config.batchSize,
          batchLingerMs: config.batchLingerMs,
          groupId: config.groupId,
          parkLoneAfterAttempts: config.parkLoneAfterAttempts,
          statementTimeoutMs: config.database.statementTimeoutMs,
          onNewAccounts: (accountIds) => publisher.publishNew(accountIds),
          onApplied: (batch) => {
            applied.inc({ outcome: 'applied' }, batch.inserted);
            applied.inc({ outcome: 'duplicate' }, batch.events - batch.inserted);
            if (batch.oldestAt) lag.observe(Math.max(0, Date.now() - batch.oldestAt.getTime()) / 1000);
          },
          onDeadLetter: (reason) => deadLetters.inc({ reason }),
        });
        logger.info({ bus: bus.kind, costReports: Object.keys(costReports) }, 'consuming usage events');
        if (config.kafkaBrokers && !overrides.bus) lagWatch = watchUsageLag(config, metrics, logger);
        // Warns about a topic too small for the ledger's replicas or too loosely replicated; never holds up the start.
        if (config.kafkaBrokers && !overrides.bus)
          void checkTopic(
            createTopicAdmin(config.kafkaBrokers, 'usage-ledger-check', logger),
            { topic: config.topic.prefix + USAGE_EVENTS_TOPIC, consumers: config.topic.maxConsumers },
            logger,
          ).catch((error: unknown) => logger.warn({ err: error }, 'could not check the usage topic'));
        sweepTimer = setInterval(() => {
          sweeping ??= publisher
            .sweep()
            .then((counts) => logger.debug(counts, 'balances reconciled'))
            .catch((error: unknown) => logger.error({ err: error }, 'balance sweep failed'))
            .finally(() => (sweeping = undefined));
        }, config.reconcileIntervalMs);
        sweepTimer.unref();
      },
      register(rpc, database) {
        const reports = createUsageReports(database.prisma, exportPagesFor(database));
        const spend = createSpend({
          db: database.prisma,
          reports,
          logger,
          costReports,
          refreshMs: config.spendRefreshMs,
        });
        rpc.add(UsageLedgerService, createLedgerService({ db: database.prisma, reports, spend, publisher: balances! }));
      },
      beforeClose: stopWorkers,
    });
    return { ...backend, balances: balances! };
  } catch (error) {
    await stopWorkers();
    throw error;
  }
}

/**
 * The group's lag on each partition of usage.events.v1, read from the admin API (sbc_usage_consumer_lag), and
 * whether the partition is stalled (sbc_usage_consumer_stalled, with a warning when it starts). Every replica
 * reports the whole group's figures: take the max across pods, not the sum.
 */
function watchUsageLag(config: UsageLedgerConfig, metrics: Registry, logger: Logger): { stop(): Promise<void> } {
  const lag = new Gauge({
    name: 'sbc_usage_consumer_lag',
    help: "Usage events on a partition of usage.events.v1 that the ledger's group has not committed yet.",
    labelNames: ['partition'],
    registers: [metrics],
  });
  const stalled = new Gauge({
    name: 'sbc_usage_consumer_stalled',
    help: 'Whether a partition has lag and no commit for LEDGER_STALL_AFTER_MS (1) or not (0).',
    labelNames: ['partition'],
    registers: [metrics],
  });
  return watchConsumerLag(createLagAdmin(config.kafkaBrokers!, 'usage-ledger-lag', logger), {
    topic: config.topic.prefix + USAGE_EVENTS_TOPIC,
    groupId: config.groupId,
    ...config.lagWatch,
    logger,
    onSample: (partitions) => {
      for (const p of partitions) {
        lag.set({ partition: String(p.partition) }, p.lag);
        stalled.set({ partition: String(p.partition) }, p.stalled ? 1 : 0);
      }
    },
  });
}

/** Creates usage.events.v1 as configured when the cluster lacks it; says what falls short when it exists. */
export async function provisionUsageTopic(config: UsageLedgerConfig, logger: Logger): Promise<void> {
  if (!config.kafkaBrokers) return;
  const { partitions, retentionMs } = config.topic;
  await provisionTopic(
    createTopicAdmin(config.kafkaBrokers, 'usage-ledger-provision', logger),
    { topic: config.topic.prefix + USAGE_EVENTS_TOPIC, partitions, retentionMs },
    logger,
  );
}

if (isBundleEntry('usage-ledger')) {
  const database = (config: UsageLedgerConfig): Parameters<typeof migrateBackend<PrismaClient>>[0] => ({
    service: 'usage-ledger',
    config,
    logger: createLogger({ service: 'usage-ledger', level: config.logLevel }),
    appDir: __dirname,
    createClient: (adapter) => new PrismaClient({ adapter }),
  });
  runService({
    name: 'usage-ledger',
    load: () => loadUsageLedgerConfig(process.env),
    start,
    migrate: async (config) => {
      await migrateBackend(database(config));
      // The migrate job also creates usage.events.v1 (partitions, replication, retention: bus/provision-topic.ts).
      if (config.kafkaBrokers) await provisionUsageTopic(config, database(config).logger);
    },
    commands: {
      // Operators list and replay parked usage events (README "Usage, credits and spend").
      'dead-letters': async (config, args) => {
        const opened = await openServiceDatabase(database(config));
        try {
          return await deadLettersCommand(opened.prisma, args, (line) => process.stdout.write(`${line}\n`));
        } finally {
          await opened.close();
        }
      },
    },
  });
}
