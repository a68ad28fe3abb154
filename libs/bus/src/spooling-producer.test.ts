import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as realSleep } from 'node:timers/promises';
import { createLogger } from '@sbc/logging';
import type { Kafka } from 'kafkajs';
import { createKafkaEventProducer } from './create-bus';
import { FakeKafkaCluster } from './testing/fake-kafka';
import type { EventProducer } from './types';

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TOPIC = 'usage.events.v1';
/** Each event carries its id as its value, so the log can be read the way the ledger reads it: by event id. */
const event = (id: string) => ({ key: `acct_${id.length % 3}`, value: new TextEncoder().encode(id) });
const idsIn = (cluster: FakeKafkaCluster) => cluster.log.map((r) => r.value.toString('utf8'));
/** What the ledger applies: each event id once, in first-arrival order, however often the log repeats it. */
const appliedOnce = (cluster: FakeKafkaCluster) => [...new Set(idsIn(cluster))];

/**
 * Lets `ms` of fake time pass in small steps, with real time in between for the spool's disk writes (fsync
 * completes on the thread pool, outside the fake clock).
 */
async function pass(ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += 50) {
    await jest.advanceTimersByTimeAsync(Math.min(50, ms - elapsed));
    await realSleep(1);
  }
}

/**
 * Resolves to whether `promise` settled within `ms` of fake time. Disk writes started by then get up to 2 s
 * of real time to finish (a busy machine's fsync), with the fake clock held still.
 */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let elapsed = 0; elapsed < ms && !settled; elapsed += 50) await pass(50);
  for (let waited = 0; waited < 2_000 && !settled; waited += 5) await realSleep(5);
  return settled;
}

