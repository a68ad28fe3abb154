import { z } from 'zod';
import {
  DEFAULT_TOPIC_PARTITIONS,
  kafkaClientProblems,
  kafkaClientVars,
  MIN_RETENTION_MS,
  toKafkaConnection,
  type KafkaConnection,
} from '@sbc/bus';
import {
  backendVars,
  flag,
  hostList,
  parseEnv,
  positiveInt,
  toBackendConfig,
  url,
  type BackendConfig,
} from '@sbc/config';

const httpUrl = url(['http', 'https']);
/** kafkajs's default session timeout: a member silent for longer is evicted from its group. */
const KAFKA_SESSION_TIMEOUT_MS = 30_000;
const secret = z
  .string()
  .optional()
  .transform((value) => (value ? value : undefined));

const schema = z
  .object({
    ...backendVars('USAGE_LEDGER', { grpc: 50052, http: 9102 }),
    KAFKA_BROKERS: hostList.optional(),
    ...kafkaClientVars,
    /** At start, how long the ledger waits for usage.events.v1 to exist as migrate makes it; then it exits non-zero. */
    KAFKA_TOPIC_WAIT_MS: z.coerce.number().int().min(0).default(60_000),
    /** The ledger's consumer group: every replica shares it. A second ledger on the same topic needs its own. */
    KAFKA_GROUP_ID: z.string().min(1).default('usage-ledger'),
    /** Put before every topic name (`staging.` makes `staging.usage.events.v1`); the edges must use the same. */
    KAFKA_TOPIC_PREFIX: z.string().default(''),
    /**
     * A usage event that fails alone, with an error that names neither an outage nor its data, is parked after this
     * many attempts.
     */
    LEDGER_PARK_LONE_AFTER_ATTEMPTS: positiveInt(10),
    /**
     * Partitions of usage.events.v1 when the migrate job (or `npm start`) creates it: the most ledger replicas that
     * consume.
     */
    KAFKA_TOPIC_PARTITIONS: positiveInt(DEFAULT_TOPIC_PARTITIONS),
    /** How long the broker keeps usage events; at least 7 days, so a ledger down for a long weekend loses none. */
    KAFKA_TOPIC_RETENTION_MS: z.coerce.number().int().min(MIN_RETENTION_MS).default(MIN_RETENTION_MS),
    /** `npm start` with KAFKA_BROKERS creates the topic when missing; off where the app may not create topics. */
    KAFKA_PROVISION_TOPIC: flag(true),
    /**
     * The most ledger replicas that run (the autoscaler's maximum): the ledger warns at start when the topic has fewer
     * partitions.
     */
    LEDGER_MAX_REPLICAS: z.coerce.number().int().positive().optional(),
    REDIS_URL: url(['redis', 'rediss']).optional(),
    LEDGER_BATCH_SIZE: positiveInt(500),
    /** With KAFKA_BROKERS: how often the group's lag is read from the admin API (sbc_usage_consumer_lag). */
    LEDGER_LAG_INTERVAL_MS: positiveInt(15_000),
    /** A partition with lag whose committed offset has not moved for this long is stalled (metric and a warning). */
    LEDGER_STALL_AFTER_MS: positiveInt(120_000),
    /**
     * How long a query may wait for a database connection; under the Kafka session timeout (30 s), so an
     * unreachable database fails a batch (paused, retried with backoff) instead of holding the consumer.
     */
    LEDGER_DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().positive().max(KAFKA_SESSION_TIMEOUT_MS).default(5_000),
    /**
     * The server cancels a usage batch's statement that runs longer (a lock, a slow disk); under the session timeout.
     */
    LEDGER_STATEMENT_TIMEOUT_MS: z.coerce.number().int().positive().max(KAFKA_SESSION_TIMEOUT_MS).default(10_000),
    LEDGER_BATCH_LINGER_MS: z.coerce.number().int().min(0).default(20),
    LEDGER_RECONCILE_INTERVAL_MS: positiveInt(60_000),
    // Longer than the edge's longest call (UPSTREAM_BODY_TIMEOUT_MS, 5 min), so no reservation is in flight.
    LEDGER_RECONCILE_QUIET_MS: positiveInt(600_000),
    OPENAI_ADMIN_KEY: secret,
    OPENAI_ADMIN_BASE_URL: httpUrl.default('https://api.openai.com'),
    ANTHROPIC_ADMIN_KEY: secret,
    ANTHROPIC_ADMIN_BASE_URL: httpUrl.default('https://api.anthropic.com'),
    SPEND_REFRESH_MS: positiveInt(900_000),
  })
  .superRefine((vars, ctx) => {
    for (const { path, message } of kafkaClientProblems(vars)) ctx.addIssue({ code: 'custom', path: [path], message });
  });

