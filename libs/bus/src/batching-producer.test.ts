import { createLogger } from '@sbc/logging';
import { createBatchingProducer, type SendBatch } from './batching-producer';
import { BusBufferFullError, BusClosedError } from './errors';
import type { QueuedMessage } from './types';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const msg = (key: string, text = key) => ({ key, value: new TextEncoder().encode(text) });
const keys = (batch: readonly QueuedMessage[]) => batch.map((m) => m.key);

/** A stand-in for the broker: records each batch, acks or fails it when the test says so. */
function fakeBroker() {
  const batches: { messages: readonly QueuedMessage[]; ack: () => void; fail: (err?: Error) => void }[] = [];
  const sendBatch: SendBatch = (messages) =>
    new Promise<void>((resolve, reject) =>
      batches.push({ messages, ack: resolve, fail: (err) => reject(err ?? new Error('broker down')) }),
    );
  let taken = 0;
  /** The next batch the producer sent, waiting up to ~2 s for it (a loaded CI machine is slow). */
  const next = async () => {
    for (let i = 0; i < 1_000 && batches.length <= taken; i++) await sleep(2);
    const batch = batches[taken++];
    if (!batch) throw new Error('no batch was sent');
    return batch;
  };
  return { batches, sendBatch, next };
}

describe('batching producer', () => {
  it('send returns before anything reaches the broker, and messages within the linger go in one batch', async () => {
    const broker = fakeBroker();
    // A linger far longer than the 5 ms pause below, so that a loaded machine cannot end it early.
    const producer = createBatchingProducer(broker.sendBatch, { lingerMs: 300, logger });
    producer.send('t', msg('a'));
    producer.send('t', msg('b'));
    expect(broker.batches).toHaveLength(0);
    expect(producer.stats()).toEqual({ pending: 2, sent: 0, failed: 0, dropped: 0 });
    await sleep(5);
    producer.send('u', msg('c'));
    expect(broker.batches).toHaveLength(0); // still lingering
    const batch = await broker.next();
    expect(keys(batch.messages)).toEqual(['a', 'b', 'c']);
    expect(batch.messages[2]!.topic).toBe('u');
    batch.ack();
    await producer.flush();
    expect(producer.stats()).toEqual({ pending: 0, sent: 3, failed: 0, dropped: 0 });
  });

  it('a full batch is sent without waiting for the linger, and only one batch is in flight at a time', async () => {
    const broker = fakeBroker();
    const producer = createBatchingProducer(broker.sendBatch, { lingerMs: 10_000, maxBatchSize: 3, logger });
    for (const k of ['1', '2', '3', '4', '5']) producer.send('t', msg(k));
    const first = await broker.next();
    expect(keys(first.messages)).toEqual(['1', '2', '3']);
    await sleep(20);
    expect(broker.batches).toHaveLength(1); // 4 and 5 wait for the first ack
    first.ack();
    const second = await broker.next(); // sent right after the ack, not after the 10 s linger
    expect(keys(second.messages)).toEqual(['4', '5']);
    second.ack();
  });

  it('flush resolves only once everything sent before it is acked, and skips the linger', async () => {
    const broker = fakeBroker();
    const producer = createBatchingProducer(broker.sendBatch, { lingerMs: 10_000, logger });
    producer.send('t', msg('a'));
    let flushed = false;
    const flushing = producer.flush().then(() => (flushed = true));
    const batch = await broker.next();
    producer.send('t', msg('late')); // sent after flush was called: flush does not wait for it
    await sleep(10);
    expect(flushed).toBe(false);
    batch.ack();
    await flushing;
    expect(producer.stats()).toMatchObject({ pending: 1, sent: 1 });
  });

  it(
    'a failed batch is retried with backoff as the same message ' +
      'set, ahead of later ones and never merged with them',
    async () => {
      const broker = fakeBroker();
      const producer = createBatchingProducer(broker.sendBatch, {
        lingerMs: 1,
        retry: { initialMs: 30, maxMs: 30 },
        logger,
      });
      producer.send('t', msg('a'));
      producer.send('t', msg('b'));
      const first = await broker.next();
      first.fail();
      producer.send('t', msg('c')); // arrives during the backoff
      const failedAt = Date.now();
      const retry = await broker.next();
      expect(Date.now() - failedAt).toBeGreaterThanOrEqual(10); // waited (half-jittered 30 ms), not immediate
      expect(keys(retry.messages)).toEqual(['a', 'b']);
      expect(producer.stats()).toMatchObject({ pending: 3, failed: 2, sent: 0 });
      retry.ack();
      const later = await broker.next();
      expect(keys(later.messages)).toEqual(['c']);
      later.ack();
      await producer.flush();
      expect(producer.stats()).toEqual({ pending: 0, sent: 3, failed: 2, dropped: 0 });
    },
  );

  it('a sendBatch that throws synchronously is treated as a failed attempt', async () => {
    let calls = 0;
    const producer = createBatchingProducer(
      () => {
        if (++calls === 1) throw new Error('not connected');
        return Promise.resolve();
      },
      { lingerMs: 1, retry: { initialMs: 5, maxMs: 5 }, logger },
    );
    producer.send('t', msg('a'));
    await producer.flush();
    expect(calls).toBe(2);
    expect(producer.stats()).toMatchObject({ sent: 1, failed: 1 });
  });

  it('past maxBuffered unacked messages send throws a BusBufferFullError, and accepts again once acked', async () => {
    const broker = fakeBroker();
    const producer = createBatchingProducer(broker.sendBatch, { lingerMs: 1, maxBuffered: 2, logger });
    producer.send('t', msg('a'));
    producer.send('t', msg('b'));
    expect(() => producer.send('t', msg('c'))).toThrow(BusBufferFullError);
    const batch = await broker.next();
    // in flight still counts
    expect(() => producer.send('t', msg('c'))).toThrow(/buffer is full \(2 messages pending\)/);
    batch.ack();
    await producer.flush();
    expect(() => producer.send('t', msg('c'))).not.toThrow();
  });

  it('close flushes, then runs onClose; send afterwards throws BusClosedError', async () => {
    const sent: string[] = [];
    const onClose = jest.fn(async () => undefined);
    const producer = createBatchingProducer(
      async (batch) => {
        sent.push(...keys(batch));
      },
      { lingerMs: 10_000, onClose, logger },
    );
    producer.send('t', msg('a'));
    await producer.close();
    expect(sent).toEqual(['a']);
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(() => producer.send('t', msg('b'))).toThrow(BusClosedError);
    await producer.close(); // idempotent
    expect(onClose).toHaveBeenCalledTimes(1);
  });

  it('close gives up after closeTimeoutMs and counts what was never acked as dropped', async () => {
    const producer = createBatchingProducer(() => Promise.reject(new Error('broker down')), {
      lingerMs: 1,
      closeTimeoutMs: 50,
      retry: { initialMs: 10, maxMs: 10 },
      logger,
    });
    producer.send('t', msg('a'));
    producer.send('t', msg('b'));
    const flushing = producer.flush();
    await producer.close();
    await expect(flushing).rejects.toThrow(/2 unacked/);
    expect(producer.stats()).toMatchObject({ pending: 0, sent: 0, dropped: 2 });
  });
});
