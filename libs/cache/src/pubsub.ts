/**
 * Fire-and-forget fan-out between replicas, e.g. "key revoked: drop it from your LocalCache". Delivery is
 * at-most-once (Redis pub/sub keeps nothing for a subscriber that is disconnected), so messages are hints that
 * shorten staleness; correctness still rests on TTLs.
 */
export type MessageHandler = (message: string, channel: string) => void | Promise<void>;

export type Unsubscribe = () => Promise<void>;

/** The longest `barrier` waits (a broker that does not answer costs a write this, not its answer). */
export const BARRIER_WAIT_MS = 1_000;

export interface PubSub {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is live, so a publish after it is received. */
  subscribe(channel: string, handler: MessageHandler): Promise<Unsubscribe>;
  /**
   * Resolves once the messages published (by any instance) before this call have reached this instance's
   * handlers: a process that answers a write after the write's fan-out was published calls it first, so the
   * next request it serves sees the change. Bounded: it never holds a caller longer than BARRIER_WAIT_MS.
   */
  barrier(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Runs one handler so that neither a throw nor a rejected promise reaches the connection's event loop or the
 * other handlers of the channel.
 */
export function invokeHandler(
  handler: MessageHandler,
  message: string,
  channel: string,
  onError: (err: unknown) => void,
): void {
  try {
    const result = handler(message, channel);
    if (result) result.catch(onError);
  } catch (err) {
    onError(err);
  }
}
