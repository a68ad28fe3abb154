import { createLogger } from '@sbc/logging';
import { createInProcessBus } from './in-process-bus';
import type { IncomingMessage } from './types';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (m: IncomingMessage) => new TextDecoder().decode(m.value);

describe('in-process bus, batch subscriptions', () => {
  it('messages already waiting are handed over together, in order, never more than maxBatchSize at once', async () => {
    const { producer, consumer } = createInProcessBus({ logger });
    const batches: string[][] = [];
    for (let i = 0; i < 25; i++) producer.send('t', { key: 'k', value: encode(String(i)) });
    await consumer.subscribeBatches({
      topic: 't',
      groupId: 'g',
      fromBeginning: true,
      maxBatchSize: 10,
      handler: async (ms) => void batches.push(ms.map(decode)),
    });
    await producer.flush();
    expect(batches.map((b) => b.length)).toEqual([10, 10, 5]);
    expect(batches.flat()).toEqual(Array.from({ length: 25 }, (_, i) => String(i)));
    expect(producer.stats()).toMatchObject({ pending: 0, sent: 25 });
    await consumer.close();
  });

  it('a failing batch is retried whole, and nothing behind it is handed over first', async () => {
    const { producer, consumer } = createInProcessBus({ logger, retry: { initialMs: 5, maxMs: 10 } });
    const attempts: string[][] = [];
    let failuresLeft = 2;
    for (const v of ['a', 'b', 'c']) producer.send('t', { key: 'k', value: encode(v) });
    await consumer.subscribeBatches({
      topic: 't',
      groupId: 'g',
      fromBeginning: true,
      maxBatchSize: 2,
      handler: async (ms) => {
        attempts.push(ms.map(decode));
        if (failuresLeft-- > 0) throw new Error('db busy');
      },
    });
    await producer.flush();
    expect(attempts).toEqual([['a', 'b'], ['a', 'b'], ['a', 'b'], ['c']]);
    expect(producer.stats()).toMatchObject({ pending: 0, sent: 3, failed: 4 });
    await consumer.close();
  });

  it('with two members a batch holds only the keys of one member, each key still in send order', async () => {
    const { producer, consumer } = createInProcessBus({ logger });
    const seen: Record<string, string[]> = {};
    const member = (name: string) => async (ms: IncomingMessage[]) => {
      for (const m of ms) (seen[m.key] ??= []).push(`${name}:${decode(m)}`);
    };
    await consumer.subscribeBatches({ topic: 't', groupId: 'g', handler: member('a') });
    await consumer.subscribeBatches({ topic: 't', groupId: 'g', handler: member('b') });
    for (let i = 0; i < 40; i++) producer.send('t', { key: `k${i % 4}`, value: encode(String(i)) });
    await producer.flush();
    for (const [key, values] of Object.entries(seen)) {
      const owners = new Set(values.map((v) => v.split(':')[0]));
      expect(owners.size).toBe(1); // a key sticks to one member
      expect(values.map((v) => Number(v.split(':')[1]))).toEqual(
        Array.from({ length: 10 }, (_, i) => i * 4 + Number(key.slice(1))),
      );
    }
    await consumer.close();
  });
});
