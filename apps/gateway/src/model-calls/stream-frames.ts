import {
  chatStreamError,
  copyBytes,
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
  type EventTemplate,
  type SseFrame,
  type StreamEvent,
  type UpstreamFailure,
  type Usage,
} from '@sbc/dialects';
import type { Engine } from '../routing/engines';
import { countRequestTokens, createTokenCounter } from './count-tokens';
import { promptOf, type CallerCall } from './plan';

// The stream relay's pieces: upstream events into the caller's frames (passed through or translated), the
// frames that end a stream early, the guard on a priced stream's output, and the usage of a stream that did
// not reach its upstream's own end.

export interface FrameSource {
  push(event: { event?: string; data: string }): { frames: SseFrame[]; events: StreamEvent[] };
  /** The text deltas `push` now passes through by template, as bytes (StreamPassthrough.textTemplate); never for translated streams. */
  textTemplate(): EventTemplate | undefined;
  /** Frames that end the stream with an error in the caller's dialect. */
  fail(failure: UpstreamFailure): SseFrame[];
  /** Frames that end the stream as stopped at its output limit, in the caller's dialect. */
  cut(usage: Usage): SseFrame[];
}

export function frameSource(call: CallerCall, passthrough: boolean, engine: Engine, requestId: string): FrameSource {
  if (passthrough && engine.dialect === 'openai') {
    const passthrough = createChatPassthrough({ model: call.callerModel, includeUsage: call.includeUsage });
    let start: Extract<StreamEvent, { type: 'start' }> | undefined;
    return {
      push(event) {
        const pushed = passthrough.push(event);
        if (!start) start = pushed.events.find((item) => item.type === 'start');
        return pushed;
      },
      textTemplate: () => passthrough.textTemplate(),
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
  if (passthrough) {
    const passthrough = createMessagesPassthrough({ model: call.callerModel });
    // The content block left open when the stream is cut must be closed before the message ends.
    let openBlock: number | undefined;
    return {
      push(event) {
        if (event.event === 'content_block_start') openBlock = (parseData(event.data) as { index?: number } | undefined)?.index;
        else if (event.event === 'content_block_stop') openBlock = undefined;
        return passthrough.push(event);
      },
      textTemplate: () => passthrough.textTemplate(),
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
    textTemplate: () => undefined,
    // Translated streams end through their renderer, which closes whatever block or item is open.
    fail: (failure) => renderer.render({ type: 'error', error: failure }),
    cut: (usage) => [...renderer.render({ type: 'usage', usage }), ...renderer.render({ type: 'stop', reason: 'max_tokens' }), ...renderer.render({ type: 'end' })],
  };
}

/** Bytes a stream's delivered text starts with room for; it doubles as needed. */
const DELIVERED_START_BYTES = 512;

/**
 * The text a stream delivered, kept so a call that does not reach its upstream's usage is still counted. It
 * is held as one JSON string body in UTF-8 (the text escaped as JSON.stringify escapes it, without the
 * quotes), about a byte per character: text deltas the byte relay reads (event-template.ts) are appended as
 * they came off the wire, with no string made per token, and text pushed as a string is escaped first.
 */
export class DeliveredText {
  private bytes?: Buffer;
  private length = 0;

  push(piece: string): void {
    const escaped = JSON.stringify(piece);
    const size = Buffer.byteLength(escaped) - 2;
    this.room(size);
    this.bytes!.write(escaped.slice(1, -1), this.length);
    this.length += size;
  }

  /** Appends `source[start, end)`, a string body as JSON.stringify writes it, in well-formed UTF-8. */
  pushEscaped(source: Buffer, start: number, end: number): void {
    this.room(end - start);
    this.length = copyBytes(source, start, end, this.bytes!, this.length);
  }

  get empty(): boolean {
    return this.length === 0;
  }

  /** Bytes held: at least the text's length in UTF-8, so at least its count of tokens (none is under a byte). */
  get size(): number {
    return this.length;
  }

  /** The text, or what was delivered after the first `from` bytes (a size this had). */
  text(from = 0): string {
    return this.length === from ? '' : (JSON.parse(`"${this.bytes!.toString('utf8', from, this.length)}"`) as string);
  }

  private room(more: number): void {
    const needed = this.length + more;
    if (this.bytes && needed <= this.bytes.length) return;
    // Not from Buffer's shared pool: a long-lived slice would keep a whole pool slab alive.
    const grown = Buffer.allocUnsafeSlow(Math.max(DELIVERED_START_BYTES, needed, 2 * (this.bytes?.length ?? 0)));
    this.bytes?.copy(grown, 0, 0, this.length);
    this.bytes = grown;
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
 * upstream that ignores that limit is stopped instead of streaming on at the service's cost. Nothing is
 * counted while the delivered text holds fewer bytes than the limit allows tokens (a token is at least a
 * byte); from then on, what was delivered since the last look is counted each time.
 */
export class OutputGuard {
  private readonly stopAt: number;
  private tokens = 0;
  private counted = 0;
  private count?: (text: string) => number;

  constructor(
    limit: number | undefined,
    private readonly delivered: DeliveredText,
  ) {
    this.stopAt = limit === undefined ? Infinity : RUNAWAY_FACTOR * Math.max(limit, 1);
  }

  /** True once the text delivered so far has run past the limit. */
  reached(): boolean {
    const size = this.delivered.size;
    if (size < this.stopAt || size === this.counted) return this.tokens >= this.stopAt;
    this.count ??= createTokenCounter();
    this.tokens += this.count(this.delivered.text(this.counted));
    this.counted = size;
    return this.tokens >= this.stopAt;
  }
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
      usage.inputTokens = countRequestTokens(promptOf(call), count);
    } catch {
      usage.inputTokens = 0;
    }
  }
  return usage;
}

