import { createLogger } from '@sbc/logging';
import { BusBufferFullError, BusClosedError } from './errors';
import { createInProcessBus } from './in-process-bus';
import type { IncomingMessage } from './types';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (m: IncomingMessage) => new TextDecoder().decode(m.value);
const fastRetry = { initialMs: 5, maxMs: 20 };

describe('in-process bus', () => {
  it(
    'delivery is asynchronous: nothing runs inside send, ' + 'and the handler sees key, value, headers and offset',
    async () => {
      const { producer, consumer } = createInProcessBus({ logger });
      const seen: IncomingMessage[] = [];
      await consumer.subscribe({
        topic: 'usage.events.v1',
        groupId: 'ledger',
        handler: async (m) => void seen.push(m),
      });
      producer.send('usage.events.v1', { key: 'k1', value: encode('hello'), headers: { 'event-type': 'usage' } });
      expect(seen).toHaveLength(0);
      await producer.flush();
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({
        topic: 'usage.events.v1',
        key: 'k1',
        headers: { 'event-type': 'usage' },
        partition: 0,
        offset: '0',
      });
      expect(decode(seen[0]!)).toBe('hello');
      await consumer.close();
    },
  );

  it('messages of a key are handled in send order, one at a time, even with a slow handler', async () => {
    const { producer, consumer } = createInProcessBus({ logger });
    const order: string[] = [];
    let active = 0;
    let maxActive = 0;
    await consumer.subscribe({
      topic: 't',
      groupId: 'g',
      handler: async (m) => {
        maxActive = Math.max(maxActive, ++active);
        await sleep(Math.random() * 3);
        order.push(`${m.key}:${decode(m)}`);
        active--;
      },
    });
    const sent: string[] = [];
    for (let i = 0; i < 30; i++) {
      const key = `k${i % 3}`;
      producer.send('t', { key, value: encode(String(i)) });
      sent.push(`${key}:${i}`);
    }
    await producer.flush();
    expect(order).toEqual(sent);
    expect(maxActive).toBe(1);
    await consumer.close();
  });

  it('a long stream keeps its order and offsets while handled messages are released', async () => {
    const { producer, consumer } = createInProcessBus({ logger, maxBuffered: 5_000 });
    const offsets: number[] = [];
    await consumer.subscribe({ topic: 't', groupId: 'g', handler: async (m) => void offsets.push(Number(m.offset)) });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 1_500; i++) producer.send('t', { key: 'k', value: encode(String(i)) });
      await producer.flush();
    }
    expect(offsets).toEqual(Array.from({ length: 4_500 }, (_, i) => i));
    expect(producer.stats()).toMatchObject({ pending: 0, sent: 4_500 });
    await consumer.close();
  });

  it('a failing handler is retried with backoff and nothing behind it overtakes it', async () => {
    const { producer, consumer } = createInProcessBus({ logger, retry: fastRetry });
    const attempts: string[] = [];
    let failuresLeft = 3;
    await consumer.subscribe({
      topic: 't',
      groupId: 'g',
      handler: async (m) => {
        attempts.push(decode(m));
        if (decode(m) === 'b' && failuresLeft-- > 0) throw new Error('db busy');
      },
    });
    for (const v of ['a', 'b', 'c']) producer.send('t', { key: 'same', value: encode(v) });
    await producer.flush();
    expect(attempts).toEqual(['a', 'b', 'b', 'b', 'b', 'c']);
    expect(producer.stats()).toEqual({ pending: 0, sent: 3, failed: 3, dropped: 0 });
    await consumer.close();
  });

  it('flush waits until every group has handled everything sent before it', async () => {
    const { producer, consumer } = createInProcessBus({ logger });
    const ledger: string[] = [];
    const audit: string[] = [];
    let releaseAudit!: () => void;
    const auditGate = new Promise<void>((resolve) => (releaseAudit = resolve));
    await consumer.subscribe({ topic: 't', groupId: 'ledger', handler: async (m) => void ledger.push(decode(m)) });
    await consumer.subscribe({
      topic: 't',
      groupId: 'audit',
      handler: async (m) => {
        await auditGate;
        audit.push(decode(m));
      },
    });
    producer.send('t', { key: 'k', value: encode('x') });
    let flushed = false;
    const flushing = producer.flush().then(() => (flushed = true));
    await sleep(20);
    expect(ledger).toEqual(['x']);
    expect(flushed).toBe(false); // the audit group has not handled it yet
    expect(producer.stats().pending).toBe(1);
    releaseAudit();
    await flushing;
    expect(audit).toEqual(['x']);
    expect(producer.stats()).toMatchObject({ pending: 0, sent: 1 });
    await consumer.close();
  });

  it('within a group each message goes to exactly one subscriber; every group gets every message', async () => {
    const { producer, consumer } = createInProcessBus({ logger });
    const byMember: Record<string, string[]> = { a: [], b: [], other: [] };
    await consumer.subscribe({ topic: 't', groupId: 'g', handler: async (m) => void byMember.a!.push(decode(m)) });
    await consumer.subscribe({ topic: 't', groupId: 'g', handler: async (m) => void byMember.b!.push(decode(m)) });
    await consumer.subscribe({ topic: 't', groupId: 'g2', handler: async (m) => void byMember.other!.push(decode(m)) });
    const values = Array.from({ length: 40 }, (_, i) => String(i));
    values.forEach((v, i) => producer.send('t', { key: `key-${i}`, value: encode(v) }));
    await producer.flush();
    expect([...byMember.a!, ...byMember.b!].sort()).toEqual([...values].sort());
    expect(byMember.a!.length).toBeGreaterThan(0); // keys spread over both members
    expect(byMember.b!.length).toBeGreaterThan(0);
    expect(byMember.other).toEqual(values);
    await consumer.close();
  });

  it('a message whose handler never succeeded is redelivered to the group after its subscriber stops', async () => {
    const { producer, consumer } = createInProcessBus({ logger, retry: fastRetry });
    const failing = await consumer.subscribe({
      topic: 't',
      groupId: 'g',
      handler: async () => {
        throw new Error('always fails');
      },
    });
    producer.send('t', { key: 'k', value: encode('precious') });
    await sleep(30);
    await failing.stop();
    const received: string[] = [];
    await consumer.subscribe({ topic: 't', groupId: 'g', handler: async (m) => void received.push(decode(m)) });
    await producer.flush();
    expect(received).toEqual(['precious']);
    await consumer.close();
  });

  it(
    'messages sent before any group exists are kept for ' + 'a fromBeginning subscriber, not for a latest one',
    async () => {
      const { producer, consumer } = createInProcessBus({ logger });
      producer.send('t', { key: 'k', value: encode('early') });
      await producer.flush(); // no group yet: nothing to wait for
      expect(producer.stats().pending).toBe(1);
      const fromStart: string[] = [];
      const latest: string[] = [];
      await consumer.subscribe({
        topic: 't',
        groupId: 'replay',
        fromBeginning: true,
        handler: async (m) => void fromStart.push(decode(m)),
      });
      await consumer.subscribe({ topic: 't', groupId: 'tail', handler: async (m) => void latest.push(decode(m)) });
      producer.send('t', { key: 'k', value: encode('late') });
      await producer.flush();
      expect(fromStart).toEqual(['early', 'late']);
      expect(latest).toEqual(['late']);
      expect(producer.stats()).toMatchObject({ pending: 0, sent: 2 });
      await consumer.close();
    },
  );

  it('past maxBuffered unhandled messages send throws a BusBufferFullError', async () => {
    const { producer, consumer } = createInProcessBus({ logger, maxBuffered: 2 });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await consumer.subscribe({ topic: 't', groupId: 'g', handler: () => gate });
    producer.send('t', { key: 'k', value: encode('1') });
    producer.send('t', { key: 'k', value: encode('2') });
    expect(() => producer.send('t', { key: 'k', value: encode('3') })).toThrow(BusBufferFullError);
    release();
    await producer.flush();
    expect(() => producer.send('t', { key: 'k', value: encode('3') })).not.toThrow();
    await producer.flush();
    await consumer.close();
  });

  it('stop waits for the running handler call, and the stopped subscriber gets nothing more', async () => {
    const { producer, consumer } = createInProcessBus({ logger });
    const events: string[] = [];
    const sub = await consumer.subscribe({
      topic: 't',
      groupId: 'g',
      handler: async (m) => {
        events.push(`start ${decode(m)}`);
        await sleep(30);
        events.push(`end ${decode(m)}`);
      },
    });
    producer.send('t', { key: 'k', value: encode('1') });
    producer.send('t', { key: 'k', value: encode('2') });
    await sleep(5);
    await sub.stop();
    events.push('stopped');
    await sleep(50);
    expect(events).toEqual(['start 1', 'end 1', 'stopped']);
  });

  it('close flushes and then refuses new messages', async () => {
    const { producer, consumer } = createInProcessBus({ logger });
    const seen: string[] = [];
    await consumer.subscribe({ topic: 't', groupId: 'g', handler: async (m) => void seen.push(decode(m)) });
    producer.send('t', { key: 'k', value: encode('last') });
    await producer.close();
    expect(seen).toEqual(['last']);
    expect(() => producer.send('t', { key: 'k', value: encode('too late') })).toThrow(BusClosedError);
    await consumer.close();
  });
});
