import { ConfigError } from '@sbc/config';
import { loadUsageLedgerConfig } from './config';

describe('usage-ledger config', () => {
  it('without KAFKA_BROKERS there are no brokers, so the ledger uses an in-process bus', () => {
    expect(loadUsageLedgerConfig({}).kafkaBrokers).toBeUndefined();
    expect(loadUsageLedgerConfig({ KAFKA_BROKERS: '' }).kafkaBrokers).toBeUndefined();
  });

  it('KAFKA_BROKERS is read as a comma-separated host:port list', () => {
    expect(loadUsageLedgerConfig({ KAFKA_BROKERS: 'kafka-1:9092, kafka-2:9092' }).kafkaBrokers).toEqual(['kafka-1:9092', 'kafka-2:9092']);
  });

  it('a malformed KAFKA_BROKERS stops the start and names the variable', () => {
    expect(() => loadUsageLedgerConfig({ KAFKA_BROKERS: 'kafka-1' })).toThrow(ConfigError);
    expect(() => loadUsageLedgerConfig({ KAFKA_BROKERS: 'kafka-1' })).toThrow(/KAFKA_BROKERS: must be a comma-separated list of host:port/);
  });
});
