import { z } from 'zod';
import { backendVars, parseEnv, toBackendConfig, type BackendConfig } from '@sbc/config';

const schema = z.object(backendVars('USAGE_LEDGER', { grpc: 50052, http: 9102 }));

export type UsageLedgerConfig = BackendConfig;

export function loadUsageLedgerConfig(env: Record<string, string | undefined>): UsageLedgerConfig {
  return toBackendConfig('USAGE_LEDGER', parseEnv('usage-ledger', schema, env));
}
