import { z } from 'zod';
import { backendVars, parseEnv, toBackendConfig, type BackendConfig } from '@sbc/config';

const schema = z.object(backendVars('RUNS', { grpc: 50054, http: 9104 }));

export type RunsConfig = BackendConfig;

export function loadRunsConfig(env: Record<string, string | undefined>): RunsConfig {
  return toBackendConfig('RUNS', parseEnv('runs', schema, env));
}
