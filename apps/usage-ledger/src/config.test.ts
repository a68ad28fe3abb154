import { ConfigError } from '@sbc/config';
import { loadUsageLedgerConfig } from './config';

describe('usage-ledger config', () => {
  it('without KAFKA_BROKERS there are no brokers, so the ledger uses an in-process bus', () => {
    expect(loadUsageLedgerConfig({}).kafkaBrokers).toBeUndefined();
    expect(loadUsageLedgerConfig({ KAFKA_BROKERS: '' }).kafkaBrokers).toBeUndefined();
  });

  it('KAFKA_BROKERS is read as a comma-separated host:port list', () => {
    expect(loadUsageLedgerConfig({ KAFKA_BROKERS: 'kafka-1:9092, kafka-2:9092' }).kafkaBrokers).toEqual([
      'kafka-1:9092',
      'kafka-2:9092',
    ]);
  });

  it('a malformed KAFKA_BROKERS stops the start and names the variable', () => {
    expect(() => loadUsageLedgerConfig({ KAFKA_BROKERS: 'kafka-1' })).toThrow(ConfigError);
    expect(() => loadUsageLedgerConfig({ KAFKA_BROKERS: 'kafka-1' })).toThrow(
      /KAFKA_BROKERS: must be a comma-separated list of host:port/,
    );
  });

  it('a provider cost report is configured by its admin key, at the vendor URL unless another is given', () => {
    expect(loadUsageLedgerConfig({}).costSources).toEqual({ openai: undefined, anthropic: undefined });
    const config = loadUsageLedgerConfig({
      OPENAI_ADMIN_KEY: 'sk-admin-1',
      ANTHROPIC_ADMIN_KEY: 'sk-ant-admin-2',
      ANTHROPIC_ADMIN_BASE_URL: 'http://127.0.0.1:9999',
    });
    expect(config.costSources).toEqual({
      openai: { baseUrl: 'https://api.openai.com', adminKey: 'sk-admin-1' },
      anthropic: { baseUrl: 'http://127.0.0.1:9999', adminKey: 'sk-ant-admin-2' },
    });
    expect(() => loadUsageLedgerConfig({ OPENAI_ADMIN_BASE_URL: 'not a url' })).toThrow(/OPENAI_ADMIN_BASE_URL/);
  });

  it('batching and reconciliation have defaults that need no environment', () => {
    expect(loadUsageLedgerConfig({})).toMatchObject({
      batchSize: 500,
      batchLingerMs: 20,
      reconcileIntervalMs: 60_000,
      reconcileQuietMs: 600_000,
      spendRefreshMs: 900_000,
    });
  });

  it('database waits stay under the Kafka session timeout, so a stuck database fails a batch before eviction', () => {
    expect(loadUsageLedgerConfig({})).toMatchObject({
      database: { connectionTimeoutMs: 5_000, statementTimeoutMs: 10_000 },
      lagWatch: { intervalMs: 15_000, stallAfterMs: 120_000 },
    });
    expect(() => loadUsageLedgerConfig({ LEDGER_STATEMENT_TIMEOUT_MS: '60000' })).toThrow(
      /LEDGER_STATEMENT_TIMEOUT_MS/,
    );
    expect(() => loadUsageLedgerConfig({ LEDGER_DB_CONNECT_TIMEOUT_MS: '0' })).toThrow(/LEDGER_DB_CONNECT_TIMEOUT_MS/);
  });
});
