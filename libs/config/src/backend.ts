import { z } from 'zod';
import { logLevel, port, positiveInt, url } from './vars';

/**
 * The variables every backend service reads, prefixed by its name (`ACCOUNT_GRPC_PORT`, …) so that one
 * environment (compose, the embedded app) can hold them all without clashing.
 */
export function backendVars(prefix: string, ports: { grpc: number; http: number }) {
  return {
    [`${prefix}_GRPC_HOST`]: z.string().default('127.0.0.1'),
    [`${prefix}_GRPC_PORT`]: port(ports.grpc),
    [`${prefix}_HTTP_HOST`]: z.string().default('127.0.0.1'),
    [`${prefix}_HTTP_PORT`]: port(ports.http),
    DATABASE_URL: url(['postgres', 'postgresql']).optional(),
    SBC_DATA_DIR: z.string().default('.data'),
    SHUTDOWN_DRAIN_MS: positiveInt(10_000),
    LOG_LEVEL: logLevel,
  } as const;
}

export interface BackendConfig {
  grpc: { host: string; port: number };
  http: { host: string; port: number };
  /** PostgreSQL; absent means PGlite files under `<dataDir>/<service>`. */
  databaseUrl?: string;
  dataDir: string;
  shutdownDrainMs: number;
  logLevel: string;
}

export function toBackendConfig(prefix: string, vars: Record<string, unknown>): BackendConfig {
  return {
    grpc: { host: vars[`${prefix}_GRPC_HOST`] as string, port: vars[`${prefix}_GRPC_PORT`] as number },
    http: { host: vars[`${prefix}_HTTP_HOST`] as string, port: vars[`${prefix}_HTTP_PORT`] as number },
    databaseUrl: vars.DATABASE_URL as string | undefined,
    dataDir: vars.SBC_DATA_DIR as string,
    shutdownDrainMs: vars.SHUTDOWN_DRAIN_MS as number,
    logLevel: vars.LOG_LEVEL as string,
  };
}
