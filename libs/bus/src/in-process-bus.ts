import type { Logger } from '@sbc/logging';
import { backoffDelay, interruptibleSleep, type BackoffOptions } from './backoff';
import { BusBufferFullError, BusClosedError } from './errors';
import { settleBatch } from './poison';
import type { BatchHandler, EventConsumer, EventProducer, IncomingMessage, PoisonOptions, QueuedMessage, SubscribeOptions, Subscription } from './types';

/** The default of `subscribeBatches` `maxBatchSize`. */
const DEFAULT_MAX_BATCH = 500;

export interface InProcessBusOptions {
  /** Most messages retained (not yet handled by every group); `send` throws past it. Default 10,000. */
  maxBuffered?: number;
  /** Backoff between attempts at a message whose handler failed. */
  retry?: BackoffOptions;
  /** How long producer `close` waits for handlers before counting the rest as dropped; default 10 s. */
  closeTimeoutMs?: number;
  logger?: Logger;
}

interface Member {
  /** A `subscribe` handler is a batch handler that is handed one message at a time. */
  handler: BatchHandler;
  poison: PoisonOptions | undefined;
  maxBatch: number;
  lingerMs: number;
  /** The handler call running on this member, awaited by `stop`. */
  running: Promise<void> | undefined;
}

interface Group {
  cursor: number; // offset of the next message to hand out
  members: Member[];
  looping: boolean;
  wake: (() => void) | undefined;
}

/** One topic is one partition: a log of retained messages and a position per consumer group. */
interface Topic {
  entries: QueuedMessage[]; // entries[head] has offset `start`
  head: number;
  start: number;
  end: number; // offset the next message gets
  groups: Map<string, Group>;
}

/**
 * Embedded-mode bus with Kafka's delivery contract in one process. Each topic is a single partition, each
 * group hands out one message at a time, so order holds per key (indeed per topic); a failing handler is
 * retried with backoff and nothing behind it moves until it succeeds or, with poison options, its poison is
 * parked (settleBatch). A message is retained until every group has handled it — and kept while a topic has
 * no group yet, so a consumer that subscribes after the first sends (with `fromBeginning`) still sees them. "Acked" for `flush` means handled by every group that has a
 * live subscriber.
 */
