import { parseUpstreamError, UpstreamError, type UpstreamFailure } from '@sbc/dialects';
import { ApiError, errorSpec } from '@sbc/errors';
import type { AttemptOutcome } from '@sbc/route-health';
import { isRetryableStatus, loneRetryDelayMs, retryAfterMsOf } from '../routing/attempt-rules';
import { TargetPicker, type RoutePolicy } from '../routing/target-picker';
import type { Target } from '../routing/targets';
import type { BetaRefusals } from '../upstream/beta-refusals';
import { sendWithBetas } from '../upstream/beta-send';
import { isAbort, type UpstreamCall, type UpstreamClient } from '../upstream/client';
import { engineCall, type CallerCall } from './plan';

// The fallback loop of a model call: which target answers, tried in order until one does, none can, or the
// call's attempts or time before its first byte run out.

/** What choosing a target needs. */
export interface DispatchDeps {
  upstream: UpstreamClient;
  defaultMaxTokens: number;
  route: RoutePolicy;
  /** What this edge's Anthropic-dialect targets refused in `anthropic-beta`. */
  betas: BetaRefusals;
}

export type Dispatched =
  // Not the whole plan: `sent` is its body, the very bytes the upstream client holds until the reply ends, so
  // keeping it costs nothing more (whether it passes through follows from the engine).
  | { kind: 'reply'; target: Target; sent: Buffer; reply: UpstreamCall }
  | {
      kind: 'failed';
      failure: UpstreamFailure;
      exhausted: boolean;
      headers?: Record<string, string>;
    };

/**
 * The edge's own verdict on an upstream that gave no answer, under the error registry's codes: 504 is
 * `upstream_timeout`, 502 `upstream_error` (OpenAI callers read them as `code`; Anthropic's type follows the status).
 */
export function unreachableUpstream(status: number, message: string): UpstreamFailure {
  const code = status === 504 ? 'upstream_timeout' : status === 502 ? 'upstream_error' : undefined;
  return code ? { status: errorSpec(code).status, message, code } : { status, message };
}

/** The upstream request in flight, so a caller hanging up can abort it wherever the call is. */
export interface InFlight {
  current?: UpstreamCall;
  callerGone: boolean;
  /** The drain deadline passed before anything was written to the caller. */
  drained?: boolean;
  /** Set while the call waits to retry: ends the wait at once when the caller hangs up or the edge drains. */
  wake?: () => void;
  /** Upstream attempts made so far, and the target of the last one: the reply's `x-sbc-*` headers and usage. */
  attempts: number;
  target?: Target;
  /** The call's request id, for what the attempts log. */
  requestId?: string;
}

/** Admits the call on a target before it is tried (credits reserved on a priced one); throws the refusal. */
export type AdmitTarget = (target: Target) => Promise<void>;

/** One attempt's end: the reply to relay, or why the target did not answer and whether another may. */
type Attempt =
  | { ok: true; sent: Buffer; reply: UpstreamCall }
  | {
      ok: false;
      failure: UpstreamFailure;
      retryable: boolean;
      counted?: AttemptOutcome;
      headers?: Record<string, string>;
    };

const NO_TARGET: UpstreamFailure = { status: 502, message: 'No engine is configured for this model.' };

/**
 * Tries the call's targets in order (cooling ones skipped, deployments at their limit skipped, one half-open
 * call when every one left is cooling). A later target is used only when an earlier one failed before anything
 * was written to the caller: no connection, a retryable status, or (streams) a body that broke before its first
 * chunk. The lone target left is retried once after a short wait. Once the first byte of a reply is chosen,
 * there is no going back.
 */
export async function dispatch(
  call: CallerCall,
  targets: readonly Target[],
  deps: DispatchDeps,
  inFlight: InFlight,
  passHeaders: Record<string, string>,
  admit: AdmitTarget,
): Promise<Dispatched> {
  const policy = deps.route;
  const deadline = performance.now() + policy.firstByteDeadlineMs;
  const picker = new TargetPicker(targets, policy);
  let last: Extract<Dispatched, { kind: 'failed' }> | undefined;
  // A target the budget could not pay for: its refusal is the answer only when nothing else was tried.
  let refusal: ApiError | undefined;
  let retriedLone = false;
  let pick = picker.next();
  if (!pick) {
    // Every target cooling, and this edge's half-open call already made: a cooldown about to end is waited out
    // as a lone retry would be; a longer one is the answer.
    const soonest = picker.soonestCooling();
    if (!soonest) return { kind: 'failed', failure: NO_TARGET, exhausted: false };
    const delay = loneRetryDelayMs(Math.max(0, soonest.untilMs - Date.now()));
    if (delay === undefined || performance.now() + delay >= deadline) throw allCooling(soonest.untilMs);
    retriedLone = true;
    await waitUnlessGone(delay, inFlight);
    if (inFlight.callerGone || inFlight.drained) throw UpstreamError.aborted();
    pick = picker.retry(soonest.target);
    if (!pick) throw allCooling(soonest.untilMs);
  }
  while (pick) {
    const { target, claim } = pick;
    // A caller gone before (or while an earlier target failed) is not worth another upstream call.
    if (inFlight.callerGone || inFlight.drained) {
      claim?.release();
      throw UpstreamError.aborted();
    }
    try {
      await admit(target);
    } catch (error) {
      claim?.release();
      if (!skipsTarget(error)) throw error;
      refusal ??= error;
      pick = picker.next();
      continue;
    }
    inFlight.attempts++;
    inFlight.target = target;
    let attempt: Attempt;
    try {
      attempt = await attemptTarget(call, target, deps, inFlight, passHeaders);
    } finally {
      claim?.release();
    }
    if (attempt.ok) {
      policy.health.record(target.healthKey, { ok: true });
      policy.onAttempt(target, 'ok');
      // Replies and usage name the model that answered: the named one or one of its fallbacks.
      call.callerModel = target.callerModel;
      return { kind: 'reply', target, sent: attempt.sent, reply: attempt.reply };
    }
    if (attempt.counted) policy.health.record(target.healthKey, attempt.counted);
    policy.onAttempt(
      target,
      attempt.counted ? 'failed' : attempt.retryable ? 'overloaded' : 'refused',
      attempt.failure.status,
    );
    // Exhausted = a fallback was tried and failed too; retrying the whole call would not help.
    last = { kind: 'failed', failure: attempt.failure, exhausted: inFlight.attempts > 1 };
    if (attempt.headers) last.headers = attempt.headers;
    if (!attempt.retryable || inFlight.attempts >= policy.maxAttempts || performance.now() >= deadline) return last;
    pick = picker.next();
    if (!pick && !retriedLone && attempt.counted) {
      retriedLone = true;
      const delay = loneRetryDelayMs(attempt.counted.ok ? undefined : attempt.counted.retryAfterMs);
      if (delay !== undefined && performance.now() + delay < deadline) {
        await waitUnlessGone(delay, inFlight);
        pick = picker.retry(target);
      }
    }
  }
  if (last) return last;
  if (refusal) throw refusal;
  return { kind: 'failed', failure: NO_TARGET, exhausted: false };
}

