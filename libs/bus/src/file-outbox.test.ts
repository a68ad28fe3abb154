import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createBatchingProducer } from './batching-producer';
import { decodeSegment, openFileOutbox } from './file-outbox';
import { createInProcessBus } from './in-process-bus';
import type { IncomingMessage, QueuedMessage } from './types';

const message = (n: number): QueuedMessage => ({
  topic: 'usage.events.v1',
  key: `usr_${n % 3}`,
  value: new Uint8Array([n, 0, 255, n]),
  headers: { n: String(n) },
});

async function eventually(check: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the file outbox', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'sbc-outbox-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('resolves an append only once its record is on disk, and reads it back whole', async () => {
    const outbox = openFileOutbox({ dir });
    const appended = [1, 2, 3].map((n) => outbox.append(message(n)));
    await Promise.all(appended.map((a) => a.durable));
    const [segment] = readdirSync(dir);
    expect(decodeSegment(readFileSync(path.join(dir, segment!)))).toEqual([1, 2, 3].map(message));
    await outbox.close();
  });

  it('a segment rotated in the tick of its appends still gets them on disk, and reads back whole', async () => {
    const outbox = openFileOutbox({ dir });
    await outbox.append(message(1)).durable; // the segment's file is open from here on
    const later = [2, 3].map((n) => outbox.append(message(n)));
    const closed = outbox.rotate()!;
    await Promise.all(later.map((a) => a.durable));
    expect(outbox.read(closed)).toEqual([1, 2, 3].map(message));
    await outbox.close();
  });

  it('ignores a torn last record, which was never acknowledged', async () => {
    const outbox = openFileOutbox({ dir });
    await outbox.append(message(7)).durable;
    await outbox.close();
    const [segment] = readdirSync(dir);
    appendFileSync(path.join(dir, segment!), Buffer.from([0, 0, 0, 40, 1, 2, 3, 4, 9, 9]));
    expect(decodeSegment(readFileSync(path.join(dir, segment!)))).toEqual([message(7)]);
  });

  it('hands what a crashed run left unhandled to the next bus, which delivers it and then releases it', async () => {
    // First run: three durable sends and no consumer yet, then it stops with them unhandled (as after a crash,
    // what is in the outbox stays there).
    const first = createInProcessBus({ outbox: openFileOutbox({ dir }) });
    await Promise.all([1, 2, 3].map((n) => first.producer.sendDurable('usage.events.v1', message(n))));
    await first.producer.close();

    const outbox = openFileOutbox({ dir });
    expect(outbox.recovered.flatMap((segment) => outbox.read(segment))).toEqual([1, 2, 3].map(message));
    const second = createInProcessBus({ outbox, outboxRotateMs: 20 });
    const seen: IncomingMessage[] = [];
    await second.consumer.subscribe({
      topic: 'usage.events.v1',
      groupId: 'ledger',
      fromBeginning: true,
      handler: async (m) => void seen.push(m),
    });
    await eventually(() => seen.length === 3);
    expect(seen.map((m) => m.value)).toEqual([1, 2, 3].map((n) => message(n).value));
    // The recovered segment goes once handled; new sends go to segments of their own and go too.
    await second.producer.sendDurable('usage.events.v1', message(4));
    await eventually(() => seen.length === 4);
    await eventually(() =>
      readdirSync(dir).every((name) => decodeSegment(readFileSync(path.join(dir, name))).length === 0),
    );
    await second.producer.close();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('keeps a segment while a message in it is unhandled', async () => {
    const bus = createInProcessBus({ outbox: openFileOutbox({ dir }), outboxRotateMs: 10 });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await bus.consumer.subscribe({ topic: 'usage.events.v1', groupId: 'ledger', handler: () => gate });
    await bus.producer.sendDurable('usage.events.v1', message(1));
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(readdirSync(dir).some((name) => decodeSegment(readFileSync(path.join(dir, name))).length === 1)).toBe(true);
    release();
    await eventually(() =>
      readdirSync(dir).every((name) => decodeSegment(readFileSync(path.join(dir, name))).length === 0),
    );
    await bus.producer.close();
  });
});

describe('durable sends to a broker', () => {
  it('resolve only when the batch holding the message is acked, without waiting out the linger', async () => {
    let ack: () => void = () => undefined;
    const sent: number[] = [];
    const producer = createBatchingProducer(
      (batch) => {
        sent.push(batch.length);
        return new Promise<void>((resolve) => (ack = resolve));
      },
      { lingerMs: 10_000 },
    );
    let durable = false;
    const pending = producer.sendDurable('t', { key: 'k', value: new Uint8Array([1]) }).then(() => (durable = true));
    await eventually(() => sent.length === 1);
    expect(durable).toBe(false);
    ack();
    await pending;
    expect(durable).toBe(true);
    await producer.close();
  });
});
