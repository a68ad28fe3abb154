import type { Logger } from '@sbc/logging';
import { applyFault } from '../faults/apply-fault';
import type { FaultInjector } from '../faults/fault-injector';
import { SimError, sendError, type ErrorDialect } from '../wire/errors';
import { createPacer, sleep, type Pacer, type Timing } from '../wire/pacing';
import type { SimResponse } from '../wire/response';
import { abortOnDisconnect, openSse, type SseStream } from '../wire/sse';

/** What every model route needs; built once in main.ts. */
export interface RouteDeps {
  timing: Timing;
  /** Wait before the first byte for the `sim-slow` model. */
  slowMs: number;
  /** Model ids listed by GET /v1/models. */
  models: string[];
  logger: Logger;
  /** This simulator's fault plan; without one it only counts calls. */
  faults: FaultInjector;
}

/**
 * Test hooks chosen by model id:
 * - `sim-error-<status>` (400–599) answers that status in the dialect's error shape (429 with `retry-after`);
 * - `sim-slow` waits `slowMs` before its first byte, so callers can exercise their timeouts.
 */
function failureStatusFor(model: string): number | undefined {
  const match = /^sim-error-(\d{3})$/.exec(model);
  const status = match ? Number(match[1]) : NaN;
  return status >= 400 && status <= 599 ? status : undefined;
}

/**
 * Starts a model call: binds an abort signal to the client's connection, applies the fault plan, then the test
 * hooks.
 * Returns undefined when the call is already answered (hooked failure) or the client left while waiting.
 */
export async function beginCall(
  model: string,
  dialect: ErrorDialect,
  res: SimResponse,
  deps: RouteDeps,
): Promise<{ signal: AbortSignal } | undefined> {
  const signal = abortOnDisconnect(res);
  if (!(await applyFault(deps.faults.next(), res, dialect, signal))) return undefined;
  const status = failureStatusFor(model);
  if (status !== undefined) {
    sendError(
      res,
      dialect,
      new SimError(status, `Simulated failure: sim-upstream answers ${status} for model ${model}.`),
    );
    return undefined;
  }
  if (model === 'sim-slow' && !(await sleep(deps.slowMs, signal))) return undefined;
  return { signal };
}

/**
 * Runs one streamed reply: opens the event stream, lets `write` produce the dialect's frames on the pacer's
 * clock, then ends it. `write` returns as soon as a send or wait reports the client gone.
 */
export async function streamReply(
  res: SimResponse,
  signal: AbortSignal,
  deps: RouteDeps,
  write: (sse: SseStream, pacer: Pacer) => Promise<unknown>,
): Promise<void> {
  const sse = openSse(res, signal);
  await write(sse, createPacer(deps.timing, signal));
  sse.end();
  deps.logger.debug(
    { requestId: res.getHeader('request-id'), outcome: signal.aborted ? 'client_gone' : 'completed' },
    'stream ended',
  );
}
