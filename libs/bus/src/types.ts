/**
 * The usage-event bus seen by apps: Kafka in services mode, an in-process queue in embedded mode. Both keep
 * the same promises — per-key order, at-least-once delivery, `flush` meaning "acked" — so apps never branch
 * on which one they hold.
 */

export type MessageHeaders = Record<string, string>;

export interface OutgoingMessage {
  /** Partitioning key: messages with one key are delivered in send order. */
  key: string;
  /** Encoded event (protobuf). Not copied: do not mutate it after `send`. */
  value: Uint8Array;
  headers?: MessageHeaders;
}

export interface QueuedMessage extends OutgoingMessage {
  topic: string;
}

export interface IncomingMessage {
  topic: string;
  key: string;
  value: Uint8Array;
  headers: MessageHeaders;
  partition: number;
  /** Kafka offsets are 64-bit, hence a decimal string. */
  offset: string;
}

export interface ProducerStats {
  /** Accepted by `send` and not yet acked: the window that would be lost if the process died now. */
  pending: number;
  /** Acked. */
  sent: number;
  /** Messages in failed delivery attempts; each retry counts again, and the messages stay pending. */
  failed: number;
  /** Given up on: still unacked when `close` ran out of time, or (with a spool) not written to it. */
  dropped: number;
  /** With a spool (services mode): events on disk and not yet acked by the broker; included in `pending`. */
  spooled?: number;
  /** With a spool: its disk and whether events go to it now. */
  spool?: SpoolStats;
}

export interface SpoolStats {
  /** Bytes of this edge's own spool on disk. */
  bytes: number;
  /** The bound on `bytes`: past it, spooled appends are refused. */
  maxBytes: number;
  /** False after a failed write until it is repaired, or while this edge does not hold its lease: nothing spools. */
  writable: boolean;
  /** Events go to the spool now (the broker is not acking within the spool delay): a full spool loses them. */
  spooling: boolean;
  /** Spools of edges that were gone, adopted and sent to the broker by this edge since it started. */
  adoptions: number;
  /** Spools of other edges that look abandoned (lease not moving) or that this edge adopted and has not sent yet. */
  orphans: number;
}

export interface EventProducer {
  /**
   * Enqueues and returns at once; delivery happens later, batched. Throws `BusBufferFullError` when
   * `maxBuffered` messages are already pending (count it as a dropped event), `BusClosedError` after close.
   */
  send(topic: string, message: OutgoingMessage): void;
  /**
   * Like `send`, and resolves once this message is durable: acked by the broker (Kafka), or written to the
   * outbox (embedded, when the bus has one; at once when it has none). Messages sent close together share one
   * ack (group commit), so waiting costs at most one batch.
   */
  sendDurable(topic: string, message: OutgoingMessage): Promise<void>;
  /** Resolves when every message sent before the call is acked. */
  flush(): Promise<void>;
  stats(): ProducerStats;
  /** Stops accepting, flushes (bounded by a timeout), then releases the connection. */
  close(): Promise<void>;
}

/** Resolve to ack; throw to have the same message retried, with backoff, before any later one of its key. */
export type EventHandler = (message: IncomingMessage) => Promise<void>;

/**
 * How a handler's error looks to the subscriber: `data` fails the same way every time (a value the store
 * refuses), `transient` is the surroundings (the database is down) and passes, `unknown` is told apart by the
 * message's neighbours: if they succeed, the message is the poison.
 */
export type FailureKind = 'data' | 'transient' | 'unknown';

/** Where a message that cannot be handled is parked, so its partition moves on. Throw to retry the parking. */
export type DeadLetterSink = (message: IncomingMessage, error: unknown) => Promise<void>;

/**
 * Poison handling, the same on both buses. When the handler fails on a batch, its messages are retried one
 * by one; a message that still fails while others of the batch succeed, or fails with a `data` error, is
 * handed to `deadLetter` and acked. A `transient` error, or a batch whose every message fails (an outage,
 * not poison), is retried with backoff and nothing is parked.
 */
export interface PoisonOptions {
  deadLetter: DeadLetterSink;
  /** Default: every error is `unknown`. */
  classify?: (error: unknown) => FailureKind;
  /**
   * A message alone in its batch that fails with an `unknown` error has no neighbours to tell poison from an
   * outage: after this many attempts it is parked so its partition moves on. Absent: retried until it succeeds.
   * `transient` errors (an outage) are never counted.
   */
  parkLoneAfterAttempts?: number;
}

export interface SubscribeOptions {
  topic: string;
  /** Each message goes to one subscriber per group; every group gets every message. */
  groupId: string;
  handler: EventHandler;
  /** A group with no committed position starts at the oldest retained message instead of the next new one. */
  fromBeginning?: boolean;
  /** Absent: a failing message is retried until it succeeds, and its partition waits. */
  poison?: PoisonOptions;
}

/**
 * A handler's word that it applied its batch except `rejected`: messages it can never apply (say, bytes that
 * do not decode). They are parked as poison (with `poison` set; otherwise logged and acked).
 */
export interface BatchOutcome {
  rejected: { message: IncomingMessage; error: unknown }[];
}

/**
 * Resolve to ack every message of the batch (less any it names as rejected); throw to have it retried, with
 * backoff and poison handling, before any later message. A batch holds consecutive messages of one
 * partition, in order.
 */
export type BatchHandler = (messages: IncomingMessage[]) => Promise<void | BatchOutcome>;

export interface SubscribeBatchesOptions extends Omit<SubscribeOptions, 'handler'> {
  handler: BatchHandler;
  /** Most messages handed over at once; default 500. A batch is whatever is waiting, up to this. */
  maxBatchSize?: number;
  /**
   * How long a batch that is not full may wait for more messages before it is handed over; default 0. A
   * trickle of single messages then becomes fewer, larger batches (fewer transactions) for a few ms of delay.
   * The Kafka consumer batches by fetch instead and ignores it.
   */
  lingerMs?: number;
}

export interface Subscription {
  /** Resolves once no handler call of this subscription is running; an unacked message is redelivered later. */
  stop(): Promise<void>;
}

export interface EventConsumer {
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /**
   * Like `subscribe`, with the messages already waiting handed over together, so a consumer can apply them in
   * one database transaction. The same delivery promises hold per message: at-least-once, in order per key,
   * acked (committed) only once the handler resolved for the batch that holds it.
   */
  subscribeBatches(options: SubscribeBatchesOptions): Promise<Subscription>;
  /** Stops every subscription made through this consumer. */
  close(): Promise<void>;
}
