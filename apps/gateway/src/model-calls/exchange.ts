import { once } from 'node:events';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
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
  droppedForUpstream,
  encodeSse,
  mergeUsage,
  messagesStreamError,
  parseChatResponse,
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
import { isAbort, UpstreamUnavailableError, type UpstreamClient, type UpstreamReply } from '../upstream/client';
import type { CallResponse } from './call-response';
import { countRequestTokens } from './count-tokens';
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
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

type Dispatched =
  | { kind: 'reply'; engine: Engine; plan: EngineCall; reply: UpstreamReply; first?: IteratorResult<Buffer>; chunks?: AsyncIterator<Buffer> }
  | { kind: 'failed'; failure: UpstreamFailure; exhausted: boolean; engine?: Engine };

/**
 * Tries the engines in order. A later engine is used only when an earlier one failed before anything was
 * written to the caller: no connection, a retryable status, or (streams) a body that broke before its first
 * chunk. Once the first byte of a reply is chosen, there is no going back.
 */
async function dispatch(call: CallerCall, engines: Engine[], deps: ExchangeDeps, signal: AbortSignal, passHeaders: Record<string, string>): Promise<Dispatched> {
  let last: Dispatched = { kind: 'failed', failure: { status: 502, message: 'No engine is configured for this model.' }, exhausted: false };
  for (let i = 0; i < engines.length; i++) {
    const engine = engines[i]!;
    const more = i < engines.length - 1;
    const plan = engineCall(call, engine, { defaultMaxTokens: deps.defaultMaxTokens });
    try {
      const reply = await deps.upstream.send({ engine, path: plan.path, body: plan.body, signal, passHeaders });
      if (reply.status >= 200 && reply.status < 300) {
        if (!call.stream) return { kind: 'reply', engine, plan, reply };
        const chunks = reply.body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
        const first = await chunks.next();
        return { kind: 'reply', engine, plan, reply, first, chunks };
      }
      const failure = parseUpstreamError(reply.status, jsonOrText(await reply.body.text()));
      // Exhausted = a fallback was tried and failed too; retrying the whole call would not help.
      last = { kind: 'failed', failure, exhausted: i > 0, engine };
      if (!(more && RETRYABLE.has(reply.status))) return last;
    } catch (error) {
      if (isAbort(error) || signal.aborted) throw error;
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
}

function frameSource(call: CallerCall, plan: EngineCall, engine: Engine, requestId: string): FrameSource {
  if (plan.passthrough) {
    const passthrough =
      engine.dialect === 'openai'
        ? createChatPassthrough({ model: call.callerModel, includeUsage: call.includeUsage })
        : createMessagesPassthrough({ model: call.callerModel });
    return { push: (event) => passthrough.push(event), fail: (failure) => [inStreamError(call, failure, requestId)] };
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
  };
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
  if (usage.outputTokens === 0 && delivered.length > 0) usage.outputTokens = countTokens(delivered.join(''));
  if (usage.inputTokens === 0 && (usage.outputTokens > 0 || delivered.length > 0)) {
    try {
      usage.inputTokens = countRequestTokens(call.request ?? parseCallerRequest(call.dialect, call.body));
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
export async function exchange(call: CallerCall, engines: Engine[], out: CallResponse, deps: ExchangeDeps, startedAt: number, passHeaders: Record<string, string>): Promise<CallOutcome> {
  const controller = new AbortController();
  // A caller that hangs up aborts the upstream request at once.
  const onClose = () => {
    if (!out.res.writableFinished) controller.abort();
  };
  out.res.on('close', onClose);
  let usage = ZERO_USAGE;
  let ttftMs = 0;
  let stopReason: StopReason | undefined;
  let engine: Engine | undefined;
  let streamed: string[] = [];
  try {
    const dispatched = await dispatch(call, engines, deps, controller.signal, passHeaders);
    if (dispatched.kind === 'failed') {
      out.fail(dispatched.failure, dispatched.exhausted ? { 'x-should-retry': 'false' } : {});
      return { status: dispatched.failure.status, engine: dispatched.engine, usage, ttftMs };
    }
    engine = dispatched.engine;
    if (!dispatched.plan.passthrough && call.request) {
      // What the caller sent that this engine's dialect cannot carry, named so it is never silently lost.
      const dropped = new Set([...call.request.dropped, ...droppedForUpstream(call.dialect, call.request, engine.dialect)]);
      if (dropped.size > 0) out.addHeaders({ 'x-sbc-dropped-fields': [...dropped].join(',') });
    }
    if (!call.stream) {
      const raw = jsonOrText(await dispatched.reply.body.text());
      let rendered: ReturnType<typeof renderReply>;
      try {
        rendered = renderReply(call, dispatched.plan, engine, raw);
      } catch (error) {
        // A 200 whose body is not a reply (an error object, no choices, not JSON) is the upstream's failure.
        if (!(error instanceof UpstreamResponseError)) throw error;
        out.fail(error.failure);
        return { status: error.failure.status, engine, usage, ttftMs };
      }
      out.json(200, rendered.body);
      return { status: 200, engine, usage: rendered.usage, ttftMs: Math.max(1, Math.round(performance.now() - startedAt)), stopReason: rendered.stopReason };
    }

    const source = frameSource(call, dispatched.plan, engine, out.requestId);
    // What reached the caller, kept so a caller that hangs up before the usage event is still billed for it.
    const delivered: string[] = [];
    streamed = delivered;
    let pending = '';
    let ended = false;
    let failed: UpstreamFailure | undefined;
    const decoder = createSseDecoder((event) => {
      const { frames, events } = source.push(event);
      for (const item of events) {
        if (CONTENT_EVENTS.has(item.type)) {
          if (ttftMs === 0) ttftMs = Math.max(1, Math.round(performance.now() - startedAt));
          const piece = item.type === 'tool_arguments' ? item.delta : item.type === 'tool_call' ? item.name : 'text' in item ? item.text : '';
          if (piece) delivered.push(piece);
        }
        if (item.type === 'start' && item.usage) usage = mergeUsage(usage, item.usage);
        else if (item.type === 'usage') usage = mergeUsage(usage, item.usage);
        else if (item.type === 'stop') stopReason = item.reason;
        else if (item.type === 'end') ended = true;
        else if (item.type === 'error') failed = item.error;
      }
      for (const frame of frames) pending += encodeSse(frame);
    });
    const text = new TextDecoder();
    out.openStream();
    let next = dispatched.first!;
    try {
      while (!next.done) {
        decoder.feed(text.decode(next.value, { stream: true }));
        if (pending !== '') {
          // A caller that reads slower than the upstream writes holds the upstream back instead of
          // filling the edge's memory; a hang-up while waiting aborts like any other.
          const flushed = out.res.write(pending);
          pending = '';
          if (!flushed) await once(out.res, 'drain', { signal: controller.signal });
        }
        next = await dispatched.chunks!.next();
      }
      decoder.feed(text.decode());
      decoder.end();
    } catch (error) {
      if (isAbort(error) || controller.signal.aborted) throw error;
      if (!failed) {
        failed = { status: 502, message: 'The upstream stream broke off.' };
        for (const frame of source.fail(failed)) pending += encodeSse(frame);
      }
    }
    // An upstream error event was already rendered by the source; a stream that merely stopped needs one.
    if (!ended && !failed) {
      failed = { status: 502, message: 'The upstream closed the stream before it finished.' };
      for (const frame of source.fail(failed)) pending += encodeSse(frame);
    }
    out.res.end(pending);
    return { status: failed ? failed.status : 200, engine, usage, ttftMs, stopReason };
  } catch (error) {
    if (isAbort(error) || controller.signal.aborted) {
      if (!out.res.destroyed) out.res.destroy();
      return { status: 499, engine, usage: usageOfAbandoned(call, usage, streamed), ttftMs, stopReason };
    }
    throw error;
  } finally {
    out.res.off('close', onClose);
  }
}
