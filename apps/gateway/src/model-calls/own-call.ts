import { callerDialect, upstreamAdapter, ZERO_USAGE, type ChatResponse } from '@sbc/dialects';
import { ApiError } from '@sbc/errors';
import type { Principal } from '../auth/authenticator';
import { Admission, type AdmitDeps } from './admit';
import type { CallOutcome } from './call-outcome';
import { dispatch, type DispatchDeps, type InFlight } from './dispatch';
import { servedOutcome } from './exchange-call';
import { parseRequestFor } from './plan';
import { checkedCall } from './read-call';
import { resolveCallRoute, type RouteCallDeps } from './route-call';
import { settle, type SettleDeps } from './settle';

type OwnCallDeps = RouteCallDeps & AdmitDeps & DispatchDeps & SettleDeps;

/** A model call the edge makes itself, on behalf of the caller of another call. */
export interface OwnCall {
  principal: Principal;
  /** The request id of the call it is made for: its usage row carries it too, so the two are read together. */
  requestId: string;
  /** A non-streamed Chat Completions body. */
  body: Record<string, unknown>;
  /** The call is let go, and fails, past this. */
  timeoutMs: number;
}

/**
 * A model call the edge makes itself for a caller (a judge guardrail's question), on the caller's own call path
 * without a socket: its model resolved for the caller's key (allowed models, route, custom endpoints), admitted on
 * each target (request bucket, budget reservation), sent to the targets in order with their fallbacks, and settled
 * with a usage row of its own. No hook takes part, so a judge is never judged. Resolves with the neutral reply;
 * throws the refusal, the upstream's failure, or the timeout's.
 */
export async function ownCall(deps: OwnCallDeps, own: OwnCall): Promise<ChatResponse> {
  const atMs = Date.now();
  const startedAt = performance.now();
  const call = checkedCall(callerDialect('chat'), own.body);
  const bytes = Buffer.byteLength(JSON.stringify(own.body));
  const admission = new Admission(deps, own.principal, { addHeaders: () => undefined });
  const state: InFlight = { callerGone: false, attempts: 0, requestId: own.requestId };
  // Past its time the call is abandoned as a caller hanging up would abandon it.
  const timer = setTimeout(() => {
    state.callerGone = true;
    state.current?.abort();
    state.wake?.();
  }, own.timeoutMs);
  let outcome: CallOutcome = { status: 504, attempts: 0, usage: ZERO_USAGE, ttftMs: 0 };
  try {
    const { targets } = await resolveCallRoute(deps, own.principal, call.callerModel, own.requestId);
    parseRequestFor(call, targets);
    const admit = (target: (typeof targets)[number]) => admission.admit(call, target, bytes);
    const dispatched = await dispatch(call, targets, deps, state, {}, admit);
    if (dispatched.kind === 'failed') {
      outcome = servedOutcome(state, dispatched.failure.status, ZERO_USAGE, 0);
      throw new ApiError('upstream_error', dispatched.failure.message);
    }
    outcome = servedOutcome(state, 504, ZERO_USAGE, 0);
    const raw = await dispatched.reply.json();
    const reply = upstreamAdapter(dispatched.target.engine.dialect).parseReply(raw, call.request);
    const ttftMs = Math.max(1, Math.round(performance.now() - startedAt));
    outcome = servedOutcome(state, 200, reply.usage, ttftMs, reply.stopReason);
    return reply;
  } catch (error) {
    if (error instanceof ApiError && outcome.attempts === 0) outcome = { ...outcome, status: error.status };
    throw error;
  } finally {
    clearTimeout(timer);
    // One literal that begins with keys of its own: a spread copy that gains keys gets a hidden class of its own per
    // call on Node 20, and every call's settle would read it.
    await settle(deps, {
      principal: own.principal,
      call,
      ...admission.terms,
      outcome,
      requestId: own.requestId,
      atMs,
      startedAt,
      dialect: 'chat',
      sessionId: undefined,
    });
  }
}
