import { z } from 'zod';
import {
  backendVars,
  commaList,
  flag,
  grpcTarget,
  parseEnv,
  port,
  positiveInt,
  toBackendConfig,
  url,
  type BackendConfig,
} from '@sbc/config';

const schema = z.object({
  ...backendVars('X_BUILDS', { grpc: 50053, http: 9103 }),
  REDIS_URL: url(['redis', 'rediss']).optional(),
  ACCOUNT_GRPC_TARGET: grpcTarget.default('127.0.0.1:50051'),
  RPC_DEADLINE_MS: positiveInt(5_000),
  /** The edge, where builds make their model calls and verify the published app (services mode). */
  GATEWAY_URL: url(['http', 'https']).optional(),
  /** Where verification fetches the live app through the apps host; defaults to GATEWAY_URL. */
  X_BUILDS_VERIFY_URL: url(['http', 'https']).optional(),
  PORT: port(8080),
  BASE_URL: url(['http', 'https']).optional(),
  APPS_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+$/i, 'must be a host name')
    .default('apps.localhost'),
  HOUSE_ENGINES: z.string().optional(),
  X_BUILDS_ENABLED: flag(true),
  X_BUILDS_MODEL: z.string().min(1).default('house'),
  /** Add the simulator's markers to build prompts; on by default when house models are the bundled simulator. */
  X_BUILDS_SIM_MARKERS: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .transform((value) => value === 'true' || value === '1' || value === 'yes')
    .optional(),
  X_BUILDS_LEASE_MS: positiveInt(30_000),
  X_BUILDS_DISPATCH_POLL_MS: positiveInt(1_000),
  X_BUILDS_MAX_ATTEMPTS: positiveInt(3),
  X_BUILDS_MAX_FIX_ATTEMPTS: positiveInt(2),
  X_BUILDS_AUTHOR_DAILY_LIMIT: positiveInt(5),
  X_BUILDS_DAILY_CAP: positiveInt(500),
  X_BUILDS_APP_CAPACITY: positiveInt(1_000),
  X_BUILDS_MAX_BUNDLE_BYTES: positiveInt(512 * 1024),
  X_BUILDS_MAX_OUTPUT_TOKENS: positiveInt(16_000),
  X_BUILDS_MODEL_TIMEOUT_MS: positiveInt(300_000),
  /** Origins (`https://cdn.example`) whose scripts an app may load; empty means inline scripts only. */
  X_BUILDS_SCRIPT_ALLOWLIST: commaList.default([]),
  X_BUILDS_SLO_TOTAL_S: positiveInt(600),
  X_BUILDS_BACKOFF_BASE_MS: positiveInt(5_000),
  X_BUILDS_BACKOFF_MAX_MS: positiveInt(600_000),
  /**
   * Chromium for verification's browser checks, screenshots and clip; unset: /usr/bin/chromium when installed; `off`:
   * none.
   */
  X_BUILDS_CHROMIUM_PATH: z.string().optional(),
  X_API_BASE_URL: url(['http', 'https']).default('https://api.x.com'),
  /** App-only bearer token: reads the mentions timeline. */
  X_BEARER_TOKEN: z.string().optional(),
  /** OAuth 2.0 user-context access token with tweet.write and media.write: posts replies with the app's screenshot. */
  X_USER_ACCESS_TOKEN: z.string().optional(),
  /** The service's own X user id, whose mentions are polled. */
  X_ACCOUNT_ID: z.string().regex(/^\d+$/, 'must be a numeric X user id').optional(),
  /** The account (usr_…) that owns X-sourced jobs and pays for their model calls. */
  X_OPERATOR_USER_ID: z.string().regex(/^usr_/, 'must be a user id (usr_…)').optional(),
  X_POLL_MS: positiveInt(20_000),
  X_REPLIES_PER_15_MIN: positiveInt(90),
});

export interface XPollerConfig {
  apiBaseUrl: string;
  bearerToken: string;
  userAccessToken?: string;
  accountId: string;
  operatorUserId: string;
  pollMs: number;
  repliesPer15Min: number;
}

