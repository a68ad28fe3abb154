import type { SimResponse } from './response';

/** An open `text/event-stream` response. Every write resolves false once the client has gone. */
export interface SseStream {
  /** Writes `event: <name>` (when given) and `data: <json>`. */
  send(event: string | undefined, data: unknown): Promise<boolean>;
  /** Writes a literal `data: <text>` frame (e.g. `[DONE]`). */
  sendRaw(data: string): Promise<boolean>;
  end(): void;
}

/** Returns a signal that aborts when the client disconnects before the response is finished. */
export function abortOnDisconnect(res: SimResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

export function openSse(res: SimResponse, signal: AbortSignal): SseStream {
  res.status(200);
  res.setHeader('content-type', 'text/event-stream; charset=utf-8');
  res.setHeader('cache-control', 'no-cache');
  res.setHeader('connection', 'keep-alive');
  res.setHeader('x-accel-buffering', 'no');
  res.flushHeaders();

  async function write(frame: string): Promise<boolean> {
    if (signal.aborted || res.destroyed) return false;
    if (res.write(frame)) return true;
    // Respect backpressure: wait for the socket to drain, or for the client to leave.
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        res.off('drain', onDrain);
        signal.removeEventListener('abort', onAbort);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onAbort = () => done(false);
      res.once('drain', onDrain);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  return {
    send(event, data) {
      return write(`${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`);
    },
    sendRaw(data) {
      return write(`data: ${data}\n\n`);
    },
    end() {
      if (!res.destroyed) res.end();
    },
  };
}
