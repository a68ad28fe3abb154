import {
  createSseDecoder,
  droppedForUpstream,
  encodeSse,
  mergeUsage,
  parseChatResponse,
  parseMessagesResponse,
  renderChatResponse,
  renderMessagesResponse,
  renderResponsesResponse,
  restoreToolNames,
  usageFromChat,
  usageFromMessages,
  ZERO_USAGE,
  type StopReason,
  type UpstreamFailure,
  type Usage,
  UpstreamResponseError,
} from '@sbc/dialects';
import { whenAborted } from './abort-watch';
import type { Engine } from '../routing/engines';
import { isAbort, UpstreamUnavailableError } from '../upstream/client';
import type { CallResponse } from './call-response';
import { dispatch, type DispatchDeps, type InFlight } from './dispatch';
import { type CallerCall, type EngineCall } from './plan';
import { CONTENT_EVENTS, createOutputGuard, DeliveredText, frameSource, usageOfAbandoned, usageOfCut } from './stream-frames';

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

/** How a call still running at the drain deadline ends: `overloaded_error` to messages callers, retryable for all. */
const DRAINED: UpstreamFailure = { status: 503, code: 'overloaded_error', message: 'The gateway is restarting and ended this call; retry it.' };

function renderReply(call: CallerCall, plan: EngineCall, engine: Engine, raw: unknown): { body: unknown; usage: Usage; stopReason?: StopReason } {
  if (plan.passthrough && raw && typeof raw === 'object') {
    const body = raw as Record<string, unknown>;
    const usage = mergeUsage(ZERO_USAGE, engine.dialect === 'openai' ? usageFromChat(body.usage) : usageFromMessages(body.usage));
    body.model = call.callerModel;
    return { body, usage };
  }
  // Tool names cut to OpenAI's 64 characters go back to the caller as it declared them.
  const reply = engine.dialect === 'openai' ? restoreToolNames(parseChatResponse(raw), call.request?.tools) : parseMessagesResponse(raw);
  reply.model = call.callerModel;
  const body = call.dialect === 'chat' ? renderChatResponse(reply) : call.dialect === 'responses' ? renderResponsesResponse(reply, call.request) : renderMessagesResponse(reply);
  return { body, usage: reply.usage, stopReason: reply.stopReason };
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
  const stopWatchingDeadline = deps.drainDeadline?.aborted ? () => undefined : whenAborted(deps.drainDeadline, onDeadline);
  let usage = ZERO_USAGE;
  let ttftMs = 0;
  let stopReason: StopReason | undefined;
  let engine: Engine | undefined;
  let streamed = new DeliveredText();
  try {
    const dispatched = await dispatch(call, engines, deps, inFlight, passHeaders);
    if (dispatched.kind === 'failed') {
      out.fail(dispatched.failure, { ...(dispatched.exhausted ? { 'x-should-retry': 'false' } : {}), ...dispatched.headers });
      return { status: dispatched.failure.status, engine: dispatched.engine, usage, ttftMs };
    }
    engine = dispatched.engine;
    const reply = dispatched.reply;
    if (!dispatched.plan.passthrough && call.request) {
      // What the caller sent that this engine's dialect cannot carry, named so it is never silently lost.
      const dropped = new Set([...call.request.dropped, ...droppedForUpstream(call.dialect, call.request, engine.dialect)]);
      if (dropped.size > 0) out.addHeaders({ 'x-sbc-dropped-fields': [...dropped].join(',') });
    }
    if (!call.stream) {
      let rendered: ReturnType<typeof renderReply>;
      try {
        rendered = renderReply(call, dispatched.plan, engine, await reply.json());
      } catch (error) {
        // A body that broke off, or a 200 whose body is not a reply (an error object, no choices, not JSON),
        // is the upstream's failure.
        const failure = error instanceof UpstreamResponseError ? error.failure : error instanceof UpstreamUnavailableError ? { status: error.status, message: error.message } : undefined;
        if (!failure || inFlight.callerGone) throw error;
        out.fail(failure);
        return { status: failure.status, engine, usage, ttftMs };
      }
      const outcome: CallOutcome = { status: 200, engine, usage: rendered.usage, ttftMs: Math.max(1, Math.round(performance.now() - startedAt)), stopReason: rendered.stopReason };
      await beforeEnd(outcome);
      out.json(200, rendered.body);
      return outcome;
    }

    const source = frameSource(call, dispatched.plan, engine, out.requestId);
    // What reached the caller, kept so a caller that hangs up before the usage event is still billed for it.
    const delivered = new DeliveredText();
    streamed = delivered;
    let pending = '';
    let ended = false;
    let capped = false;
    let awaitingDrain = false; // the caller's socket is full and the upstream paused until it drains
    let failed: UpstreamFailure | undefined;
    let drained = false;
    const guard = createOutputGuard(call.outputLimit, delivered);
    const brokeOff = () => {
      if (failed) return;
      failed = { status: 502, message: 'The upstream stream broke off.' };
      for (const frame of source.fail(failed)) pending += encodeSse(frame);
    };
    const decoder = createSseDecoder((event) => {
      if (capped) return;
      const { frames, events } = source.push(event);
      for (const item of events) {
        if (CONTENT_EVENTS.has(item.type)) {
          if (ttftMs === 0) ttftMs = Math.max(1, Math.round(performance.now() - startedAt));
          const piece = item.type === 'tool_arguments' ? item.delta : item.type === 'tool_call' ? item.name : 'text' in item ? item.text : '';
          if (piece) {
            delivered.push(piece);
            if (guard.reached(piece)) capped = true;
          }
        }
        if (item.type === 'start' && item.usage) usage = mergeUsage(usage, item.usage);
        else if (item.type === 'usage') usage = mergeUsage(usage, item.usage);
        else if (item.type === 'stop') stopReason = item.reason;
        else if (item.type === 'end') ended = true;
        else if (item.type === 'error') failed = item.error;
      }
      for (const frame of frames) pending += encodeSse(frame);
      if (capped) {
        usage = usageOfCut(call, usage, delivered);
        for (const frame of source.cut(usage)) pending += encodeSse(frame);
      }
    });
    out.openStream();
    // Chunks are pushed from the upstream socket straight through the decoder to the caller, each written as
    // it comes; the promise settles when the upstream body ends, breaks off, or the caller hangs up.
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      let stopWatchingDrain: () => void = () => undefined;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        stopWatchingDrain();
        if (error) reject(error);
        else resolve();
      };
      // At the drain deadline a stream still running ends with its dialect's error event instead of a reset.
      function endForDrain() {
        if (settled) return;
        drained = true;
        if (!failed) {
          failed = DRAINED;
          for (const frame of source.fail(failed)) pending += encodeSse(frame);
        }
        settle();
        reply.abort();
      }
      reply.attach({
        data(chunk) {
          if (settled) return;
          try {
            decoder.feed(chunk);
          } catch {
            // A chunk the translation cannot take ends the stream as broken off; the upstream is let go.
            brokeOff();
            settle();
            reply.abort();
            return;
          }
          if (capped) {
            // The reply reached its output limit: the stream was ended for the caller; the upstream is let go.
            settle();
            reply.abort();
            return;
          }
          // The stream's terminator (and what came with it) waits for the call's usage to become durable.
          if (pending === '' || ended) return;
          // A caller that reads slower than the upstream writes holds the upstream back instead of filling
          // the edge's memory; a hang-up while paused aborts like any other.
          const flushed = out.res.write(pending);
          pending = '';
          // Chunks the upstream had already delivered still come while paused: one drain listener is enough.
          if (!flushed && !awaitingDrain) {
            awaitingDrain = true;
            reply.pause();
            out.res.once('drain', () => {
              awaitingDrain = false;
              reply.resume();
            });
          }
        },
        end() {
          try {
            decoder.end();
          } catch {
            brokeOff();
          }
          settle();
        },
        error(error) {
          if (isAbort(error) || inFlight.callerGone) return settle(error);
          brokeOff();
          settle();
        },
      });
      // The first chunk was already here (dispatch waited for it), so its frames took the headers along;
      // a first chunk that made no frame still gets the caller its headers at once.
      out.flushHeaders();
      // A body already over (attach delivers what was held) has nothing left to end at the deadline.
      if (!settled) stopWatchingDrain = whenAborted(deps.drainDeadline, endForDrain);
    });
    // An upstream error event was already rendered by the source; a stream that merely stopped needs one.
    if (!ended && !failed && !capped) {
      failed = { status: 502, message: 'The upstream closed the stream before it finished.' };
      for (const frame of source.fail(failed)) pending += encodeSse(frame);
    }
    // A stream the edge ended is billed like one the caller abandoned: for what was delivered.
    if (drained) usage = usageOfAbandoned(call, usage, delivered);
    const outcome: CallOutcome = { status: failed ? failed.status : 200, engine, usage, ttftMs, stopReason: capped ? 'max_tokens' : stopReason };
    await beforeEnd(outcome);
    out.res.end(pending);
    return outcome;
  } catch (error) {
    if (inFlight.drained && !inFlight.callerGone && !out.started) {
      out.fail(DRAINED);
      return { status: DRAINED.status, engine, usage, ttftMs };
    }
    if (isAbort(error) || inFlight.callerGone) {
      if (!out.res.destroyed) out.res.destroy();
      return { status: 499, engine, usage: usageOfAbandoned(call, usage, streamed), ttftMs, stopReason };
    }
    throw error;
  } finally {
    out.res.off('close', onClose);
    stopWatchingDeadline();
  }
}
