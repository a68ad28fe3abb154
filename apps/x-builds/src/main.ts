import { isBundleEntry, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import type { PubSub, SharedStore } from '@sbc/cache';
import { createLogger, type Logger } from '@sbc/logging';
import { loadXBuildsConfig, type XBuildsConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

export { loadXBuildsConfig, type XBuildsConfig } from './config';

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
 * The X builds service owns build jobs, the queue, published apps and media.
 * This composition root owns its database and serves gRPC health; its own RPCs arrive with its issue.
 */
export function start(config: XBuildsConfig, overrides: XBuildsOverrides = {}): Promise<RunningBackend<PrismaClient>> {
  return startBackend({
    service: 'x-builds',
    config,
    logger: overrides.logger ?? createLogger({ service: 'x-builds', level: config.logLevel }),
    appDir: __dirname,
    createClient: (adapter) => new PrismaClient({ adapter }),
    register: () => undefined,
  });
}

if (isBundleEntry('x-builds')) {
  runService({ name: 'x-builds', load: () => loadXBuildsConfig(process.env), start });
}
