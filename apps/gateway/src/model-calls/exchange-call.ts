import type { AssistantBlock, StopReason, Usage } from '@sbc/dialects';
import type { Target } from '../routing/targets';
import type { AdmissionTerms } from './admit';
import type { HookPart } from './call-hooks';
import type { CallOutcome } from './call-outcome';
import type { CallResponse } from './call-response';
import type { AdmitTarget, InFlight } from './dispatch';
import type { CallerCall } from './plan';
import type { StreamRelay } from './stream-relay';

/** One call as the exchange step takes it from handle-call. */
export interface Exchange {
  call: CallerCall;
  targets: readonly Target[];
  /** Admits the call on each target as it is tried (credits reserved on a priced one). */
  admit: AdmitTarget;
  out: CallResponse;
  /** `performance.now()` when the call arrived. */
  startedAt: number;
  /** The caller's headers that the engines' dialects forward. */
  passHeaders: Record<string, string>;
  /**
   * Runs with the call's outcome before the last bytes of a reply are written (its usage becomes durable), once:
   * later runs do nothing. `terms`: what the reply's model call was admitted under, when not the call's own
   * admission (the last round of a call whose MCP tools the gateway runs).
   */
  beforeEnd: (outcome: CallOutcome, terms?: AdmissionTerms) => Promise<void>;
  /** The parts of the hooks in play for the call (call-hooks.ts), when any is. */
  hooks?: readonly HookPart[];
}

/** The call's upstream request in flight, and its stream once its reply is one (billed if the caller hangs up). */
export interface ExchangeState extends InFlight {
  relay?: StreamRelay;
}

/**
 * The outcome of a call that reached its targets: which one served (the last one tried when none answered), after
 * how many attempts, and what it answered. Every field is named here, in one order, so that every such outcome has
 * one hidden class. On Node 20 a literal that begins as a spread copy and gains keys (`{ ...served, status }`)
 * gets a hidden class of its own on each call: about a microsecond to make it, a cache miss in every function
 * that reads it afterwards, and garbage that only a full collection clears (docs/benchmarks.md, "Hidden
 * classes made per call").
 */
export function servedOutcome(
  inFlight: InFlight,
  status: number,
  usage: Usage,
  ttftMs: number,
  stopReason?: StopReason,
  completion?: () => AssistantBlock[],
): CallOutcome {
  return {
    status,
    target: inFlight.target,
    attempts: inFlight.attempts,
    usage,
    ttftMs,
    stopReason,
    completion,
    cacheHit: undefined,
    responseId: undefined,
  };
}
