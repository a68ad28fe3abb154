import { ApiError } from '@sbc/errors';
import { HealthCheckResponse_ServingStatus as ServingStatus, type Health } from '@sbc/proto/grpc/health/v1/health_pb';
import type { ServiceImpl } from './types';

type Listener = (status: ServingStatus) => void;

/**
 * The statuses grpc.health.v1.Health reports: '' for the whole server plus one per added service. Stateful,
 * so a class. Once `shutDown` runs the board is terminal: every status stays NOT_SERVING and open Watch
 * streams end, because a draining server must not flip back to SERVING and a Watch would otherwise hold
 * `tryShutdown` open until the grace period runs out.
 */
export class HealthBoard {
  private readonly statuses = new Map<string, ServingStatus>([['', ServingStatus.SERVING]]);
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly closers = new Set<() => void>();
  private terminal = false;

  has(service: string): boolean {
    return this.statuses.has(service);
  }

  get(service: string): ServingStatus | undefined {
    return this.statuses.get(service);
  }

  set(service: string, status: ServingStatus): void {
    if (this.terminal || this.statuses.get(service) === status) return;
    this.statuses.set(service, status);
    for (const listener of this.listeners.get(service) ?? []) listener(status);
  }

  shutDown(): void {
    for (const service of this.statuses.keys()) this.set(service, ServingStatus.NOT_SERVING);
    this.terminal = true;
    for (const close of [...this.closers]) close();
  }

  /** Current status first, then every change, until the signal aborts or the board shuts down. */
  async *watch(service: string, signal: AbortSignal): AsyncGenerator<ServingStatus> {
    const pending: ServingStatus[] = [this.get(service) ?? ServingStatus.SERVICE_UNKNOWN];
    let wake: (() => void) | undefined;
    let closed = this.terminal;
    const onChange: Listener = (status) => {
      pending.push(status);
      wake?.();
    };
    const close = () => {
      closed = true;
      wake?.();
    };
    const listeners = this.listeners.get(service) ?? new Set<Listener>();
    this.listeners.set(service, listeners.add(onChange));
    this.closers.add(close);
    signal.addEventListener('abort', close, { once: true });
    try {
      for (;;) {
        const next = pending.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (closed || signal.aborted) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      listeners.delete(onChange);
      this.closers.delete(close);
      signal.removeEventListener('abort', close);
    }
  }
}

/** The standard health service over a board: Check answers NOT_FOUND for a service nobody registered. */
export function createHealthImpl(board: HealthBoard): ServiceImpl<(typeof Health)['method']> {
  return {
    async check(request) {
      const status = board.get(request.service);
      if (status === undefined) throw new ApiError('not_found', `Unknown service ${request.service}.`);
      return { status };
    },
    async *watch(request, ctx) {
      for await (const status of board.watch(request.service, ctx.signal)) yield { status };
    },
  };
}
