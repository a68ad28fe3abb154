import { z } from 'zod';
import { backendVars, hostList, parseEnv, toBackendConfig, type BackendConfig } from '@sbc/config';

const schema = z.object({
  ...backendVars('USAGE_LEDGER', { grpc: 50052, http: 9102 }),
  KAFKA_BROKERS: hostList.optional(),
});

export interface UsageLedgerConfig extends BackendConfig {
  /** Where usage events are consumed from; absent means an in-process bus (the embedded app passes its own). */
  kafkaBrokers?: string[];
}

export function loadUsageLedgerConfig(env: Record<string, string | undefined>): UsageLedgerConfig {
  const vars = parseEnv('usage-ledger', schema, env);
  return { ...toBackendConfig('USAGE_LEDGER', vars), kafkaBrokers: vars.KAFKA_BROKERS };
}
