import type { Logger } from '@sbc/logging';
import { backoffDelay } from './backoff';
import { BusClosedError, SpoolUnavailableError } from './errors';
import { openFileOutbox, type FileOutbox, type OutboxSegment } from './file-outbox';
import { openSpoolRoot, type SpoolRoot } from './spool-root';
import type { EventProducer, OutgoingMessage, ProducerStats, QueuedMessage } from './types';

/** Events per segment while the spool is the queue. */
const SEGMENT_EVENTS = 1_000;
/** Events read back from the spool and handed to the broker at once: what a drain holds in memory. */
const DRAIN_BATCH = 500;

export interface SpoolOptions {
  /** The spool's root (spool-root.ts): every edge's directory lies under it, and a live edge adopts a gone one's. */
  dir: string;
  /** Names this process's directory under `dir`; default `<hostname>-<random>`, new at each start. */
  owner?: string;
  /** A directory whose lease has not changed this long is adopted; default 30 s. */
  leaseMs?: number;
  /** Most bytes this edge's own spool holds on disk; past it, spooled appends are refused. Default 1 GiB. */
  maxBytes?: number;
  /** How long an event may wait for the broker's ack before it is written to the spool; default 500 ms. */
  spoolAfterMs?: number;
  /** Most events held in memory awaiting an ack; past it, events go to the spool alone. Default 10,000. */
  maxInMemory?: number;
  /** How long `close` waits for acks before spooling what is left; default 10 s. */
  closeTimeoutMs?: number;
  logger?: Logger;
}

/** An event sent while the broker keeps up: in memory, and on disk too once it waited `spoolAfterMs`. */
interface Watched {
  message: QueuedMessage;
  acceptedAt: number;
  acked: boolean;
  spooled: boolean;
  /** Resolves the caller's `sendDurable`: at the ack or once spooled, whichever comes first. */
  durable: () => void;
  /** Set once spooled: releases the copy when the ack comes. */
  onAck?: () => void;
}

/** A closed segment of events that are on disk only, read back and sent when their turn comes. */
interface BacklogSegment {
  segment: OutboxSegment;
  /** Found at start (not counted in `spoolOnly`: its count is known only once read). */
  recovered: boolean;
}

/** A segment of copies of in-memory events; deleted once every event in it is acked. */
interface CopySegment {
  unacked: number;
  closed: boolean;
  written: Promise<void>;
}

/**
 * A producer whose acknowledged events survive a broker outage and a pod restart: the Kafka producer
 * (`inner`, which retries without end) with the file outbox as its spool.
 *
 * While the broker acks promptly, nothing touches the disk: `sendDurable` resolves at the ack. An event not
 * acked within `spoolAfterMs` is appended to the spool and its `sendDurable` resolves once that append is
 * fsync'd, so the reply that waits on it ends with the event on disk; it stays queued for the broker, and
 * its copy is deleted once acked. When `maxInMemory` events wait, the spool becomes the queue: later events go
 * to disk only, and are read back and sent segment by segment, oldest first, after everything older was
 * acked; once the spool is empty, events go straight to the broker again. What a crash or restart leaves in
 * the spool is sent again at the next start, before anything new. Replays and retries can repeat an event;
 * the ledger applies each event id once.
 */
