import { z } from 'zod';
import { grpcTarget, logLevel, parseEnv, port, positiveInt, url } from '@sbc/config';

const schema = z.object({
  PORT: port(8080),
  HOST: z.string().default('127.0.0.1'),
  BASE_URL: url(['http', 'https']).optional(),
  APPS_DOMAIN: z.string().default('apps.localhost'),
  ACCOUNT_GRPC_TARGET: grpcTarget.default('127.0.0.1:50051'),
  REDIS_URL: url(['redis', 'rediss']).optional(),
  RPC_DEADLINE_MS: positiveInt(2_000),
  AUTH_CACHE_FRESH_MS: positiveInt(10_000),
  AUTH_CACHE_STALE_MS: positiveInt(60_000),
  AUTH_CACHE_MAX_ENTRIES: positiveInt(100_000),
  KEY_USE_FLUSH_MS: positiveInt(30_000),
  MAX_BODY_BYTES: positiveInt(32 * 1024 * 1024),
  SHUTDOWN_DRAIN_MS: positiveInt(10_000),
  LOG_LEVEL: logLevel,
});

export interface GatewayConfig {
  host: string;
  port: number;
  /** What `doc_url` and printed URLs use; defaults to http://localhost:<PORT>. */
  baseUrl: string;
  appsDomain: string;
  accountTarget: string;
  redisUrl?: string;
  rpcDeadlineMs: number;
  authCache: { freshMs: number; staleMs: number; maxEntries: number };
  keyUseFlushMs: number;
  maxBodyBytes: number;
  shutdownDrainMs: number;
  logLevel: string;
}

export function loadGatewayConfig(env: Record<string, string | undefined>): GatewayConfig {
  const vars = parseEnv('gateway', schema, env);
  return {
    host: vars.HOST,
    port: vars.PORT,
    baseUrl: (vars.BASE_URL ?? `http://localhost:${vars.PORT}`).replace(/\/+$/, ''),
    appsDomain: vars.APPS_DOMAIN,
    accountTarget: vars.ACCOUNT_GRPC_TARGET,
    redisUrl: vars.REDIS_URL,
    rpcDeadlineMs: vars.RPC_DEADLINE_MS,
    authCache: { freshMs: vars.AUTH_CACHE_FRESH_MS, staleMs: vars.AUTH_CACHE_STALE_MS, maxEntries: vars.AUTH_CACHE_MAX_ENTRIES },
    keyUseFlushMs: vars.KEY_USE_FLUSH_MS,
    maxBodyBytes: vars.MAX_BODY_BYTES,
    shutdownDrainMs: vars.SHUTDOWN_DRAIN_MS,
    logLevel: vars.LOG_LEVEL,
  };
}