/**
 * Every target of the call cooling for longer than a call waits: a refusal before any attempt (so, like every
 * refusal, it takes from the caller's request bucket and says what is left), 429 with when to come back, the
 * status that tells every client to back off for `retry-after`.
 */
function allCooling(untilMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil((untilMs - Date.now()) / 1000));
  const message = `Every upstream for this model is cooling down after failures; retry after ${seconds} s.`;
  return new ApiError('upstream_cooling', message, { headers: { 'retry-after': String(seconds) } });
}

/** A budget that cannot pay for one target (or its output limit past the model's) skips that target only. */
function skipsTarget(error: unknown): error is ApiError {
  return error instanceof ApiError && (error.code === 'budget_exhausted' || error.code === 'invalid_request');
}

async function attemptTarget(
  call: CallerCall,
  target: Target,
  deps: DispatchDeps,
  inFlight: InFlight,
  passHeaders: Record<string, string>,
): Promise<Attempt> {
  const engine = target.engine;
  const plan = engineCall(call, engine, { defaultMaxTokens: deps.defaultMaxTokens });
  try {
    // A call without `anthropic-beta` (or to an OpenAI-dialect target) is sent as it is; one with it, shaped.
    const header = passHeaders['anthropic-beta'];
    const betas = header === undefined ? undefined : deps.betas.sending(target, header, passHeaders);
    let reply: UpstreamCall;
    let errorBody: unknown;
    if (betas) {
      const send = (headers: Record<string, string>) =>
        deps.upstream.send({ engine, path: plan.path, body: plan.body, passHeaders: headers });
      ({ reply, errorBody } = await sendWithBetas(send, betas, deps.betas, target, betaHooks(deps, target, inFlight)));
    } else {
      reply = deps.upstream.send({ engine, path: plan.path, body: plan.body, passHeaders });
      inFlight.current = reply;
      await reply.head;
    }
    if (reply.status >= 200 && reply.status < 300) {
      if (call.stream) await reply.firstData();
      return { ok: true, sent: plan.body, reply };
    }
    const failure = parseUpstreamError(reply.status, errorBody ?? (await reply.json()));
    if (!isRetryableStatus(reply.status)) return { ok: false, failure, retryable: false };
    const retryAfterMs = retryAfterMsOf(reply.headers['retry-after']);
    return { ok: false, failure, retryable: true, counted: { ok: false, status: reply.status, retryAfterMs } };
  } catch (error) {
    // A hang-up (or the drain) is nobody's failure: not counted against the target.
    if (isAbort(error) || inFlight.callerGone || inFlight.drained) throw error;
    const upstreamError = error instanceof UpstreamError ? error : undefined;
    if (upstreamError?.reason === 'overloaded') {
      // The edge's own pool is full: an overload in the caller's dialect (Anthropic has a status of its own). The
      // target did nothing wrong, so it is not counted.
      const failure = { status: call.adapter.overloadStatus, message: upstreamError.message, code: 'overloaded_error' };
      const headers = { 'retry-after': String(upstreamError.retryAfterSeconds) };
      return { ok: false, failure, retryable: true, headers };
    }
    const status = upstreamError?.status ?? 502;
    const message = upstreamError?.message ?? 'The upstream connection failed.';
    // No connection, no head in time, or a stream that broke before its first chunk.
    return { ok: false, failure: unreachableUpstream(status, message), retryable: true, counted: { ok: false } };
  }
}

/**
 * A request re-sent without the beta values its target refused is another attempt of the call: made only while
 * the call has one left, counted in `x-sbc-attempts`, and never against the target's health (a 400).
 */
function betaHooks(deps: DispatchDeps, target: Target, inFlight: InFlight) {
  return {
    current: (reply: UpstreamCall) => (inFlight.current = reply),
    mayResend: () => inFlight.attempts < deps.route.maxAttempts && !inFlight.callerGone && !inFlight.drained,
    resending: () => {
      deps.route.onAttempt(target, 'refused', 400);
      inFlight.attempts++;
    },
    requestId: inFlight.requestId,
  };
}

/** Waits `ms`, or less when the caller hangs up or the edge drains meanwhile (`InFlight.wake`). */
function waitUnlessGone(ms: number, inFlight: InFlight): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      inFlight.wake = undefined;
      resolve();
    }
    inFlight.wake = done;
  });
}
