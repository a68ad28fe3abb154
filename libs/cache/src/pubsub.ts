/**
 * Fire-and-forget fan-out between replicas, e.g. "key revoked: drop it from your LocalCache". Delivery is
 * at-most-once (Redis pub/sub keeps nothing for a subscriber that is disconnected), so messages are hints that
 * shorten staleness; correctness still rests on TTLs.
 */
export type MessageHandler = (message: string, channel: string) => void | Promise<void>;

export type Unsubscribe = () => Promise<void>;

export interface PubSub {
  publish(channel: string, message: string): Promise<void>;
  /** Resolves once the subscription is live, so a publish after it is received. */
  subscribe(channel: string, handler: MessageHandler): Promise<Unsubscribe>;
  close(): Promise<void>;
}

/**
 * Runs one handler so that neither a throw nor a rejected promise reaches the connection's event loop or the
 * other handlers of the channel.
 */
export function invokeHandler(handler: MessageHandler, message: string, channel: string, onError: (err: unknown) => void): void {
  try {
    const result = handler(message, channel);
    if (result) result.catch(onError);
  } catch (err) {
    onError(err);
  }
}