export function createSpoolingProducer(inner: EventProducer, options: SpoolOptions): EventProducer {
  const { logger } = options;
  const spoolAfterMs = options.spoolAfterMs ?? 500;
  const maxInMemory = options.maxInMemory ?? 10_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  const leaseMs = options.leaseMs ?? 30_000;
  const root: SpoolRoot = openSpoolRoot({ root: options.dir, owner: options.owner, leaseMs, logger });
  const outbox: FileOutbox = openFileOutbox({
    dir: root.ownDir,
    logger,
    maxBytes: options.maxBytes ?? 1024 * 1024 * 1024,
  });

  let watched: Watched[] = []; // in memory, not yet acked nor spooled, oldest first
  let inMemory = 0; // sent to `inner` and not yet acked
  const copies = new Map<OutboxSegment, CopySegment>();
  let copied = 0; // events with a copy in the spool, not yet acked
  const backlog: BacklogSegment[] = [];
  let spoolOnly = 0; // events on disk only: the backlog's and the open segment's while the spool is the queue
  let spoolIsQueue = false;
  const spoolOnlyWrites = new Map<OutboxSegment, Promise<void>>();
  let dropped = 0;
  let closing: Promise<void> | undefined;
  let draining: Promise<void> | undefined;
  let drainFailures = 0;
  let drainRetry: NodeJS.Timeout | undefined;
  const idleWaiters: (() => void)[] = [];
  /** Adopted directories of edges that are gone, oldest first, and their drain. */
  const adoptedDirs: string[] = [];
  let adopting: Promise<void> | undefined;
  let adoptions = 0;
  let adoptFailures = 0;

  for (const segment of outbox.recovered) backlog.push({ segment, recovered: true });
  if (backlog.length > 0) {
    spoolIsQueue = true;
    drain();
  }

  const ticker = setInterval(tick, Math.max(10, Math.floor(spoolAfterMs / 2)));
  ticker.unref();
  // Looks for spools of edges that are gone about three times per lease; the first look comes soon after start,
  // so a clean restart picks up what the last process released.
  const adopter = setInterval(lookForOrphans, Math.max(50, Math.floor(leaseMs / 3)));
  adopter.unref();
  setImmediate(lookForOrphans);
  /** Spools what has waited too long for its ack, and closes the segment of copies so acked ones can go. */
  function tick(): void {
    const now = Date.now();
    let at = 0;
    while (at < watched.length && (watched[at]!.acked || now - watched[at]!.acceptedAt >= spoolAfterMs)) {
      const entry = watched[at++]!;
      if (!entry.acked) spool(entry);
    }
    if (at > 0) watched = watched.slice(at);
    if (!spoolIsQueue) closeCopySegment();
  }

  function closeCopySegment(): void {
    const closed = outbox.rotate();
    const copy = closed && copies.get(closed);
    if (!copy) return;
    copy.closed = true;
    releaseIfAcked(closed!, copy);
  }

  function releaseIfAcked(segment: OutboxSegment, copy: CopySegment): void {
    if (!copy.closed || copy.unacked > 0) return;
    copies.delete(segment);
    void copy.written
      .then(() => outbox.release(segment))
      .catch((err: unknown) => logger?.error({ err }, 'usage spool: deleting an acked segment failed'));
  }

  /** Appends to the own spool while this edge holds its lease (else refused, as after a failed write). */
  function append(message: QueuedMessage): { segment: OutboxSegment; durable: Promise<void> } {
    if (!root.leaseValid()) {
      const durable = Promise.reject(new SpoolUnavailableError('failed'));
      durable.catch(() => undefined);
      return { segment: { name: '', count: 0, bytes: 0 }, durable };
    }
    return outbox.append(message);
  }

  /** Copies an in-memory event to the spool; its caller may go on once the copy is on disk. */
  function spool(entry: Watched): void {
    entry.spooled = true;
    const { segment, durable } = append(entry.message);
    let copy = copies.get(segment);
    if (!copy) copies.set(segment, (copy = { unacked: 0, closed: false, written: durable }));
    copy.unacked++;
    copy.written = durable.catch(() => undefined);
    copied++;
    durable.then(entry.durable, () => undefined); // a failed append is logged by the outbox; the ack may still come
    entry.onAck = () => {
      copy.unacked--;
      copied--;
      releaseIfAcked(segment, copy);
    };
  }

  function sendToBroker(topic: string, message: OutgoingMessage): Promise<void> {
    const queued: QueuedMessage = { topic, key: message.key, value: message.value, headers: message.headers };
    let durable!: () => void;
    const done = new Promise<void>((resolve) => (durable = resolve));
    const entry: Watched = { message: queued, acceptedAt: Date.now(), acked: false, spooled: false, durable };
    watched.push(entry);
    inMemory++;
    inner.sendDurable(topic, message).then(
      () => {
        entry.acked = true;
        inMemory--;
        entry.onAck?.();
        entry.durable();
        if (inMemory === 0) wakeIdle();
      },
      () => undefined, // only when `inner` closed unacked, after `close` spooled this event
    );
    return done;
  }

  function sendToSpool(topic: string, message: OutgoingMessage): Promise<void> {
    if (!spoolIsQueue) {
      // Everything in memory is older: on disk first, so a crash now keeps the order and loses nothing.
      for (const entry of watched) if (!entry.acked && !entry.spooled) spool(entry);
      watched = [];
      closeCopySegment();
      spoolIsQueue = true;
      logger?.warn({ inMemory, spoolAfterMs }, 'usage spool: the broker is not keeping up; events now queue on disk');
    }
    const queued: QueuedMessage = { topic, key: message.key, value: message.value, headers: message.headers };
    const { segment, durable } = append(queued);
    spoolOnly++;
    spoolOnlyWrites.set(
      segment,
      durable.catch(() => undefined),
    );
    if (segment.count >= SEGMENT_EVENTS && outbox.rotate()) backlog.push({ segment, recovered: false });
    drain();
    return durable.catch((err: unknown) => {
      spoolOnly--;
      dropped++;
      throw err;
    });
  }

  /** Sends the spool to the broker, oldest segment first, once everything before it is acked. */
  function drain(): void {
    clearTimeout(drainRetry);
    drainRetry = undefined;
    draining ??= (async () => {
      try {
        while (spoolIsQueue && !closing) {
          await inner.flush();
          let next = backlog.shift();
          if (!next) {
            const segment = outbox.rotate();
            // Nothing spooled since the last segment: the broker keeps up again.
            if (!segment) {
              spoolIsQueue = false;
              break;
            }
            next = { segment, recovered: false };
          }
          try {
            await spoolOnlyWrites.get(next.segment);
            const events = await sendSegment(outbox, next.segment);
            if (!next.recovered) spoolOnly -= next.segment.count;
            spoolOnlyWrites.delete(next.segment);
            outbox.release(next.segment);
            drainFailures = 0;
            wakeIdle();
            logger?.info(
              { segment: next.segment.name, events, left: spoolOnly },
              'usage spool: a segment reached the broker',
            );
          } catch (err) {
            backlog.unshift(next); // tried again first
            throw err;
          }
        }
      } catch (err) {
        if (!closing) {
          // Never left stopped: the drain is tried again on a timer, not only at the next spooled send.
          const retryInMs = backoffDelay(++drainFailures, { initialMs: 500, maxMs: 30_000 });
          logger?.error({ err, retryInMs }, 'usage spool: draining failed; trying again');
          drainRetry = setTimeout(drain, retryInMs);
          drainRetry.unref();
        }
      } finally {
        draining = undefined;
        if (spoolOnly === 0 && inMemory === 0) wakeIdle();
      }
    })();
  }

  /** Streams one closed segment to the broker in batches, each acked before the next is read. */
  async function sendSegment(from: FileOutbox, segment: OutboxSegment): Promise<number> {
    let events = 0;
    for await (const batch of from.stream(segment, DRAIN_BATCH)) {
      for (const m of batch) inner.send(m.topic, m);
      await inner.flush();
      events += batch.length;
    }
    return events;
  }

  /** Adopts the spools of edges that are gone, and sends them to the broker one directory at a time. */
  function lookForOrphans(): void {
    if (closing || adopting) return;
    adopting = (async () => {
      try {
        adoptedDirs.push(...(await root.adoptOrphans()));
        while (adoptedDirs.length > 0 && !closing) {
          const dir = adoptedDirs[0]!;
          const adopted = openFileOutbox({ dir, logger });
          let events = 0;
          try {
            for (const segment of adopted.recovered) {
              if (closing) return;
              events += await sendSegment(adopted, segment);
              adopted.release(segment);
            }
          } finally {
            await adopted.close();
          }
          if (closing) return;
          await root.releaseAdopted(dir);
          adoptedDirs.shift();
          adoptions++;
          adoptFailures = 0;
          logger?.info({ dir, events }, 'usage spool: an adopted spool reached the broker');
        }
      } catch (err) {
        adoptFailures++;
        logger?.error(
          { err, attempt: adoptFailures },
          'usage spool: adopting or draining a spool failed; trying again',
        );
      } finally {
        adopting = undefined;
      }
    })();
  }

  function wakeIdle(): void {
    if (spoolOnly > 0 || inMemory > 0) return;
    for (const wake of idleWaiters.splice(0)) wake();
  }

  function sendDurable(topic: string, message: OutgoingMessage): Promise<void> {
    if (closing) throw new BusClosedError();
    return spoolIsQueue || inMemory >= maxInMemory ? sendToSpool(topic, message) : sendToBroker(topic, message);
  }

  async function shutdown(): Promise<void> {
    clearInterval(ticker);
    clearInterval(adopter);
    clearTimeout(drainRetry);
    // Not drained further: what is on disk stays there for the next start.
    const acked = inner.flush();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, closeTimeoutMs)));
    await Promise.race([acked, timedOut]);
    clearTimeout(timer);
    const unacked = watched.filter((entry) => !entry.acked && !entry.spooled);
    for (const entry of unacked) spool(entry);
    watched = [];
    await Promise.all([...copies.values()].map((copy) => copy.written));
    await Promise.all(spoolOnlyWrites.values());
    if (unacked.length > 0 || copied > 0 || spoolOnly > 0) {
      const spooled = copied + spoolOnly;
      logger?.warn({ spooled }, 'usage spool: closed with events on disk; they are sent at the next start');
    }
    await adopting;
    await inner.close();
    await outbox.close();
    // An empty own spool goes; one with events is released, so a live edge (or the next start) adopts it at once.
    await root.close(outbox.stats().bytes === 0);
  }

  return {
    send(topic, message) {
      sendDurable(topic, message).catch(() => undefined); // a failed append is logged by the outbox, counted here
    },

    sendDurable,

    async flush() {
      // While the spool is the queue, the events sent before are acked once it is empty.
      if (!spoolIsQueue && spoolOnly === 0) return inner.flush();
      await new Promise<void>((resolve) => idleWaiters.push(resolve));
    },

    stats(): ProducerStats {
      const { sent, failed } = inner.stats();
      const disk = outbox.stats();
      return {
        pending: inMemory + spoolOnly,
        sent,
        failed,
        dropped,
        spooled: copied + spoolOnly,
        spool: {
          bytes: disk.bytes,
          maxBytes: disk.maxBytes,
          writable: disk.writable && root.leaseValid(),
          spooling: spoolIsQueue || copied > 0 || inMemory >= maxInMemory,
          adoptions,
          orphans: root.orphans(),
        },
      };
    },

    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}
