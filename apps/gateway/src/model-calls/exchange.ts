import {
  droppedForUpstream,
  upstreamAdapter,
  ZERO_USAGE,
  UpstreamError,
  type StopReason,
  type Usage,
} from '@sbc/dialects';
import { whenAborted } from './abort-watch';
import type { Engine } from '../routing/engines';
import { isAbort } from '../upstream/client';
import type { CallResponse } from './call-response';
import { dispatch, type DispatchDeps, type InFlight } from './dispatch';
import { forgetBody, isPassthrough, passthroughTo, type CallerCall } from './plan';
import { frameSource, usageOfAbandoned } from './stream-frames';
import { DRAINED, StreamRelay } from './stream-relay';

/** What a finished call reports for accounting. */
export interface CallOutcome {
  /** Status as the caller saw it; 499 when the caller hung up. */
  status: number;
  engine?: Engine;
  usage: Usage;
  /** Ms from the start of the call to its first token (0 when none came). */
  ttftMs: number;
  stopReason?: StopReason;
}

export interface ExchangeDeps extends DispatchDeps {
  /** Aborted when the edge's drain time is up (SHUTDOWN_DRAIN_MS after SIGTERM). */
  drainDeadline?: AbortSignal;
}

function renderReply(
  call: CallerCall,
  engine: Engine,
  raw: unknown,
): { body: unknown; usage: Usage; stopReason?: StopReason } {
  const passthrough = passthroughTo(call, engine);
  if (passthrough && raw && typeof raw === 'object') {
    return passthrough.reply(raw as Record<string, unknown>, call.callerModel);
  }
  const reply = upstreamAdapter(engine.dialect).parseReply(raw, call.request);
  reply.model = call.callerModel;
  return { body: call.adapter.renderReply(reply, call.request), usage: reply.usage, stopReason: reply.stopReason };
}

/**
 * Sends the call to its engines and answers the caller in its dialect, streaming or not. Resolves with the
 * outcome for accounting; never throws for upstream trouble (that becomes the answer).
 */
export async function exchange(
  call: CallerCall,
  engines: Engine[],
  out: CallResponse,
  deps: ExchangeDeps,
  startedAt: number,
  passHeaders: Record<string, string>,
  /** Runs with the call's outcome before the last bytes of a reply are written (its usage becomes durable). */
  beforeEnd: (outcome: CallOutcome) => Promise<void>,
): Promise<CallOutcome> {
  // A caller that hung up while the call was authorised and read has already had its `close` event.
  const inFlight: InFlight = { callerGone: out.res.destroyed };
  // A caller that hangs up aborts the upstream request at once.
  const onClose = () => {
    if (out.res.writableFinished) return;
    inFlight.callerGone = true;
    inFlight.current?.abort();
  };
  out.res.on('close', onClose);
  // At the drain deadline a call still waiting on its upstream is answered 503 in its dialect, not reset (a
  // stream already under way ends through its own listener below).
  const onDeadline = () => {
    if (out.started) return;
    inFlight.drained = true;
    inFlight.current?.abort();
  };
  const stopWatchingDeadline = deps.drainDeadline?.aborted
    ? () => undefined
    : whenAborted(deps.drainDeadline, onDeadline);
  let engine: Engine | undefined;
  // The stream being relayed, once the reply is a stream: what it delivered counts if the caller hangs up.
  let streamed: StreamRelay | undefined;
  try {
    const dispatched = await dispatch(call, engines, deps, inFlight, passHeaders);
    if (dispatched.kind === 'failed') {
      out.fail(dispatched.failure, {
        ...(dispatched.exhausted ? { 'x-should-retry': 'false' } : {}),
        ...dispatched.headers,
      });
      return { status: dispatched.failure.status, engine: dispatched.engine, usage: ZERO_USAGE, ttftMs: 0 };
    }
    engine = dispatched.engine;
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
      try {
        rendered = renderReply(call, engine, await reply.json());
      } catch (error) {
        // A body that broke off, or a 200 whose body is not a reply (an error object, no choices, not JSON),
        // is the upstream's failure.
        const failure = error instanceof UpstreamError && !isAbort(error) ? error.failure : undefined;
        if (!failure || inFlight.callerGone) throw error;
        out.fail(failure);
        return { status: failure.status, engine, usage: ZERO_USAGE, ttftMs: 0 };
      }
      const outcome: CallOutcome = {
        status: 200,
        engine,
        usage: rendered.usage,
        ttftMs: Math.max(1, Math.round(performance.now() - startedAt)),
        stopReason: rendered.stopReason,
      };
      await beforeEnd(outcome);
      out.json(200, rendered.body);
      return outcome;
    }

    const relay = new StreamRelay(call, frameSource(call, engine, out.requestId), out, inFlight, startedAt);
    streamed = relay;
    out.openStream();
    await relay.relay(reply, deps.drainDeadline);
    // An upstream error event was already rendered by the source; a stream that merely stopped needs one.
    if (!relay.ended && !relay.failed && !relay.capped)
      relay.fail({ status: 502, message: 'The upstream closed the stream before it finished.' });
    // A stream the edge ended is billed like one the caller abandoned: for what was delivered.
    const usage = relay.drained ? usageOfAbandoned(call, relay.usage, relay.delivered) : relay.usage;
    const outcome: CallOutcome = {
      status: relay.failed ? relay.failed.status : 200,
      engine,
      usage,
      ttftMs: relay.ttftMs,
      stopReason: relay.capped ? 'max_tokens' : relay.stopReason,
    };
    await beforeEnd(outcome);
    out.res.end(relay.pending);
    return outcome;
  } catch (error) {
    if (inFlight.drained && !inFlight.callerGone && !out.started) {
      out.fail(DRAINED);
      return { status: DRAINED.status, engine, usage: ZERO_USAGE, ttftMs: 0 };
    }
    if (isAbort(error) || inFlight.callerGone) {
      if (!out.res.destroyed) out.res.destroy();
      if (!streamed) return { status: 499, engine, usage: ZERO_USAGE, ttftMs: 0 };
      return {
        status: 499,
        engine,
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
