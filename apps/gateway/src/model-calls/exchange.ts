import {
  droppedForUpstream,
  upstreamAdapter,
  ZERO_USAGE,
  UpstreamError,
  type AssistantBlock,
  type ChatResponse,
  type StopReason,
  type Usage,
} from '@sbc/dialects';
import type { CacheCall } from '../response-cache/response-cache';
import { whenAborted } from './abort-watch';
import type { Engine } from '../routing/engines';
import type { Target } from '../routing/targets';
import { isAbort } from '../upstream/client';
import type { CallResponse } from './call-response';
import { dispatch, type AdmitTarget, type DispatchDeps, type InFlight } from './dispatch';
import { forgetBody, isPassthrough, passthroughTo, type CallerCall } from './plan';
import { frameSource, usageOfAbandoned } from './stream-frames';
import { DRAINED, StreamRelay } from './stream-relay';

/** What a finished call reports for accounting. */
export interface CallOutcome {
  /** Status as the caller saw it; 499 when the caller hung up. */
  status: number;
  /** The target that served the call, or the last one tried when none answered. */
  target?: Target;
  /** Upstream attempts the call made. */
  attempts: number;
  usage: Usage;
  /** Ms from the start of the call to its first token (0 when none came). */
  ttftMs: number;
  stopReason?: StopReason;
  /** What the reply said, read only when telemetry captures content (the text delivered, for a stream). */
  completion?: () => AssistantBlock[];
  /** The reply was replayed from the response cache: no target was tried, nothing is charged. */
  cacheHit?: boolean;
}

export interface ExchangeDeps extends DispatchDeps {
  /** Aborted when the edge's drain time is up (SHUTDOWN_DRAIN_MS after SIGTERM). */
  drainDeadline?: AbortSignal;
}

function renderReply(
  call: CallerCall,
  engine: Engine,
  raw: unknown,
): { body: unknown; usage: Usage; stopReason?: StopReason; completion: () => AssistantBlock[] } {
  const passthrough = passthroughTo(call, engine);
  if (passthrough && raw && typeof raw === 'object') {
    // The engine's reply is in the caller's dialect: parsed into blocks only if telemetry asks for them.
    const completion = () => upstreamAdapter(engine.dialect).parseReply(raw, call.request).content;
    return { ...passthrough.reply(raw as Record<string, unknown>, call.callerModel), completion };
  }
  const reply = upstreamAdapter(engine.dialect).parseReply(raw, call.request);
  reply.model = call.callerModel;
  const body = call.adapter.renderReply(reply, call.request);
  return { body, usage: reply.usage, stopReason: reply.stopReason, completion: () => reply.content };
}

function served(inFlight: InFlight): { target?: Target; attempts: number } {
  return { target: inFlight.target, attempts: inFlight.attempts };
}

/** Which target served the reply (the last one tried when none answered) and after how many attempts. */
function routeHeaders(inFlight: InFlight): Record<string, string> {
  const headers: Record<string, string> = { 'x-sbc-attempts': String(inFlight.attempts) };
  if (inFlight.target) headers['x-sbc-served-by'] = inFlight.target.label;
  return headers;
}

/**
 * Sends the call to its targets and answers the caller in its dialect, streaming or not. Resolves with the
 * outcome for accounting; never throws for upstream trouble (that becomes the answer). Throws the refusal of a
 * call no target could be admitted for.
 */
