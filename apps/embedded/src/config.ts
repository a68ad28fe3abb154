import { z } from 'zod';
import { ConfigError, logLevel, parseEnv, url } from '@sbc/config';
import { loadAccountConfig, type AccountConfig } from '@sbc/app-account';
import { loadGatewayConfig, type GatewayConfig } from '@sbc/app-gateway';
import { loadRunsConfig, type RunsConfig } from '@sbc/app-runs';
import { loadSimConfig, type SimConfig } from '@sbc/app-sim-upstream';
import { loadUsageLedgerConfig, type UsageLedgerConfig } from '@sbc/app-usage-ledger';
import { loadXBuildsConfig, type XBuildsConfig } from '@sbc/app-x-builds';

const databaseUrl = url(['postgres', 'postgresql']).optional();

/**
 * What the embedded app reads itself. The rest of the environment goes to each service's own loader, so any
 * service variable (e.g. AUTH_CACHE_FRESH_MS) works here too; internal listeners get loopback ports the
 * system picks, and each service its own database.
 */
const schema = z.object({
  SBC_DATA_DIR: z.string().default('.data'),
  ACCOUNT_DATABASE_URL: databaseUrl,
  USAGE_LEDGER_DATABASE_URL: databaseUrl,
  X_BUILDS_DATABASE_URL: databaseUrl,
  RUNS_DATABASE_URL: databaseUrl,
  LOG_LEVEL: logLevel,
});

export interface EmbeddedConfig {
  dataDir: string;
  logLevel: string;
  account: AccountConfig;
  usageLedger: UsageLedgerConfig;
  xBuilds: XBuildsConfig;
  runs: RunsConfig;
  /** Its account target is filled in once the account service has bound its port. */
  gateway: GatewayConfig;
  sim: SimConfig;
}

type Env = Record<string, string | undefined>;

const INTERNAL = { GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', HTTP_HOST: '127.0.0.1', HTTP_PORT: '0' };

function internalEnv(prefix: string, env: Env, databaseUrl: string | undefined): Env {
  const vars: Env = { ...env, DATABASE_URL: databaseUrl ?? '' };
  for (const [name, value] of Object.entries(INTERNAL)) vars[`${prefix}_${name}`] = value;
  return vars;
}

/** Parses every service's config up front and reports every bad variable of all of them at once. */
export function loadEmbeddedConfig(env: Env): EmbeddedConfig {
  const problems: ConfigError['problems'] = [];
  function load<T>(loader: () => T): T {
    try {
      return loader();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const problem of error.problems)
        if (!problems.some((p) => p.variable === problem.variable)) problems.push(problem);
      return undefined as T;
    }
  }
  const vars = load(() => parseEnv('embedded', schema, env));
  const config: EmbeddedConfig = {
    dataDir: vars?.SBC_DATA_DIR ?? '.data',
    logLevel: vars?.LOG_LEVEL ?? 'info',
    account: load(() =>
      loadAccountConfig({ SBC_SIGNUP_ENABLED: 'true', ...internalEnv('ACCOUNT', env, vars?.ACCOUNT_DATABASE_URL) }),
    ),
    usageLedger: load(() => loadUsageLedgerConfig(internalEnv('USAGE_LEDGER', env, vars?.USAGE_LEDGER_DATABASE_URL))),
    xBuilds: load(() => loadXBuildsConfig(internalEnv('X_BUILDS', env, vars?.X_BUILDS_DATABASE_URL))),
    runs: load(() => loadRunsConfig(internalEnv('RUNS', env, vars?.RUNS_DATABASE_URL))),
    gateway: load(() => loadGatewayConfig(env)),
    // Fault injection is a test and bench fixture: the bundled simulator never serves it, whatever the environment.
    sim: load(() => loadSimConfig({ ...env, SIM_HOST: '127.0.0.1', SIM_PORT: '0', SIM_FAULTS: 'false' })),
  };
  if (problems.length > 0) throw new ConfigError('embedded', problems);
  return config;
}
