import path from 'node:path';
import { createBus, flushWithin } from '@sbc/bus';
import { createCacheAdapters } from '@sbc/cache';
import { chooseDatabase, initialiseDatabases } from '@sbc/db';
import { isBundleEntry, runService, type Stoppable } from '@sbc/lifecycle';
import { createLogger } from '@sbc/logging';
import { start as startAccount } from '@sbc/app-account';
import { simulatorHouseEngines, start as startGateway } from '@sbc/app-gateway';
import { start as startRuns } from '@sbc/app-runs';
import { start as startSim } from '@sbc/app-sim-upstream';
import { provisionUsageTopic, start as startUsageLedger } from '@sbc/app-usage-ledger';
import { start as startXBuilds } from '@sbc/app-x-builds';
import { resolveBootstrapKey } from './bootstrap-key';
import { loadEmbeddedConfig, type EmbeddedConfig } from './config';
import { endOfLifeWarning } from './node-support';

export { loadEmbeddedConfig, type EmbeddedConfig } from './config';

const FLUSH_ON_STOP_MS = 10_000;

export interface RunningEmbedded extends Stoppable {
  /** The public base URL of the edge. */
  baseUrl: string;
  /** Where the edge actually listens. */
  url: string;
  bootstrap: { key: string; file?: string; generated: boolean };
}

/**
 * Every service in one process: the single-machine default behind `npm start`. Services talk gRPC over
 * loopback exactly as they do when deployed apart; pub/sub is in-process unless REDIS_URL is set.
 */
export async function start(config: EmbeddedConfig): Promise<RunningEmbedded> {
  const bootstrap = await resolveBootstrapKey(config.dataDir, config.account.bootstrap?.key);
  // A first start makes every service's database with one initdb, not one each.
  const databases = {
    account: config.account,
    'usage-ledger': config.usageLedger,
    'x-builds': config.xBuilds,
    runs: config.runs,
  };
  await initialiseDatabases(
    Object.entries(databases).map(([service, { databaseUrl, dataDir }]) =>
      chooseDatabase({ databaseUrl, dataDir, service }),
    ),
  );
  // One store and pub/sub for every service: in memory, or Redis when REDIS_URL is set.
  const cache = createCacheAdapters({ redisUrl: config.gateway.redisUrl });
  const { pubsub, store } = cache;
  const logger = (service: string) => createLogger({ service, level: config.logLevel });
  // One usage bus for the edge (producer) and the ledger (consumer): in-process unless KAFKA_BROKERS is set.
  // Usage events become durable in an outbox under the data directory before a reply ends (memory:// keeps none).
  const outboxDir = config.dataDir.startsWith('memory://') ? undefined : path.join(config.dataDir, 'usage-outbox');
  const bus = createBus({
    kafkaBrokers: config.gateway.kafkaBrokers,
    clientId: 'embedded',
    logger: logger('bus'),
    topicPrefix: config.gateway.usageEvents.topicPrefix,
    connection: config.gateway.kafka,
    outboxDir,
  });
  const started: Stoppable[] = [];
  const stopAll = async () => {
    for (const service of started.splice(0).reverse()) await service.stop();
    await bus.close();
    await cache.close();
  };

  try {
    const sim = await startSim(config.sim, { logger: logger('sim-upstream') });
    started.push(sim);
    const account = await startAccount(
      { ...config.account, bootstrap: { key: bootstrap.key, email: config.account.bootstrapEmail } },
      { pubsub, logger: logger('account') },
    );
    started.push(account);
    // With KAFKA_BROKERS, `npm start` creates usage.events.v1 as the migrate job does, unless told it may not.
    // A broker that cannot be reached now is the spool's business, not a reason to refuse to start.
    const usageLedgerConfig = {
      ...config.usageLedger,
      kafkaBrokers: config.gateway.kafkaBrokers,
      topic: { ...config.usageLedger.topic, prefix: config.gateway.usageEvents.topicPrefix },
    };
    if (usageLedgerConfig.kafkaBrokers && usageLedgerConfig.topic.provision)
      await provisionUsageTopic(usageLedgerConfig, logger('usage-ledger')).catch((error: unknown) =>
        logger('usage-ledger').warn({ err: error }, 'could not provision the usage topic'),
      );
    const ledger = await startUsageLedger(config.usageLedger, { logger: logger('usage-ledger'), bus, store, pubsub });
    started.push(ledger);
    // Builds and runs make their model calls through the edge, which starts last: they read its address late.
    const edge: { url?: string } = {};
    const workers = { store, pubsub, accountTarget: account.grpcAddress, gatewayUrl: () => edge.url };
    const xBuilds = await startXBuilds(config.xBuilds, { logger: logger('x-builds'), ...workers });
    started.push(xBuilds);
    const runs = await startRuns(config.runs, { logger: logger('runs'), ...workers });
    started.push(runs);
    // Stopped in reverse: once the edge has drained, the ledger gets the events still in flight before it stops.
    started.push({ stop: () => flushWithin(bus.producer, FLUSH_ON_STOP_MS) });
    // House models answer from the bundled simulator unless HOUSE_ENGINES names real engines.
    const houseEngines = config.gateway.houseEngines ?? simulatorHouseEngines(sim.url);
    const gateway = await startGateway(
      {
        ...config.gateway,
        accountTarget: account.grpcAddress,
        usageLedgerTarget: ledger.grpcAddress,
        xBuildsTarget: xBuilds.grpcAddress,
        runsTarget: runs.grpcAddress,
        houseEngines,
      },
      { pubsub, store, bus, logger: logger('gateway') },
    );
    started.push(gateway);
    edge.url = gateway.url;
    return { baseUrl: gateway.baseUrl, url: gateway.url, bootstrap, stop: stopAll };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function banner(running: RunningEmbedded): string {
  const { bootstrap } = running;
  const lines = [`\nModel gateway (embedded) serving at ${running.baseUrl}`];
  lines.push(`  console: ${running.baseUrl}/console/`);
  if (bootstrap.generated) {
    lines.push(
      `  bootstrap key (shown ` +
        `once${bootstrap.file ? `; saved to ${bootstrap.file}` : ', kept in memory only'}): ${bootstrap.key}`,
    );
  } else {
    lines.push(`  bootstrap key: ${bootstrap.file ? `saved in ${bootstrap.file}` : 'from SBC_BOOTSTRAP_KEY'}`);
  }
  lines.push(`  try: curl -H "Authorization: Bearer <key>" ${running.baseUrl}/v1/keys/whoami`, '');
  return lines.join('\n');
}

if (isBundleEntry('embedded')) {
  const eol = endOfLifeWarning(process.versions.node, new Date());
  if (eol) process.stderr.write(`${eol}\n`);
  runService({
    name: 'embedded',
    load: () => loadEmbeddedConfig(process.env),
    async start(config) {
      const running = await start(config);
      process.stdout.write(banner(running));
      return running;
    },
  });
}
