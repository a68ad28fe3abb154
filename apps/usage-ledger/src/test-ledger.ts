import type { Bus } from '@sbc/bus';
import type { Logger } from '@sbc/logging';
import { loadUsageLedgerConfig, start, type RunningUsageLedger } from './main';

/**
 * The real ledger for an integration test: on `databaseUrl` (PGlite when unset), consuming `bus`, on free ports.
 * `dataDir` holds PGlite on disk when there is no PostgreSQL, so rows outlive a restart of the ledger.
 */
export function startTestLedger(options: {
  databaseUrl: string | undefined;
  dataDir: string;
  bus: Bus;
  logger: Logger;
  /** Further settings, over the test's own. */
  env?: Record<string, string>;
}): Promise<RunningUsageLedger> {
  const config = loadUsageLedgerConfig({
    USAGE_LEDGER_GRPC_PORT: '0',
    USAGE_LEDGER_HTTP_PORT: '0',
    DATABASE_URL: options.databaseUrl,
    SBC_DATA_DIR: options.dataDir,
    LOG_LEVEL: 'silent',
    ...options.env,
  });
  return start(config, { bus: options.bus, logger: options.logger });
}
