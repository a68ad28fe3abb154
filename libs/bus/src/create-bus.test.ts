import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { createBus } from './create-bus';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const brokers = testBackends().kafkaBrokers;

describe('createBus', () => {
  it('without brokers it is the in-process bus, and close flushes before stopping consumers', async () => {
    const bus = createBus({ clientId: 'test', logger });
    expect(bus.kind).toBe('in-process');
    const seen: string[] = [];
    await bus.consumer.subscribe({
      topic: 'usage.events.v1',
      groupId: 'ledger',
      handler: async (m) => void seen.push(m.key),
    });
    bus.producer.send('usage.events.v1', { key: 'req-1', value: new Uint8Array([1]) });
    await bus.close();
    expect(seen).toEqual(['req-1']);
    expect(bus.producer.stats()).toMatchObject({ pending: 0, sent: 1 });
  });

  (brokers ? it : it.skip)('with brokers it is the Kafka bus', async () => {
    const bus = createBus({ kafkaBrokers: brokers, clientId: 'test', logger });
    expect(bus.kind).toBe('kafka');
    await bus.close();
  });
});
