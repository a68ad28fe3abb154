import { droppedForUpstream, ZERO_USAGE } from '@sbc/dialects';
import type { Target } from '../routing/targets';
import { isAbort } from '../upstream/client';
import { watchedUpstream } from './call-hooks';
import type { CallSteps } from './call-steps';
import type { CallOutcome } from './call-outcome';
import type { CallResponse } from './call-response';
import { dispatch, type DispatchDeps, type Dispatched, type InFlight } from './dispatch';
import { servedOutcome, type Exchange, type ExchangeState } from './exchange-call';
import { forgetBody, isPassthrough } from './plan';
import { usageOfAbandoned } from './stream-frames';
import { DRAINED } from './stream-relay';
import { relayStream } from './streamed-reply';
import { answerWhole } from './whole-reply';

export interface ExchangeDeps extends DispatchDeps {
  /** Aborted when the edge's drain time is up (SHUTDOWN_DRAIN_MS after SIGTERM). */
  drainDeadline?: AbortSignal;
  /** How the caller is watched while the call runs (caller-watch.ts, unless a bench switched it off). */
  steps: Pick<CallSteps, 'watchCaller'>;
}

/**
 * Sends the call to its targets and relays the answer to the caller in its dialect, whole or streamed. Resolves
 * with the outcome for accounting; never throws for upstream trouble (that becomes the answer). Throws the refusal
 * of a call no target could be admitted for.
 */
export async function exchange(x: Exchange, deps: ExchangeDeps): Promise<CallOutcome> {
  // A caller that hung up while the call was authorised and read has already had its `close` event.
  const state: ExchangeState = { callerGone: x.out.res.destroyed, attempts: 0, requestId: x.out.requestId };
  const unwatch = deps.steps.watchCaller(x.out, state, deps.drainDeadline);
  try {
    const dispatchDeps = x.hooks ? { ...deps, upstream: watchedUpstream(deps.upstream, x.hooks) } : deps;
    const dispatched = await dispatch(x.call, x.targets, dispatchDeps, state, x.passHeaders, x.admit);
    x.out.addHeaders(routeHeaders(state));
    if (dispatched.kind === 'failed') return failed(x.out, dispatched, state);
    // The caller's suspended frames keep the call for as long as its reply runs; its parsed body need not.
    forgetBody(x.call, dispatched.sent);
    nameDroppedFields(x, dispatched.target);
    if (x.call.stream) return await relayStream(x, dispatched, state, deps.drainDeadline);
    return await answerWhole(x, dispatched, state);
  } catch (error) {
    return endedEarly(x, state, error);
  } finally {
    unwatch();
  }
}

export function routeHeaders(inFlight: InFlight): Record<string, string> {
  const headers: Record<string, string> = { 'x-sbc-attempts': String(inFlight.attempts) };
  if (inFlight.target) headers['x-sbc-served-by'] = inFlight.target.label;
  return headers;
}

function failed(out: CallResponse, dispatched: Extract<Dispatched, { kind: 'failed' }>, inFlight: InFlight) {
  out.fail(dispatched.failure, {
    ...(dispatched.exhausted ? { 'x-should-retry': 'false' } : {}),
    ...dispatched.headers,
  });
  return servedOutcome(inFlight, dispatched.failure.status, ZERO_USAGE, 0);
}

/** What the caller sent that this engine's dialect cannot carry, named so it is never silently lost. */
export function nameDroppedFields({ call, out }: Exchange, target: Target): void {
  if (isPassthrough(call, target.engine) || !call.request) return;
  const dropped = new Set([
    ...call.request.dropped,
    ...droppedForUpstream(call.adapter.name, call.request, target.engine.dialect),
  ]);
  if (dropped.size > 0) out.addHeaders({ 'x-sbc-dropped-fields': [...dropped].join(',') });
}

/** A call ended by the drain deadline before it answered, or by the caller hanging up; anything else is thrown. */
function endedEarly({ call, out }: Exchange, state: ExchangeState, error: unknown): CallOutcome {
  if (state.drained && !state.callerGone && !out.started) {
    out.addHeaders(routeHeaders(state));
    out.fail(DRAINED);
    return servedOutcome(state, DRAINED.status, ZERO_USAGE, 0);
  }
  if (!isAbort(error) && !state.callerGone) throw error;
  if (!out.res.destroyed) out.res.destroy();
  const { relay } = state;
  // A hang-up before a reply was chosen bills nothing, whatever was tried.
  if (!relay) return { status: 499, attempts: state.attempts, usage: ZERO_USAGE, ttftMs: 0 };
  return servedOutcome(
    state,
    499,
    usageOfAbandoned(call, relay.usage, relay.delivered),
    relay.ttftMs,
    relay.stopReason,
  );
}
