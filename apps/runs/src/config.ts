import { z } from 'zod';
import {
  backendVars,
  commaList,
  flag,
  grpcTarget,
  parseEnv,
  positiveInt,
  toBackendConfig,
  url,
  type BackendConfig,
} from '@sbc/config';
import { PRIVATE_EGRESS, privateEgressOf, type PrivateEgress } from '@sbc/egress';

/** Svix's ladder (reference §3.2): the delays before the 2nd to 8th attempts of a webhook delivery. */
const DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

const msList = commaList
  .transform((items) => items.map(Number))
  .refine((items) => items.length > 0 && items.every((item) => Number.isInteger(item) && item >= 0), {
    message: 'must be a comma-separated list of whole milliseconds',
  });

const schema = z.object({
  ...backendVars('RUNS', { grpc: 50054, http: 9104 }),
  ACCOUNT_GRPC_TARGET: grpcTarget.default('127.0.0.1:50051'),
  GATEWAY_URL: url(['http', 'https']).default('http://127.0.0.1:8080'),
  REDIS_URL: url(['redis', 'rediss']).optional(),
  /**
   * Fetches and webhooks reach loopback and private addresses only with `everyone` (runs does not know the operators);
   * `operators` (default) and `none` refuse them.
   */
  EGRESS_PRIVATE: z.enum(PRIVATE_EGRESS).optional(),
  /** Deprecated: `true` reads as EGRESS_PRIVATE=none. */
  EGRESS_DENY_PRIVATE: flag(false),
  /** The gateway's public URL, which fetches and webhooks never dial. */
  BASE_URL: url(['http', 'https']).optional(),
  RPC_DEADLINE_MS: positiveInt(5_000),
  RUNS_WORKERS: z.coerce.number().int().min(0).max(64).default(4),
  RUNS_POLL_MS: positiveInt(1_000),
  RUNS_LEASE_MS: positiveInt(30_000),
  RUNS_MAX_ATTEMPTS: positiveInt(3),
  RUNS_MAX_STEPS: positiveInt(16),
  RUNS_MAX_DURATION_MS: positiveInt(600_000),
  RUNS_FETCH_TIMEOUT_MS: positiveInt(15_000),
  RUNS_WEBHOOK_TIMEOUT_MS: positiveInt(15_000),
  RUNS_WEBHOOK_POLL_MS: positiveInt(1_000),
  RUNS_WEBHOOK_RETRY_SCHEDULE_MS: msList.default(DEFAULT_WEBHOOK_RETRY_SCHEDULE_MS),
  /** Stored Responses one account (or team) keeps; past it the oldest go first. */
  RESPONSES_MAX_PER_ACCOUNT: positiveInt(10_000),
  /** Bytes of stored Responses (objects and their context items) one account (or team) keeps; the oldest go first. */
  RESPONSES_MAX_BYTES_PER_ACCOUNT: positiveInt(1024 * 1024 * 1024),
  /** How long a stored Response is served: 30 days, as at OpenAI. */
  RESPONSES_TTL_S: positiveInt(30 * 86_400),
  /** How often expired stored Responses are deleted. */
  RESPONSES_PURGE_INTERVAL_MS: positiveInt(3_600_000),
  /** Bytes one uploaded file may hold (413 past it): 200 MiB, OpenAI's bound on a batch input file. */
  FILES_MAX_BYTES: positiveInt(200 * 1024 * 1024),
  /** Bytes all of one account's (or team's) files may hold together (400 past it). */
  FILES_QUOTA_BYTES_PER_ACCOUNT: positiveInt(10 * 1024 * 1024 * 1024),
  /** Batch lines this process calls at once (the batch lane); 0 runs no batch lines here. */
  BATCHES_WORKERS: z.coerce.number().int().min(0).max(64).default(2),
  /** How often an idle batch worker looks for lines. */
  BATCHES_POLL_MS: positiveInt(1_000),
  /** A claimed line is retried elsewhere after this; its call is cut at four fifths of it. */
  BATCHES_LEASE_MS: positiveInt(300_000),
  /** Tries of one line (429s and upstream failures put it back) before its last answer is its result. */
  BATCHES_MAX_ATTEMPTS: positiveInt(5),
});

