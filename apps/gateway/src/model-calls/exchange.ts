import {
  chatStreamError,
  createChatPassthrough,
  createChatStreamParser,
  createChatStreamRenderer,
  createMessagesPassthrough,
  createMessagesStreamParser,
  createMessagesStreamRenderer,
  createResponsesStreamRenderer,
  createSseDecoder,
  dialectId,
  droppedForUpstream,
  encodeSse,
  mergeUsage,
  messagesStreamError,
  nowSeconds,
  parseChatResponse,
  parseData,
  parseMessagesResponse,
  parseUpstreamError,
  renderChatResponse,
  renderMessagesResponse,
  renderResponsesResponse,
  restoreToolNames,
  toolNameMap,
  usageFromChat,
  usageFromMessages,
  ZERO_USAGE,
  type SseFrame,
  type StopReason,
  type StreamEvent,
  type UpstreamFailure,
  type Usage,
  UpstreamResponseError,
} from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import { isAbort, UpstreamAbortedError, UpstreamOverloadedError, UpstreamUnavailableError, type UpstreamCall, type UpstreamClient } from '../upstream/client';
import type { CallResponse } from './call-response';
import { countRequestTokens, createTokenCounter } from './count-tokens';
import { engineCall, parseCallerRequest, type CallerCall, type EngineCall } from './plan';

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

const RETRYABLE = new Set([408, 409, 429, 500, 502, 503, 504, 529]);

export interface ExchangeDeps {
  upstream: UpstreamClient;
  defaultMaxTokens: number;
  /** Aborted when the edge's drain time is up (SHUTDOWN_DRAIN_MS after SIGTERM). */
  drainDeadline?: AbortSignal;
}

/** How a call still running at the drain deadline ends: `overloaded_error` to messages callers, retryable for all. */
const DRAINED: UpstreamFailure = { status: 503, code: 'overloaded_error', message: 'The gateway is restarting and ended this call; retry it.' };

type Dispatched =
  | { kind: 'reply'; engine: Engine; plan: EngineCall; reply: UpstreamCall }
  | { kind: 'failed'; failure: UpstreamFailure; exhausted: boolean; engine?: Engine; headers?: Record<string, string> };

