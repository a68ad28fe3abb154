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
