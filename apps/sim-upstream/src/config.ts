import { commaList, flag, logLevel, parseEnv, port } from '@sbc/config';
import { z } from 'zod';

const nonNegativeInt = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

const modelList = commaList
  .refine((ids) => ids.every((id) => /^[\w.:/-]+$/.test(id)), {
    message: 'must be a comma-separated list of model ids',
  })
  .default([]);

/** Environment of the simulator; every variable has a default so `npm start` needs none. */
const simEnvSchema = z
  .object({
    SIM_PORT: port(8090),
    SIM_HOST: z.string().min(1).default('127.0.0.1'),
    /** Time to first token. */
    SIM_LATENCY_MS: nonNegativeInt(20),
    /** Output pacing; 0 writes as fast as the client reads. */
    SIM_TOKENS_PER_SECOND: nonNegativeInt(200),
    /** How long the `sim-slow` model waits before its first byte. */
    SIM_SLOW_MS: nonNegativeInt(10_000),
    /** When set, every /v1 call must present it as `Authorization: Bearer` or `x-api-key`. */
    SIM_API_KEY: z.string().min(1).optional(),
    /** Extra model ids listed by GET /v1/models (any id is accepted in calls regardless). */
    SIM_MODELS: modelList,
    /** PEM files; with both set, SIM_PORT speaks TLS: HTTP/2 to clients that offer it by ALPN, HTTP/1.1 to the rest. */
    SIM_TLS_CERT: z.string().min(1).optional(),
    SIM_TLS_KEY: z.string().min(1).optional(),
    /**
     * Opens `/__faults` (fault injection) to loopback callers, for tests and benches. Off by default, and forced off
     * where the simulator is bundled into the embedded app.
     */
    SIM_FAULTS: flag(false),
    LOG_LEVEL: logLevel,
  })
  .refine((env) => (env.SIM_TLS_CERT === undefined) === (env.SIM_TLS_KEY === undefined), {
    path: ['SIM_TLS_KEY'],
    message: 'SIM_TLS_CERT and SIM_TLS_KEY are set together or not at all',
  })
  .transform((env): SimConfig => ({
    port: env.SIM_PORT,
    host: env.SIM_HOST,
    latencyMs: env.SIM_LATENCY_MS,
    tokensPerSecond: env.SIM_TOKENS_PER_SECOND,
    slowMs: env.SIM_SLOW_MS,
    apiKey: env.SIM_API_KEY,
    extraModels: env.SIM_MODELS,
    tls:
      env.SIM_TLS_CERT !== undefined && env.SIM_TLS_KEY !== undefined
        ? { certFile: env.SIM_TLS_CERT, keyFile: env.SIM_TLS_KEY }
        : undefined,
    faultControl: env.SIM_FAULTS,
    logLevel: env.LOG_LEVEL,
  }));

export interface SimConfig {
  port: number;
  host: string;
  latencyMs: number;
  tokensPerSecond: number;
  slowMs: number;
  apiKey: string | undefined;
  extraModels: string[];
  /** Certificate and key files of the TLS listener; absent, SIM_PORT speaks plain HTTP/1.1. */
  tls: { certFile: string; keyFile: string } | undefined;
  /** `/__faults` is served (to loopback callers only). */
  faultControl: boolean;
  logLevel: string;
}

/** Parses the simulator's environment once; throws a ConfigError naming every bad variable. */
export function loadSimConfig(env: Record<string, string | undefined>): SimConfig {
  return parseEnv('sim-upstream', simEnvSchema, env);
}
