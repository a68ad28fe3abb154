import { connect } from 'node:net';
import type { Engine, HouseEngines } from './engines';

/** What the edge last learnt about one engine's origin. */
interface EngineReach {
  reachable: boolean;
  /** Why it could not be reached (a socket error code or a timeout). */
  error?: string;
  checkedAtMs: number;
}

interface UnreachableEngine {
  model: string;
  engine: string;
  origin: string;
  error: string;
}

export interface EngineReachability {
  /** The last probe of this engine's origin; undefined before the first probe ends. */
  reachOf(engine: Engine): EngineReach | undefined;
  /** Every house model's engine whose origin the last probe could not reach. */
  unreachable(): UnreachableEngine[];
  /** Probes every origin now and then every `intervalMs`; resolves once the first round is done. */
  start(): Promise<void>;
  stop(): void;
}

export interface EngineReachabilityOptions {
  house: HouseEngines;
  intervalMs: number;
  timeoutMs: number;
  /** Called when an origin turns unreachable or reachable again (not on every probe). */
  onChange?: (origin: string, reach: EngineReach) => void;
}

function originOf(engine: Engine): string {
  return new URL(engine.baseUrl).origin;
}

/** Opens and closes a TCP connection: an engine whose port takes connections counts as reachable. */
function probe(origin: string, timeoutMs: number): Promise<string | undefined> {
  const url = new URL(origin);
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (error?: string) => {
      socket.destroy();
      resolve(error);
    };
    socket.setTimeout(timeoutMs, () => done(`no connection within ${timeoutMs} ms`));
    socket.once('connect', () => done());
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
}

/**
 * Knows which house engines the edge can reach, by connecting to each distinct origin in turn. A vendor's
 * API answers its root path in its own way, so a TCP connection is the one check that means the same for
 * every engine: "nothing listens there" (the simulator not started, a wrong HOUSE_ENGINES) is what it finds.
 */
export function createEngineReachability(options: EngineReachabilityOptions): EngineReachability {
  const engines = Object.entries(options.house).flatMap(([model, list]) => list.map((engine) => ({ model, engine })));
  const origins = [...new Set(engines.map(({ engine }) => originOf(engine)))];
  const reach = new Map<string, EngineReach>();
  let timer: NodeJS.Timeout | undefined;

  const probeAll = async () => {
    await Promise.all(
      origins.map(async (origin) => {
        const error = await probe(origin, options.timeoutMs);
        const next: EngineReach = { reachable: error === undefined, error, checkedAtMs: Date.now() };
        const before = reach.get(origin);
        reach.set(origin, next);
        if (before?.reachable !== next.reachable) options.onChange?.(origin, next);
      }),
    );
  };

  return {
    reachOf: (engine) => reach.get(originOf(engine)),
    unreachable: () =>
      engines.flatMap(({ model, engine }) => {
        const origin = originOf(engine);
        const last = reach.get(origin);
        return last && !last.reachable ? [{ model, engine: engine.label, origin, error: last.error ?? '' }] : [];
      }),
    async start() {
      await probeAll();
      const loop = () => {
        timer = setTimeout(() => void probeAll().finally(() => timer && loop()), options.intervalMs);
        timer.unref();
      };
      loop();
    },
    stop() {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}
