/** Thrown by `send` when the unacked buffer is full; the caller counts the event as dropped. */
export class BusBufferFullError extends Error {
  readonly code = 'bus_buffer_full';
  constructor(readonly maxBuffered: number) {
    super(`event bus buffer is full (${maxBuffered} messages pending); the event was not accepted`);
    this.name = 'BusBufferFullError';
  }
}

/** Thrown by `send` once `close` has started: nothing accepted then could be delivered. */
export class BusClosedError extends Error {
  readonly code = 'bus_closed';
  constructor() {
    super('event producer is closed; the event was not accepted');
    this.name = 'BusClosedError';
  }
}

/**
 * Thrown (as a rejection) by a spool append that cannot be made durable: the spool is at its byte bound (`full`),
 * or a write failed and the spool has not been repaired yet (`failed`). Nothing was acknowledged.
 */
export class SpoolUnavailableError extends Error {
  readonly code = 'spool_unavailable';
  constructor(readonly reason: 'full' | 'failed') {
    super(
      reason === 'full'
        ? 'the usage spool is at its byte bound; the event was not spooled'
        : 'a usage spool write failed and the spool is not repaired yet; the event was not spooled',
    );
    this.name = 'SpoolUnavailableError';
  }
}
