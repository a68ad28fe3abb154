import {
  awaitTopic,
  createBus,
  createLagAdmin,
  createTopicAdmin,
  describeTopic,
  provisionTopic,
  watchConsumerLag,
  type Bus,
  type FoundTopic,
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
        connection: config.kafka,
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
  const topicSettings = topicSettingsGauge(metrics);
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
        // The topic as migrate makes it, waited for (bounded): the consumer never creates it with broker defaults.
        if (config.kafkaBrokers && !overrides.bus) await awaitUsageTopic(config, topicSettings, logger);
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
        if (config.kafkaBrokers && !overrides.bus) lagWatch = watchUsageLag(config, metrics, topicSettings, logger);
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

const kafkaClient = (config: UsageLedgerConfig, clientId: string, logger: Logger) => ({
  brokers: config.kafkaBrokers!,
  clientId,
  logger,
  connection: config.kafka,
});

/** usage.events.v1's settings as the cluster reports them (sbc_usage_topic_setting), read at start and with lag. */
function topicSettingsGauge(metrics: Registry): (found: FoundTopic) => void {
  const gauge = new Gauge({
    name: 'sbc_usage_topic_setting',
    help:
      'usage.events.v1 as the cluster has it: partitions, replication_factor (the lowest of its partitions), ' +
      'min_insync_replicas and retention_ms (-1: kept forever).',
    labelNames: ['setting'],
    registers: [metrics],
  });
  return (found) => {
    gauge.set({ setting: 'partitions' }, found.partitions);
    gauge.set({ setting: 'replication_factor' }, found.replicationFactor);
    gauge.set({ setting: 'min_insync_replicas' }, found.minInsyncReplicas);
    gauge.set({ setting: 'retention_ms' }, found.retentionMs);
  };
}

/**
 * Waits, bounded by KAFKA_TOPIC_WAIT_MS, for usage.events.v1 with what migrate makes (the configured partitions,
 * the replication the cluster's size calls for, a week's retention); past the bound the start fails, saying why.
 * Warns when the topic has fewer partitions than LEDGER_MAX_REPLICAS (the replicas past them idle).
 */
async function awaitUsageTopic(
  config: UsageLedgerConfig,
  topicSettings: (found: FoundTopic) => void,
  logger: Logger,
): Promise<void> {
  const topic = config.topic.prefix + USAGE_EVENTS_TOPIC;
  const admin = createTopicAdmin(kafkaClient(config, 'usage-ledger-check', logger));
  const outcome = await awaitTopic(
    admin,
    { topic, app: 'usage-ledger', partitions: config.topic.partitions, timeoutMs: config.topic.waitMs },
    logger,
  );
  if (outcome.state !== 'ready')
    throw new Error(
      `${topic} is not as migrate makes it after ${config.topic.waitMs} ms (${outcome.state}: ` +
        `${outcome.problems.join('; ')}): run \`usage-ledger migrate\` with the same KAFKA_BROKERS and ` +
        'KAFKA_TOPIC_PREFIX; it creates the topic, and fails naming what an existing one lacks.',
    );
  topicSettings(outcome.found);
  const { maxConsumers } = config.topic;
  if (maxConsumers !== undefined && outcome.found.partitions < maxConsumers)
    logger.warn(
      { topic, partitions: outcome.found.partitions, maxConsumers },
      `${topic} has fewer partitions than LEDGER_MAX_REPLICAS: the replicas past the partition count sit idle`,
    );
}

/**
 * The group's lag on each partition of usage.events.v1, read from the admin API (sbc_usage_consumer_lag), and
 * whether the partition is stalled (sbc_usage_consumer_stalled, with a warning when it starts). Every replica
 * reports the whole group's figures: take the max across pods, not the sum. The topic's settings are read again
 * with it (sbc_usage_topic_setting), so a topic altered underneath shows.
 */
function watchUsageLag(
  config: UsageLedgerConfig,
  metrics: Registry,
  topicSettings: (found: FoundTopic) => void,
  logger: Logger,
): { stop(): Promise<void> } {
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
  const topic = config.topic.prefix + USAGE_EVENTS_TOPIC;
  const topicAdmin = createTopicAdmin(kafkaClient(config, 'usage-ledger-topic', logger));
  return watchConsumerLag(createLagAdmin(kafkaClient(config, 'usage-ledger-lag', logger)), {
    topic,
    groupId: config.groupId,
    ...config.lagWatch,
    logger,
    onSample: (partitions) => {
      for (const p of partitions) {
        lag.set({ partition: String(p.partition) }, p.lag);
        stalled.set({ partition: String(p.partition) }, p.stalled ? 1 : 0);
      }
      void readTopicSettings(topicAdmin, topic, topicSettings).catch((error: unknown) =>
        logger.warn({ err: error, topic }, 'could not read the usage topic settings'),
      );
    },
  });
}

async function readTopicSettings(
  admin: ReturnType<typeof createTopicAdmin>,
  topic: string,
  topicSettings: (found: FoundTopic) => void,
): Promise<void> {
  await admin.connect();
  try {
    topicSettings(await describeTopic(admin, topic));
  } finally {
    await admin.disconnect();
  }
}

/**
 * Creates usage.events.v1 as configured when the cluster lacks it; fails (TopicShortfallError, so `migrate` exits
 * non-zero) when it exists with fewer partitions, less replication or a shorter retention than required.
 */
export async function provisionUsageTopic(config: UsageLedgerConfig, logger: Logger): Promise<void> {
  if (!config.kafkaBrokers) return;
  const { partitions, retentionMs } = config.topic;
  await provisionTopic(
    createTopicAdmin(kafkaClient(config, 'usage-ledger-provision', logger)),
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
