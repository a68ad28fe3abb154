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
  /** Given up on: still unacked when `close` ran out of time. */
  dropped: number;
}

export interface EventProducer {
  /**
   * Enqueues and returns at once; delivery happens later, batched. Throws `BusBufferFullError` when
   * `maxBuffered` messages are already pending (count it as a dropped event), `BusClosedError` after close.
   */
  send(topic: string, message: OutgoingMessage): void;
  /** Resolves when every message sent before the call is acked. */
  flush(): Promise<void>;
  stats(): ProducerStats;
  /** Stops accepting, flushes (bounded by a timeout), then releases the connection. */
  close(): Promise<void>;
}

/** Resolve to ack; throw to have the same message retried, with backoff, before any later one of its key. */
export type EventHandler = (message: IncomingMessage) => Promise<void>;

export interface SubscribeOptions {
  topic: string;
  /** Each message goes to one subscriber per group; every group gets every message. */
  groupId: string;
  handler: EventHandler;
  /** A group with no committed position starts at the oldest retained message instead of the next new one. */
  fromBeginning?: boolean;
}

/**
 * Resolve to ack every message of the batch; throw to have the same batch retried, with backoff, before any
 * later message. A batch holds consecutive messages of one partition, in order.
 */
export type BatchHandler = (messages: IncomingMessage[]) => Promise<void>;

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
