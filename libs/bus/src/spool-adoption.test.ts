import { mkdtempSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as realSleep } from 'node:timers/promises';
import { createLogger } from '@sbc/logging';
import type { Kafka } from 'kafkajs';
import { createKafkaEventProducer } from './create-bus';
import { FakeKafkaCluster } from './testing/fake-kafka';
import type { EventProducer } from './types';

// Finding 1 of issue 53 in the bus: a spool outlives its edge. Edges share a spool root; the spool of an edge that
// is gone (scaled in, drained off its node, killed) is adopted by a live one once its lease lapses, and sent.
// Finding 5's drain that failed is tried again on a timer.

const logger = createLogger({ service: 'bus-test', level: 'silent' });
const TOPIC = 'usage.events.v1';
const event = (id: string) => ({ key: `acct_${id.length % 3}`, value: new TextEncoder().encode(id) });
const appliedOnce = (cluster: FakeKafkaCluster) => [...new Set(cluster.log.map((r) => r.value.toString('utf8')))];

async function pass(ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += 50) {
    await jest.advanceTimersByTimeAsync(Math.min(50, ms - elapsed));
    await realSleep(1);
  }
}

async function settled(promises: Promise<unknown>[], fakeMs = 1_500): Promise<boolean[]> {
  const done = promises.map(() => false);
  promises.forEach(
    (p, i) =>
      void p.then(
        () => (done[i] = true),
        () => undefined,
      ),
  );
  for (let waited = 0; waited < fakeMs && done.includes(false); waited += 50) await pass(50);
  for (let waited = 0; waited < 2_000 && done.includes(false); waited += 5) await realSleep(5);
  return done;
}

describe('spools outlive their edge: a live edge adopts the spool of one that is gone (fake kafkajs cluster)', () => {
  let root: string;
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    root = mkdtempSync(path.join(tmpdir(), 'sbc-spool-root-'));
  });
  afterEach(() => {
    jest.useRealTimers();
    rmSync(root, { recursive: true, force: true });
  });

  const edge = (client: Kafka, owner: string, maxBuffered = 20): EventProducer =>
    createKafkaEventProducer(client, {
      spool: { dir: root, owner, spoolAfterMs: 500, leaseMs: 3_000 },
      lingerMs: 5,
      maxBuffered,
      retry: { initialMs: 100, maxMs: 1_000 },
      logger,
    });
  const segments = () =>
    readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.log'));

  it('an edge deleted mid-outage (no clean stop): its acknowledged events are sent by a live edge', async () => {
    const cluster = new FakeKafkaCluster();
    const doomed = cluster.killableClient();
    const gone = edge(doomed.client, 'gateway-a');
    cluster.takeDown();
    const ids = Array.from({ length: 40 }, (_, i) => `evt_gone_${i}`);
    expect(await settled(ids.map((id) => gone.sendDurable(TOPIC, event(id))))).not.toContain(false);
    doomed.kill(); // its pod is deleted: no process, no timer, no lease renewal
    jest.clearAllTimers();
    const live = edge(cluster.client(), 'gateway-b');
    await pass(1_000);
    expect(readdirSync(root).sort()).toEqual(['gateway-a', 'gateway-b']); // its lease has not lapsed yet: left alone
    cluster.bringUp();
    await pass(8_000);
    expect(appliedOnce(cluster)).toEqual(ids);
    expect(segments()).toEqual([]);
    expect(readdirSync(root)).toEqual(['gateway-b']); // the adopted spool is gone once sent
    expect(live.stats().spool).toMatchObject({ adoptions: 1, orphans: 0 });
    await live.close();
  });

  it("a live edge's spool is never adopted, however long the outage; a clean stop hands it over at once", async () => {
    const cluster = new FakeKafkaCluster();
    cluster.takeDown();
    const a = edge(cluster.client(), 'gateway-a');
    const b = edge(cluster.client(), 'gateway-b');
    const ids = Array.from({ length: 30 }, (_, i) => `evt_a_${i}`);
    expect(await settled(ids.map((id) => a.sendDurable(TOPIC, event(id))))).not.toContain(false);
    await pass(10_000); // three leases long: a renews its lease all along
    expect(b.stats().spool).toMatchObject({ adoptions: 0, orphans: 0 });
    expect(readdirSync(root).sort()).toEqual(['gateway-a', 'gateway-b']);
    // Stopped during the outage: its spool is released, not left for a lease to lapse.
    expect(await settled([a.close()], 15_000)).toEqual([true]);
    cluster.bringUp();
    await pass(2_000);
    expect(appliedOnce(cluster)).toEqual(ids);
    expect(b.stats().spool).toMatchObject({ adoptions: 1 });
    expect(await settled([b.close()], 15_000)).toEqual([true]);
    expect(readdirSync(root)).toEqual([]);
  });

  it('an edge that cannot renew its lease stops spooling (refuses, never acknowledges)', async () => {
    const cluster = new FakeKafkaCluster();
    cluster.takeDown();
    const a = edge(cluster.client(), 'gateway-a', 5);
    await pass(100);
    renameSync(path.join(root, 'gateway-a'), path.join(root, 'taken-by-another-edge'));
    await pass(2_000); // past half the lease without a renewal
    expect(a.stats().spool).toMatchObject({ writable: false });
    const outcomes = await settled(Array.from({ length: 10 }, (_, i) => a.sendDurable(TOPIC, event(`evt_${i}`))));
    expect(outcomes.filter(Boolean).length).toBeLessThan(10); // the ones past memory are refused, not acknowledged
    expect(a.stats().dropped).toBeGreaterThan(0);
    expect(await settled([a.close()], 15_000)).toEqual([true]);
  });

  it('a drain that failed is tried again on a timer, with no further event sent to wake it', async () => {
    const cluster = new FakeKafkaCluster();
    const producer = edge(cluster.client(), 'gateway-a', 10);
    cluster.takeDown();
    const ids = Array.from({ length: 1_200 }, (_, i) => `evt_${i}`); // past one segment of the spool as queue
    expect(await settled(ids.map((id) => producer.sendDurable(TOPIC, event(id))))).not.toContain(false);
    // The spool as queue: its first full segment (the copies of what was in memory come before it).
    const largest = segments().sort((x, y) => statSync(path.join(root, y)).size - statSync(path.join(root, x)).size);
    const file = path.join(root, largest[0]!);
    renameSync(file, `${file}.away`); // the next read of it fails
    cluster.bringUp();
    await pass(3_000);
    expect(appliedOnce(cluster).length).toBeLessThan(ids.length);
    renameSync(`${file}.away`, file);
    await pass(40_000); // no send: only the retry timer can finish the drain
    expect(appliedOnce(cluster)).toEqual(ids);
    expect(producer.stats()).toMatchObject({ pending: 0, spooled: 0, dropped: 0 });
    await producer.close();
  });
});
