import type { ConnectionOptions } from 'node:tls';
import { Agent, buildConnector, Client, Pool, type Dispatcher } from 'undici';

/**
 * Requests one HTTP/2 connection carries at once. Both big vendors advertise at least this many streams;
 * past it the pool opens another connection to the origin.
 */
const H2_STREAMS_PER_CONNECTION = 100;

export interface PoolLimits {
  /** HTTP/1.1 connections per origin: a streamed reply holds one for its whole length. */
  connectionsPerOrigin: number;
  /** Requests per origin that may wait for a connection; past it the call is refused at once. */
  queueLimit: number;
}

/** Queue depth and waits, for the edge's metrics. */
export interface QueueObserver {
  /** A request waited this long (seconds) between being sent and reaching a connection. */
  waited(seconds: number): void;
  /** A request was refused because its origin's connections and queue were full. */
  refused(): void;
}

interface OriginLoad {
  /** Requests sent and not yet finished. */
  inFlight: number;
  /** Requests sent and not yet on a connection. */
  waiting: number;
  /** Set once a connection to the origin negotiated HTTP/2. */
  h2: boolean;
}

/**
 * An undici agent whose connections offer HTTP/2 by ALPN and multiplex requests once it is chosen (undici
 * keeps one request per connection unless told otherwise, which would make HTTP/2 no better than HTTP/1.1).
 * `connect` is the dialer (the egress policy's guarded one for callers' endpoints); it is wrapped so each
 * connection learns which protocol its socket negotiated.
 */
export function createH2Agent(
  options: { headersTimeout: number; bodyTimeout: number; keepAliveTimeout: number; connections: number },
  connect: buildConnector.connector,
  onH2: (origin: string) => void,
): Agent {
  const clientFor = (origin: URL | string, clientOptions: object): Dispatcher => {
    const client: Client = new Client(origin, {
      ...clientOptions,
      allowH2: true,
      connect: (connectOptions, callback) =>
        connect(connectOptions, (error, socket) => {
          if (!error && (socket as { alpnProtocol?: string | false } | null)?.alpnProtocol === 'h2') {
            client.pipelining = H2_STREAMS_PER_CONNECTION;
            onH2(typeof origin === 'string' ? origin : origin.origin);
          }
          // undici's connector callback takes (error, null) or (null, socket).
          (callback as (error: Error | null, socket: unknown) => void)(error, socket);
        }),
    });
    dropDrainsWithoutRoom(client);
    return client;
  };
  return new Agent({
    ...options,
    keepAliveMaxTimeout: options.keepAliveTimeout,
    allowH2: true,
    factory: (origin, agentOptions) => new Pool(origin, { ...agentOptions, factory: clientFor }),
  });
}

// undici's Client has no public "busy" or "need drain"; their symbols are found by their descriptions.
const symbolOf = (of: object, description: string): symbol => {
  const found = Object.getOwnPropertySymbols(of).find((symbol) => symbol.description === description);
  if (!found)
    throw new Error(
      `undici's Client has no '${description}' symbol any more: review dropDrainsWithoutRoom in pools.ts`,
    );
  return found;
};
const BUSY = symbolOf(Client.prototype, 'busy');

/**
 * undici 7's Client can say 'drain' (it has room) after it filled up again: a drain queued on a microtask
 * while it had room is emitted as is. Its Pool then takes the client for free and gives it the next call,
 * which waits behind the connection's 100 running streams until one of them ends: a whole stream's length
 * (29 s in bench:streams), with nothing to show for it. Such a drain is dropped here, and the client left
 * to announce room again when a stream ends (its "need drain" state is set back to what a busy client has).
 */
function dropDrainsWithoutRoom(client: Client): void {
  const needDrain = symbolOf(client, 'need drain');
  const emit = client.emit;
  const state = client as unknown as Record<symbol, unknown>;
  client.emit = function (this: Client, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'drain' && state[BUSY]) {
      state[needDrain] = 2;
      return false;
    }
    return (emit as (this: Client, event: string | symbol, ...args: unknown[]) => boolean).call(this, event, ...args);
  };
}

/** The operator's dialer: undici's own, with ALPN offering HTTP/2, plus any TLS options (a private CA). */
export function plainConnector(timeoutMs: number, tls: ConnectionOptions = {}): buildConnector.connector {
  return buildConnector({ ...(tls as buildConnector.BuildOptions), timeout: timeoutMs, allowH2: true });
}

/**
 * Admission per origin: a request is let through while its origin has a connection (or HTTP/2 stream) free
 * or room in the wait queue, and refused at once otherwise, so a full pool is an answer the caller can act on
 * (retry elsewhere, back off) instead of a silent wait. Waits are measured from send to connection.
 */
export function createAdmission(limits: PoolLimits, observer: () => QueueObserver | undefined) {
  const loads = new Map<string, OriginLoad>();
  const loadOf = (origin: string) => {
    let load = loads.get(origin);
    if (!load) {
      load = { inFlight: 0, waiting: 0, h2: false };
      loads.set(origin, load);
    }
    return load;
  };
  const capacity = (load: OriginLoad) =>
    limits.connectionsPerOrigin * (load.h2 ? H2_STREAMS_PER_CONNECTION : 1) + limits.queueLimit;

  return {
    markH2(origin: string): void {
      loadOf(origin).h2 = true;
    },
    /**
     * Takes a slot for one request, or returns undefined when the origin is full. The ticket's `started` is
     * called when the request reaches a connection, `finished` once when it ends however it ends.
     */
    admit(origin: string): { started(): void; finished(): void } | undefined {
      const load = loadOf(origin);
      if (load.inFlight >= capacity(load)) {
        observer()?.refused();
        return undefined;
      }
      load.inFlight += 1;
      load.waiting += 1;
      const sentAt = performance.now();
      let state: 'waiting' | 'started' | 'done' = 'waiting';
      return {
        started() {
          if (state !== 'waiting') return;
          state = 'started';
          load.waiting -= 1;
          observer()?.waited((performance.now() - sentAt) / 1000);
        },
        finished() {
          if (state === 'done') return;
          if (state === 'waiting') load.waiting -= 1;
          state = 'done';
          load.inFlight -= 1;
        },
      };
    },
    /** Requests waiting for a connection and in flight, over every origin. */
    stats(): { queued: number; inFlight: number } {
      let queued = 0;
      let inFlight = 0;
      for (const load of loads.values()) {
        queued += load.waiting;
        inFlight += load.inFlight;
      }
      return { queued, inFlight };
    },
  };
}
