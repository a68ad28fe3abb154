import { z } from 'zod';
import {
  backendVars,
  commaList,
  ConfigError,
  flag,
  parseEnv,
  toBackendConfig,
  url,
  type BackendConfig,
} from '@sbc/config';
import { PRIVATE_EGRESS, privateEgressOf, type PrivateEgress } from '@sbc/egress';
import { decodeSecretsKey } from './store/secrets';

/** CONTRACTS: `sbc_` + 20 to 124 characters from [A-Za-z0-9_-] (24 to 128 in all). */
const BOOTSTRAP_KEY_PATTERN = /^sbc_[A-Za-z0-9_-]{20,124}$/;

const schema = z.object({
  ...backendVars('ACCOUNT', { grpc: 50051, http: 9101 }),
  REDIS_URL: url(['redis', 'rediss']).optional(),
  SBC_BOOTSTRAP_KEY: z
    .string()
    .regex(BOOTSTRAP_KEY_PATTERN, 'must be "sbc_" followed by 20 to 124 characters from A-Z, a-z, 0-9, "_" and "-"')
    .optional(),
  // The HTML5 rule, which (unlike the stricter default) accepts the single-label default owner@localhost.
  SBC_BOOTSTRAP_EMAIL: z.email({ pattern: z.regexes.html5Email }).default('owner@localhost'),
  UPSTREAM_SECRETS_KEY: z
    .string()
    .refine(
      (value) => decodeSecretsKey(value) !== undefined,
      'must be 32 bytes in base64 (e.g. the output of `openssl rand -base64 32`)',
    )
    .optional(),
  /**
   * Who may aim custom endpoints at loopback and private addresses: `operators` (default), `everyone` (a single-user
   * install) or `none` (hosted).
   */
  EGRESS_PRIVATE: z.enum(PRIVATE_EGRESS).optional(),
  /** Deprecated: `true` reads as EGRESS_PRIVATE=none. */
  EGRESS_DENY_PRIVATE: flag(false),
  /** The gateway's public URL: endpoints are never aimed back at it. */
  BASE_URL: url(['http', 'https']).optional(),
  /** The service's operators (usr_ ids); empty means the bootstrap owner alone. */
  X_BUILDS_ADMIN_USER_IDS: commaList.default([]),
  SBC_SIGNUP_ENABLED: flag(false),
});

export interface AccountConfig extends BackendConfig {
  redisUrl?: string;
  /** The owner key to ensure at start; the embedded app fills it in with a generated key when unset. */
  bootstrap?: { key: string; email: string };
  bootstrapEmail: string;
  /**
   * AES-256 key for upstream API keys and headers at rest. Unset is allowed only on the embedded PGlite data
   * directory, where start() keeps a generated one beside the data (see loadOrCreateSecretsKey).
   */
  upstreamSecretsKey?: Buffer;
  /**
   * CONTRACTS Egress: who may aim custom endpoints at loopback and private addresses (operators by default),
   * checked when saved (400) and again when probed; and the gateway's own origins, which no one may.
   */
  egress: { private: PrivateEgress; ownOrigins: string[] };
  /** The operators named by X_BUILDS_ADMIN_USER_IDS; empty = the bootstrap owner alone (see operators.ts). */
  adminUserIds: string[];
  /** Whether anyone may create a user with `POST /v1/auth/signup`; off unless turned on (embedded mode does). */
  signupEnabled: boolean;
}

export function loadAccountConfig(env: Record<string, string | undefined>): AccountConfig {
  const vars = parseEnv('account', schema, env);
  // With a shared PostgreSQL there is no data directory that travels with the rows, so a generated key would
  // be lost with the container and every stored secret with it: the operator must provide one.
  if (vars.DATABASE_URL && !vars.UPSTREAM_SECRETS_KEY) {
    throw new ConfigError('account', [
      {
        variable: 'UPSTREAM_SECRETS_KEY',
        message:
          'required when DATABASE_URL is set: 32 bytes in base64 that encrypt upstream API keys at rest (e.g. ' +
          '`openssl rand -base64 32`); keep it, stored secrets cannot be read without it',
      },
    ]);
  }
  return {
    ...toBackendConfig('ACCOUNT', vars),
    redisUrl: vars.REDIS_URL,
    bootstrap: vars.SBC_BOOTSTRAP_KEY ? { key: vars.SBC_BOOTSTRAP_KEY, email: vars.SBC_BOOTSTRAP_EMAIL } : undefined,
    bootstrapEmail: vars.SBC_BOOTSTRAP_EMAIL,
    upstreamSecretsKey: vars.UPSTREAM_SECRETS_KEY ? decodeSecretsKey(vars.UPSTREAM_SECRETS_KEY) : undefined,
    egress: {
      private: privateEgressOf(vars.EGRESS_PRIVATE, vars.EGRESS_DENY_PRIVATE),
      ownOrigins: vars.BASE_URL ? [vars.BASE_URL] : [],
    },
    adminUserIds: vars.X_BUILDS_ADMIN_USER_IDS,
    signupEnabled: vars.SBC_SIGNUP_ENABLED,
  };
}
