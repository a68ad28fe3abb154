import { z } from 'zod';
import { backendVars, parseEnv, toBackendConfig, url, type BackendConfig } from '@sbc/config';

/** CONTRACTS: `sbc_` + 20 to 124 characters from [A-Za-z0-9_-] (24 to 128 in all). */
export const BOOTSTRAP_KEY_PATTERN = /^sbc_[A-Za-z0-9_-]{20,124}$/;

const schema = z.object({
  ...backendVars('ACCOUNT', { grpc: 50051, http: 9101 }),
  REDIS_URL: url(['redis', 'rediss']).optional(),
  SBC_BOOTSTRAP_KEY: z
    .string()
    .regex(BOOTSTRAP_KEY_PATTERN, 'must be "sbc_" followed by 20 to 124 characters from A-Z, a-z, 0-9, "_" and "-"')
    .optional(),
  SBC_BOOTSTRAP_EMAIL: z.email().default('owner@localhost'),
});

export interface AccountConfig extends BackendConfig {
  redisUrl?: string;
  /** The owner key to ensure at start; the embedded app fills it in with a generated key when unset. */
  bootstrap?: { key: string; email: string };
  bootstrapEmail: string;
}

export function loadAccountConfig(env: Record<string, string | undefined>): AccountConfig {
  const vars = parseEnv('account', schema, env);
  return {
    ...toBackendConfig('ACCOUNT', vars),
    redisUrl: vars.REDIS_URL,
    bootstrap: vars.SBC_BOOTSTRAP_KEY ? { key: vars.SBC_BOOTSTRAP_KEY, email: vars.SBC_BOOTSTRAP_EMAIL } : undefined,
    bootstrapEmail: vars.SBC_BOOTSTRAP_EMAIL,
  };
}