export async function exchange(
  call: CallerCall,
  targets: readonly Target[],
  admit: AdmitTarget,
  out: CallResponse,
  deps: ExchangeDeps,
  startedAt: number,
  passHeaders: Record<string, string>,
  /** Runs with the call's outcome before the last bytes of a reply are written (its usage becomes durable). */
  beforeEnd: (outcome: CallOutcome) => Promise<void>,
  /** The response cache's part in a call that opted in: the reply of a complete 200 is kept. */
  cache?: CacheCall,
): Promise<CallOutcome> {
  // A caller that hung up while the call was authorised and read has already had its `close` event.
  const inFlight: InFlight = { callerGone: out.res.destroyed, attempts: 0 };
  // A caller that hangs up aborts the upstream request at once.
  const onClose = () => {
    if (out.res.writableFinished) return;
    inFlight.callerGone = true;
    inFlight.current?.abort();
    inFlight.wake?.();
  };
  out.res.on('close', onClose);
  // At the drain deadline a call still waiting on its upstream is answered 503 in its dialect, not reset (a
  // stream already under way ends through its own listener below).
  const onDeadline = () => {
    if (out.started) return;
    inFlight.drained = true;
    inFlight.current?.abort();
    inFlight.wake?.();
  };
  const stopWatchingDeadline = deps.drainDeadline?.aborted
    ? () => undefined
    : whenAborted(deps.drainDeadline, onDeadline);
  // The stream being relayed, once the reply is a stream: what it delivered counts if the caller hangs up.
  let streamed: StreamRelay | undefined;
  try {
    const dispatched = await dispatch(call, targets, deps, inFlight, passHeaders, admit);
    out.addHeaders(routeHeaders(inFlight));
    if (dispatched.kind === 'failed') {
      out.fail(dispatched.failure, {
        ...(dispatched.exhausted ? { 'x-should-retry': 'false' } : {}),
        ...dispatched.headers,
      });
      return { ...served(inFlight), status: dispatched.failure.status, usage: ZERO_USAGE, ttftMs: 0 };
    }
    const engine = dispatched.target.engine;
    const reply = dispatched.reply;
    const passthrough = isPassthrough(call, engine);
    // The caller's suspended frames keep the call for as long as its reply runs; its parsed body need not.
    forgetBody(call, dispatched.sent);
    if (!passthrough && call.request) {
      // What the caller sent that this engine's dialect cannot carry, named so it is never silently lost.
      const dropped = new Set([
        ...call.request.dropped,
        ...droppedForUpstream(call.adapter.name, call.request, engine.dialect),
      ]);
      if (dropped.size > 0) out.addHeaders({ 'x-sbc-dropped-fields': [...dropped].join(',') });
    }
    if (!call.stream) {
      let rendered: ReturnType<typeof renderReply>;
      let toKeep: ChatResponse | undefined;
      try {
        const raw = await reply.json();
        // Read before the renderer, which may take the upstream's body as the caller's.
        toKeep = cache?.parseReply(raw, engine.dialect, call.request);
        rendered = renderReply(call, engine, raw);
        call.replyTap?.body(rendered.body);
      } catch (error) {
        // A body that broke off, or a 200 whose body is not a reply (an error object, no choices, not JSON),
        // is the upstream's failure.
        const failure = error instanceof UpstreamError && !isAbort(error) ? error.failure : undefined;
        if (!failure || inFlight.callerGone) throw error;
        out.fail(failure);
        return { ...served(inFlight), status: failure.status, usage: ZERO_USAGE, ttftMs: 0 };
      }
      const outcome: CallOutcome = {
        ...served(inFlight),
        status: 200,
        usage: rendered.usage,
        ttftMs: Math.max(1, Math.round(performance.now() - startedAt)),
        stopReason: rendered.stopReason,
        completion: rendered.completion,
      };
      await beforeEnd(outcome);
      out.json(200, rendered.body);
      cache?.keep(toKeep);
      return outcome;
    }

    const relay = new StreamRelay(call, frameSource(call, engine, out.requestId), out, inFlight, startedAt);
    streamed = relay;
    const recorder = cache?.recorder();
    if (recorder) relay.record(recorder);
    out.openStream();
    await relay.relay(reply, deps.drainDeadline);
    // An upstream error event was already rendered by the source; a stream that merely stopped needs one.
    if (!relay.ended && !relay.failed && !relay.capped)
      relay.fail({ status: 502, message: 'The upstream closed the stream before it finished.' });
    // A stream the edge ended is billed like one the caller abandoned: for what was delivered.
    const usage = relay.drained ? usageOfAbandoned(call, relay.usage, relay.delivered) : relay.usage;
    const outcome: CallOutcome = {
      ...served(inFlight),
      status: relay.failed ? relay.failed.status : 200,
      usage,
      ttftMs: relay.ttftMs,
      stopReason: relay.capped ? 'max_tokens' : relay.stopReason,
      completion: () => [{ type: 'text', text: relay.delivered.text() }],
    };
    await beforeEnd(outcome);
    out.res.end(relay.pending);
    if (outcome.status === 200 && !relay.capped && !relay.drained) cache?.keep(recorder?.finished());
    return outcome;
  } catch (error) {
    if (inFlight.drained && !inFlight.callerGone && !out.started) {
      out.addHeaders(routeHeaders(inFlight));
      out.fail(DRAINED);
      return { ...served(inFlight), status: DRAINED.status, usage: ZERO_USAGE, ttftMs: 0 };
    }
    if (isAbort(error) || inFlight.callerGone) {
      if (!out.res.destroyed) out.res.destroy();
      // A hang-up before a reply was chosen bills nothing, whatever was tried.
      if (!streamed) return { status: 499, attempts: inFlight.attempts, usage: ZERO_USAGE, ttftMs: 0 };
      return {
        ...served(inFlight),
        status: 499,
        usage: usageOfAbandoned(call, streamed.usage, streamed.delivered),
        ttftMs: streamed.ttftMs,
        stopReason: streamed.stopReason,
      };
    }
    throw error;
  } finally {
    out.res.off('close', onClose);
    stopWatchingDeadline();
  }
}
