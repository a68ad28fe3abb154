import { randomUUID } from 'node:crypto';
import { createLogger } from '@sbc/logging';
import { testBackends } from '@sbc/testing';
import { Redis } from 'ioredis';
import { createMemoryPubSub } from './memory-pubsub';
import type { PubSub } from './pubsub';
import { createRedisPubSub } from './redis-pubsub';

const redisUrl = testBackends().redisUrl;
const runPrefix = `sbc-test:${randomUUID()}:`;
const quiet = createLogger({ service: 'cache-test', level: 'silent' });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves with the first `count` messages a channel receives. */
function collect(
  pubsub: PubSub,
  channel: string,
  count: number,
): { received: string[]; done: Promise<string[]>; ready: Promise<() => Promise<void>> } {
  const received: string[] = [];
  let finish!: (value: string[]) => void;
  const done = new Promise<string[]>((resolve) => (finish = resolve));
  const ready = pubsub.subscribe(channel, (message) => {
    received.push(message);
    if (received.length === count) finish(received);
  });
  return { received, done, ready };
}

function pubsubContract(makePubSub: (prefix: string) => PubSub): void {
  let pubsub: PubSub;
  beforeAll(() => {
    pubsub = makePubSub(runPrefix);
  });
  afterAll(async () => {
    await pubsub.close();
  });

  it('a subscriber receives messages in publish order, after publish has returned', async () => {
    const sub = collect(pubsub, 'order', 3);
    await sub.ready;
    const publishing = pubsub.publish('order', 'a');
    // Never delivered inside publish's call stack (a Redis subscriber may well have it by the time the
    // publisher's own reply arrives, so only the synchronous part can be asserted for both adapters).
    expect(sub.received).toEqual([]);
    await publishing;
    await pubsub.publish('order', 'b');
    await pubsub.publish('order', 'c');
    expect(await sub.done).toEqual(['a', 'b', 'c']);
  });

  it('barrier resolves once what was published before it has reached the handlers', async () => {
    const received: string[] = [];
    const unsubscribe = await pubsub.subscribe('barrier', (message) => void received.push(message));
    // A write answered after its fan-out was published relies on this on every request, not on a race won.
    for (let i = 0; i < 200; i++) {
      await pubsub.publish('barrier', String(i));
      await pubsub.barrier();
      expect(received).toHaveLength(i + 1);
    }
    await unsubscribe();
  });

  it('every handler of a channel gets each message, and channels are isolated', async () => {
    const one = collect(pubsub, 'fan', 1);
    const two = collect(pubsub, 'fan', 1);
    const other = collect(pubsub, 'other', 1);
    await Promise.all([one.ready, two.ready, other.ready]);
    await pubsub.publish('fan', 'hello');
    expect(await one.done).toEqual(['hello']);
    expect(await two.done).toEqual(['hello']);
    await sleep(50);
    expect(other.received).toEqual([]);
  });

  it('after unsubscribe a handler receives nothing, while other handlers of the channel still do', async () => {
    const leaving = collect(pubsub, 'unsub', 1);
    const staying = collect(pubsub, 'unsub', 2);
    const unsubscribe = await leaving.ready;
    await staying.ready;
    await pubsub.publish('unsub', 'first');
    await leaving.done;
    await unsubscribe();
    await unsubscribe(); // idempotent
    await pubsub.publish('unsub', 'second');
    expect(await staying.done).toEqual(['first', 'second']);
    expect(leaving.received).toEqual(['first']);
  });

  it('a throwing handler does not stop delivery to the others', async () => {
    await pubsub.subscribe('throws', () => {
      throw new Error('boom');
    });
    await pubsub.subscribe('throws', async () => {
      throw new Error('async boom');
    });
    const ok = collect(pubsub, 'throws', 2);
    await ok.ready;
    await pubsub.publish('throws', 'x');
    await pubsub.publish('throws', 'y');
    expect(await ok.done).toEqual(['x', 'y']);
  });
}

describe('PubSub contract: memory', () => {
  pubsubContract(() => createMemoryPubSub({ logger: quiet }));
});

(redisUrl ? describe : describe.skip)('PubSub contract: redis', () => {
  pubsubContract((prefix) => createRedisPubSub(redisUrl!, { channelPrefix: prefix, logger: quiet }));

  it('channel prefixes keep two deployments apart', async () => {
    const a = createRedisPubSub(redisUrl!, { channelPrefix: `${runPrefix}a:`, logger: quiet });
    const b = createRedisPubSub(redisUrl!, { channelPrefix: `${runPrefix}b:`, logger: quiet });
    try {
      const inA = collect(a, 'news', 1);
      const inB = collect(b, 'news', 1);
      await Promise.all([inA.ready, inB.ready]);
      await a.publish('news', 'for a');
      expect(await inA.done).toEqual(['for a']);
      await sleep(50);
      expect(inB.received).toEqual([]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a subscription survives the subscriber connection being killed', async () => {
    const connectionName = `sbc-test-sub-${randomUUID().slice(0, 8)}`;
    const pubsub = createRedisPubSub(redisUrl!, { channelPrefix: runPrefix, connectionName, logger: quiet });
    const admin = new Redis(redisUrl!);
    try {
      const sub = collect(pubsub, 'survivor', 1);
      await sub.ready;
      const clients = (await admin.client('LIST')) as string;
      const line = clients.split('\n').find((l) => l.includes(` name=${connectionName} `));
      const id = /\bid=(\d+)/.exec(line ?? '')?.[1];
      expect(id).toBeDefined();
      await admin.client('KILL', 'ID', id!);
      // Publish until someone hears it: the reconnect plus resubscribe takes a few tens of ms.
      for (let i = 0; i < 100 && sub.received.length === 0; i++) {
        await pubsub.publish('survivor', 'after reconnect');
        await sleep(50);
      }
      expect(await sub.done).toEqual(['after reconnect']);
    } finally {
      await Promise.all([pubsub.close(), admin.quit()]);
    }
  });
});
