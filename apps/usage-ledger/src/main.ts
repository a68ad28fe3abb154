import { createBus, type Bus, type Subscription } from '@sbc/bus';
import type { PubSub, SharedStore } from '@sbc/cache';
import { isBundleEntry, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { loadUsageLedgerConfig, type UsageLedgerConfig } from './config';
import { subscribeUsageEvents } from './consumer/usage-consumer';
import { PrismaClient } from './generated/prisma/client';

export { loadUsageLedgerConfig, type UsageLedgerConfig } from './config';

/** Collaborators the embedded app shares between services in one process. */
export interface UsageLedgerOverrides {
  logger?: Logger;
  /** The bus the edge publishes usage events on; the ledger subscribes to it but never closes it. */
  bus?: Bus;
  /** Where balances and spend counters are published for the edge (in memory embedded; otherwise REDIS_URL). */
  store?: SharedStore;
  pubsub?: PubSub;
}

export type RunningUsageLedger = RunningBackend<PrismaClient>;

/**
 * The usage ledger owns usage, credits and spend: it consumes usage events and serves usage reports.
 * This composition root owns its database and its bus (unless given one), applies usage events, and serves
 * gRPC health; its own RPCs arrive with its issue.
 */
export async function start(config: UsageLedgerConfig, overrides: UsageLedgerOverrides = {}): Promise<RunningUsageLedger> {
  const logger = overrides.logger ?? createLogger({ service: 'usage-ledger', level: config.logLevel });
  const ownBus = overrides.bus ? undefined : createBus({ kafkaBrokers: config.kafkaBrokers, clientId: 'usage-ledger', logger });
  const bus = overrides.bus ?? ownBus!;
  let subscription: Subscription | undefined;
  // Waits for the event being applied to commit (its offset is then committed too), and only then lets the
  // database close; a shared bus stays open for the services that share it.
  const stopConsuming = async () => {
    await subscription?.stop();
    subscription = undefined;
    await ownBus?.close();
  };
  try {
    return await startBackend({
      service: 'usage-ledger',
      config,
      logger,
      appDir: __dirname,
      createClient: (adapter) => new PrismaClient({ adapter }),
      async prepare(database) {
        // After migrations, so every event lands in the current schema.
        subscription = await subscribeUsageEvents(bus.consumer, { db: database.prisma, logger });
        logger.info({ bus: bus.kind }, 'consuming usage events');
      },
      register: () => undefined,
      beforeClose: stopConsuming,
    });
  } catch (error) {
    await stopConsuming();
    throw error;
  }
}

if (isBundleEntry('usage-ledger')) {
  runService({ name: 'usage-ledger', load: () => loadUsageLedgerConfig(process.env), start });
}