export interface RunsConfig extends BackendConfig {
  /** The account service, which mints and revokes each run's model-call key. */
  accountTarget: string;
  /** The edge that runs' model calls go through (billed to the run's account like any caller's). */
  gatewayUrl: string;
  redisUrl?: string;
  /**
   * CONTRACTS Egress. Fetches and webhooks are dialed as a tenant's, so loopback and private targets are
   * allowed only with EGRESS_PRIVATE=everyone; the gateway's own origins (BASE_URL, GATEWAY_URL) never.
   */
  egress: { private: PrivateEgress; ownOrigins: string[] };
  rpcDeadlineMs: number;
  workers: {
    /** Runs executed at once by this process; 0 serves the API only. */
    concurrency: number;
    /** How often an idle worker looks for queued runs (a new run also wakes it through pub/sub). */
    pollMs: number;
    /** A claim lasts this long unless renewed; the holder renews it every third of it. */
    leaseMs: number;
    /** Claims of one run (the first plus recoveries after a lost worker) before it fails. */
    maxAttempts: number;
  };
  budget: { maxSteps: number; maxDurationMs: number };
  fetchTimeoutMs: number;
  webhooks: {
    timeoutMs: number;
    pollMs: number;
    /** Delays before each retry; the delivery fails after the last. Jittered by ±10 %. */
    retryScheduleMs: number[];
  };
  /** Stored OpenAI Responses (CONTRACTS "Agents, tools and policies"): their bounds per owner and their life. */
  responses: { maxPerAccount: number; maxBytesPerAccount: number; ttlMs: number; purgeIntervalMs: number };
  /** Files (docs/batches.md): the per-file limit and the per-owner quota, in bytes. */
  files: { maxFileBytes: number; quotaBytes: number };
  /** The batch lane (docs/batches.md). */
  batches: { concurrency: number; pollMs: number; leaseMs: number; maxAttempts: number };
}

export function loadRunsConfig(env: Record<string, string | undefined>): RunsConfig {
  const vars = parseEnv('runs', schema, env);
  return {
    ...toBackendConfig('RUNS', vars),
    accountTarget: vars.ACCOUNT_GRPC_TARGET,
    gatewayUrl: vars.GATEWAY_URL,
    redisUrl: vars.REDIS_URL,
    egress: {
      private: privateEgressOf(vars.EGRESS_PRIVATE, vars.EGRESS_DENY_PRIVATE),
      ownOrigins: [vars.GATEWAY_URL, ...(vars.BASE_URL ? [vars.BASE_URL] : [])],
    },
    rpcDeadlineMs: vars.RPC_DEADLINE_MS,
    workers: {
      concurrency: vars.RUNS_WORKERS,
      pollMs: vars.RUNS_POLL_MS,
      leaseMs: vars.RUNS_LEASE_MS,
      maxAttempts: vars.RUNS_MAX_ATTEMPTS,
    },
    budget: { maxSteps: vars.RUNS_MAX_STEPS, maxDurationMs: vars.RUNS_MAX_DURATION_MS },
    fetchTimeoutMs: vars.RUNS_FETCH_TIMEOUT_MS,
    webhooks: {
      timeoutMs: vars.RUNS_WEBHOOK_TIMEOUT_MS,
      pollMs: vars.RUNS_WEBHOOK_POLL_MS,
      retryScheduleMs: vars.RUNS_WEBHOOK_RETRY_SCHEDULE_MS,
    },
    responses: {
      maxPerAccount: vars.RESPONSES_MAX_PER_ACCOUNT,
      maxBytesPerAccount: vars.RESPONSES_MAX_BYTES_PER_ACCOUNT,
      ttlMs: vars.RESPONSES_TTL_S * 1000,
      purgeIntervalMs: vars.RESPONSES_PURGE_INTERVAL_MS,
    },
    files: { maxFileBytes: vars.FILES_MAX_BYTES, quotaBytes: vars.FILES_QUOTA_BYTES_PER_ACCOUNT },
    batches: {
      concurrency: vars.BATCHES_WORKERS,
      pollMs: vars.BATCHES_POLL_MS,
      leaseMs: vars.BATCHES_LEASE_MS,
      maxAttempts: vars.BATCHES_MAX_ATTEMPTS,
    },
  };
}
