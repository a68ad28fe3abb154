import { whenAborted } from './abort-watch';
import type { CallResponse } from './call-response';
import type { InFlight } from './dispatch';

/**
 * Aborts the upstream request at once when the caller hangs up; at the drain deadline, a call still waiting on its
 * upstream is answered 503 in its dialect, not reset (a stream already under way ends through its own listener).
 */
export function watchCaller(out: CallResponse, inFlight: InFlight, drainDeadline: AbortSignal | undefined): () => void {
  const onClose = () => {
    if (out.res.writableFinished) return;
    inFlight.callerGone = true;
    inFlight.current?.abort();
    inFlight.wake?.();
  };
  out.res.on('close', onClose);
  const onDeadline = () => {
    if (out.started) return;
    inFlight.drained = true;
    inFlight.current?.abort();
    inFlight.wake?.();
  };
  const stopWatchingDeadline = drainDeadline?.aborted ? () => undefined : whenAborted(drainDeadline, onDeadline);
  return () => {
    out.res.off('close', onClose);
    stopWatchingDeadline();
  };
}