describe('the spool: usage events the broker has not acked wait on disk (fake kafkajs cluster)', () => {
  let dir: string;
  const producers: EventProducer[] = [];
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    dir = mkdtempSync(path.join(tmpdir(), 'sbc-spool-'));
  });
  afterEach(async () => {
    jest.useRealTimers();
    rmSync(dir, { recursive: true, force: true });
    producers.length = 0;
  });

  function spooled(client: Kafka, options: { maxBuffered?: number; closeTimeoutMs?: number } = {}): EventProducer {
    const producer = createKafkaEventProducer(client, {
      spool: { dir, spoolAfterMs: 500, leaseMs: 3_000 },
      lingerMs: 5,
      retry: { initialMs: 100, maxMs: 2_000 },
      logger,
      ...options,
    });
    producers.push(producer);
    return producer;
  }
  /** Segment files under the spool's root, in every edge's directory. */
  const segmentsOnDisk = () =>
    readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.log'));

  it('while the broker keeps up, an event is durable at its ack and nothing is written to disk', async () => {
    const cluster = new FakeKafkaCluster();
    const producer = spooled(cluster.client());
    const durable = Promise.all(['evt_1', 'evt_2'].map((id) => producer.sendDurable(TOPIC, event(id))));
    expect(await settlesWithin(durable, 100)).toBe(true);
    await pass(1_000);
    expect(appliedOnce(cluster)).toEqual(['evt_1', 'evt_2']);
    expect(segmentsOnDisk()).toEqual([]);
    expect(producer.stats()).toMatchObject({ pending: 0, spooled: 0, dropped: 0 });
    await producer.close();
  });

  it('a broker down for 60 s: replies wait at most the spool delay, none is dropped, all are sent after', async () => {
    const cluster = new FakeKafkaCluster();
    // A small memory buffer, so the outage also fills it and the spool becomes the queue.
    const producer = spooled(cluster.client(), { maxBuffered: 50 });
    cluster.takeDown();
    const sent: string[] = [];
    for (let second = 0; second < 60; second++) {
      const durable = [];
      for (let i = 0; i < 5; i++) {
        const id = `evt_${second}_${i}`;
        sent.push(id);
        durable.push(producer.sendDurable(TOPIC, event(id)));
      }
      expect(await settlesWithin(Promise.all(durable), 1_000)).toBe(true); // on disk, though the broker is down
    }
    expect(producer.stats()).toMatchObject({ pending: 300, spooled: 300, dropped: 0 });
    expect(segmentsOnDisk().length).toBeGreaterThan(0);
    cluster.bringUp();
    await pass(15_000);
    expect(appliedOnce(cluster)).toEqual(sent); // every event, oldest first
    expect(producer.stats()).toMatchObject({ pending: 0, spooled: 0, dropped: 0 });
    expect(segmentsOnDisk()).toEqual([]); // the spool drained
    producer.send(TOPIC, event('evt_after'));
    await pass(1_000);
    expect(appliedOnce(cluster).at(-1)).toBe('evt_after');
    expect(segmentsOnDisk()).toEqual([]); // straight to the broker again
    await producer.close();
  });

  it('a pod killed (kill -9) in an outage loses no acknowledged event: the next start adopts its spool', async () => {
    const cluster = new FakeKafkaCluster();
    const first = cluster.killableClient();
    const before = spooled(first.client, { maxBuffered: 20 });
    cluster.takeDown();
    const acknowledged: string[] = [];
    for (let i = 0; i < 40; i++) {
      const id = `evt_${i}`;
      const durable = before.sendDurable(TOPIC, event(id));
      if (await settlesWithin(durable, 1_000)) acknowledged.push(id);
    }
    expect(acknowledged).toHaveLength(40);
    first.kill(); // never closed: the process is gone, its timers (the lease's renewal among them) with it
    jest.clearAllTimers();
    cluster.bringUp();
    const after = spooled(cluster.client());
    await pass(10_000); // past the 3 s lease: the dead process's spool is adopted and sent
    expect(appliedOnce(cluster)).toEqual(acknowledged);
    expect(after.stats()).toMatchObject({ pending: 0, spooled: 0, dropped: 0 });
    expect(segmentsOnDisk()).toEqual([]);
    await after.close();
  });

  it('a timeout after the broker wrote, mid-outage: the retried and spooled events are applied once each', async () => {
    const cluster = new FakeKafkaCluster();
    const producer = spooled(cluster.client());
    cluster.fault('timeout-after-write');
    const ids = ['evt_1', 'evt_2', 'evt_3'];
    const durable = Promise.all(ids.map((id) => producer.sendDurable(TOPIC, event(id))));
    await pass(20);
    cluster.takeDown();
    expect(await settlesWithin(durable, 1_000)).toBe(true);
    cluster.bringUp();
    await pass(5_000);
    expect(idsIn(cluster).length).toBeGreaterThan(3); // the broker holds a repeat
    expect(appliedOnce(cluster)).toEqual(ids);
    expect(producer.stats()).toMatchObject({ pending: 0, spooled: 0, dropped: 0 });
    await pass(1_000);
    expect(segmentsOnDisk()).toEqual([]);
    await producer.close();
  });

  it('close during an outage spools what is still in memory rather than drop it; the next start sends it', async () => {
    const cluster = new FakeKafkaCluster();
    const producer = spooled(cluster.client(), { closeTimeoutMs: 1_000 });
    cluster.takeDown();
    for (let i = 0; i < 5; i++) producer.send(TOPIC, event(`evt_${i}`));
    const closed = producer.close();
    expect(await settlesWithin(closed, 3_000)).toBe(true);
    expect(producer.stats()).toMatchObject({ dropped: 0 });
    expect(segmentsOnDisk().length).toBeGreaterThan(0);
    cluster.bringUp();
    const next = spooled(cluster.client());
    await pass(5_000);
    expect(appliedOnce(cluster)).toEqual(['evt_0', 'evt_1', 'evt_2', 'evt_3', 'evt_4']);
    expect(segmentsOnDisk()).toEqual([]);
    await next.close();
  });
});
