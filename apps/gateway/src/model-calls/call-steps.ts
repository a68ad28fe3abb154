import { requestIdFor } from '../http/request-id';
import { watchCaller } from './caller-watch';
import { readCall } from './read-call';
import { settle } from './settle';

/**
 * Steps of a caller's model call that main.ts chooses once, at start: these, in every real edge. A benchmark's
 * edge may have one replaced by a no-op (bench-steps.ts, SBC_BENCH_STEPS_OFF) so that its cost is measured;
 * the call path holds no check of its own for that. MCP rounds and the edge's own calls (a judge's question)
 * always run the full steps.
 */
export interface CallSteps {
  /** The call's request id: the caller's `x-request-id` when it is a plausible id, else a fresh one. */
  requestIdFor: typeof requestIdFor;
  /** The body read and checked: its size, UTF-8, nesting depth and unsafe strings, then the dialect's envelope. */
  readCall: typeof readCall;
  /** The caller's hang-up and the drain deadline, watched while the call waits on its upstream. */
  watchCaller: typeof watchCaller;
  /** The record step: the budget settled, the key's tokens window corrected, the usage event emitted. */
  record: typeof settle;
}

export const FULL_CALL_STEPS: CallSteps = { requestIdFor, readCall, watchCaller, record: settle };
