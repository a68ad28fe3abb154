import { isBundleEntry, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { loadXBuildsConfig, type XBuildsConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

export { loadXBuildsConfig, type XBuildsConfig } from './config';

/**
 * The X builds service owns build jobs, the queue, published apps and media.
 * This composition root owns its database and serves gRPC health; its own RPCs arrive with its issue.
 */
export function start(config: XBuildsConfig, overrides: { logger?: Logger } = {}): Promise<RunningBackend<PrismaClient>> {
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
