import { isBundleEntry, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import type { PubSub, SharedStore } from '@sbc/cache';
import { createLogger, type Logger } from '@sbc/logging';
import { loadRunsConfig, type RunsConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

export { loadRunsConfig, type RunsConfig } from './config';

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
 * The runs service owns projects, agent runs, run events and webhook deliveries.
 * This composition root owns its database and serves gRPC health; its own RPCs arrive with its issue.
 */
export function start(config: RunsConfig, overrides: RunsOverrides = {}): Promise<RunningBackend<PrismaClient>> {
  return startBackend({
    service: 'runs',
    config,
    logger: overrides.logger ?? createLogger({ service: 'runs', level: config.logLevel }),
    appDir: __dirname,
    createClient: (adapter) => new PrismaClient({ adapter }),
    register: () => undefined,
  });
}

if (isBundleEntry('runs')) {
  runService({ name: 'runs', load: () => loadRunsConfig(process.env), start });
}
