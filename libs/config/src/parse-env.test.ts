import { z } from 'zod';
import { backendVars, toBackendConfig } from './backend';
import { ConfigError, parseEnv } from './parse-env';
import { flag, grpcTarget, hostList, port, url } from './vars';

const schema = z.object({
  PORT: port(8080),
  REDIS_URL: url(['redis', 'rediss']).optional(),
  DEBUG: flag(false),
  BROKERS: hostList.optional(),
  TARGET: grpcTarget.default('127.0.0.1:50051'),
});

describe('parsing an app environment', () => {
  it('applies defaults when nothing is set', () => {
    expect(parseEnv('app', schema, {})).toEqual({ PORT: 8080, DEBUG: false, TARGET: '127.0.0.1:50051' });
  });

  it('treats empty values as unset, so FOO= in a .env file falls back to the default', () => {
    expect(parseEnv('app', schema, { PORT: '', REDIS_URL: '' })).toEqual({
      PORT: 8080,
      DEBUG: false,
      TARGET: '127.0.0.1:50051',
    });
  });

  it('coerces numbers, switches and lists', () => {
    expect(
      parseEnv('app', schema, {
        PORT: '9000',
        DEBUG: 'yes',
        BROKERS: 'k1:9092, k2:9092',
        TARGET: 'dns:///account:50051',
      }),
    ).toEqual({
      PORT: 9000,
      DEBUG: true,
      BROKERS: ['k1:9092', 'k2:9092'],
      TARGET: 'dns:///account:50051',
    });
  });

  it('names every bad variable at once, in one message', () => {
    let error: unknown;
    try {
      parseEnv('gateway', schema, { PORT: 'eighty', REDIS_URL: 'http://cache', DEBUG: 'maybe', BROKERS: 'nohost' });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems.map((p) => p.variable).sort();
    expect(problems).toEqual(['BROKERS', 'DEBUG', 'PORT', 'REDIS_URL']);
    expect((error as ConfigError).message).toMatch(/^gateway: invalid configuration\n {2}/);
  });

  it('reads a backend service block under its own prefix', () => {
    const vars = parseEnv('svc', z.object(backendVars('RUNS', { grpc: 50054, http: 9104 })), {
      RUNS_GRPC_PORT: '0',
      DATABASE_URL: 'postgres://db/runs',
    });
    expect(toBackendConfig('RUNS', vars)).toEqual({
      grpc: { host: '127.0.0.1', port: 0 },
      http: { host: '127.0.0.1', port: 9104 },
      databaseUrl: 'postgres://db/runs',
      dataDir: '.data',
      shutdownDrainMs: 10_000,
      logLevel: 'info',
    });
  });
});
