import type { Logger } from '@sbc/logging';
import { backoffDelay, interruptibleSleep, type BackoffOptions } from './backoff';
import { BusBufferFullError, BusClosedError } from './errors';
import type { FileOutbox, OutboxSegment } from './file-outbox';
import { settleBatch } from './poison';
import type {
  BatchHandler,
  EventConsumer,
  EventProducer,
  IncomingMessage,
  PoisonOptions,
  QueuedMessage,
  SubscribeOptions,
  Subscription,
} from './types';

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
  /**
   * Makes sends durable across a crash: every message is appended to it (`sendDurable` resolves once on
   * disk), what it recovered from the last run is delivered again first, and a segment is released once every
   * group has handled what it holds.
   */
  outbox?: FileOutbox;
  /** How often the outbox starts a new segment, so handled ones can be released; default 500 ms. */
  outboxRotateMs?: number;
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
 * no group yet, so a consumer that subscribes after the first sends (with `fromBeginning`) still sees them. "Acked" for
 * `flush` means handled by every group that has a live subscriber.
 */
export function createInProcessBus(options: InProcessBusOptions = {}): {
  producer: EventProducer;
  consumer: EventConsumer;
} {
  const maxBuffered = options.maxBuffered ?? 10_000;
  const topics = new Map<string, Topic>();
  const counters = { sent: 0, failed: 0, dropped: 0 };
  let retained = 0;
  let closing: Promise<void> | undefined;
  const flushWaiters: { ends: Map<Topic, number>; resolve: () => void }[] = [];
  const subscriptions = new Set<Subscription>();
  const { outbox } = options;
  /** Per outbox segment, the end offset of each topic it wrote to; released once every group is past them. */
  const segmentEnds = new Map<OutboxSegment, Map<Topic, number>>();
  const releasable: OutboxSegment[] = [];

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

  /** Deletes outbox segments whose every message each group of its topics has handled. */
  function releaseHandledSegments(): void {
    for (let i = releasable.length - 1; i >= 0; i--) {
      const segment = releasable[i]!;
      const ends = segmentEnds.get(segment)!;
      // A topic nobody consumes yet keeps its messages, and so does the outbox.
      const handled = [...ends].every(
        ([topic, end]) => topic.groups.size > 0 && [...topic.groups.values()].every((g) => g.cursor >= end),
      );
      if (!handled) continue;
      releasable.splice(i, 1);
      segmentEnds.delete(segment);
      try {
        outbox?.release(segment);
      } catch (error) {
        options.logger?.error({ err: error, segment: segment.name }, 'outbox: releasing a handled segment failed');
      }
    }
  }

  function checkFlushWaiters(): void {
    if (releasable.length > 0) releaseHandledSegments();
    for (let i = flushWaiters.length - 1; i >= 0; i--) {
      const waiter = flushWaiters[i]!;
      const done = [...waiter.ends].every(([topic, end]) =>
        [...topic.groups.values()].every((g) => g.members.length === 0 || g.cursor >= end),
      );
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
        const call = Promise.resolve().then(() =>
          settleBatch(batch, member.handler, member.poison, options.logger, { number: attempt + 1 }),
        ); // a sync throw is a failure too
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
          options.logger?.warn(
            { err, topic: message.topic, offset, attempt, retryInMs: delay },
            'event handler failed; will retry',
          );
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

  /** Puts a message on its topic; with `segment`, notes that the segment holds it. */
  function enqueue(queued: QueuedMessage, segment: OutboxSegment | undefined): void {
    const topic = topicNamed(queued.topic);
    topic.entries.push(queued);
    topic.end++;
    retained++;
    if (segment) {
      let ends = segmentEnds.get(segment);
      if (!ends) segmentEnds.set(segment, (ends = new Map()));
      ends.set(topic, topic.end);
    }
    for (const group of topic.groups.values()) kick(topic, group);
  }

  // What the last run left in the outbox goes first, and its segments are released as it is handled.
  for (const segment of outbox?.recovered ?? []) {
    // The in-process bus holds every undelivered message in memory anyway: the outbox is its copy on disk.
    for (const message of outbox!.read(segment)) enqueue(message, segment);
    if (segmentEnds.has(segment)) releasable.push(segment);
    else outbox!.release(segment);
  }
  const rotation = outbox
    ? setInterval(() => {
        const closed = outbox.rotate();
        if (closed && segmentEnds.has(closed)) releasable.push(closed);
        if (releasable.length > 0) releaseHandledSegments();
      }, options.outboxRotateMs ?? 500).unref()
    : undefined;

  function accept(
    topicName: string,
    message: { key: string; value: Uint8Array; headers?: Record<string, string> },
  ): Promise<void> | undefined {
    if (closing) throw new BusClosedError();
    if (retained >= maxBuffered) throw new BusBufferFullError(maxBuffered);
    const queued: QueuedMessage = {
      topic: topicName,
      key: message.key,
      value: message.value,
      headers: message.headers,
    };
    const appended = outbox?.append(queued);
    enqueue(queued, appended?.segment);
    return appended?.durable;
  }

  const producer: EventProducer = {
    send(topicName, message) {
      accept(topicName, message)?.catch(() => undefined); // an append failure is logged by the outbox
    },

    sendDurable(topicName, message) {
      return accept(topicName, message) ?? Promise.resolve();
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
        const timedOut = new Promise<'timeout'>(
          (resolve) => (timeout = setTimeout(() => resolve('timeout'), options.closeTimeoutMs ?? 10_000)),
        );
        const outcome = await Promise.race([producer.flush().then(() => 'flushed' as const), timedOut]);
        clearTimeout(timeout);
        if (outcome === 'timeout') {
          options.logger?.error({ pending: retained }, 'in-process bus closed with unhandled messages');
          counters.dropped += retained;
        }
        if (rotation) clearInterval(rotation);
        // Unhandled messages stay in the outbox for the next start.
        await outbox?.close();
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
      return join(
        options,
        options.handler,
        Math.max(1, options.maxBatchSize ?? DEFAULT_MAX_BATCH),
        Math.max(0, options.lingerMs ?? 0),
      );
    },

    async close() {
      await Promise.all([...subscriptions].map((s) => s.stop()));
    },
  };

  return { producer, consumer };
}

function toIncoming(message: QueuedMessage, offset: number): IncomingMessage {
  return {
    topic: message.topic,
    key: message.key,
    value: message.value,
    headers: { ...message.headers },
    partition: 0,
    offset: String(offset),
  };
}

/** FNV-1a: cheap, stable across runs, good enough to spread keys over a handful of members. */
function hashKey(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}
