import { backendsFromEnv, describeBackends } from './backends';

describe('test backends', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('reads real services from the TEST_* variables and says they came from the environment', () => {
    process.env.TEST_DATABASE_URL = 'postgres://u:pw@db:5432/test';
    process.env.TEST_REDIS_URL = 'redis://cache:6379';
    process.env.TEST_KAFKA_BROKERS = 'k1:9092, k2:9092';
    const backends = backendsFromEnv();
    expect(backends).toEqual({
      postgresUrl: 'postgres://u:pw@db:5432/test',
      redisUrl: 'redis://cache:6379',
      kafkaBrokers: ['k1:9092', 'k2:9092'],
      sources: { postgres: 'env', redis: 'env', kafka: 'env' },
    });
    const line = describeBackends(backends);
    expect(line).toContain('PostgreSQL (env');
    expect(line).not.toContain('pw@');
  });

  it('falls back to the embedded adapters and says so', () => {
    delete process.env.TEST_DATABASE_URL;
    delete process.env.TEST_REDIS_URL;
    delete process.env.TEST_KAFKA_BROKERS;
    expect(describeBackends(backendsFromEnv())).toBe(
      'test backends: database=PGlite (embedded); cache=in-memory cache (embedded); bus=in-process bus (embedded)',
    );
  });
});
