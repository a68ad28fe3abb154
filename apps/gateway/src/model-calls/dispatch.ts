import { parseUpstreamError, UpstreamError, type UpstreamFailure } from '@sbc/dialects';
import { errorSpec } from '@sbc/errors';
import type { Engine } from '../routing/engines';
import { isAbort, type UpstreamCall, type UpstreamClient } from '../upstream/client';
import { engineCall, type CallerCall } from './plan';

// The fallback loop of a model call: which engine answers, tried in order until one does or none can.

/** What choosing an engine needs. */
export interface DispatchDeps {
  upstream: UpstreamClient;
  defaultMaxTokens: number;
}

const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

export type Dispatched =
  // Not the whole plan: `sent` is its body, the very bytes the upstream client holds until the reply ends, so
  // keeping it costs nothing more (whether it passes through follows from the engine).
  | { kind: 'reply'; engine: Engine; sent: Buffer; reply: UpstreamCall }
  | { kind: 'failed'; failure: UpstreamFailure; exhausted: boolean; engine?: Engine; headers?: Record<string, string> };

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
}

/**
 * Tries the engines in order. A later engine is used only when an earlier one failed before anything was
 * written to the caller: no connection, a retryable status, or (streams) a body that broke before its first
 * chunk. Once the first byte of a reply is chosen, there is no going back.
 */
export async function dispatch(
  call: CallerCall,
  engines: Engine[],
  deps: DispatchDeps,
  inFlight: InFlight,
  passHeaders: Record<string, string>,
): Promise<Dispatched> {
  let last: Dispatched = {
    kind: 'failed',
    failure: { status: 502, message: 'No engine is configured for this model.' },
    exhausted: false,
  };
  for (let i = 0; i < engines.length; i++) {
    // A caller gone before (or while an earlier engine failed) is not worth another upstream call.
    if (inFlight.callerGone || inFlight.drained) throw UpstreamError.aborted();
    const engine = engines[i]!;
    const more = i < engines.length - 1;
    const plan = engineCall(call, engine, { defaultMaxTokens: deps.defaultMaxTokens });
    try {
      const reply = deps.upstream.send({ engine, path: plan.path, body: plan.body, passHeaders });
      inFlight.current = reply;
      await reply.head;
      if (reply.status >= 200 && reply.status < 300) {
        if (call.stream) await reply.firstData();
        return { kind: 'reply', engine, sent: plan.body, reply };
      }
      const failure = parseUpstreamError(reply.status, await reply.json());
      // Exhausted = a fallback was tried and failed too; retrying the whole call would not help.
      last = { kind: 'failed', failure, exhausted: i > 0, engine };
      if (!(more && RETRYABLE.has(reply.status))) return last;
    } catch (error) {
      if (isAbort(error) || inFlight.callerGone) throw error;
      const upstreamError = error instanceof UpstreamError ? error : undefined;
      if (upstreamError?.reason === 'overloaded') {
        // The edge's own pool is full: an overload in the caller's dialect (Anthropic has a status of its own).
        const failure = {
          status: call.adapter.overloadStatus,
          message: upstreamError.message,
          code: 'overloaded_error',
        };
        last = {
          kind: 'failed',
          failure,
          exhausted: false,
          engine,
          headers: { 'retry-after': String(upstreamError.retryAfterSeconds) },
        };
        if (!more) return last;
        continue;
      }
      const status = upstreamError?.status ?? 502;
      const message = upstreamError?.message ?? 'The upstream connection failed.';
      last = { kind: 'failed', failure: unreachableUpstream(status, message), exhausted: i > 0, engine };
      if (!more) return last;
    }
  }
  return last;
}
