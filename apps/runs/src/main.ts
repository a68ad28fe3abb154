import { isBundleEntry, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { loadRunsConfig, type RunsConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

export { loadRunsConfig, type RunsConfig } from './config';

/**
 * The runs service owns projects, agent runs, run events and webhook deliveries.
 * This composition root owns its database and serves gRPC health; its own RPCs arrive with its issue.
 */
export function start(config: RunsConfig, overrides: { logger?: Logger } = {}): Promise<RunningBackend<PrismaClient>> {
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
