import type { Logger } from '@sbc/logging';
import { backoffDelay, type BackoffOptions } from './backoff';
import { BusBufferFullError, BusClosedError } from './errors';
import type { EventProducer, OutgoingMessage, ProducerStats, QueuedMessage } from './types';

/** Delivers one batch; resolves only when the broker has acked all of it. */
export type SendBatch = (messages: readonly QueuedMessage[]) => Promise<void>;

export interface BatchingOptions {
  /** How long the first message of a batch waits for company; default 5 ms. */
  lingerMs?: number;
  /** A batch this full is sent without waiting out the linger; default 500. */
  maxBatchSize?: number;
  /** Most unacked messages held; `send` throws past it. Default 10,000. */
  maxBuffered?: number;
  /** Backoff between failed attempts at the same batch. */
  retry?: BackoffOptions;
  /** How long `close` waits for the last acks before counting the rest as dropped; default 10 s. */
  closeTimeoutMs?: number;
  logger?: Logger;
  /** Runs after the final flush, e.g. to disconnect the client. */
  onClose?: () => Promise<void>;
}

/**
 * The broker-agnostic half of a producer: an in-memory FIFO, a linger timer, and exactly one batch in flight
 * at a time. One batch in flight keeps per-key order. A failed batch is retried as exactly the same message
 * set, before anything newer and never merged with it: a retry then repeats the attempt the broker may have
 * written (a timeout after the write), so the broker sees a repeat rather than a new, overlapping batch.
 * Because acks arrive in send order, "everything sent before flush() is acked" is just a count.
 */
export function createBatchingProducer(sendBatch: SendBatch, options: BatchingOptions = {}): EventProducer {
  const lingerMs = options.lingerMs ?? 5;
  const maxBatchSize = options.maxBatchSize ?? 500;
  const maxBuffered = options.maxBuffered ?? 10_000;
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;

  const queue: QueuedMessage[] = []; // not yet handed to sendBatch, oldest first
  let inFlight = 0; // size of the batch being sent
  let failedBatch: QueuedMessage[] | undefined; // the last attempt, which failed: the next one repeats it
  let accepted = 0; // messages ever accepted by send
  let settled = 0; // acked or dropped, always the oldest `settled` of the `accepted`
  const counters = { sent: 0, failed: 0, dropped: 0 };
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let backingOff = false;
  let closing: Promise<void> | undefined;
  let closed = false;
  const waiters: { target: number; resolve: () => void; reject: (err: Error) => void }[] = [];

  function arm(delayMs: number): void {
    if (timer) clearTimeout(timer);
    timer = setTimeout(pump, delayMs);
  }

  /** Decides when the queue is next looked at; the end of an attempt or a backoff re-enters here. */
  function schedule(urgent: boolean): void {
    if (inFlight > 0 || backingOff || unsent() === 0 || closed) return;
    if (urgent || failedBatch || queue.length >= maxBatchSize) arm(0);
    else if (!timer) arm(lingerMs);
  }

  function pump(): void {
    timer = undefined;
    backingOff = false;
    if (inFlight > 0 || unsent() === 0 || closed) return;
    const batch = failedBatch ?? queue.splice(0, maxBatchSize);
    failedBatch = undefined;
    inFlight = batch.length;
    Promise.resolve()
      .then(() => sendBatch(batch))
      .then(
        () => {
          if (closed) return;
          inFlight = 0;
          attempt = 0;
          counters.sent += batch.length;
          settle(batch.length);
          // Whatever queued up during the send has waited at least that long: no extra linger.
          schedule(true);
        },
        (err: unknown) => {
          if (closed) return;
          inFlight = 0;
          counters.failed += batch.length;
          failedBatch = batch; // retried as it is, so nothing later overtakes it or joins it
          attempt++;
          const delay = backoffDelay(attempt, options.retry);
          options.logger?.warn(
            { err, messages: batch.length, attempt, retryInMs: delay },
            'event batch send failed; will retry',
          );
          backingOff = true;
          arm(delay);
        },
      );
  }

  /** Accepted and not yet acked nor in flight. */
  function unsent(): number {
    return queue.length + (failedBatch?.length ?? 0);
  }

  function settle(count: number): void {
    settled += count;
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i]!;
      if (waiter.target <= settled) {
        waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  function flush(): Promise<void> {
    if (settled >= accepted) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => waiters.push({ target: accepted, resolve, reject }));
    schedule(true); // cut the linger short; an ongoing backoff is still honoured
    return done;
  }

  async function shutdown(): Promise<void> {
    let timeout: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>(
      (resolve) => (timeout = setTimeout(() => resolve('timeout'), closeTimeoutMs)),
    );
    const outcome = await Promise.race([flush().then(() => 'flushed' as const), timedOut]);
    clearTimeout(timeout);
    if (outcome === 'timeout') {
      const lost = unsent() + inFlight;
      counters.dropped += lost;
      options.logger?.error({ dropped: lost }, 'event producer closed with unacked messages');
      queue.length = 0;
      failedBatch = undefined;
      inFlight = 0;
      settled = accepted;
      for (const waiter of waiters.splice(0))
        waiter.reject(new Error(`event producer closed with ${lost} unacked messages`));
    }
    closed = true;
    if (timer) clearTimeout(timer);
    await options.onClose?.();
  }

  function send(topic: string, message: OutgoingMessage): void {
    if (closing) throw new BusClosedError();
    if (unsent() + inFlight >= maxBuffered) throw new BusBufferFullError(maxBuffered);
    queue.push({ topic, key: message.key, value: message.value, headers: message.headers });
    accepted++;
    schedule(false);
  }

  return {
    send,

    sendDurable(topic, message) {
      send(topic, message);
      const target = accepted;
      // Acks arrive in send order, so this message is acked once `target` messages are settled. A waiter
      // does not wait out the linger: messages queued while a batch is in flight go together in the next.
      const acked = new Promise<void>((resolve, reject) => waiters.push({ target, resolve, reject }));
      schedule(true);
      return acked;
    },

    flush,

    stats(): ProducerStats {
      return { pending: unsent() + inFlight, ...counters };
    },

    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}
