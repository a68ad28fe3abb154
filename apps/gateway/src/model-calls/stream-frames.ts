import {
  chatStreamError,
  createChatPassthrough,
  createChatStreamParser,
  createChatStreamRenderer,
  createMessagesPassthrough,
  createMessagesStreamParser,
  createMessagesStreamRenderer,
  createResponsesStreamRenderer,
  dialectId,
  messagesStreamError,
  nowSeconds,
  parseData,
  toolNameMap,
  type SseFrame,
  type StreamEvent,
  type UpstreamFailure,
  type Usage,
} from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import { countRequestTokens, createTokenCounter } from './count-tokens';
import { parseCallerRequest, type CallerCall, type EngineCall } from './plan';

// The stream relay's pieces: upstream events into the caller's frames (passed through or translated), the
// frames that end a stream early, the guard on a priced stream's output, and the usage of a stream that did
// not reach its upstream's own end.

export interface FrameSource {
  push(event: { event?: string; data: string }): { frames: SseFrame[]; events: StreamEvent[] };
  /** Frames that end the stream with an error in the caller's dialect. */
  fail(failure: UpstreamFailure): SseFrame[];
  /** Frames that end the stream as stopped at its output limit, in the caller's dialect. */
  cut(usage: Usage): SseFrame[];
}

export function frameSource(call: CallerCall, plan: EngineCall, engine: Engine, requestId: string): FrameSource {
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

/** Pieces joined into one string each time this many arrive. */
const PIECES_PER_RUN = 16;

/**
 * The text a stream delivered, kept so a call that does not reach its upstream's usage is still counted.
 * Pieces (a token or a few each) are joined in runs as they come: an open stream then holds about a byte
 * per character instead of a string object per piece, and the final join copies each character once more.
 */
export class DeliveredText {
  private readonly runs: string[] = [];
  private readonly pieces: string[] = [];

  push(piece: string): void {
    this.pieces.push(piece);
    if (this.pieces.length < PIECES_PER_RUN) return;
    this.runs.push(this.pieces.join(''));
    this.pieces.length = 0;
  }

  get empty(): boolean {
    return this.runs.length === 0 && this.pieces.length === 0;
  }

  text(): string {
    return this.runs.join('') + this.pieces.join('');
  }
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
export function createOutputGuard(limit: number | undefined, delivered: DeliveredText) {
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
        tokens = count(delivered.text());
      } else {
        tokens += count(piece);
      }
      return tokens >= stopAt;
    },
  };
}

/** Usage of a stream the edge stopped at its output limit: what was delivered, counted, and the prompt. */
export function usageOfCut(call: CallerCall, reported: Usage, delivered: DeliveredText): Usage {
  const counted = usageOfAbandoned(call, { ...reported, outputTokens: 0 }, delivered);
  return { ...counted, outputTokens: Math.max(reported.outputTokens, counted.outputTokens) };
}

/** The dialect's in-stream error, for a passed-through (chat or messages) stream that broke after it began. */
function inStreamError(call: CallerCall, failure: UpstreamFailure, requestId: string): SseFrame {
  return call.dialect === 'chat' ? { data: chatStreamError(failure, requestId) } : { event: 'error', data: messagesStreamError(failure, requestId) };
}

export const CONTENT_EVENTS = new Set(['text', 'reasoning', 'refusal', 'tool_call', 'tool_arguments']);

/**
 * Usage of a call the caller abandoned. Upstreams report usage at the end of a stream, which an abandoned
 * call never reaches; what the caller already received is counted with the tokenizer, and the prompt from
 * the request, so hanging up just before the end does not make a call free.
 */
export function usageOfAbandoned(call: CallerCall, reported: Usage, delivered: DeliveredText): Usage {
  const usage = { ...reported };
  // One budget of exact counting for the whole call, output and prompt together.
  const count = createTokenCounter();
  // Anthropic's message_start already reports an output count (1): what was delivered counts when larger.
  if (!delivered.empty) usage.outputTokens = Math.max(usage.outputTokens, count(delivered.text()));
  if (usage.inputTokens === 0 && (usage.outputTokens > 0 || !delivered.empty)) {
    try {
      usage.inputTokens = countRequestTokens(call.request ?? parseCallerRequest(call.dialect, call.body), count);
    } catch {
      usage.inputTokens = 0;
    }
  }
  return usage;
}

