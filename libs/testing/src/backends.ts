/**
 * Which real backends a test run has. The global setup decides once per run (env, else testcontainers when a
 * Docker engine answers, else none) and hands the answer to every worker through SBC_TEST_BACKENDS.
 */
export interface TestBackends {
  /** A PostgreSQL server URL whose user may CREATE DATABASE; absent means PGlite. */
  postgresUrl?: string;
  /** A Redis URL; absent means the in-memory adapters. */
  redisUrl?: string;
  /** Kafka brokers; absent means the in-process bus. */
  kafkaBrokers?: string[];
  /** How each was found: `env`, `testcontainers` or `embedded`. */
  sources: { postgres: BackendSource; redis: BackendSource; kafka: BackendSource };
}

export type BackendSource = 'env' | 'testcontainers' | 'embedded';

export const BACKENDS_ENV = 'SBC_TEST_BACKENDS';

export function testBackends(): TestBackends {
  const raw = process.env[BACKENDS_ENV];
  // Without the global setup (a single file run by hand), the same variables are read directly.
  return raw ? (JSON.parse(raw) as TestBackends) : backendsFromEnv();
}

/** The backends the TEST_* variables name; the rest are embedded until testcontainers fills them in. */
export function backendsFromEnv(): TestBackends {
  const kafka = process.env.TEST_KAFKA_BROKERS?.split(',')
    .map((broker) => broker.trim())
    .filter(Boolean);
  return {
    postgresUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
    kafkaBrokers: kafka && kafka.length > 0 ? kafka : undefined,
    sources: {
      postgres: process.env.TEST_DATABASE_URL ? 'env' : 'embedded',
      redis: process.env.TEST_REDIS_URL ? 'env' : 'embedded',
      kafka: kafka && kafka.length > 0 ? 'env' : 'embedded',
    },
  };
}

export function describeBackends(backends: TestBackends): string {
  const pg = backends.postgresUrl
    ? `PostgreSQL (${backends.sources.postgres}: ${redactUrl(backends.postgresUrl)})`
    : 'PGlite (embedded)';
  const redis = backends.redisUrl
    ? `Redis (${backends.sources.redis}: ${redactUrl(backends.redisUrl)})`
    : 'in-memory cache (embedded)';
  const kafka = backends.kafkaBrokers
    ? `Kafka (${backends.sources.kafka}: ${backends.kafkaBrokers.join(',')})`
    : 'in-process bus (embedded)';
  return `test backends: database=${pg}; cache=${redis}; bus=${kafka}`;
}

function redactUrl(value: string): string {
  try {
    const parsed = new URL(value);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return value;
  }
}
