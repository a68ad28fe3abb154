import { isBundleEntry, runService, startBackend, type RunningBackend } from '@sbc/lifecycle';
import { createLogger, type Logger } from '@sbc/logging';
import { loadUsageLedgerConfig, type UsageLedgerConfig } from './config';
import { PrismaClient } from './generated/prisma/client';

export { loadUsageLedgerConfig, type UsageLedgerConfig } from './config';

/**
 * The usage ledger owns usage, credits and spend: it consumes usage events and serves usage reports.
 * This composition root owns its database and serves gRPC health; its own RPCs arrive with its issue.
 */
export function start(config: UsageLedgerConfig, overrides: { logger?: Logger } = {}): Promise<RunningBackend<PrismaClient>> {
  return startBackend({
    service: 'usage-ledger',
    config,
    logger: overrides.logger ?? createLogger({ service: 'usage-ledger', level: config.logLevel }),
    appDir: __dirname,
    createClient: (adapter) => new PrismaClient({ adapter }),
    register: () => undefined,
  });
}

if (isBundleEntry('usage-ledger')) {
  runService({ name: 'usage-ledger', load: () => loadUsageLedgerConfig(process.env), start });
}
