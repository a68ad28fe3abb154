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

/** Which target served (the last one tried when none answered) and after how many attempts. */
export function served(inFlight: InFlight): { target?: Target; attempts: number } {
  return { target: inFlight.target, attempts: inFlight.attempts };
}