/** A provider's organization cost report, read with an admin key (measured spend). */
export interface CostSourceConfig {
  baseUrl: string;
  adminKey: string;
}

export interface UsageLedgerConfig extends BackendConfig {
  /** Where usage events are consumed from; absent means an in-process bus (the embedded app passes its own). */
  kafkaBrokers?: string[];
  /** TLS and SASL to the brokers (KAFKA_TLS*, KAFKA_SASL_*). */
  kafka: KafkaConnection;
  /** usage.events.v1 as the migrate job creates it, whether `npm start` may, the replicas it must feed, the wait. */
  topic: {
    partitions: number;
    retentionMs: number;
    provision: boolean;
    maxConsumers?: number;
    prefix: string;
    waitMs: number;
  };
  groupId: string;
  /** See LEDGER_PARK_LONE_AFTER_ATTEMPTS. */
  parkLoneAfterAttempts: number;
  /** Where balances are published for the edge; absent means memory (the embedded app passes its own store). */
  redisUrl?: string;
  /** Most usage events applied in one transaction. */
  batchSize: number;
  /** LEDGER_LAG_INTERVAL_MS and LEDGER_STALL_AFTER_MS. */
  lagWatch: { intervalMs: number; stallAfterMs: number };
  /** LEDGER_DB_CONNECT_TIMEOUT_MS and LEDGER_STATEMENT_TIMEOUT_MS. */
  database: { connectionTimeoutMs: number; statementTimeoutMs: number };
  /** How long a short batch waits for more events (in-process bus), trading a few ms for fewer transactions. */
  batchLingerMs: number;
  /** How often published balances are refilled (month start) and reconciled with the journal. */
  reconcileIntervalMs: number;
  /** An account is reconciled only once it has made no call for this long (no reservation can be in flight). */
  reconcileQuietMs: number;
  costSources: { openai?: CostSourceConfig; anthropic?: CostSourceConfig };
  /** How old a provider's cost report may be before a spend read fetches it again. */
  spendRefreshMs: number;
}

export function loadUsageLedgerConfig(env: Record<string, string | undefined>): UsageLedgerConfig {
  const vars = parseEnv('usage-ledger', schema, env);
  return {
    ...toBackendConfig('USAGE_LEDGER', vars),
    kafkaBrokers: vars.KAFKA_BROKERS,
    kafka: toKafkaConnection(vars),
    topic: {
      waitMs: vars.KAFKA_TOPIC_WAIT_MS,
      partitions: vars.KAFKA_TOPIC_PARTITIONS,
      retentionMs: vars.KAFKA_TOPIC_RETENTION_MS,
      provision: vars.KAFKA_PROVISION_TOPIC,
      maxConsumers: vars.LEDGER_MAX_REPLICAS,
      prefix: vars.KAFKA_TOPIC_PREFIX,
    },
    groupId: vars.KAFKA_GROUP_ID,
    parkLoneAfterAttempts: vars.LEDGER_PARK_LONE_AFTER_ATTEMPTS,
    redisUrl: vars.REDIS_URL,
    batchSize: vars.LEDGER_BATCH_SIZE,
    lagWatch: { intervalMs: vars.LEDGER_LAG_INTERVAL_MS, stallAfterMs: vars.LEDGER_STALL_AFTER_MS },
    database: {
      connectionTimeoutMs: vars.LEDGER_DB_CONNECT_TIMEOUT_MS,
      statementTimeoutMs: vars.LEDGER_STATEMENT_TIMEOUT_MS,
    },
    batchLingerMs: vars.LEDGER_BATCH_LINGER_MS,
    reconcileIntervalMs: vars.LEDGER_RECONCILE_INTERVAL_MS,
    reconcileQuietMs: vars.LEDGER_RECONCILE_QUIET_MS,
    costSources: {
      openai: vars.OPENAI_ADMIN_KEY
        ? { baseUrl: vars.OPENAI_ADMIN_BASE_URL, adminKey: vars.OPENAI_ADMIN_KEY }
        : undefined,
      anthropic: vars.ANTHROPIC_ADMIN_KEY
        ? { baseUrl: vars.ANTHROPIC_ADMIN_BASE_URL, adminKey: vars.ANTHROPIC_ADMIN_KEY }
        : undefined,
    },
    spendRefreshMs: vars.SPEND_REFRESH_MS,
  };
}
