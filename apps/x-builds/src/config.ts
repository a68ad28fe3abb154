import { z } from 'zod';
import { backendVars, parseEnv, toBackendConfig, type BackendConfig } from '@sbc/config';

const schema = z.object(backendVars('X_BUILDS', { grpc: 50053, http: 9103 }));

export type XBuildsConfig = BackendConfig;

export function loadXBuildsConfig(env: Record<string, string | undefined>): XBuildsConfig {
  return toBackendConfig('X_BUILDS', parseEnv('x-builds', schema, env));
}