export function createInProcessBus(options: InProcessBusOptions = {}): { producer: EventProducer; consumer: EventConsumer } {
  const maxBuffered = options.maxBuffered ?? 10_000;
  const topics = new Map<string, Topic>();
  const counters = { sent: 0, failed: 0, dropped: 0 };
  let retained = 0;
  let closing: Promise<void> | undefined;
  const flushWaiters: { ends: Map<Topic, number>; resolve: () => void }[] = [];
  const subscriptions = new Set<Subscription>();

  function topicNamed(name: string): Topic {
    let topic = topics.get(name);
    if (!topic) topics.set(name, (topic = { entries: [], head: 0, start: 0, end: 0, groups: new Map() }));
    return topic;
  }

  /** Drops what every group has handled; a topic without groups keeps everything. */
  function trim(topic: Topic): void {
    if (topic.groups.size === 0) return;
    const upTo = Math.min(...[...topic.groups.values()].map((g) => g.cursor));
    const released = upTo - topic.start;
    if (released <= 0) return;
    topic.head += released;
    topic.start = upTo;
    retained -= released;
    counters.sent += released;
    if (topic.head > 1024 && topic.head * 2 > topic.entries.length) {
      topic.entries.splice(0, topic.head); // compact now and then instead of shifting on every message
      topic.head = 0;
    }
  }

  function checkFlushWaiters(): void {
    for (let i = flushWaiters.length - 1; i >= 0; i--) {
      const waiter = flushWaiters[i]!;
      const done = [...waiter.ends].every(([topic, end]) => [...topic.groups.values()].every((g) => g.members.length === 0 || g.cursor >= end));
      if (done) {
        flushWaiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  function kick(topic: Topic, group: Group): void {
    if (group.looping || group.members.length === 0 || group.cursor >= topic.end) return;
    group.looping = true;
    setImmediate(() => void deliver(topic, group)); // never inside send's or subscribe's call stack
  }

  async function deliver(topic: Topic, group: Group): Promise<void> {
    let attempt = 0;
    try {
      while (group.members.length > 0 && group.cursor < topic.end) {
        const offset = group.cursor;
        const waiting = topic.end - offset;
        const lingerer = group.members.find((m) => m.lingerMs > 0 && m.maxBatch > waiting);
        if (lingerer && attempt === 0) {
          // Lets a short batch fill up; then takes whatever has arrived, without waiting again.
          const sleep = interruptibleSleep(lingerer.lingerMs);
          group.wake = sleep.wake;
          await sleep.done;
          group.wake = undefined;
          if (group.members.length === 0) break;
        }
        const entryAt = (at: number) => topic.entries[topic.head + (at - topic.start)]!;
        const message = entryAt(offset);
        // Like a partition assignment: one key sticks to one member while membership is unchanged.
        const member = group.members[hashKey(message.key) % group.members.length]!;
        // A batch is the run of waiting messages that belong to the same member, so per-key order holds.
        const batch = [toIncoming(message, offset)];
        while (batch.length < member.maxBatch && offset + batch.length < topic.end) {
          const next = entryAt(offset + batch.length);
          if (group.members[hashKey(next.key) % group.members.length] !== member) break;
          batch.push(toIncoming(next, offset + batch.length));
        }
        const call = Promise.resolve().then(() => settleBatch(batch, member.handler, member.poison, options.logger)); // a sync throw is a failure too
        member.running = call.then(
          () => undefined,
          () => undefined,
        );
        try {
          await call;
          attempt = 0;
          group.cursor = offset + batch.length;
          trim(topic);
          checkFlushWaiters();
        } catch (err) {
          counters.failed += batch.length;
          attempt++;
          const delay = backoffDelay(attempt, options.retry);
          options.logger?.warn({ err, topic: message.topic, offset, attempt, retryInMs: delay }, 'event handler failed; will retry');
          const sleep = interruptibleSleep(delay);
          group.wake = sleep.wake;
          await sleep.done;
          group.wake = undefined;
        } finally {
          member.running = undefined;
        }
      }
    } finally {
      group.looping = false;
    }
    kick(topic, group); // a member may have joined while the loop was winding down
  }

  const producer: EventProducer = {
    send(topicName, message) {
      if (closing) throw new BusClosedError();
      if (retained >= maxBuffered) throw new BusBufferFullError(maxBuffered);
      const topic = topicNamed(topicName);
      topic.entries.push({ topic: topicName, key: message.key, value: message.value, headers: message.headers });
      topic.end++;
      retained++;
      for (const group of topic.groups.values()) kick(topic, group);
    },

    flush() {
      const ends = new Map([...topics.values()].map((topic) => [topic, topic.end] as const));
      return new Promise<void>((resolve) => {
        flushWaiters.push({ ends, resolve });
        checkFlushWaiters();
      });
    },

    stats() {
      return { pending: retained, ...counters };
    },

    close() {
      closing ??= (async () => {
        let timeout: NodeJS.Timeout | undefined;
        const timedOut = new Promise<'timeout'>((resolve) => (timeout = setTimeout(() => resolve('timeout'), options.closeTimeoutMs ?? 10_000)));
        const outcome = await Promise.race([producer.flush().then(() => 'flushed' as const), timedOut]);
        clearTimeout(timeout);
        if (outcome === 'timeout') {
          options.logger?.error({ pending: retained }, 'in-process bus closed with unhandled messages');
          counters.dropped += retained;
        }
      })();
      return closing;
    },
  };

  async function join(
    { topic: topicName, groupId, fromBeginning, poison }: Omit<SubscribeOptions, 'handler'>,
    handler: BatchHandler,
    maxBatch: number,
    lingerMs: number,
  ): Promise<Subscription> {
    const topic = topicNamed(topicName);
    let group = topic.groups.get(groupId);
    if (!group) {
      group = { cursor: fromBeginning ? topic.start : topic.end, members: [], looping: false, wake: undefined };
      topic.groups.set(groupId, group);
      trim(topic); // a group starting at the end releases what was kept for a first group
    }
    const member: Member = { handler, poison, maxBatch, lingerMs, running: undefined };
    group.members.push(member);
    const joined = group;
    kick(topic, joined);
    let stopped: Promise<void> | undefined;
    const subscription: Subscription = {
      stop() {
        stopped ??= (async () => {
          joined.members = joined.members.filter((m) => m !== member);
          subscriptions.delete(subscription);
          joined.wake?.(); // a backoff need not run out: the retry goes to another member, or waits for one
          await member.running;
          checkFlushWaiters(); // flush does not wait for a group nobody listens to
        })();
        return stopped;
      },
    };
    subscriptions.add(subscription);
    return subscription;
  }

  const consumer: EventConsumer = {
    subscribe(options) {
      return join(options, async ([message]) => options.handler(message!), 1, 0);
    },

    subscribeBatches(options) {
      return join(options, options.handler, Math.max(1, options.maxBatchSize ?? DEFAULT_MAX_BATCH), Math.max(0, options.lingerMs ?? 0));
    },

    async close() {
      await Promise.all([...subscriptions].map((s) => s.stop()));
    },
  };

  return { producer, consumer };
}

function toIncoming(message: QueuedMessage, offset: number): IncomingMessage {
  return { topic: message.topic, key: message.key, value: message.value, headers: { ...message.headers }, partition: 0, offset: String(offset) };
}

/** FNV-1a: cheap, stable across runs, good enough to spread keys over a handful of members. */
function hashKey(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