/** The upstream request in flight, so a caller hanging up can abort it wherever the call is. */
interface InFlight {
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
async function dispatch(call: CallerCall, engines: Engine[], deps: ExchangeDeps, inFlight: InFlight, passHeaders: Record<string, string>): Promise<Dispatched> {
  let last: Dispatched = { kind: 'failed', failure: { status: 502, message: 'No engine is configured for this model.' }, exhausted: false };
  for (let i = 0; i < engines.length; i++) {
    // A caller gone before (or while an earlier engine failed) is not worth another upstream call.
    if (inFlight.callerGone || inFlight.drained) throw new UpstreamAbortedError();
    const engine = engines[i]!;
    const more = i < engines.length - 1;
    const plan = engineCall(call, engine, { defaultMaxTokens: deps.defaultMaxTokens });
    try {
      const reply = deps.upstream.send({ engine, path: plan.path, body: plan.body, passHeaders });
      inFlight.current = reply;
      await reply.head;
      if (reply.status >= 200 && reply.status < 300) {
        if (call.stream) await reply.firstData();
        return { kind: 'reply', engine, plan, reply };
      }
      const failure = parseUpstreamError(reply.status, await reply.json());
      // Exhausted = a fallback was tried and failed too; retrying the whole call would not help.
      last = { kind: 'failed', failure, exhausted: i > 0, engine };
      if (!(more && RETRYABLE.has(reply.status))) return last;
    } catch (error) {
      if (isAbort(error) || inFlight.callerGone) throw error;
      if (error instanceof UpstreamOverloadedError) {
        // The edge's own pool is full: an overload in the caller's dialect (529 is Anthropic's own status).
        const failure = { status: call.dialect === 'messages' ? 529 : 503, message: error.message, code: 'overloaded_error' };
        last = { kind: 'failed', failure, exhausted: false, engine, headers: { 'retry-after': String(error.retryAfterSeconds) } };
        if (!more) return last;
        continue;
      }
      const status = error instanceof UpstreamUnavailableError ? error.status : 502;
      const message = error instanceof UpstreamUnavailableError ? error.message : 'The upstream connection failed.';
      last = { kind: 'failed', failure: { status, message }, exhausted: i > 0, engine };
      if (!more) return last;
    }
  }
  return last;
}

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

interface FrameSource {
  push(event: { event?: string; data: string }): { frames: SseFrame[]; events: StreamEvent[] };
  /** Frames that end the stream with an error in the caller's dialect. */
  fail(failure: UpstreamFailure): SseFrame[];
  /** Frames that end the stream as stopped at its output limit, in the caller's dialect. */
  cut(usage: Usage): SseFrame[];
}

function frameSource(call: CallerCall, plan: EngineCall, engine: Engine, requestId: string): FrameSource {
  if (plan.passthrough && engine.dialect === 'openai') {
    const passthrough = createChatPassthrough({ model: call.callerModel, includeUsage: call.includeUsage });
    let start: Extract<StreamEvent, { type: 'start' }> | undefined;
    return {
      push(event) {
        const pushed = passthrough.push(event);
        if (!start) start = pushed.events.find((item) => item.type === 'start');
        return pushed;
      },
      fail: (failure) => [inStreamError(call, failure, requestId)],
      cut(usage) {
        const chunk = { id: start?.id || dialectId('chatcmpl-'), object: 'chat.completion.chunk', created: start?.created ?? nowSeconds(), model: call.callerModel };
        const frames: SseFrame[] = [{ data: JSON.stringify({ ...chunk, choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }) }];
        if (call.includeUsage) {
          const tokens = { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
          frames.push({ data: JSON.stringify({ ...chunk, choices: [], usage: tokens }) });
        }
        frames.push({ data: '[DONE]' });
        return frames;
      },
    };
  }
  if (plan.passthrough) {
    const passthrough = createMessagesPassthrough({ model: call.callerModel });
    // The content block left open when the stream is cut must be closed before the message ends.
    let openBlock: number | undefined;
    return {
      push(event) {
        if (event.event === 'content_block_start') openBlock = (parseData(event.data) as { index?: number } | undefined)?.index;
        else if (event.event === 'content_block_stop') openBlock = undefined;
        return passthrough.push(event);
      },
      fail: (failure) => [inStreamError(call, failure, requestId)],
      cut(usage) {
        const frames: SseFrame[] = [];
        if (typeof openBlock === 'number') frames.push({ event: 'content_block_stop', data: JSON.stringify({ type: 'content_block_stop', index: openBlock }) });
        const delta = { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: usage.outputTokens } };
        frames.push({ event: 'message_delta', data: JSON.stringify(delta) }, { event: 'message_stop', data: JSON.stringify({ type: 'message_stop' }) });
        return frames;
      },
    };
  }
  const parser = engine.dialect === 'openai' ? createChatStreamParser() : createMessagesStreamParser();
  // Tool names cut to OpenAI's 64 characters go back to the caller as it declared them.
  const shortNames = engine.dialect === 'openai' ? toolNameMap(call.request?.tools) : new Map<string, string>();
  const renderer =
    call.dialect === 'chat'
      ? createChatStreamRenderer({ model: call.callerModel, includeUsage: call.includeUsage })
      : call.dialect === 'responses'
        ? createResponsesStreamRenderer({ model: call.callerModel, request: call.request })
        : createMessagesStreamRenderer({ model: call.callerModel });
  return {
    push(event) {
      const events = parser.push(event);
      if (shortNames.size > 0) {
        for (const item of events) if (item.type === 'tool_call') item.name = shortNames.get(item.name) ?? item.name;
      }
      const frames: SseFrame[] = [];
      for (const item of events) for (const frame of renderer.render(item)) frames.push(frame);
      return { frames, events };
    },
    // Translated streams end through their renderer, which closes whatever block or item is open.
    fail: (failure) => renderer.render({ type: 'error', error: failure }),
    cut: (usage) => [...renderer.render({ type: 'usage', usage }), ...renderer.render({ type: 'stop', reason: 'max_tokens' }), ...renderer.render({ type: 'end' })],
  };
}

/**
 * Local counts run this far past an upstream's own before a stream is taken for one that ignores its output
 * limit: vendors' tokenizers differ from o200k (the bundled simulator counts words), and a well-behaved
 * upstream must always reach its own stop. The charge never passes the reservation either way (settle).
 */
const RUNAWAY_FACTOR = 2;

/**
 * Watches a priced stream's output against the limit it was admitted under (and sent upstream), so an
 * upstream that ignores that limit is stopped instead of streaming on at the service's cost. A token is at
 * least one UTF-8 byte and a UTF-16 unit at most three, so nothing is counted until the text could hold that
 * many tokens; from then on each piece is counted as it comes.
 */
function createOutputGuard(limit: number | undefined, delivered: string[]) {
  const stopAt = limit === undefined ? Infinity : RUNAWAY_FACTOR * Math.max(limit, 1);
  let units = 0;
  let tokens = -1; // not counting yet
  const count = createTokenCounter();
  return {
    /** Takes the piece just delivered; true once the output has run past the limit. */
    reached(piece: string): boolean {
      if (stopAt === Infinity) return false;
      if (tokens < 0) {
        units += piece.length;
        if (units * 3 < stopAt) return false;
        tokens = count(delivered.join(''));
      } else {
        tokens += count(piece);
      }
      return tokens >= stopAt;
    },
  };
}

/** Usage of a stream the edge stopped at its output limit: what was delivered, counted, and the prompt. */
function usageOfCut(call: CallerCall, reported: Usage, delivered: string[]): Usage {
  const counted = usageOfAbandoned(call, { ...reported, outputTokens: 0 }, delivered);
  return { ...counted, outputTokens: Math.max(reported.outputTokens, counted.outputTokens) };
}

/** The dialect's in-stream error, for a passed-through (chat or messages) stream that broke after it began. */
function inStreamError(call: CallerCall, failure: UpstreamFailure, requestId: string): SseFrame {
  return call.dialect === 'chat' ? { data: chatStreamError(failure, requestId) } : { event: 'error', data: messagesStreamError(failure, requestId) };
}

const CONTENT_EVENTS = new Set(['text', 'reasoning', 'refusal', 'tool_call', 'tool_arguments']);

/**
 * Usage of a call the caller abandoned. Upstreams report usage at the end of a stream, which an abandoned
 * call never reaches; what the caller already received is counted with the tokenizer, and the prompt from
 * the request, so hanging up just before the end does not make a call free.
 */
function usageOfAbandoned(call: CallerCall, reported: Usage, delivered: string[]): Usage {
  const usage = { ...reported };
  // One budget of exact counting for the whole call, output and prompt together.
  const count = createTokenCounter();
  // Anthropic's message_start already reports an output count (1): what was delivered counts when larger.
  if (delivered.length > 0) usage.outputTokens = Math.max(usage.outputTokens, count(delivered.join('')));
  if (usage.inputTokens === 0 && (usage.outputTokens > 0 || delivered.length > 0)) {
    try {
      usage.inputTokens = countRequestTokens(call.request ?? parseCallerRequest(call.dialect, call.body), count);
    } catch {
      usage.inputTokens = 0;
    }
  }
  return usage;
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
  deps.drainDeadline?.addEventListener('abort', onDeadline, { once: true });
  let usage = ZERO_USAGE;
  let ttftMs = 0;
  let stopReason: StopReason | undefined;
  let engine: Engine | undefined;
  let streamed: string[] = [];
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
    const delivered: string[] = [];
    streamed = delivered;
    let pending = '';
    let ended = false;
    let capped = false;
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
    const text = new TextDecoder();
    out.openStream();
    // Chunks are pushed from the upstream socket straight through the decoder to the caller, each written as
    // it comes; the promise settles when the upstream body ends, breaks off, or the caller hangs up.
    await new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        deps.drainDeadline?.removeEventListener('abort', endForDrain);
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
            decoder.feed(text.decode(chunk, { stream: true }));
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
          if (!flushed) {
            reply.pause();
            out.res.once('drain', () => reply.resume());
          }
        },
        end() {
          try {
            decoder.feed(text.decode());
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
      if (deps.drainDeadline?.aborted) endForDrain();
      else deps.drainDeadline?.addEventListener('abort', endForDrain, { once: true });
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
    deps.drainDeadline?.removeEventListener('abort', onDeadline);
  }
}
