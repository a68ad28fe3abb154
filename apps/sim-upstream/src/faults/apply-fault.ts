import { SimError, sendError, type ErrorDialect } from '../wire/errors';
import { sleep } from '../wire/pacing';
import type { SimResponse } from '../wire/response';
import type { FaultAction } from './fault-injector';

/**
 * Carries out one call's fault before the route answers. Resolves true when the route should go on (no fault,
 * a hang that ran its course, or a cut armed on the response), false when the call is already over.
 */
export async function applyFault(
  action: FaultAction,
  res: SimResponse,
  dialect: ErrorDialect,
  signal: AbortSignal,
): Promise<boolean> {
  switch (action.kind) {
    case 'none':
      return true;
    case 'reset':
      res.destroy();
      return false;
    case 'status':
      sendError(
        res,
        dialect,
        new SimError(action.status, `Simulated fault: sim-upstream answers ${action.status} by its fault plan.`),
        action.retryAfterS,
      );
      return false;
    case 'hang':
      return sleep(action.ms, signal);
    case 'cut':
      cutAfterChunks(res, action.afterChunks);
      return true;
  }
}

/**
 * How long a cut connection stays open after its last chunk: a client's stream reader drops data it has received
 * but not yet handed on when the connection errors, so the allowed chunks need a moment to be read.
 */
const CUT_DELAY_MS = 100;

/**
 * Arms the response to drop its connection after `chunks` writes: SSE frames for a stream, or (any `chunks`
 * above 0) half the body of a whole reply. With 0 the status line and headers go out and then the connection
 * drops, the stream that breaks before its first chunk. Whatever the route writes after the cut goes nowhere.
 */
function cutAfterChunks(res: SimResponse, chunks: number): void {
  const write = res.write.bind(res);
  let written = 0;
  let cut = false;
  const drop = () => {
    if (cut) return;
    cut = true;
    setTimeout(() => res.destroy(), CUT_DELAY_MS);
  };
  res.write = (chunk: string) => {
    if (cut || written >= chunks) {
      drop();
      return true;
    }
    written += 1;
    const ok = write(chunk);
    if (written >= chunks) drop();
    return ok;
  };
  res.end = () => {
    drop();
    return res;
  };
  res.json = (body: unknown) => {
    const text = JSON.stringify(body);
    res.setHeader('content-type', 'application/json; charset=utf-8');
    res.flushHeaders();
    if (chunks > 0) write(text.slice(0, Math.floor(text.length / 2)));
    drop();
    return res;
  };
}