export interface XBuildsConfig extends BackendConfig {
  redisUrl?: string;
  accountTarget: string;
  rpcDeadlineMs: number;
  gatewayUrl?: string;
  verifyUrl?: string;
  /** Scheme and port of `app_url` come from BASE_URL (CONTRACTS). */
  baseUrl: string;
  appsDomain: string;
  enabled: boolean;
  model: string;
  simMarkers: boolean;
  leaseMs: number;
  dispatchPollMs: number;
  maxAttempts: number;
  maxFixAttempts: number;
  authorDailyLimit: number;
  dailyCap: number;
  appCapacity: number;
  maxBundleBytes: number;
  maxOutputTokens: number;
  modelTimeoutMs: number;
  scriptAllowlist: string[];
  sloTotalS: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** As configured; the browser actually used is findChromium's answer. */
  chromiumPath?: string;
  /** Set when the X account, its tokens and the operator account are all configured. */
  x?: XPollerConfig;
}

export function loadXBuildsConfig(env: Record<string, string | undefined>): XBuildsConfig {
  const vars = parseEnv('x-builds', schema, env);
  const x =
    vars.X_BEARER_TOKEN && vars.X_ACCOUNT_ID && vars.X_OPERATOR_USER_ID
      ? {
          apiBaseUrl: vars.X_API_BASE_URL.replace(/\/+$/, ''),
          bearerToken: vars.X_BEARER_TOKEN,
          userAccessToken: vars.X_USER_ACCESS_TOKEN,
          accountId: vars.X_ACCOUNT_ID,
          operatorUserId: vars.X_OPERATOR_USER_ID,
          pollMs: vars.X_POLL_MS,
          repliesPer15Min: vars.X_REPLIES_PER_15_MIN,
        }
      : undefined;
  return {
    ...toBackendConfig('X_BUILDS', vars),
    redisUrl: vars.REDIS_URL,
    accountTarget: vars.ACCOUNT_GRPC_TARGET,
    rpcDeadlineMs: vars.RPC_DEADLINE_MS,
    gatewayUrl: vars.GATEWAY_URL?.replace(/\/+$/, ''),
    verifyUrl: vars.X_BUILDS_VERIFY_URL?.replace(/\/+$/, ''),
    baseUrl: (vars.BASE_URL ?? `http://localhost:${vars.PORT}`).replace(/\/+$/, ''),
    appsDomain: vars.APPS_DOMAIN.toLowerCase(),
    enabled: vars.X_BUILDS_ENABLED,
    model: vars.X_BUILDS_MODEL,
    // Without HOUSE_ENGINES every edge serves house models from the bundled simulator.
    simMarkers: vars.X_BUILDS_SIM_MARKERS ?? vars.HOUSE_ENGINES === undefined,
    leaseMs: vars.X_BUILDS_LEASE_MS,
    dispatchPollMs: vars.X_BUILDS_DISPATCH_POLL_MS,
    maxAttempts: vars.X_BUILDS_MAX_ATTEMPTS,
    maxFixAttempts: vars.X_BUILDS_MAX_FIX_ATTEMPTS,
    authorDailyLimit: vars.X_BUILDS_AUTHOR_DAILY_LIMIT,
    dailyCap: vars.X_BUILDS_DAILY_CAP,
    appCapacity: vars.X_BUILDS_APP_CAPACITY,
    maxBundleBytes: vars.X_BUILDS_MAX_BUNDLE_BYTES,
    maxOutputTokens: vars.X_BUILDS_MAX_OUTPUT_TOKENS,
    modelTimeoutMs: vars.X_BUILDS_MODEL_TIMEOUT_MS,
    scriptAllowlist: vars.X_BUILDS_SCRIPT_ALLOWLIST,
    sloTotalS: vars.X_BUILDS_SLO_TOTAL_S,
    backoffBaseMs: vars.X_BUILDS_BACKOFF_BASE_MS,
    backoffMaxMs: vars.X_BUILDS_BACKOFF_MAX_MS,
    chromiumPath: vars.X_BUILDS_CHROMIUM_PATH,
    x,
  };
}
